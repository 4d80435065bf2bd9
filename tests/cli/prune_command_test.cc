// `mend prune` in process on a real home: what it removes, what it never touches, the --json
// shape, --dry-run, --runs and bad durations. Runs are made by `mend run` with a scripted model
// (and, for unfinished ones, straight in the store), then aged by moving their updated_at back in
// mend.db, as time passing would.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/store/sqlite_store.h"
#include "tests/cli/cli_home_test.h"

namespace mend::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kAgentToml[] = "name = \"helper\"\ntools = [\"read_file\"]\nworkspace = \"ws\"\n";
constexpr char kScript[] =
    R"([{"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "Tuesday"}])";

class PruneCommandTest : public CliHomeTest {
 protected:
  void SetUp() override {
    CliHomeTest::SetUp();
    Write(agent_ + "/agent.toml", kAgentToml);
    Write(agent_ + "/instructions.md", "Help the user.\n");
    Write(agent_ + "/ws/notes.txt", "the deploy window is Tuesday\n");
    Script(kScript);
  }

  // Moves every run's last update `days` days back.
  void Age(int days) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((home_ + "/mend.db").c_str(), &db), SQLITE_OK);
    const std::string sql = "UPDATE runs SET updated_at = updated_at - " +
                            std::to_string(int64_t{days} * 86400 * 1'000'000'000) +
                            " WHERE id <> 'fresh'";
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }

  // Unfinished runs with three checkpoints each, written straight into the store: running,
  // waiting, quarantined, and a failed run another host holds.
  void MakeUnfinishedRuns() {
    MEND_ASSERT_OK(fs_.CreateDirs(home_));
    store::SqliteStoreOptions options;
    options.path = home_ + "/mend.db";
    Clock& clock = *SystemClock::Default();
    Result<std::unique_ptr<store::CheckpointStore>> opened = store::OpenSqliteStore(options, clock);
    MEND_ASSERT_OK(opened);
    store::CheckpointStore& s = **opened;
    const store::LeaseHolder other{"replica-b", "host-b", "boot-b", 7};
    for (const char* id : {"running", "waiting", "quarantined", "held"}) {
      store::RunRecord run;
      run.id = id;
      run.agent = "helper";
      MEND_ASSERT_OK(s.CreateRun(run));
      Result<store::Lease> lease = s.Claim(id, other, std::chrono::hours(24 * 365));
      MEND_ASSERT_OK(lease);
      for (int step = 1; step <= 3; ++step) {
        store::RunUpdate update;
        if (step == 3 && std::string(id) == "waiting") update.status = store::RunStatus::kWaiting;
        if (step == 3 && std::string(id) == "held") update.status = store::RunStatus::kFailed;
        MEND_ASSERT_OK(s.Save(*lease, {step, {"{}"}, "{}", {}}, update));
      }
      if (std::string(id) != "held") {
        MEND_ASSERT_OK(s.Release(*lease));
      }
    }
    store::RunUpdate quarantine;
    quarantine.status = store::RunStatus::kQuarantined;
    MEND_ASSERT_OK(s.UpdateUnleased("quarantined", quarantine));
  }

  // The number of checkpoints the store keeps of run `id`.
  size_t HistorySize(const std::string& id) {
    store::SqliteStoreOptions options;
    options.path = home_ + "/mend.db";
    Result<std::unique_ptr<store::CheckpointStore>> opened =
        store::OpenSqliteStore(options, *SystemClock::Default());
    EXPECT_THAT(opened, ::mend::testing::IsOk());
    if (!opened.ok()) return 0;
    Result<std::vector<store::CheckpointInfo>> history = (*opened)->History(id);
    EXPECT_THAT(history, ::mend::testing::IsOk());
    return history.ok() ? history->size() : 0;
  }

  nlohmann::json Show(const std::string& id) {
    EXPECT_EQ(Mend({"show", id, "--json"}), 0) << err();
    return Json();
  }
};

TEST_F(PruneCommandTest, OldRunsLoseTheirHistoryButShowTheSameRun) {
  ASSERT_EQ(MendWithModel({"run", agent_, "when?", "--id", "done"}), 0) << err();
  Age(40);
  nlohmann::json before = Show("done");
  ASSERT_GE(before["checkpoints"].size(), 3u);
  const size_t checkpoints = before["checkpoints"].size();
  ASSERT_EQ(Mend({"show", "done"}), 0);
  const std::string text_before = out();

  ASSERT_EQ(Mend({"prune", "--json"}), 0) << err();
  const nlohmann::json report = Json();
  EXPECT_EQ(JsonKeys(report),
            (std::set<std::string>{"older_than", "cutoff", "dry_run", "runs", "checkpoints",
                                   "runs_deleted", "event_logs", "spans", "bytes_reclaimed"}));
  EXPECT_EQ(report["older_than"], "30d");
  EXPECT_EQ(report["dry_run"], false);
  EXPECT_EQ(report["runs"], 1);
  EXPECT_EQ(report["checkpoints"], checkpoints - 1);
  EXPECT_EQ(report["runs_deleted"], 0);
  EXPECT_GT(report["bytes_reclaimed"].get<int64_t>(), 0);

  // Everything show prints is the same, but the list of checkpoints: only the final one is left.
  nlohmann::json after = Show("done");
  EXPECT_EQ(after["checkpoints"], nlohmann::json::array({before["checkpoints"].back()}));
  before.erase("checkpoints");
  after.erase("checkpoints");
  EXPECT_EQ(after, before);
  ASSERT_EQ(Mend({"show", "done"}), 0);
  const std::string text_after = out();
  const size_t list = text_before.find("\ncheckpoints (");
  ASSERT_NE(list, std::string::npos);
  EXPECT_EQ(text_after.substr(0, list), text_before.substr(0, list));
  EXPECT_THAT(text_after, HasSubstr("\ncheckpoints ("));
}

TEST_F(PruneCommandTest, UnfinishedAndHeldRunsAndFreshRunsAreUntouched) {
  MakeUnfinishedRuns();
  ASSERT_EQ(MendWithModel({"run", agent_, "when?", "--id", "fresh"}), 0) << err();
  Age(400);
  for (const char* flags : {"", "--runs"}) {
    std::vector<std::string> args = {"prune", "--json"};
    if (*flags != '\0') args.push_back(flags);
    ASSERT_EQ(Mend(args), 0) << err();
    EXPECT_EQ(Json()["runs"], 0) << flags;
    EXPECT_EQ(Json()["checkpoints"], 0) << flags;
  }
  for (const char* id : {"running", "waiting", "quarantined", "held"}) {
    EXPECT_EQ(HistorySize(id), 3u) << id;
  }
  EXPECT_GE(Show("fresh")["checkpoints"].size(), 3u);
}

TEST_F(PruneCommandTest, DryRunChangesNothingAndRunsDeletesTheRuns) {
  ASSERT_EQ(MendWithModel({"run", agent_, "when?", "--id", "done"}), 0) << err();
  Age(40);
  const nlohmann::json before = Show("done");

  ASSERT_EQ(Mend({"prune", "--runs", "--dry-run", "--json"}), 0) << err();
  EXPECT_EQ(Json()["dry_run"], true);
  EXPECT_EQ(Json()["runs_deleted"], 1);
  EXPECT_EQ(Show("done"), before);

  ASSERT_EQ(Mend({"prune", "--runs", "--older-than", "39d"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("runs deleted: 1\n"));
  EXPECT_EQ(Mend({"show", "done"}), 1);
  EXPECT_THAT(err(), HasSubstr("no run named done"));
}

TEST_F(PruneCommandTest, TheLimitIsRespected) {
  ASSERT_EQ(MendWithModel({"run", agent_, "when?", "--id", "done"}), 0) << err();
  Age(40);
  ASSERT_EQ(Mend({"prune", "--older-than", "41d", "--json"}), 0) << err();
  EXPECT_EQ(Json()["runs"], 0);
  ASSERT_EQ(Mend({"prune", "--older-than", "960h"}), 0) << err();  // 40 days: the run is older
  EXPECT_THAT(out(), HasSubstr("runs pruned: 1\n"));
}

TEST_F(PruneCommandTest, ABadDurationIsAUsageError) {
  for (const char* bad : {"30", "thirty", "0s", "-1d", "30 d"}) {
    EXPECT_EQ(Mend({"prune", "--older-than", bad}), 2) << bad;
    EXPECT_THAT(err(), StartsWith("mend: --older-than")) << bad;
    EXPECT_EQ(out(), "") << bad;
  }
}

TEST_F(PruneCommandTest, HelpStatesTheDefaultsAndTheFlags) {
  EXPECT_EQ(Mend({"prune", "--help"}), 0);
  EXPECT_THAT(out(), HasSubstr("--older-than"));
  EXPECT_THAT(out(), HasSubstr("default: 30d"));
  EXPECT_THAT(out(), HasSubstr("--dry-run"));
  EXPECT_THAT(out(), HasSubstr("--runs"));
}

}  // namespace
}  // namespace mend::cli
