// Reflexion in the runtime: a failed run leaves a lesson job in the WAL, the lesson workers turn
// it into a fact that later runs recall, manual lessons skip the model, the legacy mode works
// without a WAL, one process owns the workers, and the verify hook's flag becomes a lesson job.
#include "mend/app/lessons.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mend/app/memory_hooks.h"
#include "mend/app/runtime.h"
#include "mend/base/memory_file_system.h"
#include "mend/llm/scripted_provider.h"
#include "mend/obs/events.h"
#include "tests/app/agent_home_test.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kTask[] = "Deploy the payments service to staging.";
constexpr char kLessonReply[] =
    "<situation>Deploying the payments service</situation>\n"
    "<mistake>Deployed before running the database migrations</mistake>\n"
    "<correction>Run the payments database migrations before every deploy</correction>\n"
    "<tags>deploy, payments, migrations</tags>";

llm::ScriptedStep Text(std::string text) {
  llm::ScriptedStep step;
  step.text = std::move(text);
  return step;
}

llm::ScriptedStep Error(Status error) {
  llm::ScriptedStep step;
  step.error = std::move(error);
  return step;
}

class LessonsTest : public AgentHomeTest {
 protected:
  void TearDown() override {
    runtimes_.clear();
    AgentHomeTest::TearDown();
  }

  // A runtime on dir_/home whose model answers with `steps`.
  Runtime& Open(std::vector<llm::ScriptedStep> steps,
                std::map<std::string, std::string> flags = {}) {
    ConfigSources sources;
    sources.flags = std::move(flags);
    sources.flags["home"] = dir_ + "/home";
    Result<Config> config = LoadConfig(sources, *env_.fs);
    EXPECT_THAT(config, IsOk());
    auto provider = std::make_unique<llm::ScriptedProvider>(std::move(steps));
    providers_.push_back(provider.get());
    RuntimeOptions options;
    options.provider = std::move(provider);
    options.event_log = EventLog::kNone;
    auto runtime = OpenRuntime(*config, env_, std::move(options));
    EXPECT_THAT(runtime, IsOk());
    runtimes_.push_back(std::move(runtime).value());
    return *runtimes_.back();
  }

  agent::RunResult Run(Runtime& runtime, const std::string& task) {
    auto agent = OpenAgent(runtime, agent_dir_);
    EXPECT_THAT(agent, IsOk());
    auto result = (*agent)->Send(task);
    EXPECT_THAT(result, IsOk());
    return result.ok() ? *result : agent::RunResult{};
  }

  std::vector<memory::Fact> Lessons(Runtime& runtime) {
    memory::ListOptions options;
    options.category = "lesson";
    auto facts = runtime.facts->List(options);
    EXPECT_THAT(facts, IsOk());
    return facts.ok() ? *facts : std::vector<memory::Fact>{};
  }

  std::vector<llm::ScriptedProvider*> providers_;
  std::vector<std::unique_ptr<Runtime>> runtimes_;
};

TEST_F(LessonsTest, FailedRunLeavesAJobThatTheWorkersTurnIntoARecalledLesson) {
  Runtime& runtime = Open(
      {Error(InvalidArgumentError("the deploy tool rejected the manifest")), Text(kLessonReply)});
  const agent::RunResult failed = Run(runtime, kTask);
  ASSERT_EQ(failed.status, store::RunStatus::kFailed);

  auto pending = runtime.lessons.queue->Pending();
  MEND_ASSERT_OK(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].request.task, kTask);
  EXPECT_EQ((*pending)[0].request.trigger, "error");
  EXPECT_THAT((*pending)[0].request.outcome, HasSubstr("the deploy tool rejected the manifest"));
  EXPECT_TRUE(Lessons(runtime).empty());  // the hook only wrote the record

  MEND_ASSERT_OK(StartLessonWorkers(runtime));
  auto drained = runtime.lessons.queue->DrainNow(std::chrono::seconds(20));
  MEND_ASSERT_OK(drained);
  EXPECT_EQ(drained->succeeded, 1);
  EXPECT_EQ(drained->remaining, 0);
  const std::vector<memory::Fact> lessons = Lessons(runtime);
  ASSERT_EQ(lessons.size(), 1u);
  EXPECT_EQ(lessons[0].content,
            "LESSON: Deploying the payments service\n"
            "MISTAKE: Deployed before running the database migrations\n"
            "CORRECTION: Run the payments database migrations before every deploy\n"
            "TRIGGER: error");
  ASSERT_EQ(lessons[0].provenance.size(), 1u);
  EXPECT_EQ(lessons[0].provenance[0].task, kTask);

  auto recalled = RecallForTask(runtime, "Deploy the payments service to production.", "");
  MEND_ASSERT_OK(recalled);
  EXPECT_THAT(recalled->section, HasSubstr("Run the payments database migrations"));
  // The lesson generator got the protocol's user message.
  const std::vector<llm::CompletionRequest> requests = providers_[0]->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_THAT(requests[1].messages.back().content, ::testing::StartsWith("TASK:\n"));
}

// The workers say what became of each job (docs/lesson_queue.md, "Events"): an answer without
// the protocol's blocks dead-letters the job at once, and a lesson job processed later is stored.
TEST_F(LessonsTest, EachJobsFateIsAnEvent) {
  Runtime& runtime = Open(
      {Error(InvalidArgumentError("the deploy tool rejected the manifest")), Text("I cannot say."),
       Error(InvalidArgumentError("the deploy tool rejected it again")), Text(kLessonReply)});
  auto sink = std::make_shared<obs::MemorySink>();
  runtime.events->Subscribe(sink);
  MEND_ASSERT_OK(StartLessonWorkers(runtime));
  ASSERT_EQ(Run(runtime, kTask).status, store::RunStatus::kFailed);
  MEND_ASSERT_OK(runtime.lessons.queue->DrainNow(std::chrono::seconds(20)).status());
  ASSERT_EQ(Run(runtime, "Deploy the search service to staging.").status,
            store::RunStatus::kFailed);
  MEND_ASSERT_OK(runtime.lessons.queue->DrainNow(std::chrono::seconds(20)).status());
  std::vector<std::string> fates;
  for (const obs::Event& e : sink->events()) {
    if (e.type().rfind("reflexion.job_", 0) == 0) fates.push_back(e.type());
  }
  EXPECT_EQ(fates,
            (std::vector<std::string>{"reflexion.job_dead_lettered", "reflexion.job_stored"}));
  auto dead = runtime.lessons.queue->DeadLetters();
  MEND_ASSERT_OK(dead);
  EXPECT_EQ(dead->size(), 1u);
}

TEST_F(LessonsTest, CompletedRunEnqueuesNothing) {
  Runtime& runtime = Open({Text("deployed")});
  ASSERT_EQ(Run(runtime, kTask).status, store::RunStatus::kCompleted);
  auto stats = runtime.lessons.queue->Stats();
  MEND_ASSERT_OK(stats);
  EXPECT_EQ(stats->wal_records, 0);
}

TEST_F(LessonsTest, DisabledReflexionEnqueuesNothing) {
  Runtime& runtime =
      Open({Error(InvalidArgumentError("rejected"))}, {{"reflexion.enabled", "false"}});
  ASSERT_EQ(Run(runtime, kTask).status, store::RunStatus::kFailed);
  auto stats = runtime.lessons.queue->Stats();
  MEND_ASSERT_OK(stats);
  EXPECT_EQ(stats->wal_records, 0);
}

TEST_F(LessonsTest, ManualLessonIsStoredWithoutAModel) {
  Runtime& runtime = Open({});
  auto id = AddManualLesson(runtime, "  run the migrations   before deploying ");
  MEND_ASSERT_OK(id);
  auto fact = runtime.facts->Get(*id);
  MEND_ASSERT_OK(fact);
  EXPECT_EQ(fact->content,
            "LESSON: run the migrations before deploying\n"
            "MISTAKE: (user-supplied lesson; no automatic mistake detection)\n"
            "CORRECTION: run the migrations before deploying\n"
            "TRIGGER: manual");
  EXPECT_EQ(fact->category, "lesson");
  EXPECT_THAT(fact->tags, ::testing::ElementsAre("user-supplied", "reflexion", "trigger:manual"));
  EXPECT_TRUE(providers_[0]->requests().empty());
  EXPECT_THAT(AddManualLesson(runtime, "   "), StatusIs(StatusCode::kInvalidArgument));
  auto log = ReadFileToString(*env_.fs, dir_ + "/home/reflexion/LESSONS.md");
  MEND_ASSERT_OK(log);
  EXPECT_THAT(*log, HasSubstr("run the migrations before deploying"));
}

TEST_F(LessonsTest, LegacyModeProcessesWithoutAWal) {
  Runtime& runtime = Open({Error(InvalidArgumentError("rejected")), Text(kLessonReply)},
                          {{"reflexion.queue.enabled", "false"}});
  ASSERT_EQ(Run(runtime, kTask).status, store::RunStatus::kFailed);
  ASSERT_NE(runtime.lessons.detached, nullptr);
  runtime.lessons.detached->WaitIdle();
  EXPECT_EQ(Lessons(runtime).size(), 1u);
  auto stats = runtime.lessons.queue->Stats();
  MEND_ASSERT_OK(stats);
  EXPECT_EQ(stats->wal_records, 0);
}

TEST_F(LessonsTest, OneProcessOwnsTheWorkersOfAHome) {
  Runtime& first = Open({});
  Runtime& second = Open({});
  MEND_ASSERT_OK(StartLessonWorkers(first));
  EXPECT_THAT(StartLessonWorkers(second), StatusIs(StatusCode::kUnavailable));
  MEND_ASSERT_OK(StopLessonWorkers(first, std::chrono::seconds(5)));
}

TEST_F(LessonsTest, VerifiedDiscrepancyBecomesAHallucinationJob) {
  Runtime& runtime = Open(
      {Text("The capital of Australia is Sydney."), Text("1. What is the capital of Australia?"),
       Text("1. Canberra is the capital of Australia."),
       Text("<verdict>discrepancy</verdict>\n<revised>Canberra.</revised>")},
      {{"quality.verify.enabled", "true"}});
  const agent::RunResult result = Run(runtime, "What is the capital of Australia?");
  ASSERT_EQ(result.status, store::RunStatus::kCompleted);
  EXPECT_TRUE(result.flags.at("verified_with_discrepancy"));
  auto pending = runtime.lessons.queue->Pending();
  MEND_ASSERT_OK(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].request.trigger, "hallucination");
}

TEST_F(LessonsTest, UnusableLessonDirectoryDisablesOnlyTheQueue) {
  // A file where the lesson directory should be.
  MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, dir_ + "/blocker", "not a directory\n"));
  Runtime& runtime = Open({Error(InvalidArgumentError("rejected"))},
                          {{"reflexion.queue.base_dir", dir_ + "/blocker/reflexion"}});
  EXPECT_EQ(runtime.lessons.queue, nullptr);
  EXPECT_FALSE(runtime.lessons.unavailable.ok());
  EXPECT_THAT(std::string(runtime.lessons.unavailable.message()), HasSubstr("/blocker/reflexion"));
  EXPECT_THAT(StartLessonWorkers(runtime), StatusIs(runtime.lessons.unavailable.code()));
  // Long-lived commands start no workers and report nothing more than the queue's absence.
  auto events = std::make_shared<obs::MemorySink>();
  runtime.events->Subscribe(events);
  StartBackgroundWork(runtime);
  for (const obs::Event& e : events->events()) EXPECT_NE(e.type(), "reflexion.workers_failed");
  // Runs go on without the reflexion hook, and manual lessons still reach memory.
  EXPECT_EQ(Run(runtime, kTask).status, store::RunStatus::kFailed);
  auto id = AddManualLesson(runtime, "check the lesson directory permissions");
  MEND_ASSERT_OK(id);
  EXPECT_THAT(runtime.facts->Get(*id), IsOk());
}

TEST(PostgresQueueOptionsTest, TheClaimKeysReachTheQueue) {
  MemoryFileSystem fs;
  ConfigSources sources;
  sources.flags["home"] = "/h";
  sources.flags["store.url"] = "postgres://mend@db/mend";
  Result<Config> defaults = LoadConfig(sources, fs);
  ASSERT_THAT(defaults, IsOk());
  Result<lessonq::PgQueueOptions> options = PostgresQueueOptions(*defaults);
  ASSERT_THAT(options, IsOk());
  EXPECT_EQ(options->claim_margin, std::chrono::seconds(30));
  EXPECT_EQ(options->claim_commit, lessonq::ClaimCommit::kAsynchronous);

  sources.flags["reflexion.queue.claim_margin"] = "5s";
  sources.flags["reflexion.queue.claim_commit"] = "sync";
  Result<Config> set = LoadConfig(sources, fs);
  ASSERT_THAT(set, IsOk());
  options = PostgresQueueOptions(*set);
  ASSERT_THAT(options, IsOk());
  EXPECT_EQ(options->claim_margin, std::chrono::seconds(5));
  EXPECT_EQ(options->claim_commit, lessonq::ClaimCommit::kSynchronous);

  sources.flags["reflexion.queue.claim_commit"] = "sometimes";
  EXPECT_FALSE(LoadConfig(sources, fs).ok());
}

}  // namespace
}  // namespace mend::app
