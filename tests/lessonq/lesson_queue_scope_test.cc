// Which jobs a process's workers take up (WorkerScope): a job recorded with another provider, and
// with JobsTaken::kOwn a job this queue object did not enqueue, stays in the WAL as it was, for a
// process whose scope holds it. It costs no attempt and never becomes a dead letter.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "mend/lessonq/lesson_queue.h"
#include "tests/lessonq/queue_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::lessonq {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::QueueWorld;
using testing::Request;
using testing::ScriptedProcessor;
using testing::TestOptions;
using ::testing::UnorderedElementsAre;

constexpr char kLocal[] = "http://127.0.0.1:11434/v1";
constexpr char kHosted[] = "https://llm.example.com/v1";

std::unique_ptr<LessonQueue> OpenQueue(QueueWorld& world) {
  Result<std::unique_ptr<LessonQueue>> queue =
      LessonQueue::Open(world.env(), TestOptions(), nullptr);
  EXPECT_TRUE(queue.ok()) << queue.status();
  return queue.ok() ? std::move(queue).value() : nullptr;
}

LessonRequest On(int i, const std::string& base_url) {
  LessonRequest request = Request(i);
  request.provider = "openai";
  request.base_url = base_url;
  request.model = "some-model";
  return request;
}

WorkerScope Endpoint(const std::string& base_url, JobsTaken jobs = JobsTaken::kAll) {
  return WorkerScope{LessonEndpoint{"openai", base_url}, jobs};
}

TEST(LessonQueueScopeTest, AJobOfAnotherProviderWaitsUntouchedForOneThatHasIt) {
  QueueWorld world;
  auto producer = OpenQueue(world);
  MEND_ASSERT_OK(producer->Enqueue(On(1, kLocal)).status());
  MEND_ASSERT_OK(producer->Enqueue(On(2, kHosted)).status());
  MEND_ASSERT_OK(producer->Enqueue(Request(3)).status());  // no provider recorded
  const std::string local_id = JobIdFor(On(1, kLocal));

  {
    auto hosted = OpenQueue(world);
    ScriptedProcessor processor;
    MEND_ASSERT_OK(hosted->Start(processor.processor(), Endpoint(kHosted)));
    Result<DrainReport> drained = hosted->DrainNow(std::chrono::seconds(5));
    MEND_ASSERT_OK(drained);
    EXPECT_EQ(drained->succeeded, 2);
    EXPECT_EQ(drained->remaining, 1);
    // Polls and another drain leave the local job alone too.
    world.clock.Advance(std::chrono::seconds(3));
    drained = hosted->DrainNow(std::chrono::seconds(5));
    MEND_ASSERT_OK(drained);
    EXPECT_EQ(drained->succeeded, 0);
    EXPECT_EQ(drained->dead_lettered, 0);
    EXPECT_THAT(processor.ids(),
                UnorderedElementsAre(JobIdFor(On(2, kHosted)), JobIdFor(Request(3))));
    MEND_ASSERT_OK(hosted->Shutdown(std::chrono::seconds(1)));
  }

  Result<std::vector<Job>> pending = producer->Pending();
  MEND_ASSERT_OK(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].id, local_id);
  EXPECT_EQ((*pending)[0].attempts, 0);
  EXPECT_EQ((*pending)[0].last_error, "");
  EXPECT_EQ((*pending)[0].request, On(1, kLocal));
  Result<std::vector<Job>> dead = producer->DeadLetters();
  MEND_ASSERT_OK(dead);
  EXPECT_THAT(*dead, IsEmpty());

  // A process on the local endpoint (trailing slash aside) processes it.
  auto local = OpenQueue(world);
  ScriptedProcessor processor;
  MEND_ASSERT_OK(local->Start(processor.processor(), Endpoint(std::string(kLocal) + "/")));
  Result<DrainReport> drained = local->DrainNow(std::chrono::seconds(5));
  MEND_ASSERT_OK(drained);
  EXPECT_EQ(drained->succeeded, 1);
  EXPECT_EQ(drained->remaining, 0);
  EXPECT_THAT(processor.ids(), ElementsAre(local_id));
}

TEST(LessonQueueScopeTest, OwnScopeTakesOnlyTheJobsEnqueuedThroughIt) {
  QueueWorld world;
  auto earlier = OpenQueue(world);
  MEND_ASSERT_OK(earlier->Enqueue(On(1, kLocal)).status());  // a leftover of an earlier run
  MEND_ASSERT_OK(earlier->Enqueue(On(2, kLocal)).status());  // the same failure, again below

  auto run = OpenQueue(world);
  ScriptedProcessor processor;
  MEND_ASSERT_OK(run->Start(processor.processor(), Endpoint(kLocal, JobsTaken::kOwn)));
  // Replay took nothing: the leftovers are not this process's.
  Result<DrainReport> drained = run->DrainNow(std::chrono::seconds(5));
  MEND_ASSERT_OK(drained);
  EXPECT_EQ(drained->succeeded, 0);
  EXPECT_EQ(drained->remaining, 2);
  EXPECT_THAT(processor.ids(), IsEmpty());

  MEND_ASSERT_OK(run->Enqueue(On(3, kLocal)).status());
  Result<EnqueueResult> again = run->Enqueue(On(2, kLocal));
  MEND_ASSERT_OK(again);
  EXPECT_EQ(again->outcome, EnqueueOutcome::kDeduped);
  drained = run->DrainNow(std::chrono::seconds(5));
  MEND_ASSERT_OK(drained);
  EXPECT_EQ(drained->succeeded, 2);
  EXPECT_EQ(drained->remaining, 1);
  EXPECT_THAT(processor.ids(),
              UnorderedElementsAre(JobIdFor(On(3, kLocal)), JobIdFor(On(2, kLocal))));
  MEND_ASSERT_OK(run->Shutdown(std::chrono::seconds(1)));

  Result<std::vector<Job>> pending = earlier->Pending();
  MEND_ASSERT_OK(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].id, JobIdFor(On(1, kLocal)));
  EXPECT_EQ((*pending)[0].attempts, 0);
}

}  // namespace
}  // namespace mend::lessonq
