// A canary shared by replicas (docs/improve.md, "Canary"; docs/operations.md, "How replicas
// behave"): three `mend` homes, as three hosts, on one PostgreSQL database and one agent folder.
// A makes a proposal (the skill-fix scenario of bench/improve); B starts a canary of it on half of
// the new runs, deciding on its own; the three replicas then run the agent at the same time, round
// after round. Each run takes the arm its id's hash gives, whichever replica runs it; a run of the
// proposal's arm on A or C reads the proposal's files from the database (the canary's copy is on
// B); the outcomes of all three count together, and exactly one process promotes.
//
// Needs a server: MEND_TEST_POSTGRES_URL (scripts/with_postgres); skipped without one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <vector>

#include "tests/e2e/postgres_e2e_test.h"

namespace mend::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kKey[] = "sk-replica-canary-KEY-5820";
constexpr std::chrono::seconds kBound(60);
constexpr char kSkill[] = "skills/entry-format.md";
constexpr char kTask[] = "Merged: SHOP-311 fixes search results ignoring the size filter.";
constexpr int kMaxRounds = 30;  // 90 runs; the rule decides after 5 runs of each arm

class ReplicaCanaryTest : public PostgresE2eTest {
 protected:
  ReplicaCanaryTest() : PostgresE2eTest("mend_canary_replicas", {.secret = kKey}) {}

  void SetUpWithDatabase() override {
    env_.push_back("MEND_STORE=" + db_.url());
    env_.push_back("MEND_IMPROVE_CANARY_MIN_RUNS=5");
    env_.push_back("MEND_IMPROVE_CANARY_MAX_RUNS=60");
    std::error_code error;
    fs::copy(Scenario() / "agent", dir_->File("agent"), fs::copy_options::recursive, error);
    ASSERT_FALSE(error) << error.message();
    // The canary's judge: a run succeeds when its answer names the part that changed, as the
    // proposal's skill asks and the folder's forbids.
    std::ofstream toml(dir_->File("agent/agent.toml"), std::ios::app);
    toml << "\n[canary]\ncheck = [\"" << Check() << "\", \"" << dir_->File("agent")
         << "\", \"--expect\", \"search\"]\n";
    ASSERT_TRUE(toml.good());
    toml.close();
    ASSERT_NO_FATAL_FAILURE(StartFakeLlm({"--routes", (Scenario() / "routes.json").string()}));
    base_url_ = ServerUrl();
  }

  static fs::path Scenario() { return fs::path(IMPROVE_SCENARIOS_DIR) / "skill-fix"; }
  static std::string Check() {
    return (fs::path(IMPROVE_SCENARIOS_DIR) / "lib/check_answer").string();
  }

  // `mend --home home-<replica> --json ARGS` on the shared database; the result's stdout as JSON.
  json Mend(const std::string& replica, std::vector<std::string> args, int expect_code = 0) {
    const std::string what = replica + " " + args[0];
    args.insert(args.begin(), "--json");
    const ChildOutput result =
        E2eTest::Mend(std::move(args), {.home = dir_->File("home-" + replica), .timeout = kBound});
    EXPECT_TRUE(result.status.exited && result.status.code == expect_code)
        << what << ": " << result.err;
    EXPECT_THAT(result.out + result.err, Not(HasSubstr(kKey)));
    return json::parse(result.out, nullptr, false);
  }

  // The lines of home-<replica>'s canary audit file of `id` (none when it has no such file).
  std::vector<json> AuditLines(const std::string& replica, const std::string& id) {
    return ReadJsonLines(dir_->File("home-" + replica + "/improve/" + id + "/canary.jsonl"),
                         IfMissing::kEmpty);
  }

  std::string base_url_;
};

TEST_F(ReplicaCanaryTest, ACanaryStartedOnOneReplicaIsSharedByAllAndDecidedOnce) {
  const json made =
      Mend("a", {"improve",      dir_->File("agent"),
                 "--check",      ShellQuote(Check()) + " " + ShellQuote(dir_->File("agent")),
                 "--cases",      (Scenario() / "cases.jsonl").string(),
                 "--provider",   "openai",
                 "--base-url",   base_url_,
                 "--held-out",   "0",
                 "--seed",       "1",
                 "--candidates", "1",
                 "--rounds",     "1",
                 "--repeats",    "3"});
  ASSERT_TRUE(made.is_object());
  ASSERT_EQ(made.value("outcome", ""), "proposal") << made.dump();
  const std::string id = made.value("attempt_id", "");
  const std::string skill = dir_->File(std::string("agent/") + kSkill);
  const std::string original = *ReadWholeFile(skill);

  // B starts the canary; A and C see it running, and the folder is untouched.
  const json started = Mend("b", {"improve", "apply", id, "--canary", "50", "--auto"});
  EXPECT_EQ(started.value("state", ""), "running") << started.dump();
  for (const char* replica : {"a", "c"}) {
    const json shown = Mend(replica, {"improve", "canary", id});
    EXPECT_EQ(shown.value("state", ""), "running") << replica;
    EXPECT_EQ(shown.value("percent", 0.0), 50.0) << replica;
    EXPECT_EQ(shown.value("auto", false), true) << replica;
  }
  EXPECT_EQ(*ReadWholeFile(skill), original);
  // No replica may apply another proposal (or this one) to the folder meanwhile.
  Mend("c", {"improve", "apply", id}, 1);

  // Rounds of three runs at once, one per replica, until the canary is decided.
  const std::vector<std::string> replicas = {"a", "b", "c"};
  std::vector<std::pair<std::string, std::string>> runs;  // (replica, run id)
  std::string state = "running";
  int rounds = 0;
  for (; rounds < kMaxRounds && state == "running"; ++rounds) {
    std::vector<ChildProcess*> children;
    for (const std::string& replica : replicas) {
      children.push_back(Spawn(MendCommand({"--json", "run", dir_->File("agent"), kTask,
                                            "--provider", "openai", "--base-url", base_url_},
                                           dir_->File("home-" + replica))));
    }
    for (size_t k = 0; k < children.size(); ++k) {
      ASSERT_NE(children[k], nullptr);
      Result<ChildOutput> done = children[k]->Finish(kBound);
      ASSERT_TRUE(done.ok()) << done.status().ToString();
      ASSERT_TRUE(done->status.exited && done->status.code == 0)
          << replicas[k] << " run: " << done->err;
      const json run = json::parse(done->out, nullptr, false);
      ASSERT_TRUE(run.is_object()) << done->out;
      runs.emplace_back(replicas[k], run.value("run_id", ""));
    }
    state = Mend("c", {"improve", "canary", id}).value("state", "");
  }
  ASSERT_EQ(state, "promoted") << "after " << rounds << " rounds";

  // Decided once: one decision line and one canary.decided event in the three homes together
  // (the deciding home's), and the folder holds the proposal's skill.
  int decisions = 0;
  int events = 0;
  for (const std::string& replica : replicas) {
    for (const json& line : AuditLines(replica, id)) {
      if (line.value("event", "") == "decided") {
        ++decisions;
        EXPECT_EQ(line.value("verdict", ""), "promote") << line.dump();
      }
    }
    for (const json& event :
         ReadJsonLines(dir_->File("home-" + replica + "/events.jsonl"), IfMissing::kEmpty)) {
      if (event.value("type", "") == "canary.decided") ++events;
    }
  }
  EXPECT_EQ(decisions, 1);
  EXPECT_EQ(events, 1);
  EXPECT_THAT(*ReadWholeFile(skill), HasSubstr("Name the part of the product that changed"));
  const json report = Mend("a", {"improve", "canary", id});
  EXPECT_EQ(report.value("verdict", ""), "promote");
  ASSERT_EQ(report["arms"].size(), 2u);
  EXPECT_GE(report["arms"][0].value("runs", 0), 5);
  EXPECT_EQ(report["arms"][0].value("successes", -1), 0);  // the folder's skill fails the check
  EXPECT_GE(report["arms"][1].value("runs", 0), 5);
  EXPECT_EQ(report["arms"][1].value("successes", -1), report["arms"][1].value("runs", 0));

  // Every replica ran both arms' runs by the same rule, and a replica without the canary's copy
  // of the files answered with the proposal's skill on its arm.
  int proposal_runs_off_b = 0;
  for (const auto& [replica, run_id] : runs) {
    const json shown = Mend(replica, {"show", run_id});
    // A run of the last round may have started after the decision: no arm, the promoted folder.
    const std::string arm = shown["arm"].is_string() ? shown["arm"].get<std::string>() : "";
    ASSERT_TRUE(arm == "baseline" || arm == id || arm.empty()) << shown.dump();
    const std::string output = shown.value("output", "");
    if (arm.empty()) {
      EXPECT_THAT(output, HasSubstr("search")) << replica << " " << run_id;
    } else if (arm == id) {
      EXPECT_THAT(output, HasSubstr("search")) << replica << " " << run_id;
      if (replica != "b") ++proposal_runs_off_b;
    }
  }
  EXPECT_GT(proposal_runs_off_b, 0);
  EXPECT_FALSE(fs::exists(dir_->File("home-a/improve/" + id + "/canary")));
}

}  // namespace
}  // namespace mend::testing
