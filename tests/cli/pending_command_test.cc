// `mend pending` through the real executable: pages newest first, the "more" line and its next-page
// command, filters, the --json shape and usage errors. The runs are written straight into the
// home's SQLite store (with a manual clock, so their order is exact) before mend reads them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/store/sqlite_store.h"
#include "tests/e2e/child_process.h"
#include "tests/e2e/temp_dir.h"
#include "tests/support/status_matchers.h"

namespace mend::cli {
namespace {

using ::mend::testing::ChildOutput;
using std::chrono::seconds;
using store::RunStatus;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

struct RunSpec {
  std::string id;
  std::string agent;
  RunStatus status;
};

class PendingCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = ::mend::testing::ScopedTempDir::Create();
    MEND_ASSERT_OK(dir);
    dir_ = std::move(*dir);
    home_ = dir_->File("home");
    std::filesystem::create_directory(home_);
  }

  // Creates the runs in order, one second apart, in the home's store.
  void MakeRuns(const std::vector<RunSpec>& runs) {
    store::SqliteStoreOptions options;
    options.path = home_ + "/mend.db";
    Result<std::unique_ptr<store::CheckpointStore>> opened =
        store::OpenSqliteStore(options, clock_);
    MEND_ASSERT_OK(opened);
    store::CheckpointStore& s = **opened;
    for (const RunSpec& spec : runs) {
      clock_.Advance(seconds(1));
      store::RunRecord run;
      run.id = spec.id;
      run.agent = spec.agent;
      run.task = "task of " + spec.id;
      MEND_ASSERT_OK(s.CreateRun(run));
      store::RunUpdate update;
      update.status = spec.status;
      if (spec.status == RunStatus::kFailed) {
        update.last_error = store::RunError{"UNAVAILABLE", "upstream 503", "transient", true};
      }
      MEND_ASSERT_OK(s.UpdateUnleased(spec.id, update));
    }
  }

  // `mend --home <home> args...`, the real executable.
  ChildOutput Mend(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {MEND_BINARY, "--home", home_};
    argv.insert(argv.end(), args.begin(), args.end());
    return Exec(argv);
  }
  ChildOutput Exec(const std::vector<std::string>& argv) {
    Result<ChildOutput> result =
        ::mend::testing::RunProcess(argv, {"PATH=/usr/bin:/bin", "HOME=" + dir_->path()});
    EXPECT_THAT(result, ::mend::testing::IsOk());
    if (!result.ok()) return ChildOutput{};
    EXPECT_TRUE(result->status.exited) << "killed by signal " << result->status.signal;
    return *std::move(result);
  }

  static nlohmann::json Json(const ChildOutput& r) {
    return nlohmann::json::parse(r.out, nullptr, false);
  }
  static std::vector<std::string> Ids(const nlohmann::json& page) {
    std::vector<std::string> ids;
    for (const nlohmann::json& run : page["runs"]) ids.push_back(run["id"]);
    return ids;
  }
  static std::vector<std::string> Lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  // A usage error: exit 2, one line on stderr, nothing on stdout.
  static void ExpectUsageError(const ChildOutput& r, const std::string& message) {
    EXPECT_EQ(r.status.code, 2) << r.err;
    EXPECT_EQ(Lines(r.err).size(), 1u) << r.err;
    EXPECT_THAT(r.err, AllOf(StartsWith("mend: " + message), EndsWith("\n")));
    EXPECT_EQ(r.out, "");
  }

  // r01..r23: agents alpha and beta, every status; r03, r10 and r17 completed.
  std::vector<RunSpec> Mixed() {
    const RunStatus cycle[] = {RunStatus::kRunning,     RunStatus::kFailed, RunStatus::kWaiting,
                               RunStatus::kQuarantined, RunStatus::kFailed, RunStatus::kRunning,
                               RunStatus::kFailed};
    std::vector<RunSpec> runs;
    for (int i = 1; i <= 23; ++i) {
      std::string id = (i < 10 ? "r0" : "r") + std::to_string(i);
      RunStatus status = i % 7 == 3 ? RunStatus::kCompleted : cycle[i % 7];
      runs.push_back({id, i % 3 == 0 ? "beta" : "alpha", status});
    }
    return runs;
  }
  // The unfinished runs of `runs` matching the filters, newest first.
  static std::vector<std::string> Expected(const std::vector<RunSpec>& runs,
                                           const std::set<RunStatus>& statuses = {},
                                           const std::string& agent = "") {
    std::vector<std::string> ids;
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
      if (it->status == RunStatus::kCompleted) continue;
      if (!statuses.empty() && statuses.count(it->status) == 0) continue;
      if (!agent.empty() && it->agent != agent) continue;
      ids.push_back(it->id);
    }
    return ids;
  }

  std::unique_ptr<::mend::testing::ScopedTempDir> dir_;
  std::string home_;
  ManualClock clock_;
};

TEST_F(PendingCommandTest, JsonPagesListEveryRunOnceNewestFirst) {
  const std::vector<RunSpec> runs = Mixed();
  MakeRuns(runs);
  const std::vector<std::string> expected = Expected(runs);
  ASSERT_EQ(expected.size(), 20u);
  std::vector<std::string> seen;
  std::vector<std::string> args = {"pending", "--limit", "6", "--json"};
  for (int page = 0; page < 10; ++page) {
    ChildOutput r = Mend(args);
    ASSERT_EQ(r.status.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const nlohmann::json doc = Json(r);
    ASSERT_TRUE(doc.is_object()) << r.out;
    EXPECT_EQ(doc["total"], 20);
    std::vector<std::string> ids = Ids(doc);
    seen.insert(seen.end(), ids.begin(), ids.end());
    EXPECT_EQ(doc["more"], static_cast<int>(expected.size() - seen.size()));
    if (doc["next"].is_null()) break;
    EXPECT_EQ(ids.size(), 6u);
    args = {"pending", "--limit", "6", "--json", "--before", doc["next"].get<std::string>()};
  }
  EXPECT_EQ(seen, expected);
}

TEST_F(PendingCommandTest, JsonKeepsTheRunShapeAndAddsTheCounts) {
  MakeRuns({{"r1", "alpha", RunStatus::kFailed}, {"r2", "alpha", RunStatus::kWaiting}});
  ChildOutput r = Mend({"pending", "--json", "--limit", "1"});
  ASSERT_EQ(r.status.code, 0) << r.err;
  const nlohmann::json doc = Json(r);
  std::set<std::string> keys;
  for (auto it = doc.begin(); it != doc.end(); ++it) keys.insert(it.key());
  EXPECT_EQ(keys, (std::set<std::string>{"runs", "total", "more", "next"}));
  ASSERT_EQ(doc["runs"].size(), 1u);
  std::set<std::string> run_keys;
  for (auto it = doc["runs"][0].begin(); it != doc["runs"][0].end(); ++it) {
    run_keys.insert(it.key());
  }
  EXPECT_EQ(run_keys, (std::set<std::string>{"id", "agent", "status", "steps", "checkpoint", "step",
                                             "attempts", "quarantined", "next_attempt_at",
                                             "waiting", "last_error", "workspace", "model",
                                             "agent_changed", "interrupted", "interruption"}));
  EXPECT_EQ(doc["runs"][0]["id"], "r2");
  EXPECT_EQ(doc["total"], 2);
  EXPECT_EQ(doc["more"], 1);
  EXPECT_TRUE(doc["next"].is_string());

  r = Mend({"pending", "--json", "--before", doc["next"].get<std::string>()});
  EXPECT_THAT(Ids(Json(r)), ElementsAre("r1"));
  EXPECT_TRUE(Json(r)["next"].is_null());
  EXPECT_EQ(Json(r)["runs"][0]["last_error"]["message"], "upstream 503");
}

TEST_F(PendingCommandTest, TheTableEndsWithTheCommandForTheNextPage) {
  const std::vector<RunSpec> runs = Mixed();
  MakeRuns(runs);
  const std::vector<std::string> expected = Expected(runs, {}, "alpha");
  ASSERT_EQ(expected.size(), 14u);
  std::vector<std::string> args = {"pending", "--agent", "alpha", "--limit", "5"};
  std::vector<std::string> seen;
  for (int page = 0; page < 5; ++page) {
    ChildOutput r = Mend(args);
    ASSERT_EQ(r.status.code, 0) << r.err;
    std::vector<std::string> lines = Lines(r.out);
    ASSERT_GE(lines.size(), 2u) << r.out;
    EXPECT_THAT(lines[0], StartsWith("ID  "));
    const bool last = seen.size() + 5 >= expected.size();
    const size_t rows = lines.size() - 1 - (last ? 0 : 1);
    for (size_t i = 1; i <= rows; ++i) seen.push_back(lines[i].substr(0, lines[i].find(' ')));
    if (last) break;
    // "9 more of 14; next page: mend --home H pending --limit 5 --agent alpha --before C"
    const std::string more = std::to_string(expected.size() - seen.size()) + " more of 14; ";
    const std::string prefix = "next page: mend --home " + home_ + " pending --limit 5 --agent ";
    ASSERT_THAT(lines.back(), StartsWith(more + prefix + "alpha --before ")) << r.out;
    // Run exactly the command it prints (its words need no quoting).
    std::istringstream words(lines.back().substr(more.size() + std::string("next page: ").size()));
    args.clear();
    for (std::string word; words >> word;) args.push_back(word);
    ASSERT_EQ(args[0], "mend");
    args.erase(args.begin(), args.begin() + 3);  // mend --home H: Mend() adds them
  }
  EXPECT_EQ(seen, expected);
}

TEST_F(PendingCommandTest, StatusAndAgentFilter) {
  const std::vector<RunSpec> runs = Mixed();
  MakeRuns(runs);
  const std::vector<std::string> expected =
      Expected(runs, {RunStatus::kFailed, RunStatus::kQuarantined});
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"pending", "--json", "--status", "failed", "--status", "quarantined"},
           {"pending", "--json", "--status", "quarantined,failed"},
           {"pending", "--json", "--status=failed,quarantined", "--status", "failed"}}) {
    ChildOutput r = Mend(args);
    ASSERT_EQ(r.status.code, 0) << r.err;
    EXPECT_EQ(Ids(Json(r)), expected) << args.back();
    EXPECT_EQ(Json(r)["total"], static_cast<int>(expected.size()));
  }
  ChildOutput beta = Mend({"pending", "--json", "--agent", "beta", "--status", "waiting,running"});
  EXPECT_EQ(Ids(Json(beta)), Expected(runs, {RunStatus::kWaiting, RunStatus::kRunning}, "beta"));
  EXPECT_FALSE(Ids(Json(beta)).empty());

  ChildOutput table = Mend({"pending", "--status", "waiting"});
  ASSERT_EQ(table.status.code, 0) << table.err;
  std::vector<std::string> lines = Lines(table.out);
  ASSERT_EQ(lines.size(), 1 + Expected(runs, {RunStatus::kWaiting}).size()) << table.out;
  for (size_t i = 1; i < lines.size(); ++i) EXPECT_THAT(lines[i], HasSubstr(" waiting "));

  ChildOutput none = Mend({"pending", "--agent", "gamma", "--status", "failed"});
  EXPECT_EQ(none.status.code, 0);
  EXPECT_EQ(none.out, "no unfinished runs match --status failed --agent gamma\n");
}

TEST_F(PendingCommandTest, NothingPendingSaysSo) {
  ChildOutput r = Mend({"pending"});
  EXPECT_EQ(r.status.code, 0) << r.err;
  EXPECT_EQ(r.out, "no unfinished runs\n");
  r = Mend({"pending", "--json"});
  EXPECT_EQ(r.out, "{\"more\":0,\"next\":null,\"runs\":[],\"total\":0}\n");
  MakeRuns({{"r1", "alpha", RunStatus::kCompleted}, {"r2", "alpha", RunStatus::kRunning}});
  r = Mend({"pending"});
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;  // the header and r2; no "more" line
  EXPECT_THAT(lines[1], StartsWith("r2  alpha  running"));
}

TEST_F(PendingCommandTest, BadFlagsAreUsageErrors) {
  for (const char* status : {"completed", "bogus", "failed,done"}) {
    ExpectUsageError(Mend({"pending", "--status", status}),
                     "--status takes running, waiting, failed or quarantined, not \"");
  }
  ExpectUsageError(Mend({"pending", "--limit", "0"}), "--limit must be between 1 and 1000");
  ExpectUsageError(Mend({"pending", "--limit", "1001"}), "--limit must be between 1 and 1000");
  ExpectUsageError(Mend({"pending", "--limit=-5"}), "--limit must be between 1 and 1000");
  ExpectUsageError(Mend({"pending", "--limit", "ten"}), "");
  ExpectUsageError(Mend({"pending", "--before", "yesterday"}), "--before: \"yesterday\" is not");
  // Nothing was created by the failed invocations, not even the home's database.
  EXPECT_FALSE(std::filesystem::exists(home_ + "/mend.db"));

  ChildOutput json = Mend({"pending", "--json", "--status", "completed"});
  EXPECT_EQ(json.status.code, 2);
  EXPECT_EQ(Lines(json.err).size(), 1u);
  EXPECT_THAT(Json(json)["error"]["message"].get<std::string>(), HasSubstr("--status takes"));
}

TEST_F(PendingCommandTest, HelpStatesTheDefaultsAndTheFlags) {
  ChildOutput r = Exec({MEND_BINARY, "pending", "--help"});
  EXPECT_EQ(r.status.code, 0);
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("newest first"), HasSubstr("20 per page"), HasSubstr("--limit"),
                    HasSubstr("1 to 1000 (default: 20)"), HasSubstr("--status"),
                    HasSubstr("running, waiting, failed or quarantined"), HasSubstr("--agent"),
                    HasSubstr("--before")));
  EXPECT_THAT(r.out, Not(HasSubstr("completed")));
  EXPECT_THAT(r.err, IsEmpty());
}

}  // namespace
}  // namespace mend::cli
