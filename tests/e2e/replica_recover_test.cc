// The recovery loop under fire (docs/heal.md): three `mend recover` replicas share one
// PostgreSQL store holding 200 interrupted runs, while the test kills a random replica with SIGKILL
// at random moments and starts a new one under the same name. Every run must complete exactly
// once: nothing lost, no step saved twice, and no more model requests than one per run plus the
// one each killed replica may have had in flight.
//
// Needs a server: MEND_TEST_POSTGRES_URL (scripts/with_postgres) names a database on a server
// where the test may create a database of its own; without it the test is skipped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "mend/base/clock.h"
#include "mend/store/postgres_store.h"
#include "tests/e2e/postgres_e2e_test.h"

namespace mend::testing {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kRuns = 200;
constexpr int kReplicas = 3;
constexpr int kMaxKills = 6;
constexpr uint32_t kSeed = 20240607;
// Each answer takes a little while, so a kill often lands while a request is in flight.
constexpr char kDefaultResponse[] = R"({"text": "done", "latency_ms": 50})";
// Bounds on every wait, so a hang fails the test instead of blocking ctest.
constexpr std::chrono::seconds kOverallDeadline(120);
constexpr milliseconds kPoll(100);
// Six gaps of at most 400 ms take less time than the replicas need for the runs: 200 answers of
// 50 ms each, one at a time per replica, are at least 3.3 s of work for three replicas.
constexpr milliseconds kMinKillGap(200);
constexpr milliseconds kMaxKillGap(400);

std::string RunId(int i) { return "replica-run-" + std::to_string(i); }
std::string Task(int i) { return "task " + std::to_string(i); }

class ReplicaRecoverTest : public PostgresE2eTest {
 protected:
  ReplicaRecoverTest() : PostgresE2eTest("mend_replica") {}

  void SetUpWithDatabase() override {
    replicas_.resize(kReplicas);
    db_url_ = db_.url();
    store::PostgresStoreOptions options;
    options.url = db_url_;
    auto opened = store::OpenPostgresStore(options, *SystemClock::Default());
    MEND_ASSERT_OK(opened);
    store_ = std::move(*opened);
  }

  void TearDown() override {
    for (auto& replica : replicas_) replica.reset();  // SIGKILL and reap what is still running
    server_.reset();
    store_.reset();
    MEND_EXPECT_OK(db_.Drop());
    PostgresE2eTest::TearDown();
  }

  std::string LogPath() const { return dir_->File("requests.jsonl"); }

  // Starts fake_llm_server answering "done" to every request and logging them; sets base_url_.
  void StartServer() {
    StartFakeLlm(
        {"--default", WriteTestFile("default.json", kDefaultResponse), "--log", LogPath()});
    base_url_ = ServerUrl();
  }

  void WriteAgent() {
    E2eTest::WriteAgent("agent", "name = \"replica-agent\"\ntools = [\"read_file\"]\n",
                        "Answer the task in one word.\n");
    agent_dir_ = std::filesystem::absolute(dir_->File("agent")).string();
  }

  // Runs as a process killed before its first checkpoint leaves them: running, step 0, no lease.
  void CreateInterruptedRuns() {
    for (int i = 0; i < kRuns; ++i) {
      store::RunRecord run;
      run.id = RunId(i);
      run.agent = "replica-agent";
      run.agent_dir = agent_dir_;
      run.task = Task(i);
      run.status = store::RunStatus::kRunning;
      run.metadata = R"({"kind":"send"})";
      run.created_at = SystemClock::Default()->Now();
      run.updated_at = run.created_at;
      MEND_ASSERT_OK(store_->CreateRun(run));
    }
  }

  // `mend recover` as replica r<k>, its stdout and stderr appended to ReplicaLog(k) (a file, so a
  // long-lived replica never blocks on a full pipe).
  void SpawnReplica(int k) {
    std::vector<std::string> env = env_;
    env.insert(env.end(),
               {"MEND_STORE=" + db_url_, "MEND_PROVIDER=openai", "MEND_BASE_URL=" + base_url_,
                "MEND_MODEL=fake-model", "MEND_MEMORY_ENABLED=false"});
    PostgresE2eTest::SpawnReplica(
        k, {"recover", "--interval", "200ms", "--replica", "r" + std::to_string(k)}, env);
  }

  // SIGKILL for replica k, reaped at once (an unreaped zombie would still look alive to the
  // lease check), then a new process under the same name.
  void KillAndReplace(int k) {
    MEND_ASSERT_OK(replicas_[k]->Kill(SIGKILL));
    auto killed = replicas_[k]->Finish(kBound);
    MEND_ASSERT_OK(killed);
    ASSERT_FALSE(killed->status.exited)
        << "r" << k << " had exited with " << killed->status.code << " before the kill\n"
        << ReplicaLogs();
    ASSERT_EQ(killed->status.signal, SIGKILL);
    ++kills_;
    ASSERT_NO_FATAL_FAILURE(SpawnReplica(k));
  }

  // Polls the store until no run is unfinished, killing and replacing a random replica every
  // 200-400 ms until kMaxKills kills have happened.
  void KillUntilAllDone() {
    std::mt19937 rng(kSeed);
    std::uniform_int_distribution<int> gap_ms(static_cast<int>(kMinKillGap.count()),
                                              static_cast<int>(kMaxKillGap.count()));
    std::uniform_int_distribution<int> victim(0, kReplicas - 1);
    const SteadyClock::time_point deadline = SteadyClock::now() + kOverallDeadline;
    SteadyClock::time_point next_kill = SteadyClock::now() + milliseconds(gap_ms(rng));
    for (;;) {
      auto unfinished = store_->ListRuns({.unfinished_only = true});
      MEND_ASSERT_OK(unfinished);
      if (unfinished->empty()) return;
      ASSERT_LT(SteadyClock::now(), deadline)
          << unfinished->size() << " runs still unfinished after " << kOverallDeadline.count()
          << " s (first: " << unfinished->front().id << ", status "
          << store::RunStatusName(unfinished->front().status) << ", attempts "
          << unfinished->front().attempts << ")\n"
          << ReplicaLogs();
      if (kills_ < kMaxKills && SteadyClock::now() >= next_kill) {
        ASSERT_NO_FATAL_FAILURE(KillAndReplace(victim(rng)));
        next_kill = SteadyClock::now() + milliseconds(gap_ms(rng));
      }
      // The polling interval (cut short when a kill is due); correctness never depends on it.
      SteadyClock::time_point wake = SteadyClock::now() + kPoll;
      if (kills_ < kMaxKills && next_kill < wake) wake = next_kill;
      std::this_thread::sleep_until(wake);
    }
  }

  // Every run is there once, completed with "done" as its only model turn.
  void ExpectEveryRunCompletedOnce() {
    auto all = store_->ListRuns({.unfinished_only = false});
    MEND_ASSERT_OK(all);
    ASSERT_EQ(all->size(), static_cast<size_t>(kRuns));
    std::map<std::string, int> seen;
    for (const store::RunRecord& run : *all) ++seen[run.id];
    for (int i = 0; i < kRuns; ++i) {
      EXPECT_EQ(seen[RunId(i)], 1) << RunId(i);
      auto snapshot = store_->Load(RunId(i));
      MEND_ASSERT_OK(snapshot);
      EXPECT_EQ(snapshot->run.status, store::RunStatus::kCompleted) << RunId(i);
      EXPECT_EQ(snapshot->run.task, Task(i));
      int assistant_turns = 0;
      nlohmann::json last;
      for (const std::string& text : snapshot->messages) {
        last = nlohmann::json::parse(text, nullptr, false);
        if (last.is_object() && last.value("role", "") == "assistant") ++assistant_turns;
      }
      EXPECT_EQ(assistant_turns, 1) << RunId(i) << " saved a model turn more than once";
      ASSERT_TRUE(last.is_object()) << RunId(i);
      EXPECT_EQ(last.value("role", ""), "assistant") << RunId(i);
      EXPECT_EQ(last.value("content", ""), "done") << RunId(i);
    }
  }

  // Chat requests the server logged, counted by the task they carry.
  std::map<std::string, int> RequestsByTask(int* total) {
    std::map<std::string, int> by_task;
    *total = 0;
    auto log = ReadWholeFile(LogPath());
    EXPECT_THAT(log, IsOk());
    std::istringstream in(log.value_or(""));
    for (std::string line; std::getline(in, line);) {
      ++*total;
      const nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
      const nlohmann::json body = nlohmann::json::parse(
          request.is_object() ? request.value("body", std::string()) : "", nullptr, false);
      if (!body.is_object() || !body.contains("messages")) continue;
      for (const nlohmann::json& m : body["messages"]) {
        if (m.value("role", "") == "user" && m["content"].is_string()) {
          ++by_task[m["content"].get<std::string>()];
        }
      }
    }
    return by_task;
  }

  // SIGTERM for every replica still running: each must stop cleanly.
  void StopReplicas() {
    for (int k = 0; k < kReplicas; ++k) MEND_EXPECT_OK(replicas_[k]->Kill(SIGTERM));
    for (int k = 0; k < kReplicas; ++k) {
      auto stopped = replicas_[k]->Finish(kBound);
      MEND_ASSERT_OK(stopped);
      EXPECT_TRUE(stopped->status.exited && stopped->status.code == 0)
          << "r" << k << ": exit " << stopped->status.code << ", signal " << stopped->status.signal
          << "\n"
          << ReplicaLogs();
      replicas_[k].reset();
    }
  }

  std::string db_url_;
  std::unique_ptr<store::CheckpointStore> store_;
  std::string base_url_;
  std::string agent_dir_;
  int kills_ = 0;
};

TEST_F(ReplicaRecoverTest, KilledReplicasLoseNoRunAndRepeatNoStep) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_NO_FATAL_FAILURE(WriteAgent());
  ASSERT_NO_FATAL_FAILURE(CreateInterruptedRuns());
  const SteadyClock::time_point start = SteadyClock::now();
  for (int k = 0; k < kReplicas; ++k) ASSERT_NO_FATAL_FAILURE(SpawnReplica(k));
  ASSERT_NO_FATAL_FAILURE(KillUntilAllDone());
  const auto elapsed = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start);
  ASSERT_NO_FATAL_FAILURE(StopReplicas());
  // What the replicas printed is mend's own lines, not the server's notices.
  EXPECT_THAT(ReplicaLogs(), ::testing::Not(::testing::HasSubstr("NOTICE")));

  ASSERT_NO_FATAL_FAILURE(ExpectEveryRunCompletedOnce());

  // Every request was logged on arrival, and no replica is left to send more.
  MEND_ASSERT_OK(server_->Kill(SIGTERM));
  auto stopped = server_->Finish(kBound);
  MEND_ASSERT_OK(stopped);
  EXPECT_EQ(stopped->status.code, 0) << stopped->err;
  int total = 0;
  const std::map<std::string, int> by_task = RequestsByTask(&total);
  for (int i = 0; i < kRuns; ++i) {
    auto it = by_task.find(Task(i));
    EXPECT_TRUE(it != by_task.end() && it->second >= 1) << "no model request for " << Task(i);
  }
  EXPECT_EQ(by_task.size(), static_cast<size_t>(kRuns));
  // A killed replica can leave at most its one in-flight request to be asked again; more would
  // mean two replicas drove the same step.
  EXPECT_LE(total, kRuns + kills_) << kills_ << " kills";
  EXPECT_EQ(kills_, kMaxKills) << "the runs finished before every planned kill had happened";
  std::cout << "replica recover: " << kRuns << " runs, " << kills_ << " kills, " << total
            << " model requests, " << elapsed.count() << " ms\n";
}

// The mend binary on MEND_STORE=postgres://: a run is stored in PostgreSQL, `pending` and
// `recover --once` see it there, and the database password never reaches the output.
TEST_F(ReplicaRecoverTest, MendCommandsUseThePostgresStore) {
  StartServer();
  WriteAgent();
  std::vector<std::string> env = {"PATH=/usr/bin:/bin",         "HOME=" + dir_->path(),
                                  "MEND_STORE=" + db_url_,      "MEND_PROVIDER=openai",
                                  "MEND_BASE_URL=" + base_url_, "MEND_MODEL=fake-model",
                                  "MEND_API_KEY=test-key",      "MEND_MEMORY_ENABLED=false"};
  const std::string home = dir_->File("home-cli");
  auto run = RunProcess(
      {MEND_BINARY, "--home", home, "--json", "run", agent_dir_, "hello", "--id", "pg-run"}, env);
  MEND_ASSERT_OK(run);
  EXPECT_EQ(run->status.code, 0) << run->err;
  auto stored = store_->GetRun("pg-run");
  MEND_ASSERT_OK(stored);
  EXPECT_EQ(stored->status, store::RunStatus::kCompleted);
  auto pending = RunProcess({MEND_BINARY, "--home", home, "--json", "pending"}, env);
  MEND_ASSERT_OK(pending);
  EXPECT_EQ(pending->status.code, 0) << pending->err;
  EXPECT_EQ(pending->out, "{\"more\":0,\"next\":null,\"runs\":[],\"total\":0}\n");
  auto recover = RunProcess({MEND_BINARY, "--home", home, "--json", "recover", "--once"}, env);
  MEND_ASSERT_OK(recover);
  EXPECT_EQ(recover->status.code, 0) << recover->err;
  EXPECT_NE(recover->out.find("\"resumed\":[]"), std::string::npos) << recover->out;
}

}  // namespace
}  // namespace mend::testing
