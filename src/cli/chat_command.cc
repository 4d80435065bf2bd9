// `mend chat AGENT_DIR`: a line-oriented session with an agent. Every line is one durable run
// that continues the conversation of the previous turn; slash commands inspect and resume runs.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <istream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/chat_line_reader.h"
#include "cli/chat_reflect.h"
#include "cli/command.h"
#include "mend/agent/agent.h"
#include "mend/app/runtime.h"
#include "mend/base/utf8.h"
#include "mend/memory/fact_store.h"

namespace mend::cli {
namespace {

constexpr char kHelp[] =
    "commands: /reflect [list|failed|drain|retry <id>|purge <id>|<lesson text>], /config quality, "
    "/pending, /resume <run-id>, /memory longterm, /help, /quit (anything else is sent; Tab "
    "completes)";

// What `/help` prints: every slash command with what it does.
struct SlashCommand {
  const char* usage;
  const char* does;
};
constexpr SlashCommand kSlashCommands[] = {
    {"/help", "this list"},
    {"/pending", "the unfinished runs, as `mend pending` shows them"},
    {"/resume <run-id>", "continue a run from its last checkpoint"},
    {"/memory longterm", "the long-term memory's active facts, newest first (also /memory)"},
    {"/config quality", "the reflexion and quality settings, and the lesson queue"},
    {"/reflect", "the lesson queue: depth, WAL records, dead letters"},
    {"/reflect list", "the lesson jobs waiting and the dead letters"},
    {"/reflect failed", "the dead letters only"},
    {"/reflect drain", "process every pending lesson job now"},
    {"/reflect retry <id>", "queue a dead letter again"},
    {"/reflect purge <id>", "delete a dead letter"},
    {"/reflect <lesson text>", "store a lesson of two or more words, no model call"},
    {"/quit", "end the session (also /exit)"},
};

void PrintSlashCommands(std::ostream& out) {
  size_t width = 0;
  for (const SlashCommand& c : kSlashCommands) width = std::max(width, std::string(c.usage).size());
  out << "slash commands (any other line is sent to the agent; Tab completes):\n";
  for (const SlashCommand& c : kSlashCommands) {
    const std::string usage = c.usage;
    out << "  " << usage << std::string(width + 2 - usage.size(), ' ') << c.does << "\n";
  }
}

struct ChatSession {
  CliContext& ctx;
  app::Runtime& runtime;
  agent::Agent& agent;
  std::string last_run_id;  // the turn the next one continues from
};

// A failed slash command is shown but does not end the session.
void ShowError(ChatSession& session, const Status& status) {
  if (!status.ok()) session.ctx.err << "mend: " << status.message() << "\n";
}

// A failed turn is shown but does not end the session.
void Show(ChatSession& session, const Result<agent::RunResult>& result) {
  if (!result.ok()) {
    session.ctx.err << "mend: " << result.status().message() << "\n";
    return;
  }
  (void)ReportRun(session.ctx, *result);
  session.ctx.error_reported = false;
}

void Send(ChatSession& session, const std::string& line) {
  agent::SendOptions options;
  options.continue_from = session.last_run_id;
  Result<agent::RunResult> result = session.agent.Send(line, options);
  if (result.ok() && result->status == store::RunStatus::kCompleted) {
    session.last_run_id = result->run_id;
  }
  Show(session, result);
}

void ResumeInChat(ChatSession& session, const std::string& run_id) {
  if (run_id.empty()) {
    session.ctx.err << "mend: /resume needs a run id\n";
    return;
  }
  Result<std::unique_ptr<agent::Agent>> agent = app::OpenAgentForRun(session.runtime, run_id);
  if (!agent.ok()) {
    session.ctx.err << "mend: " << agent.status().message() << "\n";
    return;
  }
  Show(session, (*agent)->Resume(run_id));
}

// `/memory longterm`: the facts runs can receive, newest first, one line each.
void ShowLongTermMemory(ChatSession& session) {
  Result<std::vector<memory::Fact>> facts = session.runtime.facts->List({});
  if (!facts.ok()) {
    session.ctx.err << "mend: " << facts.status().message() << "\n";
    return;
  }
  if (facts->empty()) {
    session.ctx.out << "long-term memory is empty\n";
    return;
  }
  for (const memory::Fact& fact : *facts) {
    std::string first = fact.content.substr(0, fact.content.find('\n'));
    session.ctx.out << fact.id << "  [" << fact.category << "] " << first << "\n";
  }
}

// Handles one input line; false when the session should end.
bool HandleLine(ChatSession& session, const std::string& line) {
  if (line.empty()) return true;
  if (line == "/quit" || line == "/exit") return false;
  if (line == "/help") {
    PrintSlashCommands(session.ctx.out);
    return true;
  }
  if (line == "/pending") {
    ShowError(session, PrintPending(session.ctx, session.runtime));
    return true;
  }
  if (line == "/reflect" || line.starts_with("/reflect ")) {
    ShowError(session, RunReflectSlashCommand(session.ctx, session.runtime, line.substr(8)));
    return true;
  }
  if (line == "/config quality") {
    ShowError(session, ShowQualityConfig(session.ctx, session.runtime));
    return true;
  }
  if (line == "/memory longterm" || line == "/memory") {
    ShowLongTermMemory(session);
    return true;
  }
  if (line == "/resume" || line.starts_with("/resume ")) {
    ResumeInChat(session, std::string(Trim(line.substr(7))));
    return true;
  }
  if (line.starts_with("/")) {
    session.ctx.err << "mend: unknown chat command " << line.substr(0, line.find(' '))
                    << "; /help lists the commands\n";
    return true;
  }
  Send(session, line);
  return true;
}

// libedit only on the process's own terminal; everything else (pipes, files, tests) is a stream.
std::unique_ptr<ChatLineReader> OpenReader(CliContext& ctx, app::Runtime& runtime,
                                           bool interactive) {
  const bool own_terminal = ctx.input.in == &std::cin && isatty(STDIN_FILENO) == 1;
  if (!interactive || !own_terminal) return StreamLineReader(ctx, interactive);
  ctx.out << std::flush;
  return EditLineReader([&runtime]() -> std::vector<lessonq::Job> {
    if (runtime.lessons.queue == nullptr) return {};
    Result<std::vector<lessonq::Job>> jobs = runtime.lessons.queue->DeadLetters();
    return jobs.ok() ? *std::move(jobs) : std::vector<lessonq::Job>{};
  });
}

Status Chat(CliContext& ctx, const std::string& agent_dir) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        app::OpenAgent(*runtime, AbsoluteAgentDir(agent_dir)));
  if (ctx.input.in == nullptr) return OkStatus();
  app::StartBackgroundWork(*runtime);
  ChatSession session{ctx, *runtime, *agent, ""};
  const bool interactive = ctx.input.is_terminal && !ctx.json;
  if (interactive) ctx.out << kHelp << "\n";
  std::unique_ptr<ChatLineReader> reader = OpenReader(ctx, *runtime, interactive);
  std::string line;
  while (reader->ReadLine(line)) {
    if (!HandleLine(session, std::string(Trim(line)))) break;
  }
  return OkStatus();
}

}  // namespace

void AddChatCommand(CLI::App& app, CliContext& ctx) {
  auto agent_dir = std::make_shared<std::string>();
  CLI::App* chat = app.add_subcommand("chat", "interactive session with an agent");
  chat->group("Commands");
  chat->add_option("AGENT_DIR", *agent_dir, "the agent folder")->required();
  AddProviderFlags(*chat, ctx);
  chat->callback(
      [&ctx, agent_dir] { ctx.action = [&ctx, agent_dir] { return Chat(ctx, *agent_dir); }; });
}

}  // namespace mend::cli
