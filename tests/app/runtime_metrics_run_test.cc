// The runtime's metrics under real runs (docs/metrics.md): OpenRuntime wires the provider, the
// store, the event bus and memory into the registry whether or not tracing is on, and the
// rendered text passes Prometheus' own checker.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/runtime_parts.h"
#include "mend/app/runtime.h"
#include "mend/app/runtime_metrics.h"
#include "mend/base/file_system.h"
#include "mend/llm/prices.h"
#include "mend/llm/scripted_provider.h"
#include "tests/app/agent_home_test.h"
#include "tests/app/metrics_text.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::IsOk;
using ::testing::DoubleNear;
using ::testing::HasSubstr;
using ::testing::Optional;

constexpr char kModel[] = "m-1";
// Scripted requests carry the agent folder's model, so their labels say m-1.
constexpr char kLabels[] = "provider=\"scripted\",model=\"m-1\"";

llm::ScriptedStep Text(std::string text, int64_t input_tokens = 0, int64_t output_tokens = 0) {
  llm::ScriptedStep step;
  step.text = std::move(text);
  step.input_tokens = input_tokens;
  step.output_tokens = output_tokens;
  return step;
}

llm::ScriptedStep Error(Status error) {
  llm::ScriptedStep step;
  step.error = std::move(error);
  return step;
}

std::string Series(std::string_view name, std::string_view extra = "") {
  std::string out = std::string(name) + "{" + kLabels;
  if (!extra.empty()) out += "," + std::string(extra);
  return out + "}";
}

// The path of promtool on PATH, or "" when it is not installed.
std::string FindPromtool() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/promtool";
    if (end > start && access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

struct PromtoolVerdict {
  int exit_code = -1;
  std::string output;  // what promtool printed (problems, one a line)
};

// Runs `promtool check metrics` on `text`, through a file in `dir`.
PromtoolVerdict CheckWithPromtool(const std::string& promtool, const std::string& dir,
                                  const std::string& text) {
  PromtoolVerdict verdict;
  const std::string input = dir + "/metrics.prom";
  const std::string output = dir + "/promtool.out";
  if (!WriteFileAtomically(*Env::Default().fs, input, text).ok()) return verdict;
  const std::string command =
      "'" + promtool + "' check metrics < '" + input + "' > '" + output + "' 2>&1";
  const int status = std::system(command.c_str());
  verdict.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  Result<std::string> printed = ReadFileToString(*Env::Default().fs, output);
  verdict.output = printed.ok() ? *printed : "(no output file)";
  return verdict;
}

class RuntimeMetricsRunTest : public AgentHomeTest {
 protected:
  void SetUp() override {
    AgentHomeTest::SetUp();
    MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, agent_dir_ + "/agent.toml",
                                       "name = \"t\"\nmodel = \"m-1\"\ntools = []\n"));
  }

  void TearDown() override {
    runtime_.reset();
    AgentHomeTest::TearDown();
  }

  // A runtime on the scripted provider, with tracing off unless a flag turns it on, so the
  // metrics are shown not to depend on a tracer.
  void Open(std::vector<llm::ScriptedStep> steps, std::map<std::string, std::string> flags = {}) {
    ConfigSources sources;
    sources.flags = std::move(flags);
    sources.flags["home"] = dir_ + "/home";
    sources.flags["provider.retries"] = "0";  // a scripted failure is one that lasts
    sources.flags.emplace("observe.enabled", "false");
    Result<Config> config = LoadConfig(sources, *env_.fs);
    ASSERT_THAT(config, IsOk());
    RuntimeOptions options;
    if (!steps.empty()) {
      auto prices = std::make_shared<llm::PriceTable>();
      prices->Set(kModel, llm::ModelPrice{2.0, 10.0});
      options.provider = std::make_unique<llm::ScriptedProvider>(std::move(steps), prices);
    }
    options.event_log = EventLog::kNone;
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

  std::optional<double> Value(std::string_view series) const {
    return SampleValue(runtime_->metrics->RenderPrometheus(), series);
  }

  std::unique_ptr<Runtime> runtime_;
};

TEST_F(RuntimeMetricsRunTest, CompletedRunCountsRunRequestTokensCostAndSaves) {
  ASSERT_NO_FATAL_FAILURE(Open({Text("done", 1000, 200)}));
  ASSERT_EQ(runtime_->tracer, nullptr);  // observe.enabled is off: no spans at all
  const agent::RunResult done = Run("say done");
  ASSERT_EQ(done.status, store::RunStatus::kCompleted);

  EXPECT_THAT(Value("mend_runs_started_total"), Optional(1.0));
  EXPECT_THAT(Value("mend_runs_completed_total"), Optional(1.0));
  EXPECT_THAT(Value(Series("mend_provider_requests_total", "outcome=\"ok\"")), Optional(1.0));
  EXPECT_THAT(Value(Series("mend_provider_tokens_total", "type=\"input\"")), Optional(1000.0));
  EXPECT_THAT(Value(Series("mend_provider_tokens_total", "type=\"output\"")), Optional(200.0));
  // 1000 tokens at $2/Mtok and 200 at $10/Mtok.
  EXPECT_THAT(Value(Series("mend_provider_cost_usd_total")), Optional(DoubleNear(0.004, 1e-12)));
  EXPECT_THAT(Value(Series("mend_provider_request_duration_seconds_count")), Optional(1.0));
  // Every checkpoint of the run was one timed save.
  auto history = runtime_->store->History(done.run_id);
  MEND_ASSERT_OK(history);
  ASSERT_FALSE(history->empty());
  EXPECT_THAT(Value("mend_checkpoint_save_duration_seconds_count"),
              Optional(static_cast<double>(history->size())));
  // Memory was asked and had nothing to give.
  EXPECT_THAT(Value("mend_memory_retrievals_total{outcome=\"empty\"}"), Optional(1.0));
  EXPECT_THAT(Value("mend_memory_injected_facts_total"), Optional(0.0));
  EXPECT_THAT(runtime_->metrics->status(), IsOk());
}

TEST_F(RuntimeMetricsRunTest, FailedRunsCountTheirCodeAndTheProviderOutcome) {
  ASSERT_NO_FATAL_FAILURE(Open({Error(InvalidArgumentError("the request was malformed")),
                                Error(UnavailableError("upstream is down"))}));
  ASSERT_EQ(Run("first").status, store::RunStatus::kFailed);
  ASSERT_EQ(Run("second").status, store::RunStatus::kFailed);

  EXPECT_THAT(Value("mend_runs_started_total"), Optional(2.0));
  EXPECT_THAT(Value("mend_runs_completed_total"), Optional(0.0));
  EXPECT_THAT(Value("mend_runs_failed_total{code=\"INVALID_ARGUMENT\"}"), Optional(1.0));
  EXPECT_THAT(Value("mend_runs_failed_total{code=\"UNAVAILABLE\"}"), Optional(1.0));
  EXPECT_THAT(Value(Series("mend_provider_requests_total", "outcome=\"permanent\"")),
              Optional(1.0));
  EXPECT_THAT(Value(Series("mend_provider_requests_total", "outcome=\"transient\"")),
              Optional(1.0));
  EXPECT_EQ(Value(Series("mend_provider_requests_total", "outcome=\"ok\"")), std::nullopt);
  EXPECT_EQ(Value(Series("mend_provider_tokens_total", "type=\"input\"")), std::nullopt);
  EXPECT_THAT(Value(Series("mend_provider_request_duration_seconds_count")), Optional(2.0));
}

TEST_F(RuntimeMetricsRunTest, StoppedRunCountsItsDetailCode) {
  MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, agent_dir_ + "/agent.toml",
                                     "name = \"t\"\nmodel = \"m-1\"\ntools = [\"list_dir\"]\n"
                                     "[limits]\nmax_steps = 1\n"));
  // One turn that asks for a tool, then the step limit stops the run.
  llm::ScriptedStep call = Text("");
  call.tool_calls.push_back({"c1", "list_dir", "{}"});
  ASSERT_NO_FATAL_FAILURE(Open({call}));
  ASSERT_EQ(Run("look around").status, store::RunStatus::kFailed);
  EXPECT_THAT(Value("mend_runs_failed_total{code=\"MEND_RUN_MAX_STEPS\"}"), Optional(1.0));
}

TEST_F(RuntimeMetricsRunTest, InjectedMemoryIsCounted) {
  ASSERT_NO_FATAL_FAILURE(Open({Text("done")}));
  for (const char* text : {"The team prefers tabs over spaces in Makefiles.",
                           "Use the staging cluster name blue-7 for load tests.",
                           "Release notes live in the CHANGELOG file at the repository root."}) {
    memory::NewFact filler;
    filler.content = text;
    MEND_ASSERT_OK(runtime_->facts->Add(filler));
  }
  memory::NewFact lesson;
  lesson.content = "Before deploying the payments service, run the database migrations first.";
  lesson.category = "lesson";
  lesson.tags = {"deploy", "payments"};
  MEND_ASSERT_OK(runtime_->facts->Add(lesson));

  const agent::RunResult done = Run("deploying the payments service, with its migrations");
  ASSERT_EQ(done.status, store::RunStatus::kCompleted);
  auto injected = runtime_->facts->InjectedInto(done.run_id);
  MEND_ASSERT_OK(injected);
  ASSERT_FALSE(injected->empty());
  EXPECT_THAT(Value("mend_memory_retrievals_total{outcome=\"injected\"}"), Optional(1.0));
  EXPECT_THAT(Value("mend_memory_retrievals_total{outcome=\"empty\"}"), Optional(0.0));
  EXPECT_THAT(Value("mend_memory_injected_facts_total"),
              Optional(static_cast<double>(injected->size())));
}

TEST_F(RuntimeMetricsRunTest, ConfiguredProviderIsMeteredToo) {
  const std::string script = dir_ + "/script.json";
  MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, script,
                                     R"([{"text":"done","input_tokens":7,"output_tokens":3}])"));
  MEND_ASSERT_OK(
      WriteFileAtomically(*env_.fs, agent_dir_ + "/agent.toml", "name = \"t\"\ntools = []\n"));
  ASSERT_NO_FATAL_FAILURE(Open({}, {{"provider.name", "scripted"},
                                    {"provider.script_file", script},
                                    {"provider.model", "m-cfg"}}));
  ASSERT_NE(internal::PartsOf(*runtime_).deferred, nullptr);
  ASSERT_EQ(Run("say done").status, store::RunStatus::kCompleted);
  EXPECT_THAT(Value("mend_provider_tokens_total{provider=\"scripted\",model=\"m-cfg\","
                    "type=\"input\"}"),
              Optional(7.0));
}

TEST_F(RuntimeMetricsRunTest, RunGaugesAreReadFromTheStoreAtScrapeTime) {
  ASSERT_NO_FATAL_FAILURE(Open({Text("done")}));
  EXPECT_THAT(Value("mend_runs_active"), Optional(0.0));
  const Time now = env_.clock->Now();
  for (const char* id : {"a", "b", "c", "d", "e"}) {
    store::RunRecord run;
    run.id = id;
    run.agent = "t";
    run.task = "later";
    run.created_at = run.updated_at = now;
    MEND_ASSERT_OK(runtime_->store->CreateRun(run));
  }
  store::RunUpdate waiting;
  waiting.status = store::RunStatus::kWaiting;
  waiting.waiting = "approval";
  MEND_ASSERT_OK(runtime_->store->UpdateUnleased("a", waiting));
  store::RunUpdate quarantined;
  quarantined.status = store::RunStatus::kQuarantined;
  MEND_ASSERT_OK(runtime_->store->UpdateUnleased("b", quarantined));
  MEND_ASSERT_OK(runtime_->store->UpdateUnleased("c", quarantined));

  const std::string text = runtime_->metrics->RenderPrometheus();
  EXPECT_THAT(SampleValue(text, "mend_runs_active"), Optional(2.0));
  EXPECT_THAT(SampleValue(text, "mend_runs_waiting"), Optional(1.0));
  EXPECT_THAT(SampleValue(text, "mend_runs_quarantined"), Optional(2.0));
  EXPECT_THAT(SampleValue(text, "mend_metrics_collect_errors_total"), Optional(0.0));
}

TEST_F(RuntimeMetricsRunTest, FailedSavesAreCountedByCode) {
  ASSERT_NO_FATAL_FAILURE(Open({Text("done")}));
  store::RunRecord run;
  run.id = "fenced";
  run.agent = "t";
  run.task = "x";
  run.created_at = run.updated_at = env_.clock->Now();
  MEND_ASSERT_OK(runtime_->store->CreateRun(run));
  auto stale = runtime_->store->Claim("fenced", runtime_->holder, std::chrono::seconds(30));
  MEND_ASSERT_OK(stale);
  MEND_ASSERT_OK(runtime_->store->Release(*stale));
  auto current = runtime_->store->Claim("fenced", runtime_->holder, std::chrono::seconds(30));
  MEND_ASSERT_OK(current);
  store::Checkpoint cp;
  cp.step = 1;
  cp.created_at = env_.clock->Now();
  EXPECT_THAT(runtime_->store->Save(*stale, cp, {}),
              ::mend::testing::StatusIs(StatusCode::kAborted));
  MEND_EXPECT_OK(runtime_->store->Save(*current, cp, {}));
  EXPECT_THAT(Value("mend_checkpoint_save_errors_total{code=\"ABORTED\"}"), Optional(1.0));
  EXPECT_THAT(Value("mend_checkpoint_save_duration_seconds_count"), Optional(2.0));
}

TEST_F(RuntimeMetricsRunTest, EventsOnTheBusAndImproveAttemptsReachTheRegistry) {
  ASSERT_NO_FATAL_FAILURE(Open({Text("done")}));
  obs::Event heal("heal.action");
  heal.AddString("run", "r")
      .AddInt("step", 2)
      .AddString("tool", "grep")
      .AddString("action", "stop");
  runtime_->events->Publish(std::move(heal));
  obs::Event quarantined("recovery.quarantined");
  quarantined.AddString("run", "r");
  runtime_->events->Publish(std::move(quarantined));
  RecordImproveAttempt(*runtime_, ImproveAttemptOutcome::kNoImprovement);

  EXPECT_THAT(Value("mend_heal_actions_total{action=\"stop\"}"), Optional(1.0));
  EXPECT_THAT(Value("mend_recovery_actions_total{action=\"quarantined\"}"), Optional(1.0));
  EXPECT_THAT(Value("mend_improve_attempts_total{outcome=\"no_improvement\"}"), Optional(1.0));
}

TEST_F(RuntimeMetricsRunTest, RenderedMetricsPassPromtool) {
  const std::string promtool = FindPromtool();
  if (promtool.empty()) GTEST_SKIP() << "promtool is not installed (Debian package prometheus)";
  // Tracing on this time, so the trace writer's metrics are part of the text too.
  ASSERT_NO_FATAL_FAILURE(
      Open({Text("done", 10, 2), Error(UnavailableError("down"))}, {{"observe.enabled", "true"}}));
  ASSERT_EQ(Run("one").status, store::RunStatus::kCompleted);
  ASSERT_EQ(Run("two").status, store::RunStatus::kFailed);
  obs::Event heal("heal.action");
  heal.AddString("action", "hint\"with\\odd\nbytes");
  runtime_->events->Publish(std::move(heal));
  RecordImproveAttempt(*runtime_, ImproveAttemptOutcome::kProposal);

  const std::string text = runtime_->metrics->RenderPrometheus();
  ASSERT_THAT(text, HasSubstr("mend_lessonq_queue_depth"));
  ASSERT_THAT(text, HasSubstr("mend_trace_spans_written_total"));
  const PromtoolVerdict verdict = CheckWithPromtool(promtool, dir_, text);
  EXPECT_EQ(verdict.exit_code, 0) << verdict.output << "\n--- checked text ---\n" << text;
  EXPECT_EQ(verdict.output, "") << "--- checked text ---\n" << text;
}

// The check above is only worth something if a problem makes it fail.
TEST_F(RuntimeMetricsRunTest, PromtoolCheckFailsOnAProblem) {
  const std::string promtool = FindPromtool();
  if (promtool.empty()) GTEST_SKIP() << "promtool is not installed (Debian package prometheus)";
  const PromtoolVerdict verdict = CheckWithPromtool(
      promtool, dir_, "# HELP mend_jobs Jobs.\n# TYPE mend_jobs counter\nmend_jobs 1\n");
  EXPECT_NE(verdict.exit_code, 0);
  EXPECT_THAT(verdict.output, HasSubstr("_total"));
}

}  // namespace
}  // namespace mend::app
