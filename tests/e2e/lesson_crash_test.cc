// Crash safety of the lesson queue with real processes: a child that owns the queue enqueues jobs
// and reports each acknowledged one; the test kills it with SIGKILL at random moments (seeded),
// starts it again several times, and finally lets a child drain everything. Every acknowledged job
// must end as exactly one lesson fact, with nothing left in the WAL or the dead-letter queue.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "mend/base/env.h"
#include "mend/lessonq/lesson_queue.h"
#include "mend/memory/fact_store.h"
#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

constexpr std::chrono::seconds kBound(30);
constexpr char kAckPrefix[] = "acked ";

class LessonCrashTest : public E2eTest {
 protected:
  // Starts an enqueuing child, reads `acks` acknowledgements, then kills it with SIGKILL.
  void EnqueueAndKill(long first, int acks) {
    const std::vector<std::string> no_env;
    ChildProcess* child =
        Spawn({LESSON_CRASH_CHILD_BINARY, "enqueue", Home(), std::to_string(first)}, &no_env);
    ASSERT_NE(child, nullptr);
    for (int i = 0; i < acks; ++i) {
      auto line = child->ReadStdoutLine(kBound);
      MEND_ASSERT_OK(line);
      ASSERT_TRUE(line->starts_with(kAckPrefix)) << *line;
      acked_.insert(line->substr(sizeof(kAckPrefix) - 1));
    }
    auto killed = KillHard(*child);
    MEND_ASSERT_OK(killed);
    EXPECT_FALSE(killed->status.exited) << killed->err;
    EXPECT_EQ(killed->status.signal, SIGKILL);
  }

  std::set<std::string> acked_;
};

TEST_F(LessonCrashTest, EveryAcknowledgedJobBecomesExactlyOneLessonAcrossKills) {
  std::mt19937 random(20261130);
  std::uniform_int_distribution<int> acks(1, 80);
  for (int round = 0; round < 6; ++round) {
    ASSERT_NO_FATAL_FAILURE(EnqueueAndKill(100000L * round, acks(random)));
  }
  ASSERT_FALSE(acked_.empty());

  auto drained = RunProcess({LESSON_CRASH_CHILD_BINARY, "drain", Home()}, {}, kBound);
  MEND_ASSERT_OK(drained);
  ASSERT_TRUE(drained->status.exited && drained->status.code == 0) << drained->err;
  EXPECT_EQ(drained->out, "drained remaining=0\n");

  Env env = Env::Default();
  lessonq::QueueOptions options;
  options.base_dir = JoinPath(Home(), "reflexion");
  auto queue = lessonq::LessonQueue::Open(env, options, nullptr);
  MEND_ASSERT_OK(queue);
  auto pending = (*queue)->Pending();
  MEND_ASSERT_OK(pending);
  EXPECT_TRUE(pending->empty());
  auto dead = (*queue)->DeadLetters();
  MEND_ASSERT_OK(dead);
  EXPECT_TRUE(dead->empty());

  memory::FactStoreOptions fact_options;
  fact_options.clock = env.clock;
  auto facts = memory::FactStore::Open(JoinPath(Home(), "mend.db"), fact_options);
  MEND_ASSERT_OK(facts);
  memory::ListOptions list;
  list.category = "lesson";
  auto lessons = (*facts)->List(list);
  MEND_ASSERT_OK(lessons);
  std::map<std::string, int> facts_per_job;
  for (const memory::Fact& fact : *lessons) {
    const size_t at = fact.content.find("handling crash job ");
    ASSERT_NE(at, std::string::npos) << fact.content;
    facts_per_job[fact.content.substr(at + 19, 16)] += 1;
  }
  for (const std::string& id : acked_) {
    EXPECT_EQ(facts_per_job[id], 1) << "job " << id;
  }
  // Jobs enqueued but killed before their acknowledgement was printed may also have landed; no
  // job is stored twice.
  for (const auto& [id, count] : facts_per_job) EXPECT_EQ(count, 1) << "job " << id;
}

}  // namespace
}  // namespace mend::testing
