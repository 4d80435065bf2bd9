// `mend memory ...`: the long-term memory of docs/memory_cli.md. Each subcommand opens the
// runtime, calls the fact store or the retriever, and prints the result; the list, show, export
// and import subcommands are in memory_facts_command.cc.
#include "cli/memory_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "mend/agent/agent_spec.h"
#include "mend/app/memory_view.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"
#include "mend/base/utf8.h"
#include "mend/memory/fact_store.h"
#include "mend/memory/retriever.h"

namespace mend::cli {
namespace {

using memory_cli::EmbedSummary;
using memory_cli::EmbedWritten;
using memory_cli::WarnIfUncovered;

struct AddArgs {
  std::vector<std::string> text;
  std::string category = "general";
  std::string tags;
  std::string workspace;
};

struct SearchArgs {
  std::vector<std::string> query;
  size_t k = 10;
};

struct RecallArgs {
  std::vector<std::string> task;
  std::string workspace;
  std::string agent_dir;
};

std::string JoinWords(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return std::string(Trim(text));
}

std::vector<std::string> SplitTags(const std::string& tags) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= tags.size()) {
    size_t comma = tags.find(',', start);
    if (comma == std::string::npos) comma = tags.size();
    out.push_back(tags.substr(start, comma - start));
    start = comma + 1;
  }
  return memory::NormalizeTags(out);
}

// Workspaces are compared as text, so a directory is stored the way runs record it: absolute and
// normal (see AbsoluteAgentDir), without a trailing slash.
std::string NormalWorkspace(const std::string& dir) {
  if (dir.empty()) return "";
  std::string path = AbsoluteAgentDir(dir);
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

Status AddFact(CliContext& ctx, const AddArgs& args) {
  memory::NewFact fact;
  fact.content = JoinWords(args.text);
  if (fact.content.empty()) return UsageError("the fact's text is empty");
  fact.category = args.category.empty() ? "general" : args.category;
  fact.tags = SplitTags(args.tags);
  fact.workspace = NormalWorkspace(args.workspace);
  fact.source = "user";
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  MEND_ASSIGN_OR_RETURN(memory::AddResult added, runtime->facts->Add(fact));
  const EmbedSummary embedded = EmbedWritten(ctx, *runtime, {added.id});
  const std::string kind(memory::AddResultKindName(added.kind));
  if (ctx.json) {
    nlohmann::json result = {{"id", added.id}, {"result", kind}};
    if (embedded.attempted) {
      result["embedded"] = embedded.embedded;
      result["not_embedded"] = embedded.not_embedded;
    }
    ctx.out << DumpJson(result) << "\n";
  } else if (added.kind == memory::AddResult::Kind::kMerged) {
    ctx.out << "merged into " << added.id << "\n";
  } else {
    ctx.out << kind << " " << added.id << "\n";
  }
  return OkStatus();
}

std::string FirstLine(const std::string& text, size_t max_chars) {
  const std::string line = text.substr(0, text.find('\n'));
  const std::string cut = TruncateUtf8Chars(line, max_chars);
  return cut.size() < text.size() ? cut + "..." : cut;
}

std::string Score(double score) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4f", score);
  return buf;
}

Status SearchFacts(CliContext& ctx, const SearchArgs& args) {
  const std::string query = JoinWords(args.query);
  if (query.empty()) return UsageError("the search query is empty");
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  MEND_ASSIGN_OR_RETURN(std::vector<memory::ScoredFact> hits,
                        runtime->retriever->Search(query, args.k));
  WarnIfUncovered(ctx, *runtime);
  if (ctx.json) {
    ctx.out << DumpJson(app::SearchResultsJson(hits)) << "\n";
    return OkStatus();
  }
  if (hits.empty()) ctx.out << "no fact matches\n";
  for (const memory::ScoredFact& hit : hits) {
    ctx.out << Score(hit.score) << "  " << hit.fact.id << "  [" << hit.fact.category << "] "
            << FirstLine(hit.fact.content, 80) << "\n";
  }
  return OkStatus();
}

// The agent folder a run would use, when --agent names one; else a spec with the --workspace.
Result<agent::AgentSpec> RecallAgent(CliContext& ctx, const RecallArgs& args) {
  if (args.agent_dir.empty()) {
    agent::AgentSpec spec;
    spec.workspace = NormalWorkspace(args.workspace);
    return spec;
  }
  return agent::LoadAgentFolder(ctx.fs, AbsoluteAgentDir(args.agent_dir));
}

Status Recall(CliContext& ctx, const RecallArgs& args) {
  const std::string task = JoinWords(args.task);
  if (task.empty()) return UsageError("the task is empty");
  MEND_ASSIGN_OR_RETURN(agent::AgentSpec spec, RecallAgent(ctx, args));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  // A run from this directory of a folder that names no workspace works here, and memory is
  // scoped by that workspace; ExplainRecall takes the runtime's caller_dir for it.
  MEND_ASSIGN_OR_RETURN(app::RecallAnswer answer,
                        app::ExplainRecall(*runtime, task, spec.workspace, spec.model));
  WarnIfUncovered(ctx, *runtime);
  if (ctx.json) {
    ctx.out << DumpJson(app::RecallAnswerJson(answer)) << "\n";
    return OkStatus();
  }
  if (answer.retrieval.section.empty()) {
    ctx.err << "nothing would be injected (" << app::RecallReasonText(answer) << ")\n";
    return OkStatus();
  }
  ctx.out << answer.retrieval.section;
  if (!answer.retrieval.section.ends_with('\n')) ctx.out << "\n";
  return OkStatus();
}

Status RemoveFact(CliContext& ctx, const std::string& id) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  MEND_RETURN_IF_ERROR(runtime->facts->Remove(id));
  if (ctx.json) {
    ctx.out << DumpJson({{"id", id}, {"removed", true}}) << "\n";
  } else {
    ctx.out << "removed " << id << "\n";
  }
  return OkStatus();
}

void AddAdd(CLI::App& memory, CliContext& ctx) {
  auto args = std::make_shared<AddArgs>();
  CLI::App* add = memory.add_subcommand(
      "add", "store a fact (the same text again reinforces it; a near duplicate merges)");
  add->add_option("TEXT", args->text, "the fact; several words are joined by spaces")->required();
  add->add_option("--category", args->category, "category (default: general)");
  add->add_option("--tags", args->tags, "comma-separated tags, e.g. deploy,config");
  add->add_option("--workspace", args->workspace,
                  "scope it to runs whose workspace is this directory (runs of agent folders "
                  "without a workspace still see it; default: every run)");
  add->callback([&ctx, args] { ctx.action = [&ctx, args] { return AddFact(ctx, *args); }; });
}

void AddSearch(CLI::App& memory, CliContext& ctx) {
  auto args = std::make_shared<SearchArgs>();
  CLI::App* search = memory.add_subcommand("search",
                                           "the ranking a run for QUERY considers, in its order "
                                           "(no relevance gate, no budget, no HyDE)");
  search->add_option("QUERY", args->query, "the query; several words are joined")->required();
  // The range is in the help text, in words; CLI11 would otherwise add "UINT:INT in [1 - 1000]".
  search->add_option("-k", args->k, "how many results at most, 1–1000 (default 10)")
      ->type_name("N")
      ->check(CLI::Range(1, 1000).description(""));
  search->callback([&ctx, args] { ctx.action = [&ctx, args] { return SearchFacts(ctx, *args); }; });
}

void AddRecall(CLI::App& memory, CliContext& ctx) {
  auto args = std::make_shared<RecallArgs>();
  CLI::App* recall = memory.add_subcommand(
      "recall", "print exactly the memory section the next run for TASK would get");
  recall->add_option("TASK", args->task, "the task; several words are joined")->required();
  CLI::Option* workspace = recall->add_option(
      "--workspace", args->workspace,
      "the run's workspace directory (default: the current directory, where a run of an agent "
      "folder without `workspace` works)");
  recall
      ->add_option("--agent", args->agent_dir,
                   "take the workspace from this agent folder (the current directory when it "
                   "names none)")
      ->excludes(workspace);
  recall->callback([&ctx, args] { ctx.action = [&ctx, args] { return Recall(ctx, *args); }; });
}

void AddFactSubcommands(CLI::App& memory, CliContext& ctx) {
  auto list_args = std::make_shared<memory_cli::ListArgs>();
  CLI::App* list = memory.add_subcommand("list", "list active facts, newest first");
  list->add_flag("--all", list_args->all, "include superseded facts");
  list->add_option("--category", list_args->category, "only this category");
  list->add_option("--limit", list_args->limit, "at most N facts (default: all)")
      ->check(CLI::NonNegativeNumber);
  list->callback([&ctx, list_args] {
    ctx.action = WithRuntime(ctx, [&ctx, list_args](app::Runtime& runtime) {
      return memory_cli::ListFacts(ctx, runtime, *list_args);
    });
  });
  auto id = std::make_shared<std::string>();
  CLI::App* show = memory.add_subcommand("show", "every field of a fact, with its provenance");
  show->add_option("ID", *id, "the fact's id")->required();
  show->callback([&ctx, id] {
    ctx.action = WithRuntime(
        ctx, [&ctx, id](app::Runtime& runtime) { return memory_cli::ShowFact(ctx, runtime, *id); });
  });
  CLI::App* rm = memory.add_subcommand("rm", "delete a fact");
  rm->add_option("ID", *id, "the fact's id")->required();
  rm->callback([&ctx, id] { ctx.action = [&ctx, id] { return RemoveFact(ctx, *id); }; });
}

void AddTransferSubcommands(CLI::App& memory, CliContext& ctx) {
  auto file = std::make_shared<std::string>();
  CLI::App* out = memory.add_subcommand(
      "export", "write every fact (superseded ones too) as chatcli-compatible JSON");
  out->add_option("FILE", *file, "the file to write (replaced atomically); - for stdout")
      ->required();
  out->callback([&ctx, file] {
    ctx.action = WithRuntime(ctx, [&ctx, file](app::Runtime& runtime) {
      return memory_cli::ExportFacts(ctx, runtime, *file);
    });
  });
  CLI::App* in = memory.add_subcommand(
      "import", "add the facts of an export, keeping their ids; all or nothing");
  in->add_option("FILE", *file, "a JSON export of mend or chatcli; - for stdin")->required();
  in->callback([&ctx, file] {
    ctx.action = WithRuntime(ctx, [&ctx, file](app::Runtime& runtime) {
      return memory_cli::ImportFacts(ctx, runtime, *file);
    });
  });
}

void AddVectorSubcommands(CLI::App& memory, CliContext& ctx) {
  auto model = std::make_shared<std::string>();
  CLI::App* embed = memory.add_subcommand(
      "embed",
      "give every fact the vectors it lacks for the embedding model (memory.embeddings.*); "
      "stopped and run again, it sends only what is still missing");
  embed->add_option("--model", *model,
                    "embed for this model of the endpoint instead of memory.embeddings.model "
                    "(vectors of other models are kept)");
  embed->callback([&ctx, model] {
    ctx.action = WithRuntime(ctx, [&ctx, model](app::Runtime& runtime) {
      return memory_cli::EmbedFacts(ctx, runtime, *model);
    });
  });
  CLI::App* stats = memory.add_subcommand(
      "stats", "facts by category, and how many have vectors of each embedding model");
  stats->callback([&ctx] {
    ctx.action = WithRuntime(
        ctx, [&ctx](app::Runtime& runtime) { return memory_cli::ShowStats(ctx, runtime); });
  });
}

}  // namespace

void AddMemoryCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* memory = app.add_subcommand("memory", "long-term memory: facts that runs receive");
  memory->group("Commands");
  memory->require_subcommand(0, 1);  // a word of a task or query is never read as a command
  memory->footer(
      "Facts live in <home>/mend.db. A run receives the facts `mend memory recall TASK` shows.");
  AddAdd(*memory, ctx);
  AddSearch(*memory, ctx);
  AddRecall(*memory, ctx);
  AddFactSubcommands(*memory, ctx);
  AddTransferSubcommands(*memory, ctx);
  AddVectorSubcommands(*memory, ctx);
}

}  // namespace mend::cli
