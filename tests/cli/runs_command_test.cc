// `mend runs` (and its alias `mend list`) in process: every run, completed ones included, newest
// first, with filters, pages, their progress from the newest checkpoint, the --json shape and
// usage errors. The runs are written straight into the home's SQLite store with a manual clock,
// so their order and times are exact.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "agent/run_state.h"
#include "mend/base/manual_clock.h"
#include "mend/base/time_format.h"
#include "mend/store/sqlite_store.h"
#include "tests/cli/cli_home_test.h"

namespace mend::cli {
namespace {

using std::chrono::seconds;
using store::RunStatus;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct RunSpec {
  std::string id;
  std::string agent;
  RunStatus status;
  int64_t steps = 0;  // model turns in its one checkpoint's state; 0: no checkpoint
  double cost_usd = 0;
};

class RunsCommandTest : public CliHomeTest {
 protected:
  // Creates the runs in order, ten seconds apart from 2025-01-02T10:00:00Z, each updated two
  // seconds after it was created.
  void MakeRuns(const std::vector<RunSpec>& runs) {
    ManualClock clock(*ParseRfc3339("2025-01-02T10:00:00Z"));
    store::SqliteStoreOptions options;
    options.path = home_ + "/mend.db";
    MEND_ASSERT_OK(fs_.CreateDirs(home_));
    Result<std::unique_ptr<store::CheckpointStore>> opened = OpenSqliteStore(options, clock);
    MEND_ASSERT_OK(opened);
    store::CheckpointStore& s = **opened;
    for (const RunSpec& spec : runs) {
      store::RunRecord run;
      run.id = spec.id;
      run.agent = spec.agent;
      run.task = "task of " + spec.id;
      MEND_ASSERT_OK(s.CreateRun(run));
      clock.Advance(seconds(2));
      if (spec.steps > 0) {
        Result<store::Lease> lease = s.Claim(spec.id, options.local, seconds(30));
        MEND_ASSERT_OK(lease);
        agent::RunState state;
        state.steps = spec.steps;
        state.input_tokens = 100 * spec.steps;
        state.output_tokens = 10 * spec.steps;
        state.cost_usd = spec.cost_usd;
        store::Checkpoint cp;
        cp.step = 1;
        cp.new_messages = {R"({"role":"user","content":"go"})"};
        cp.state = agent::EncodeRunState(state);
        MEND_ASSERT_OK(s.Save(*lease, cp, {}));
        MEND_ASSERT_OK(s.Release(*lease));
      }
      store::RunUpdate update;
      update.status = spec.status;
      if (spec.status == RunStatus::kFailed) {
        update.last_error = store::RunError{"UNAVAILABLE", "upstream 503", "transient", true};
      }
      if (spec.status == RunStatus::kWaiting) update.waiting = "approval";
      MEND_ASSERT_OK(s.UpdateUnleased(spec.id, update));
      clock.Advance(seconds(8));
    }
  }

  static std::vector<std::string> Ids(const nlohmann::json& page) {
    std::vector<std::string> ids;
    for (const nlohmann::json& run : page["runs"]) ids.push_back(run["id"]);
    return ids;
  }

  // r1..r5: a completed run with progress, then a failed, a waiting, a running and a quarantined
  // one; r1 and r4 are beta's, the others alpha's.
  std::vector<RunSpec> Five() {
    return {{"r1", "beta", RunStatus::kCompleted, 3, 0.0125},
            {"r2", "alpha", RunStatus::kFailed, 1, 0.002},
            {"r3", "alpha", RunStatus::kWaiting, 2, 0.004},
            {"r4", "beta", RunStatus::kRunning},
            {"r5", "alpha", RunStatus::kQuarantined, 1, 0}};
  }
};

TEST_F(RunsCommandTest, ListsEveryRunNewestFirstCompletedIncluded) {
  MakeRuns(Five());
  ASSERT_EQ(Mend({"runs", "--json"}), 0) << err();
  const nlohmann::json page = Json();
  EXPECT_EQ(JsonKeys(page), (std::set<std::string>{"runs", "total", "more", "next"}));
  EXPECT_THAT(Ids(page), ElementsAre("r5", "r4", "r3", "r2", "r1"));
  EXPECT_EQ(page["total"], 5);
  EXPECT_EQ(page["more"], 0);
  EXPECT_TRUE(page["next"].is_null());
  const nlohmann::json& completed = page["runs"][4];
  // The fields of `mend pending --json`, then the times and the progress.
  EXPECT_EQ(JsonKeys(completed),
            (std::set<std::string>{
                "id",         "agent",       "status",      "checkpoint",   "step",
                "attempts",   "quarantined", "interrupted", "interruption", "next_attempt_at",
                "waiting",    "last_error",  "workspace",   "model",        "agent_changed",
                "created_at", "updated_at",  "steps",       "usage",        "cost_usd"}));
  EXPECT_EQ(completed["status"], "completed");
  EXPECT_EQ(completed["created_at"], "2025-01-02T10:00:00Z");
  EXPECT_EQ(completed["updated_at"], "2025-01-02T10:00:02Z");
  EXPECT_EQ(completed["steps"], 3);
  EXPECT_EQ(completed["usage"],
            nlohmann::json::parse(R"({"input_tokens":300,"output_tokens":30})"));
  EXPECT_EQ(completed["cost_usd"], 0.0125);
  // A run without a checkpoint has made no progress yet.
  EXPECT_EQ(page["runs"][1]["steps"], 0);
  EXPECT_EQ(page["runs"][1]["cost_usd"], 0.0);
  EXPECT_EQ(page["runs"][2]["waiting"], "approval");
}

TEST_F(RunsCommandTest, TheTableShowsProgressAndTimes) {
  MakeRuns(Five());
  ASSERT_EQ(Mend({"runs"}), 0) << err();
  EXPECT_EQ(out(),
            "ID  AGENT  STATUS              STEPS  COST     CREATED               UPDATED         "
            "      LAST ERROR\n"
            "r5  alpha  quarantined         1      $0.0000  2025-01-02T10:00:40Z  "
            "2025-01-02T10:00:42Z\n"
            "r4  beta   running             0      $0.0000  2025-01-02T10:00:30Z  "
            "2025-01-02T10:00:32Z\n"
            "r3  alpha  waiting (approval)  2      $0.0040  2025-01-02T10:00:20Z  "
            "2025-01-02T10:00:22Z\n"
            "r2  alpha  failed              1      $0.0020  2025-01-02T10:00:10Z  "
            "2025-01-02T10:00:12Z  upstream 503\n"
            "r1  beta   completed           3      $0.0125  2025-01-02T10:00:00Z  "
            "2025-01-02T10:00:02Z\n");
  EXPECT_EQ(err(), "");
  // `mend list` is the same command.
  const std::string table = out();
  ASSERT_EQ(Mend({"list"}), 0) << err();
  EXPECT_EQ(out(), table);
}

TEST_F(RunsCommandTest, FiltersTakeCompletedAndEveryOtherStatus) {
  MakeRuns(Five());
  ASSERT_EQ(Mend({"runs", "--json", "--status", "completed"}), 0) << err();
  EXPECT_THAT(Ids(Json()), ElementsAre("r1"));
  ASSERT_EQ(Mend({"runs", "--json", "--status", "completed,failed", "--status", "quarantined"}), 0)
      << err();
  EXPECT_THAT(Ids(Json()), ElementsAre("r5", "r2", "r1"));
  ASSERT_EQ(Mend({"runs", "--json", "--agent", "beta"}), 0) << err();
  EXPECT_THAT(Ids(Json()), ElementsAre("r4", "r1"));
  ASSERT_EQ(Mend({"runs", "--agent", "gamma"}), 0) << err();
  EXPECT_EQ(out(), "no runs match --agent gamma\n");
}

TEST_F(RunsCommandTest, PagesFollowTheCursorAndTheLastLineGivesTheNextCommand) {
  MakeRuns(Five());
  ASSERT_EQ(Mend({"runs", "--limit", "2", "--status", "running,waiting,failed,completed"}), 0)
      << err();
  const std::string text = out();
  const std::string prefix = "2 more of 4; next page: mend --home " + home_ +
                             " runs --limit 2 --status running,waiting,failed,completed --before ";
  const size_t at = text.find(prefix);
  ASSERT_NE(at, std::string::npos) << text;
  const std::string cursor = text.substr(at + prefix.size(), text.size() - at - prefix.size() - 1);
  ASSERT_EQ(Mend({"runs", "--json", "--limit", "2", "--status", "running,waiting,failed,completed",
                  "--before", cursor}),
            0)
      << err();
  EXPECT_THAT(Ids(Json()), ElementsAre("r2", "r1"));
  EXPECT_TRUE(Json()["next"].is_null());

  // JSON pages list every run once.
  std::vector<std::string> seen;
  std::vector<std::string> args = {"runs", "--json", "--limit", "2"};
  for (int guard = 0; guard < 10; ++guard) {
    ASSERT_EQ(Mend(args), 0) << err();
    const nlohmann::json page = Json();
    for (const std::string& id : Ids(page)) seen.push_back(id);
    if (page["next"].is_null()) break;
    args = {"runs", "--json", "--limit", "2", "--before", page["next"].get<std::string>()};
  }
  EXPECT_THAT(seen, ElementsAre("r5", "r4", "r3", "r2", "r1"));
}

TEST_F(RunsCommandTest, AnEmptyStoreSaysSo) {
  ASSERT_EQ(Mend({"runs"}), 0) << err();
  EXPECT_EQ(out(), "no runs\n");
  ASSERT_EQ(Mend({"runs", "--json"}), 0) << err();
  EXPECT_EQ(out(), "{\"more\":0,\"next\":null,\"runs\":[],\"total\":0}\n");
}

TEST_F(RunsCommandTest, BadFlagsAreUsageErrorsPointingToTheHelp) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"runs", "--status", "done"},
       "mend: --status takes running, waiting, completed, failed or quarantined, not \"done\""},
      {{"runs", "--limit", "0"}, "mend: --limit must be between 1 and 1000, not 0"},
      {{"runs", "--before", "yesterday"}, "mend: --before: \"yesterday\" is not a page cursor"},
  };
  for (const auto& [args, message] : cases) {
    EXPECT_EQ(Mend(args), 2) << args[1];
    EXPECT_EQ(err(), message + " (run 'mend runs --help' for usage)\n");
    EXPECT_EQ(out(), "");
  }
}

TEST_F(RunsCommandTest, HelpListsTheFlags) {
  ASSERT_EQ(Mend({"runs", "--help"}), 0);
  EXPECT_THAT(out(), HasSubstr("--status STATUS"));
  EXPECT_THAT(out(), HasSubstr("--before CURSOR"));
  ASSERT_EQ(Mend({"--help"}), 0);
  EXPECT_THAT(out(), HasSubstr("runs"));
}

}  // namespace
}  // namespace mend::cli
