// RuntimeMetrics on its own: how events, requests, saves and recalls move the families, and how
// label values stay bounded (docs/metrics.md).
#include "mend/app/runtime_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "app/runtime_metrics_internal.h"
#include "mend/base/manual_clock.h"
#include "mend/llm/provider.h"
#include "tests/app/metrics_text.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::DoubleNear;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;

obs::Event RunFailed(std::string_view code) {
  obs::Event e("run.failed");
  e.AddString("run", "r-1").AddString("code", code).AddString("class", "permanent");
  return e;
}

class RuntimeMetricsTest : public ::testing::Test {
 protected:
  std::optional<double> Value(std::string_view series) const {
    return SampleValue(registry_.RenderPrometheus(), series);
  }

  obs::MetricsRegistry registry_;
  RuntimeMetrics metrics_{registry_};
};

TEST_F(RuntimeMetricsTest, RegistersEveryFamilyWithoutMisuse) {
  EXPECT_THAT(registry_.status(), IsOk());
  const std::string text = registry_.RenderPrometheus();
  for (const char* name : {"mend_runs_started_total",
                           "mend_runs_completed_total",
                           "mend_runs_failed_total",
                           "mend_runs_active",
                           "mend_runs_waiting",
                           "mend_runs_quarantined",
                           "mend_recovery_actions_total",
                           "mend_recovery_outage",
                           "mend_heal_actions_total",
                           "mend_provider_requests_total",
                           "mend_provider_request_duration_seconds",
                           "mend_provider_tokens_total",
                           "mend_provider_cost_usd_total",
                           "mend_checkpoint_save_duration_seconds",
                           "mend_checkpoint_save_errors_total",
                           "mend_memory_retrievals_total",
                           "mend_memory_injected_facts_total",
                           "mend_memory_degraded_total",
                           "mend_improve_attempts_total",
                           "mend_metrics_collect_errors_total"}) {
    EXPECT_THAT(text, HasSubstr(std::string("# TYPE ") + name + " ")) << name;
    EXPECT_THAT(text, HasSubstr(std::string("# HELP ") + name + " ")) << name;
  }
  // Known label values are there at 0 before anything happened.
  EXPECT_THAT(Value("mend_recovery_actions_total{action=\"quarantined\"}"), Optional(0.0));
  EXPECT_THAT(Value("mend_heal_actions_total{action=\"deny\"}"), Optional(0.0));
  EXPECT_THAT(Value("mend_improve_attempts_total{outcome=\"no_improvement\"}"), Optional(0.0));
  EXPECT_THAT(Value("mend_memory_retrievals_total{outcome=\"injected\"}"), Optional(0.0));
}

TEST_F(RuntimeMetricsTest, RunEventsMoveTheRunCounters) {
  metrics_.RecordEvent(obs::Event("run.started"));
  metrics_.RecordEvent(obs::Event("run.started"));
  metrics_.RecordEvent(obs::Event("run.completed"));
  metrics_.RecordEvent(RunFailed("MEND_RUN_NO_PROGRESS"));
  metrics_.RecordEvent(RunFailed("UNAVAILABLE"));
  metrics_.RecordEvent(RunFailed("UNAVAILABLE"));
  metrics_.RecordEvent(obs::Event("step.completed"));  // not counted anywhere
  EXPECT_THAT(Value("mend_runs_started_total"), Optional(2.0));
  EXPECT_THAT(Value("mend_runs_completed_total"), Optional(1.0));
  EXPECT_THAT(Value("mend_runs_failed_total{code=\"MEND_RUN_NO_PROGRESS\"}"), Optional(1.0));
  EXPECT_THAT(Value("mend_runs_failed_total{code=\"UNAVAILABLE\"}"), Optional(2.0));
}

TEST_F(RuntimeMetricsTest, RecoveryAndHealEventsCountByKind) {
  for (const char* type : {"recovery.resumed", "recovery.resumed", "recovery.completed",
                           "recovery.failed", "recovery.quarantined", "recovery.forked",
                           "recovery.healed", "recovery.error", "recovery.unknown_kind"}) {
    metrics_.RecordEvent(obs::Event(type));
  }
  EXPECT_THAT(Value("mend_recovery_actions_total{action=\"resumed\"}"), Optional(2.0));
  for (const char* action : {"completed", "failed", "quarantined", "forked", "healed", "error"}) {
    EXPECT_THAT(Value(std::string("mend_recovery_actions_total{action=\"") + action + "\"}"),
                Optional(1.0))
        << action;
  }

  obs::Event outage("recovery.outage");
  outage.AddBool("in_outage", true);
  metrics_.RecordEvent(outage);
  EXPECT_THAT(Value("mend_recovery_outage"), Optional(1.0));
  EXPECT_THAT(Value("mend_recovery_actions_total{action=\"outage_started\"}"), Optional(1.0));
  obs::Event over("recovery.outage");
  over.AddBool("in_outage", false);
  metrics_.RecordEvent(over);
  EXPECT_THAT(Value("mend_recovery_outage"), Optional(0.0));
  EXPECT_THAT(Value("mend_recovery_actions_total{action=\"outage_ended\"}"), Optional(1.0));

  obs::Event deny("heal.action");
  deny.AddString("run", "r-1").AddString("tool", "grep").AddString("action", "deny");
  metrics_.RecordEvent(deny);
  metrics_.RecordEvent(deny);
  EXPECT_THAT(Value("mend_heal_actions_total{action=\"deny\"}"), Optional(2.0));
  EXPECT_THAT(Value("mend_heal_actions_total{action=\"hint\"}"), Optional(0.0));
}

// Outages are per endpoint (docs/heal.md): the gauge of each endpoint follows its own outage, and
// mend_recovery_outage stays 1 while any endpoint is in one.
TEST_F(RuntimeMetricsTest, OutageGaugesFollowEachEndpoint) {
  auto outage = [](const char* url, bool in, int endpoints) {
    obs::Event e("recovery.outage");
    e.AddBool("in_outage", in)
        .AddString("provider", "openai")
        .AddString("base_url", url)
        .AddInt("endpoints_in_outage", endpoints);
    return e;
  };
  metrics_.RecordEvent(outage("http://a:1", true, 1));
  metrics_.RecordEvent(outage("http://b:2", true, 2));
  metrics_.RecordEvent(outage("http://a:1", false, 1));
  EXPECT_THAT(Value("mend_recovery_outage"), Optional(1.0));
  EXPECT_THAT(Value("mend_recovery_endpoint_outage{provider=\"openai\",base_url=\"http://a:1\"}"),
              Optional(0.0));
  EXPECT_THAT(Value("mend_recovery_endpoint_outage{provider=\"openai\",base_url=\"http://b:2\"}"),
              Optional(1.0));
  metrics_.RecordEvent(outage("http://b:2", false, 0));
  EXPECT_THAT(Value("mend_recovery_outage"), Optional(0.0));
  EXPECT_THAT(Value("mend_recovery_actions_total{action=\"outage_started\"}"), Optional(2.0));
}

TEST_F(RuntimeMetricsTest, ProviderRequestsCountOutcomeTokensCostAndLatency) {
  ProviderRequestSample ok;
  ok.provider = "openai";
  ok.model = "gpt-4o";
  ok.latency = std::chrono::milliseconds(1500);
  ok.usage = {1200, 300};
  ok.cost_usd = 0.25;
  metrics_.RecordProviderRequest(ok);
  ProviderRequestSample limited = ok;
  limited.status = ResourceExhaustedError("rate limited");
  limited.latency = std::chrono::milliseconds(40);
  metrics_.RecordProviderRequest(limited);
  ProviderRequestSample denied = ok;
  denied.status = UnauthenticatedError("bad key");
  metrics_.RecordProviderRequest(denied);
  ProviderRequestSample cancelled = ok;
  cancelled.status = CancelledError("stopped");
  metrics_.RecordProviderRequest(cancelled);

  const std::string labels = "provider=\"openai\",model=\"gpt-4o\"";
  EXPECT_THAT(Value("mend_provider_requests_total{" + labels + ",outcome=\"ok\"}"), Optional(1.0));
  EXPECT_THAT(Value("mend_provider_requests_total{" + labels + ",outcome=\"transient\"}"),
              Optional(1.0));
  EXPECT_THAT(Value("mend_provider_requests_total{" + labels + ",outcome=\"auth\"}"),
              Optional(1.0));
  EXPECT_THAT(Value("mend_provider_requests_total{" + labels + ",outcome=\"cancelled\"}"),
              Optional(1.0));
  // Failed requests report no usage: only the successful one counts tokens and cost.
  EXPECT_THAT(Value("mend_provider_tokens_total{" + labels + ",type=\"input\"}"), Optional(1200.0));
  EXPECT_THAT(Value("mend_provider_tokens_total{" + labels + ",type=\"output\"}"), Optional(300.0));
  EXPECT_THAT(Value("mend_provider_cost_usd_total{" + labels + "}"), Optional(0.25));
  EXPECT_THAT(Value("mend_provider_request_duration_seconds_count{" + labels + "}"), Optional(4.0));
  EXPECT_THAT(Value("mend_provider_request_duration_seconds_bucket{" + labels + ",le=\"0.05\"}"),
              Optional(1.0));
  EXPECT_THAT(Value("mend_provider_request_duration_seconds_bucket{" + labels + ",le=\"1\"}"),
              Optional(1.0));
  EXPECT_THAT(Value("mend_provider_request_duration_seconds_bucket{" + labels + ",le=\"2.5\"}"),
              Optional(4.0));
}

TEST_F(RuntimeMetricsTest, ModelLabelsAreCleanedAndBounded) {
  ProviderRequestSample sample;
  sample.provider = "openai";
  sample.model = "evil\"model\n{x=\"1\"}";
  metrics_.RecordProviderRequest(sample);
  EXPECT_THAT(Value("mend_provider_requests_total{provider=\"openai\",model=\"evil_model__x__1__\","
                    "outcome=\"ok\"}"),
              Optional(1.0));
  // 15 more distinct models fill the bound of 16; later ones are "other".
  for (int i = 0; i < 40; ++i) {
    sample.model = "model-" + std::to_string(i);
    metrics_.RecordProviderRequest(sample);
  }
  EXPECT_THAT(
      Value("mend_provider_requests_total{provider=\"openai\",model=\"model-14\",outcome=\"ok\"}"),
      Optional(1.0));
  EXPECT_EQ(
      Value("mend_provider_requests_total{provider=\"openai\",model=\"model-15\",outcome=\"ok\"}"),
      std::nullopt);
  EXPECT_THAT(
      Value("mend_provider_requests_total{provider=\"openai\",model=\"other\",outcome=\"ok\"}"),
      Optional(25.0));
  // A model seen before the bound was reached keeps its own series.
  sample.model = "model-3";
  metrics_.RecordProviderRequest(sample);
  EXPECT_THAT(
      Value("mend_provider_requests_total{provider=\"openai\",model=\"model-3\",outcome=\"ok\"}"),
      Optional(2.0));
  sample.model = std::string(300, 'm');
  sample.provider = "";
  metrics_.RecordProviderRequest(sample);
  EXPECT_THAT(registry_.RenderPrometheus(), Not(HasSubstr(std::string(65, 'm'))));
  EXPECT_THAT(registry_.RenderPrometheus(), HasSubstr("provider=\"unknown\""));
}

TEST_F(RuntimeMetricsTest, ErrorCodeLabelsAreBounded) {
  for (int i = 0; i < 100; ++i) metrics_.RecordEvent(RunFailed("MEND_CODE_" + std::to_string(i)));
  const std::string text = registry_.RenderPrometheus();
  size_t series = 0;
  for (size_t pos = text.find("\nmend_runs_failed_total{"); pos != std::string::npos;
       pos = text.find("\nmend_runs_failed_total{", pos + 1)) {
    ++series;
  }
  EXPECT_EQ(series, 33u);  // 32 codes and "other"
  EXPECT_THAT(SampleValue(text, "mend_runs_failed_total{code=\"other\"}"), Optional(68.0));
}

TEST_F(RuntimeMetricsTest, CheckpointSavesMemoryRecallsAndImproveAttempts) {
  metrics_.RecordCheckpointSave(std::chrono::microseconds(300), OkStatus());
  metrics_.RecordCheckpointSave(std::chrono::milliseconds(3), AbortedError("stale epoch"));
  metrics_.RecordCheckpointSave(-std::chrono::milliseconds(5), OkStatus());  // clock stepped back
  EXPECT_THAT(Value("mend_checkpoint_save_duration_seconds_count"), Optional(3.0));
  // 0.0005 renders in its shortest form.
  EXPECT_THAT(Value("mend_checkpoint_save_duration_seconds_bucket{le=\"5e-04\"}"), Optional(2.0));
  EXPECT_THAT(Value("mend_checkpoint_save_duration_seconds_sum"),
              Optional(DoubleNear(0.0033, 1e-12)));
  EXPECT_THAT(Value("mend_checkpoint_save_errors_total{code=\"ABORTED\"}"), Optional(1.0));

  metrics_.RecordMemoryRecall(OkStatus(), 3);
  metrics_.RecordMemoryRecall(OkStatus(), 0);
  metrics_.RecordMemoryRecall(InternalError("disk"), 0);
  metrics_.RecordEvent(obs::Event("memory.degraded"));
  EXPECT_THAT(Value("mend_memory_retrievals_total{outcome=\"injected\"}"), Optional(1.0));
  EXPECT_THAT(Value("mend_memory_retrievals_total{outcome=\"empty\"}"), Optional(1.0));
  EXPECT_THAT(Value("mend_memory_retrievals_total{outcome=\"error\"}"), Optional(1.0));
  EXPECT_THAT(Value("mend_memory_injected_facts_total"), Optional(3.0));
  EXPECT_THAT(Value("mend_memory_degraded_total"), Optional(1.0));

  metrics_.RecordImproveAttempt(ImproveAttemptOutcome::kProposal);
  metrics_.RecordImproveAttempt(ImproveAttemptOutcome::kError);
  metrics_.RecordImproveAttempt(ImproveAttemptOutcome::kError);
  EXPECT_THAT(Value("mend_improve_attempts_total{outcome=\"proposal\"}"), Optional(1.0));
  EXPECT_THAT(Value("mend_improve_attempts_total{outcome=\"error\"}"), Optional(2.0));
  EXPECT_THAT(Value("mend_improve_attempts_total{outcome=\"rejected\"}"), Optional(0.0));
}

// A provider whose requests take `latency` of the manual clock.
class SlowProvider final : public llm::LlmProvider {
 public:
  SlowProvider(ManualClock& clock, Duration latency, Status error)
      : clock_(clock), latency_(latency), error_(std::move(error)) {}
  Result<llm::Completion> Complete(const llm::CompletionRequest&) override {
    clock_.Advance(latency_);
    if (!error_.ok()) return error_;
    llm::Completion c;
    c.model = "answered-by-7";
    c.usage = {10, 5};
    c.cost_usd = 0.5;
    return c;
  }
  std::string_view name() const override { return "slow"; }

 private:
  ManualClock& clock_;
  Duration latency_;
  Status error_;
};

TEST_F(RuntimeMetricsTest, MeteredProviderTimesRequestsWithTheClock) {
  ManualClock clock;
  internal::MeteredProvider provider(
      std::make_unique<SlowProvider>(clock, std::chrono::milliseconds(1500), OkStatus()), metrics_,
      clock, internal::MeterLabels{"", "configured"});
  EXPECT_EQ(provider.name(), "slow");
  llm::CompletionRequest request;
  MEND_ASSERT_OK(provider.Complete(request));
  request.model = "asked";
  MEND_ASSERT_OK(provider.Complete(request));
  const std::string configured = "provider=\"slow\",model=\"configured\"";
  EXPECT_THAT(Value("mend_provider_request_duration_seconds_sum{" + configured + "}"),
              Optional(1.5));
  EXPECT_THAT(Value("mend_provider_request_duration_seconds_bucket{" + configured + ",le=\"1\"}"),
              Optional(0.0));
  EXPECT_THAT(Value("mend_provider_request_duration_seconds_bucket{" + configured + ",le=\"2.5\"}"),
              Optional(1.0));
  EXPECT_THAT(Value("mend_provider_cost_usd_total{" + configured + "}"), Optional(0.5));
  EXPECT_THAT(
      Value("mend_provider_requests_total{provider=\"slow\",model=\"asked\",outcome=\"ok\"}"),
      Optional(1.0));
}

TEST_F(RuntimeMetricsTest, MeteredProviderPassesErrorsThroughAndCountsThem) {
  ManualClock clock;
  internal::MeteredProvider provider(
      std::make_unique<SlowProvider>(clock, std::chrono::seconds(30),
                                     DeadlineExceededError("timed out").WithDetailCode("timeout")),
      metrics_, clock, internal::MeterLabels{"openai", ""});
  EXPECT_THAT(provider.Complete({}), StatusIs(StatusCode::kDeadlineExceeded));
  // Neither the request nor the configuration names a model, and an error has no completion.
  EXPECT_THAT(Value("mend_provider_requests_total{provider=\"openai\",model=\"unknown\","
                    "outcome=\"transient\"}"),
              Optional(1.0));
  EXPECT_THAT(Value("mend_provider_request_duration_seconds_sum{provider=\"openai\","
                    "model=\"unknown\"}"),
              Optional(30.0));
  EXPECT_EQ(Value("mend_provider_tokens_total{provider=\"openai\",model=\"unknown\","
                  "type=\"input\"}"),
            std::nullopt);
}

TEST_F(RuntimeMetricsTest, MeteredProviderWithoutModelUsesTheCompletionsModel) {
  ManualClock clock;
  internal::MeteredProvider provider(
      std::make_unique<SlowProvider>(clock, std::chrono::seconds(1), OkStatus()), metrics_, clock,
      internal::MeterLabels{});
  MEND_ASSERT_OK(provider.Complete({}));
  EXPECT_THAT(Value("mend_provider_requests_total{provider=\"slow\",model=\"answered-by-7\","
                    "outcome=\"ok\"}"),
              Optional(1.0));
}

}  // namespace
}  // namespace mend::app
