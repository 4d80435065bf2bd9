// `mend demo`: an offline scenario on what this build contains. Durable runs, recovery and
// lessons are not built yet, so the demo says so and exercises what exists for real: a scripted
// model that asks for a tool, a tool that reads an in-memory filesystem, and the model's answer,
// with token usage and cost from the price table.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/command.h"
#include "mend/base/json.h"
#include "mend/base/memory_file_system.h"
#include "mend/llm/prices.h"
#include "mend/llm/scripted_provider.h"

namespace mend::cli {
namespace {

constexpr char kModel[] = "gpt-4o-mini";  // priced in the built-in table, so cost is shown

constexpr char kScript[] = R"([
  {"tool_calls": [{"id": "call_1", "name": "read_file", "arguments": {"path": "/notes.txt"}}],
   "input_tokens": 142, "output_tokens": 19},
  {"text": "The notes say the deploy window is Tuesday 14:00 UTC.",
   "input_tokens": 181, "output_tokens": 14}
])";

constexpr char kExists[] =
    "What exists in this build:\n"
    "  - errors as values (Status/Result) and the Env seams: filesystem, clock, randomness,\n"
    "    with in-memory and fault-injecting fakes\n"
    "  - configuration: flags > MEND_* environment > $MEND_HOME/config.toml > defaults\n"
    "    (see 'mend config show')\n"
    "  - LLM providers: OpenAI-compatible, Anthropic and scripted, with error classes, usage\n"
    "    and cost\n";

constexpr char kNotYet[] =
    "Not yet available: durable runs with checkpoints, crash recovery, the progress guard,\n"
    "lessons (reflexion) and memory, improve. Once they land this demo will crash a run,\n"
    "resume it without repeating a step, and show the lesson the failure taught.\n";

// The demo's only tool: reads a file of an in-memory filesystem.
std::string ReadFileTool(MemoryFileSystem& fs, const std::string& arguments) {
  Result<nlohmann::json> args = ParseJson(arguments);
  if (!args.ok()) return "error: " + std::string(args.status().message());
  Result<std::string> path = GetString(*args, "path");
  if (!path.ok()) return "error: " + std::string(path.status().message());
  Result<std::string> text = ReadFileToString(fs, *path);
  return text.ok() ? *text : "error: " + std::string(text.status().message());
}

std::string Dollars(double usd) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "$%.6f", usd);
  return buf;
}

struct DemoTrace {
  nlohmann::json steps = nlohmann::json::array();
  llm::Usage usage;
  double cost_usd = 0;
  std::string answer;
};

void Record(DemoTrace& trace, const llm::Completion& c) {
  trace.usage.input_tokens += c.usage.input_tokens;
  trace.usage.output_tokens += c.usage.output_tokens;
  trace.cost_usd += c.cost_usd;
  nlohmann::json calls = nlohmann::json::array();
  for (const llm::ToolCall& call : c.tool_calls) {
    calls.push_back({{"id", call.id}, {"name", call.name}, {"arguments", call.arguments}});
  }
  trace.steps.push_back({{"finish_reason", std::string(llm::FinishReasonName(c.finish_reason))},
                         {"text", c.text},
                         {"tool_calls", calls},
                         {"input_tokens", c.usage.input_tokens},
                         {"output_tokens", c.usage.output_tokens},
                         {"cost_usd", c.cost_usd}});
}

// Two model turns: the first asks for read_file, the second answers from the tool's result.
Result<DemoTrace> RunScriptedConversation() {
  auto prices = std::make_shared<const llm::PriceTable>(llm::PriceTable::Defaults());
  MEND_ASSIGN_OR_RETURN(auto provider, llm::ScriptedProvider::FromJson(kScript, prices));
  MemoryFileSystem fs;
  MEND_RETURN_IF_ERROR(WriteFileAtomically(fs, "/notes.txt", "deploy window: Tuesday 14:00 UTC"));

  llm::CompletionRequest request;
  request.model = kModel;
  request.messages = {llm::Message::System("You answer questions about the user's notes."),
                      llm::Message::User("When is the deploy window?")};
  request.tools = {{"read_file", "Reads a file.",
                    R"({"type":"object","properties":{"path":{"type":"string"}}})"}};
  DemoTrace trace;
  MEND_ASSIGN_OR_RETURN(llm::Completion first, provider->Complete(request));
  Record(trace, first);
  request.messages.push_back(llm::Message::Assistant(first.text, first.tool_calls));
  for (const llm::ToolCall& call : first.tool_calls) {
    request.messages.push_back(
        llm::Message::ToolResult(call.id, call.name, ReadFileTool(fs, call.arguments)));
  }
  MEND_ASSIGN_OR_RETURN(llm::Completion second, provider->Complete(request));
  Record(trace, second);
  trace.answer = second.text;
  return trace;
}

void PrintText(const DemoTrace& trace, std::ostream& out) {
  out << "mend demo: the foundation only (durable runs are not built yet)\n\n" << kExists;
  out << "\nOffline check: a scripted model (" << kModel << " prices) with one tool\n";
  for (size_t i = 0; i < trace.steps.size(); ++i) {
    const nlohmann::json& s = trace.steps[i];
    out << "  turn " << i + 1 << ": finish=" << s["finish_reason"].get<std::string>();
    for (const nlohmann::json& call : s["tool_calls"]) {
      out << " tool_call=" << call["name"].get<std::string>()
          << call["arguments"].get<std::string>();
    }
    out << " tokens=" << s["input_tokens"].get<int64_t>() << "/"
        << s["output_tokens"].get<int64_t>() << " cost=" << Dollars(s["cost_usd"]) << "\n";
  }
  out << "  answer: " << trace.answer << "\n";
  out << "  total: " << trace.usage.input_tokens << " input + " << trace.usage.output_tokens
      << " output tokens, " << Dollars(trace.cost_usd) << "\n\n"
      << kNotYet;
}

Status RunDemo(CliContext& ctx) {
  MEND_ASSIGN_OR_RETURN(DemoTrace trace, RunScriptedConversation());
  if (!ctx.json) {
    PrintText(trace, ctx.out);
    return OkStatus();
  }
  nlohmann::json doc = {
      {"scenario", "foundation"},
      {"implemented", {"base", "config", "llm"}},
      {"not_yet_implemented", {"durable runs", "recovery", "reflexion", "memory", "improve"}},
      {"steps", trace.steps},
      {"output", trace.answer},
      {"usage",
       {{"input_tokens", trace.usage.input_tokens}, {"output_tokens", trace.usage.output_tokens}}},
      {"cost_usd", trace.cost_usd}};
  ctx.out << DumpJson(doc) << "\n";
  return OkStatus();
}

}  // namespace

void AddDemoCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* demo = app.add_subcommand("demo", "offline scenario on what this build contains");
  demo->group("Commands");
  demo->callback([&ctx] { ctx.action = [&ctx] { return RunDemo(ctx); }; });
}

}  // namespace mend::cli
