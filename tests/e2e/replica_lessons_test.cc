// Lessons under fire (issue: scale-out on PostgreSQL): 24 lesson jobs wait in the PostgreSQL lesson
// queue of one database while three `mend serve` replicas process them; the test kills a random
// replica with SIGKILL at random moments (often while its lesson request is in flight) and starts
// a new one, and once restarts the PostgreSQL server under them (or, without a way to, closes
// every connection they hold). Every acknowledged job must become exactly one fact: none lost,
// none stored twice, none dead.
//
// Needs a server: MEND_TEST_POSTGRES_URL (scripts/with_postgres); skipped without one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/postgres_e2e_test.h"
#include "tests/support/made_up_words.h"

namespace mend::testing {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kJobs = 24;
constexpr int kReplicas = 3;
constexpr int kMaxKills = 6;
constexpr uint32_t kSeed = 20261202;
constexpr std::chrono::seconds kBound(30);
constexpr std::chrono::seconds kOverallDeadline(120);
constexpr milliseconds kPoll(200);
constexpr milliseconds kMinKillGap(200);
constexpr milliseconds kMaxKillGap(400);

std::string JobTag(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "lesson-job-%02d", i);
  return buf;
}
std::string Remedy(int i) { return "Apply " + MadeUpWords(i, 6) + " before retrying"; }

// One route per job: the lesson request for job i (its task names JobTag(i)) gets lesson i after a
// second, so the work (24 s of answers over 6 workers) outlasts the kills (6 gaps of at most
// 400 ms) and kills land while requests are in flight.
std::string RoutesJson() {
  nlohmann::json routes = nlohmann::json::array();
  for (int i = 0; i < kJobs; ++i) {
    const std::string lesson = "<situation>Running " + JobTag(i) + " " + MadeUpWords(i + 100, 5) +
                               "</situation>\n<mistake>" + MadeUpWords(i + 200, 6) +
                               "</mistake>\n<correction>" + Remedy(i) + "</correction>\n<tags>" +
                               JobTag(i) + "</tags>";
    routes.push_back({{"name", JobTag(i)},
                      {"contains", JobTag(i)},
                      {"responses", {{{"text", lesson}, {"latency_ms", 1000}}}}});
  }
  return routes.dump();
}

class ReplicaLessonsTest : public PostgresE2eTest {
 protected:
  ReplicaLessonsTest() : PostgresE2eTest("mend_lesson_replicas") {}

  void SetUpWithDatabase() override {
    replicas_.resize(kReplicas);
    ASSERT_NO_FATAL_FAILURE(StartFakeLlm({"--routes", WriteTestFile("routes.json", RoutesJson())}));
    base_url_ = ServerUrl();
    // A killed replica's jobs are claimed again 2 s + 5 s after their claim. Each replica's runs,
    // memory and queue share two connections (postgres.max_connections): a module that held one
    // connection while waiting for another would hang here.
    env_.insert(env_.end(),
                {"MEND_STORE=" + db_.url(), "MEND_POSTGRES_MAX_CONNECTIONS=2",
                 "MEND_PROVIDER=openai", "MEND_MODEL=fake-model", "MEND_BASE_URL=" + base_url_,
                 "MEND_QUALITY_REFLEXION_QUEUE_BACKEND=postgres",
                 "MEND_QUALITY_REFLEXION_QUEUE_JOB_TIMEOUT=2s",
                 "MEND_QUALITY_REFLEXION_QUEUE_CLAIM_MARGIN=5s"});
  }

  nlohmann::json Mend(const std::string& home, std::vector<std::string> args) {
    return E2eTest::MendJson(std::move(args), {.home = dir_->File(home), .timeout = kBound});
  }

  // `mend serve` as replica k, its output appended to ReplicaLog(k).
  void SpawnReplica(int k) {
    PostgresE2eTest::SpawnReplica(k, {"serve", "--listen", "127.0.0.1:0"}, env_);
  }

  // The lesson facts stored so far, by the remedy they name.
  std::map<int, int> LessonsByJob(size_t* total) {
    const nlohmann::json listed = Mend("home-check", {"memory", "list"});
    std::map<int, int> by_job;
    *total = 0;
    if (!listed.is_object() || !listed.contains("facts")) return by_job;
    for (const nlohmann::json& fact : listed["facts"]) {
      ++*total;
      const std::string content = fact.value("content", "");
      for (int i = 0; i < kJobs; ++i) {
        if (content.find(Remedy(i)) != std::string::npos) ++by_job[i];
      }
    }
    return by_job;
  }

  std::string base_url_;
};

TEST_F(ReplicaLessonsTest, EveryAcknowledgedJobBecomesExactlyOneFactThroughKillsAndARestart) {
  for (int i = 0; i < kJobs; ++i) {
    const nlohmann::json enqueued = Mend(
        "home-enqueue", {"reflect", "enqueue", "--task", JobTag(i) + ": the deploy step failed",
                         "--trigger", "error", "--outcome", "exit status 1"});
    ASSERT_TRUE(enqueued.is_object()) << enqueued;
    ASSERT_EQ(enqueued.value("created", false), true) << enqueued;
  }
  for (int k = 0; k < kReplicas; ++k) ASSERT_NO_FATAL_FAILURE(SpawnReplica(k));

  std::mt19937 rng(kSeed);
  std::uniform_int_distribution<int> gap_ms(static_cast<int>(kMinKillGap.count()),
                                            static_cast<int>(kMaxKillGap.count()));
  std::uniform_int_distribution<int> victim(0, kReplicas - 1);
  const SteadyClock::time_point deadline = SteadyClock::now() + kOverallDeadline;
  SteadyClock::time_point next_kill = SteadyClock::now() + milliseconds(gap_ms(rng));
  int kills = 0;
  bool reconnected = false;
  size_t total = 0;
  std::map<int, int> by_job;
  for (;;) {
    by_job = LessonsByJob(&total);
    if (by_job.size() == static_cast<size_t>(kJobs)) {
      const nlohmann::json status = Mend("home-check", {"reflect"});
      if (status.value("wal_records", -1) == 0) break;
    }
    ASSERT_LT(SteadyClock::now(), deadline)
        << by_job.size() << " of " << kJobs << " lessons stored after " << kOverallDeadline.count()
        << " s\n"
        << ReplicaLogs();
    if (kills < kMaxKills && SteadyClock::now() >= next_kill) {
      const int k = victim(rng);
      MEND_ASSERT_OK(replicas_[k]->Kill(SIGKILL));
      auto killed = replicas_[k]->Finish(kBound);
      MEND_ASSERT_OK(killed);
      ASSERT_NO_FATAL_FAILURE(SpawnReplica(k));
      ++kills;
      next_kill = SteadyClock::now() + milliseconds(gap_ms(rng));
    }
    if (!reconnected && kills == kMaxKills / 2) {
      // The server restarted under the replicas (scripts/with_postgres gives the command; this
      // ctest entry runs alone, so no other test sees it). Without it, the server closes every
      // connection of the database instead, which is what the replicas see of a restart.
      const char* restart = std::getenv("MEND_TEST_POSTGRES_RESTART");
      if (restart != nullptr && *restart != '\0') {
        auto restarted = RunProcess({restart}, {"PATH=/usr/bin:/bin"}, kBound);
        MEND_ASSERT_OK(restarted);
        ASSERT_TRUE(restarted->status.exited && restarted->status.code == 0) << restarted->err;
      } else {
        MEND_ASSERT_OK(ExecPostgres(
            db_.url(),
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = "
            "current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'"));
      }
      reconnected = true;
    }
    std::this_thread::sleep_for(kPoll);  // polling only; correctness never depends on it
  }
  EXPECT_EQ(kills, kMaxKills) << "the replicas finished before every kill happened";
  EXPECT_EQ(total, static_cast<size_t>(kJobs)) << "a lesson was stored twice or a stray fact";
  for (int i = 0; i < kJobs; ++i) EXPECT_EQ(by_job[i], 1) << JobTag(i);
  const nlohmann::json status = Mend("home-check", {"reflect"});
  EXPECT_EQ(status.value("dlq_size", -1), 0) << status;
}

}  // namespace
}  // namespace mend::testing
