// `mend memory list | show | export | import`: whole facts in and out of the fact store.
#include <algorithm>
#include <iomanip>
#include <istream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/memory_command.h"
#include "mend/app/memory_view.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"
#include "mend/base/time_format.h"
#include "mend/base/utf8.h"
#include "mend/memory/chatcli_format.h"
#include "mend/memory/fact_store.h"

namespace mend::cli::memory_cli {
namespace {

constexpr char kStdio[] = "-";
constexpr size_t kPreviewChars = 60;

std::string JoinTags(const std::vector<std::string>& tags) {
  std::string text;
  for (const std::string& tag : tags) text += (text.empty() ? "" : ",") + tag;
  return text;
}

std::string Preview(const memory::Fact& fact) {
  const std::string line = fact.content.substr(0, fact.content.find('\n'));
  std::string preview = TruncateUtf8Chars(line, kPreviewChars);
  if (preview.size() < fact.content.size()) preview += "...";
  if (!fact.superseded_by.empty()) preview += " (superseded by " + fact.superseded_by + ")";
  return preview;
}

void PrintTable(const std::vector<memory::Fact>& facts, std::ostream& out) {
  if (facts.empty()) {
    out << "no facts\n";
    return;
  }
  size_t id_width = 2, category_width = 8, tags_width = 4;
  for (const memory::Fact& f : facts) {
    id_width = std::max(id_width, f.id.size());
    category_width = std::max(category_width, f.category.size());
    tags_width = std::max(tags_width, JoinTags(f.tags).size());
  }
  auto row = [&](const std::string& id, const std::string& category, const std::string& tags,
                 const std::string& score, const std::string& content) {
    out << std::left << std::setw(static_cast<int>(id_width + 2)) << id
        << std::setw(static_cast<int>(category_width + 2)) << category
        << std::setw(static_cast<int>(tags_width + 2)) << tags << std::setw(13) << score << content
        << "\n";
  };
  row("ID", "CATEGORY", "TAGS", "HELPED/HURT", "CONTENT");
  for (const memory::Fact& f : facts) {
    row(f.id, f.category, JoinTags(f.tags), std::to_string(f.helped) + "/" + std::to_string(f.hurt),
        Preview(f));
  }
}

// The fact's text, each line indented, so multi-line lessons stay readable under their label.
void PrintIndented(const std::string& text, std::ostream& out) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out << "  " << text.substr(start, end - start) << "\n";
    start = end + 1;
  }
}

void PrintFact(const memory::Fact& f, std::ostream& out) {
  out << "id:             " << f.id << "\n"
      << "category:       " << f.category << "\n"
      << "tags:           " << (f.tags.empty() ? "(none)" : JoinTags(f.tags)) << "\n"
      << "workspace:      " << (f.workspace.empty() ? "(every run)" : f.workspace) << "\n"
      << "source:         " << f.source << "\n"
      << "confidence:     " << f.confidence << "\n"
      << "created_at:     " << FormatRfc3339(f.created_at) << "\n"
      << "last_accessed:  " << FormatRfc3339(f.last_accessed) << "\n"
      << "access_count:   " << f.access_count << "\n"
      << "helped/hurt:    " << f.helped << "/" << f.hurt << "\n"
      << "superseded_by:  " << (f.superseded_by.empty() ? "(active)" : f.superseded_by) << "\n"
      << "content:\n";
  PrintIndented(f.content, out);
  out << "provenance:     " << f.provenance.size()
      << (f.provenance.size() == 1 ? " episode\n" : " episodes\n");
  for (size_t i = 0; i < f.provenance.size(); ++i) {
    const memory::Episode& e = f.provenance[i];
    out << "  " << (i + 1) << ". " << FormatRfc3339(e.at) << "\n    task:\n";
    PrintIndented("  " + e.task, out);
    out << "    outcome:\n";
    PrintIndented("  " + e.outcome, out);
  }
}

Result<std::string> ReadInput(CliContext& ctx, const std::string& file) {
  if (file != kStdio) return ReadFileToString(ctx.fs, file);
  if (ctx.input.in == nullptr) return InvalidArgumentError("no standard input to import from");
  return std::string(std::istreambuf_iterator<char>(*ctx.input.in),
                     std::istreambuf_iterator<char>());
}

}  // namespace

Status ListFacts(CliContext& ctx, app::Runtime& runtime, const ListArgs& args) {
  memory::ListOptions options;
  options.include_superseded = args.all;
  options.category = args.category;
  options.limit = static_cast<size_t>(args.limit);
  MEND_ASSIGN_OR_RETURN(std::vector<memory::Fact> facts, runtime.facts->List(options));
  if (ctx.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const memory::Fact& fact : facts) list.push_back(app::FactJson(fact));
    ctx.out << DumpJson({{"facts", list}}) << "\n";
  } else {
    PrintTable(facts, ctx.out);
  }
  return OkStatus();
}

Status ShowFact(CliContext& ctx, app::Runtime& runtime, const std::string& id) {
  MEND_ASSIGN_OR_RETURN(memory::Fact fact, runtime.facts->Get(id));
  if (ctx.json) {
    ctx.out << DumpJson(app::FactJson(fact)) << "\n";
  } else {
    PrintFact(fact, ctx.out);
  }
  return OkStatus();
}

Status ExportFacts(CliContext& ctx, app::Runtime& runtime, const std::string& file) {
  memory::ListOptions options;
  options.include_superseded = true;
  MEND_ASSIGN_OR_RETURN(std::vector<memory::Fact> facts, runtime.facts->List(options));
  std::string text = memory::ExportChatcliJson(facts);
  if (!text.ends_with('\n')) text += '\n';
  if (file == kStdio) {
    ctx.out << text;
    return OkStatus();
  }
  MEND_RETURN_IF_ERROR(WriteFileAtomically(ctx.fs, file, text));
  if (ctx.json) {
    ctx.out << DumpJson({{"exported", facts.size()}, {"file", file}}) << "\n";
  } else {
    ctx.out << "exported " << facts.size() << (facts.size() == 1 ? " fact to " : " facts to ")
            << file << "\n";
  }
  return OkStatus();
}

Status ImportFacts(CliContext& ctx, app::Runtime& runtime, const std::string& file) {
  MEND_ASSIGN_OR_RETURN(std::string text, ReadInput(ctx, file));
  Result<memory::ChatcliImport> parsed = memory::ParseChatcliJson(text, runtime.env.clock->Now());
  if (!parsed.ok()) {
    return Status(parsed.status().code(), (file == kStdio ? std::string("stdin") : file) + ": " +
                                              std::string(parsed.status().message()) +
                                              "; nothing was imported");
  }
  MEND_ASSIGN_OR_RETURN(memory::FactStore::ImportCounts counts,
                        runtime.facts->Import(parsed->facts));
  // The store numbers the facts it was given; the report names their place in the file.
  std::vector<memory::UnusableFact> unusable = parsed->unusable;
  for (memory::UnusableFact u : counts.unusable) {
    u.index = parsed->indices[u.index];
    unusable.push_back(std::move(u));
  }
  std::sort(unusable.begin(), unusable.end(),
            [](const memory::UnusableFact& a, const memory::UnusableFact& b) {
              return a.index < b.index;
            });
  // Every fact of the file that is in the store now (imported, or there already) gets its
  // vectors.
  std::vector<std::string> ids;
  ids.reserve(parsed->facts.size());
  for (const memory::Fact& fact : parsed->facts) ids.push_back(fact.id);
  const EmbedSummary embedded = EmbedWritten(ctx, runtime, ids);
  if (ctx.json) {
    nlohmann::json left_out = nlohmann::json::array();
    for (const memory::UnusableFact& u : unusable) {
      left_out.push_back({{"index", u.index}, {"id", u.id}, {"reason", u.reason}});
    }
    nlohmann::json summary = {{"imported", counts.imported},
                              {"skipped", counts.skipped},
                              {"unusable", std::move(left_out)}};
    if (embedded.attempted) {
      summary["embedded"] = embedded.embedded;
      summary["not_embedded"] = embedded.not_embedded;
    }
    ctx.out << DumpJson(summary) << "\n";
    return OkStatus();
  }
  ctx.out << "imported " << counts.imported << ", skipped " << counts.skipped << " already present";
  if (!unusable.empty()) ctx.out << ", left out " << unusable.size() << " unusable";
  if (embedded.attempted) {
    ctx.out << "; embedded " << embedded.embedded;
    if (embedded.not_embedded > 0) ctx.out << ", not embedded " << embedded.not_embedded;
  }
  ctx.out << "\n";
  for (const memory::UnusableFact& u : unusable) {
    ctx.out << "  fact " << u.index << (u.id.empty() ? "" : " (" + u.id + ")") << ": " << u.reason
            << "\n";
  }
  return OkStatus();
}

}  // namespace mend::cli::memory_cli
