// Traces in the runtime (docs/observe.md): a failed run's lesson job is processed in the run's
// trace and linked to the span that enqueued it; the next run's memory recall is a span naming the
// facts it injected; the spans reach observe.db, a private file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mend/app/lessons.h"
#include "mend/app/retention.h"
#include "mend/app/runtime.h"
#include "mend/llm/scripted_provider.h"
#include "mend/obs/span_store.h"
#include "mend/obs/trace.h"
#include "tests/app/agent_home_test.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::IsOk;
using ::testing::SizeIs;

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

std::string Str(const obs::SpanData& span, std::string_view key) {
  const obs::AttributeValue* v = obs::FindAttribute(span.attributes, key);
  if (v == nullptr) return "<none>";
  if (const auto* s = std::get_if<std::string>(v)) return *s;
  if (const auto* i = std::get_if<int64_t>(v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(v)) return *b ? "true" : "false";
  return "<other>";
}

class TraceRuntimeTest : public AgentHomeTest {
 protected:
  void TearDown() override {
    runtime_.reset();
    AgentHomeTest::TearDown();
  }

  void Open(std::vector<llm::ScriptedStep> steps) {
    ConfigSources sources;
    sources.flags["home"] = dir_ + "/home";
    Result<Config> config = LoadConfig(sources, *env_.fs);
    ASSERT_THAT(config, IsOk());
    RuntimeOptions options;
    options.provider = std::make_unique<llm::ScriptedProvider>(std::move(steps));
    options.event_log = EventLog::kNone;
    options.span_processor = spans_;
    auto runtime = OpenRuntime(*config, env_, std::move(options));
    ASSERT_THAT(runtime, IsOk());
    runtime_ = std::move(runtime).value();
  }

  agent::RunResult Run(const std::string& task) {
    auto agent = OpenAgent(*runtime_, agent_dir_);
    EXPECT_THAT(agent, IsOk());
    if (!agent.ok()) return {};
    auto result = (*agent)->Send(task);
    EXPECT_THAT(result, IsOk());
    return result.ok() ? *result : agent::RunResult{};
  }

  std::vector<obs::SpanData> Named(std::string_view prefix) const {
    std::vector<obs::SpanData> out;
    for (const obs::SpanData& s : spans_->spans()) {
      if (s.name.rfind(prefix, 0) == 0) out.push_back(s);
    }
    return out;
  }

  std::shared_ptr<obs::MemorySpanProcessor> spans_ = std::make_shared<obs::MemorySpanProcessor>();
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(TraceRuntimeTest, ALessonJobJoinsTheTraceOfTheRunThatAskedForIt) {
  ASSERT_NO_FATAL_FAILURE(Open({Error(InvalidArgumentError("the deploy tool rejected it")),
                                Text(kLessonReply), Text("deployed")}));
  const agent::RunResult failed = Run(kTask);
  ASSERT_EQ(failed.status, store::RunStatus::kFailed);
  MEND_ASSERT_OK(StartLessonWorkers(*runtime_));
  auto drained = runtime_->lessons.queue->DrainNow(std::chrono::seconds(20));
  MEND_ASSERT_OK(drained);
  ASSERT_EQ(drained->succeeded, 1);

  std::vector<obs::SpanData> attempts = Named("invoke_agent");
  ASSERT_THAT(attempts, SizeIs(1));
  EXPECT_EQ(attempts[0].status, obs::SpanStatus::kError);
  std::vector<obs::SpanData> enqueued = Named("mend.reflexion.enqueue");
  ASSERT_THAT(enqueued, SizeIs(1));
  EXPECT_EQ(enqueued[0].parent_span_id, attempts[0].context.span_id);
  EXPECT_EQ(enqueued[0].kind, obs::SpanKind::kProducer);
  const std::string job_id = Str(enqueued[0], "mend.lesson.job_id");
  EXPECT_EQ(job_id.size(), 16u);

  std::vector<obs::SpanData> jobs = Named("mend.lesson.job");
  ASSERT_THAT(jobs, SizeIs(1));
  const obs::SpanData& job = jobs[0];
  EXPECT_EQ(job.context.trace_id, failed.trace_id);
  EXPECT_EQ(job.run_id, failed.run_id);
  EXPECT_EQ(job.parent_span_id, "");
  EXPECT_EQ(job.kind, obs::SpanKind::kConsumer);
  EXPECT_EQ(Str(job, "mend.lesson.job_id"), job_id);
  EXPECT_EQ(Str(job, "mend.lesson.outcome"), "stored");
  ASSERT_THAT(job.links, SizeIs(1));
  EXPECT_EQ(job.links[0].context, enqueued[0].context);
  // The lesson generator's model call is a chat span under the job.
  int chats_under_job = 0;
  for (const obs::SpanData& chat : Named("chat")) {
    chats_under_job += chat.parent_span_id == job.context.span_id;
  }
  EXPECT_EQ(chats_under_job, 1);

  // The next similar run recalls the lesson: a span names the injected fact.
  spans_->Clear();
  ASSERT_EQ(Run("Deploy the payments service to production.").status, store::RunStatus::kCompleted);
  std::vector<obs::SpanData> recalls = Named("mend.memory.recall");
  ASSERT_THAT(recalls, SizeIs(1));
  const auto* ids = std::get_if<std::vector<std::string>>(
      obs::FindAttribute(recalls[0].attributes, "mend.memory.fact_ids"));
  ASSERT_NE(ids, nullptr);
  EXPECT_THAT(*ids, SizeIs(1));
}

TEST_F(TraceRuntimeTest, SpansReachAPrivateObserveDb) {
  ASSERT_NO_FATAL_FAILURE(Open({Text("done")}));
  const agent::RunResult done = Run("say done");
  ASSERT_EQ(done.status, store::RunStatus::kCompleted);
  MEND_ASSERT_OK(runtime_->tracer->Flush(std::chrono::seconds(20)));
  const std::string path = dir_ + "/home/observe.db";
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto store = obs::SpanStore::OpenReadOnly(path);
  MEND_ASSERT_OK(store);
  auto summary = (*store)->RunSummary(done.run_id);
  MEND_ASSERT_OK(summary);
  EXPECT_EQ(summary->trace_id, done.trace_id);
  EXPECT_EQ(summary->status, "completed");
  EXPECT_EQ(summary->attempts, 1);
  EXPECT_EQ(summary->model_turns, 1);
}

TEST_F(TraceRuntimeTest, PruneKeepsTheSpansOfUnfinishedRuns) {
  ASSERT_NO_FATAL_FAILURE(Open({Text("done")}));
  const agent::RunResult done = Run("say done");
  ASSERT_EQ(done.status, store::RunStatus::kCompleted);
  // An unfinished run with a span of its own.
  store::RunRecord pending;
  pending.id = "pending-1";
  pending.agent = "t";
  pending.task = "later";
  pending.created_at = pending.updated_at = env_.clock->Now();
  MEND_ASSERT_OK(runtime_->store->CreateRun(pending));
  runtime_->tracer->StartSpan("invoke_agent t", obs::SpanStart{.run_id = "pending-1"}).End();
  MEND_ASSERT_OK(runtime_->tracer->Flush(std::chrono::seconds(20)));

  // Everything is older than a cutoff in the future: only the finished run's spans go.
  ASSERT_TRUE(runtime_->prune_spans);
  Result<int64_t> pruned =
      runtime_->prune_spans(env_.clock->Now() + std::chrono::hours(1), store::PruneMode::kApply);
  ASSERT_THAT(pruned, IsOk());
  EXPECT_EQ(*pruned, 2);  // the completed run's attempt and model turn
  auto store = obs::SpanStore::OpenReadOnly(dir_ + "/home/observe.db");
  MEND_ASSERT_OK(store);
  EXPECT_THAT((*store)->RunSummary(done.run_id), ::mend::testing::StatusIs(StatusCode::kNotFound));
  EXPECT_THAT((*store)->RunSummary("pending-1"), IsOk());
}

TEST_F(TraceRuntimeTest, ObserveDisabledWritesNoObserveDb) {
  ConfigSources sources;
  sources.flags["home"] = dir_ + "/home";
  sources.env["MEND_OBSERVE_ENABLED"] = "false";
  Result<Config> config = LoadConfig(sources, *env_.fs);
  ASSERT_THAT(config, IsOk());
  RuntimeOptions options;
  options.provider = std::make_unique<llm::ScriptedProvider>(std::vector{Text("done")});
  options.event_log = EventLog::kNone;
  auto runtime = OpenRuntime(*config, env_, std::move(options));
  ASSERT_THAT(runtime, IsOk());
  runtime_ = std::move(runtime).value();
  EXPECT_EQ(runtime_->tracer, nullptr);
  EXPECT_EQ(Run("say done").trace_id, "");
  struct stat st {};
  EXPECT_NE(stat((dir_ + "/home/observe.db").c_str(), &st), 0);
}

}  // namespace
}  // namespace mend::app
