// MCP chaos: runs whose tools live on an MCP server over stdio that crashes in the middle of a
// call (it exits at once) or never answers one (the call outlives its 1 s timeout). Each run then
// calls a tool of the same server with a mark of its own, and answers. The crash must be a tool
// error and the server start again for the next call; the hang must be cancelled
// (notifications/cancelled) and be a tool error; every run must complete, and its marked call reach
// the server exactly once.
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "tests/chaos/chaos.h"
#include "tests/chaos/chaos_util.h"
#include "tests/support/mend_command.h"

namespace mend::chaos {

Result<ChaosRow> RunMcpChaos(const ChaosOptions& options) {
  using Json = nlohmann::json;
  std::mt19937 rng(options.seed * 15485863u + 5);
  const int runs = 6 * options.scale;
  const std::string agent_dir = options.work_dir + "/mcp-agent";
  const std::string server_log = options.work_dir + "/mcp-server.log";
  std::error_code made;
  std::filesystem::create_directories(agent_dir + "/workspace", made);
  if (made) return InternalError("cannot make " + agent_dir + ": " + made.message());
  MEND_RETURN_IF_ERROR(WriteText(agent_dir + "/instructions.md", "Use the fake server's tools.\n"));
  MEND_RETURN_IF_ERROR(WriteText(agent_dir + "/agent.toml",
                                 "name = \"mcp-chaos\"\n"
                                 "tools = []\n"
                                 "workspace = \"workspace\"\n\n"
                                 "[[mcp_servers]]\n"
                                 "name = \"fake\"\n"
                                 "command = \"" FAKE_MCP_SERVER_BINARY "\"\n"
                                 "args = [\"--log\", \"" +
                                     server_log +
                                     "\"]\n"
                                     "timeout = 1\n"));
  Json script = Json::array();
  std::vector<std::string> ids;
  int64_t crashes = 0, hangs = 0;
  for (int i = 0; i < runs; ++i) {
    ids.push_back(Tag("mcp-run", i));
    // One crash at most (a second death leaves the server's tools failing for the command,
    // docs/mcp.md), a hang, or both, in either order.
    std::vector<std::string> faults;
    const int pick = static_cast<int>(rng() % 3);
    if (pick != 1) faults.push_back("fake__crash");
    if (pick != 0) faults.push_back("fake__slow");
    if (faults.size() == 2 && rng() % 2 == 0) std::swap(faults[0], faults[1]);
    int call = 0;
    for (const std::string& tool : faults) {
      (tool == "fake__crash" ? crashes : hangs) += 1;
      script.push_back({{"tool_calls",
                         {{{"id", "call-" + std::to_string(i) + "-" + std::to_string(++call)},
                           {"name", tool},
                           {"arguments", Json::object()}}}}});
    }
    script.push_back({{"tool_calls",
                       {{{"id", "call-" + std::to_string(i) + "-mark"},
                         {"name", "fake__echo"},
                         {"arguments", {{"text", "mark of " + ids.back()}}}}}}});
    script.push_back({{"text", "done " + ids.back()}});
  }
  const std::string script_path = options.work_dir + "/mcp-script.json";
  MEND_RETURN_IF_ERROR(WriteText(script_path, script.dump(1)));
  MEND_ASSIGN_OR_RETURN(testing::FakeServerProcess fake,
                        StartFake(options, {"--script", script_path}));
  const std::string home = options.work_dir + "/mcp-home";
  const std::vector<std::string> env = testing::CleanEnv(
      options.work_dir, {"MEND_PROVIDER=openai", "MEND_MODEL=chaos-model",
                         "MEND_BASE_URL=" + testing::LoopbackUrl(fake.port) + "/v1",
                         "MEND_API_KEY=sk-chaos-KEY-4141", "MEND_TIMEOUT=5s"});

  ChaosRow row;
  row.faults = crashes + hangs;
  for (const std::string& id : ids) {
    Say(options, "run " + id);
    MEND_ASSIGN_OR_RETURN(
        MendResult run, RunMend(options, home, env, {"run", agent_dir, "task " + id, "--id", id}));
    const bool completed = run.json.is_object() && run.json.value("status", "") == "completed" &&
                           run.json.value("output", "") == "done " + id;
    if (completed) {
      ++row.runs_completed;
    } else {
      ++row.lost;
      row.problems.push_back("run " + id + " did not complete: " + run.output.out + run.output.err);
    }
  }
  fake.process->Kill(SIGKILL).IgnoreError();

  // What the server processes received, in one log across their restarts.
  MEND_ASSIGN_OR_RETURN(std::string log, ReadText(server_log));
  int64_t cancelled = 0;
  std::vector<int> marks(ids.size(), 0);
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    Json message = Json::parse(line, nullptr, false);
    if (message.is_discarded()) continue;
    const std::string method = message.value("method", "");
    if (method == "notifications/cancelled") ++cancelled;
    if (method != "tools/call") continue;
    const Json& params = message.value("params", Json::object());
    if (params.value("name", "") != "echo") continue;
    const std::string text = params.value("arguments", Json::object()).value("text", "");
    for (size_t i = 0; i < ids.size(); ++i) {
      if (text == "mark of " + ids[i]) ++marks[i];
    }
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (marks[i] == 0) {
      ++row.lost;
      row.problems.push_back("the marked call of " + ids[i] + " never reached the server");
    } else if (marks[i] > 1) {
      row.duplicated += marks[i] - 1;
      row.problems.push_back("the marked call of " + ids[i] + " reached the server " +
                             std::to_string(marks[i]) + " times");
    }
  }
  if (cancelled < hangs) {
    row.lost += hangs - cancelled;
    row.problems.push_back(std::to_string(hangs - cancelled) + " of " + std::to_string(hangs) +
                           " hung calls were never cancelled");
  }
  row.detail = std::to_string(runs) +
               " runs on an MCP server over stdio: " + std::to_string(crashes) +
               " crashes mid-call, " + std::to_string(hangs) + " calls past their timeout (" +
               std::to_string(cancelled) +
               " cancellations sent); every run completed, its marked call reaching the server "
               "once";
  return row;
}

}  // namespace mend::chaos
