// Provider outages are per endpoint, through the real `mend` binary and two fake LLM servers over
// loopback: three runs on an endpoint that answers 503 to everything and one on a live endpoint;
// `mend recover --once` pauses the dead endpoint's runs, resumes the live one, names the endpoint
// in its report and its log, and counts every run once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <vector>

#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kKey[] = "sk-recover-endpoints-KEY-7373";

// The live endpoint: the run started on it fails once, two runs get a 400 (not retryable), and
// the recovered run gets its answer.
constexpr char kLiveScript[] = R"([
  {"status": 503, "error_message": "a short hiccup"},
  {"status": 400, "error_message": "bad request"},
  {"status": 400, "error_message": "bad request"},
  {"text": "done"}
])";
// The dead endpoint answers every request with a 503.
constexpr char kDeadDefault[] = R"({"status": 503, "error_message": "upstream down"})";

class RecoverEndpointsE2eTest : public E2eTest {
 protected:
  // No lessons: a failed run's lesson request would take a response of the live script.
  // A dead endpoint stays dead: runs do not ask again themselves.
  RecoverEndpointsE2eTest()
      : E2eTest({.secret = kKey,
                 .extra_env = {"MEND_QUALITY_REFLEXION_ENABLED=false", "MEND_PROVIDER_RETRIES=0"},
                 .agent_toml = "name = \"x\"\ntools = []\n",
                 .instructions = "Answer.\n"}) {}

  // Starts a fake server with `flag` (--script or --default) reading `json`; returns its URL.
  std::string StartServer(const std::string& name, const std::string& flag, const char* json,
                          std::unique_ptr<ChildProcess>& process) {
    const std::string path = WriteTestFile(name + ".json", json);
    if (path.empty()) return "";
    auto server = StartAnotherFakeLlm({flag, path, "--api-key", kKey, "--log", LogOf(name)});
    EXPECT_THAT(server, IsOk());
    if (!server.ok()) return "";
    process = std::move(server->process);
    return LoopbackUrl(server->port);
  }

  std::string LogOf(const std::string& name) const { return dir_->File(name + ".jsonl"); }

  // How many requests the server `name` logged.
  int RequestsOf(const std::string& name) {
    auto log = ReadWholeFile(LogOf(name));
    if (!log.ok()) return 0;
    captured_ += *log;
    return static_cast<int>(std::count(log->begin(), log->end(), '\n'));
  }

  ChildOutput Mend(std::vector<std::string> args) {
    args.insert(args.begin(), "--json");
    return E2eTest::Mend(std::move(args));
  }

  // `mend run` of the agent as run `id` on openai at `url`; the run fails (exit 1).
  void FailedRun(const std::string& id, const std::string& url) {
    const ChildOutput run = Mend({"run", dir_->File("agent"), "say done", "--id", id, "--provider",
                                  "openai", "--model", "model-a", "--base-url", url});
    EXPECT_EQ(run.status.code, 1) << id << ": " << run.out << run.err;
  }
};

TEST_F(RecoverEndpointsE2eTest, AnOutageOfOneEndpointPausesOnlyItsOwnRuns) {
  std::unique_ptr<ChildProcess> dead_server, live_server;
  const std::string dead = StartServer("dead", "--default", kDeadDefault, dead_server);
  const std::string live = StartServer("live", "--script", kLiveScript, live_server);
  ASSERT_FALSE(dead.empty() || live.empty());
  for (const char* id : {"d1", "d2", "d3"}) ASSERT_NO_FATAL_FAILURE(FailedRun(id, dead));
  ASSERT_NO_FATAL_FAILURE(FailedRun("l1", live));
  ASSERT_NO_FATAL_FAILURE(FailedRun("n1", live));
  ASSERT_NO_FATAL_FAILURE(FailedRun("n2", live));

  const ChildOutput pass = Mend({"recover", "--once"});
  ASSERT_EQ(pass.status.code, 0) << pass.err;
  nlohmann::json report = nlohmann::json::parse(pass.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << pass.out;
  // d3's failure is the third in a row of the dead endpoint: its outage begins there. l1, on the
  // live endpoint, is resumed all the same.
  EXPECT_EQ(report["resumed"], nlohmann::json({"d1", "d2", "d3", "l1"})) << report;
  EXPECT_EQ(report["completed"], nlohmann::json({"l1"})) << report;
  EXPECT_EQ(report["failed"], nlohmann::json({"d1", "d2", "d3"})) << report;
  EXPECT_EQ(report["outage"], true);
  ASSERT_EQ(report["outages"].size(), 1u) << report;
  EXPECT_EQ(report["outages"][0]["provider"], "openai");
  EXPECT_EQ(report["outages"][0]["base_url"], dead);
  EXPECT_TRUE(report["outages"][0]["since"].is_string());
  EXPECT_TRUE(report["outages"][0]["next_probe_at"].is_string());
  // Every one of the six runs in exactly one count.
  const nlohmann::json& skipped = report["skipped"];
  EXPECT_EQ(skipped["non_retryable"], 2) << report;
  int counted = static_cast<int>(report["resumed"].size());
  for (const auto& [name, count] : skipped.items()) counted += count.get<int>();
  EXPECT_EQ(counted, 6) << report;
  EXPECT_THAT(pass.err, HasSubstr("provider outage at openai at " + dead + ": its runs wait"));
  EXPECT_THAT(pass.err, HasSubstr("recovered l1"));

  // Three requests of the first runs and three of the pass reached the dead endpoint; the live
  // one answered its four.
  EXPECT_EQ(RequestsOf("dead"), 6);
  EXPECT_EQ(RequestsOf("live"), 4);
}

}  // namespace
}  // namespace mend::testing
