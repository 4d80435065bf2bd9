// The runtime's metric families (docs/metrics.md) and what moves them.
#include "mend/app/runtime_metrics.h"

#include <array>
#include <charconv>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "app/metric_labels.h"
#include "app/runtime_parts.h"
#include "mend/app/runtime.h"
#include "mend/store/run_page.h"

namespace mend::app {
namespace {

using internal::BoundedLabel;

// Model requests take from a fraction of a second to minutes.
std::vector<double> ProviderBuckets() {
  return {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300};
}

// A checkpoint save is one small transaction: well under a millisecond on a local SQLite database
// with group commit, milliseconds over the network to PostgreSQL, longer only when the disk stalls.
std::vector<double> SaveBuckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
}

// Every recovery event and the action it counts as; recovery.outage is split by its in_outage.
constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kRecoveryEvents = {{
    {"recovery.resumed", "resumed"},
    {"recovery.completed", "completed"},
    {"recovery.failed", "failed"},
    {"recovery.quarantined", "quarantined"},
    {"recovery.forked", "forked"},
    {"recovery.healed", "healed"},
    {"recovery.error", "error"},
}};
constexpr std::string_view kOutageStarted = "outage_started";
constexpr std::string_view kOutageEnded = "outage_ended";

// The heal actions that exist today (heal.action events); they are exported at 0 from the start.
constexpr std::array<std::string_view, 5> kHealActions = {"hint", "deny", "stop", "replace",
                                                          "shadow"};

constexpr std::array<std::string_view, 3> kRecallOutcomes = {"injected", "empty", "error"};

double Seconds(Duration d) {
  // The clock is wall time and may step back; a negative latency would poison the histogram sum.
  return d.count() <= 0 ? 0.0 : std::chrono::duration<double>(d).count();
}

// How many endpoints are in an outage after a recovery.outage event; from its in_outage for an
// event without the count.
int64_t EndpointsInOutage(const obs::Event& event) {
  std::optional<std::string_view> json = event.Find("endpoints_in_outage");
  int64_t count = 0;
  if (json.has_value() &&
      std::from_chars(json->data(), json->data() + json->size(), count).ec == std::errc()) {
    return count;
  }
  return internal::EventBool(event, "in_outage") ? 1 : 0;
}

std::string_view ProviderOutcome(const Status& status) {
  if (status.ok()) return "ok";
  if (status.code() == StatusCode::kCancelled) return "cancelled";
  return ErrorClassName(ClassOf(status));
}

}  // namespace

std::string_view ImproveAttemptOutcomeName(ImproveAttemptOutcome outcome) {
  switch (outcome) {
    case ImproveAttemptOutcome::kProposal:
      return "proposal";
    case ImproveAttemptOutcome::kNoImprovement:
      return "no_improvement";
    case ImproveAttemptOutcome::kRejected:
      return "rejected";
    case ImproveAttemptOutcome::kError:
      return "error";
  }
  return "error";
}

struct RuntimeMetrics::Families {
  explicit Families(obs::MetricsRegistry& r);

  obs::Counter& runs_started;
  obs::Counter& runs_completed;
  obs::CounterFamily& runs_failed;
  obs::Gauge& runs_active;
  obs::Gauge& runs_waiting;
  obs::Gauge& runs_quarantined;
  obs::Counter& collect_errors;
  obs::CounterFamily& recovery_actions;
  obs::Gauge& recovery_outage;
  obs::GaugeFamily& recovery_endpoint_outage;
  obs::CounterFamily& heal_actions;
  obs::CounterFamily& provider_requests;
  obs::HistogramFamily& provider_duration;
  obs::CounterFamily& provider_tokens;
  obs::CounterFamily& provider_cost;
  obs::Histogram& save_duration;
  obs::CounterFamily& save_errors;
  obs::CounterFamily& memory_recalls;
  obs::Counter& memory_injected_facts;
  obs::Counter& memory_degraded;
  obs::CounterFamily& improve_attempts;

  BoundedLabel providers{8};
  BoundedLabel models{16};
  BoundedLabel error_codes{32};
  BoundedLabel outage_providers{8};
  BoundedLabel outage_urls{16};
  BoundedLabel heal_action_names{16};
};

RuntimeMetrics::Families::Families(obs::MetricsRegistry& r)
    : runs_started(r.counter("mend_runs_started_total",
                             "Runs that started their conversation (new runs and session turns).")),
      runs_completed(r.counter("mend_runs_completed_total",
                               "Run attempts that ended completed (first runs and resumes).")),
      runs_failed(r.counter_family("mend_runs_failed_total",
                                   "Run attempts that ended failed, by error code.", {"code"})),
      runs_active(r.gauge("mend_runs_active", "Runs in the store with status running.")),
      runs_waiting(
          r.gauge("mend_runs_waiting", "Runs in the store waiting for an approval or an answer.")),
      runs_quarantined(r.gauge("mend_runs_quarantined", "Runs in the store in quarantine.")),
      collect_errors(r.counter("mend_metrics_collect_errors_total",
                               "Scrapes that could not read the run counts from the store.")),
      recovery_actions(r.counter_family("mend_recovery_actions_total",
                                        "Actions of this process's recovery loop, by kind.",
                                        {"action"})),
      recovery_outage(
          r.gauge("mend_recovery_outage",
                  "1 while this process's recovery loop pauses for a provider outage.")),
      recovery_endpoint_outage(r.gauge_family(
          "mend_recovery_endpoint_outage",
          "1 while this process's recovery loop pauses the runs of this endpoint, else 0.",
          {"provider", "base_url"})),
      heal_actions(r.counter_family("mend_heal_actions_total",
                                    "Heal actions on tool calls (progress guard, output checks, "
                                    "shadow mode), by kind.",
                                    {"action"})),
      provider_requests(r.counter_family("mend_provider_requests_total",
                                         "Model requests by provider, model and outcome.",
                                         {"provider", "model", "outcome"})),
      provider_duration(r.histogram_family("mend_provider_request_duration_seconds",
                                           "Time a model request took, whatever its outcome.",
                                           {"provider", "model"}, ProviderBuckets())),
      provider_tokens(
          r.counter_family("mend_provider_tokens_total",
                           "Tokens successful model requests reported, by type (input, output).",
                           {"provider", "model", "type"})),
      provider_cost(r.counter_family("mend_provider_cost_usd_total",
                                     "Cost of model requests in US dollars, from the price table.",
                                     {"provider", "model"})),
      save_duration(r.histogram("mend_checkpoint_save_duration_seconds",
                                "Time a checkpoint save took, whatever its outcome.",
                                SaveBuckets())),
      save_errors(r.counter_family("mend_checkpoint_save_errors_total",
                                   "Checkpoint saves that failed, by status code.", {"code"})),
      memory_recalls(r.counter_family("mend_memory_retrievals_total",
                                      "Long-term memory retrievals for runs, by outcome.",
                                      {"outcome"})),
      memory_injected_facts(
          r.counter("mend_memory_injected_facts_total", "Facts injected into runs' prompts.")),
      memory_degraded(r.counter("mend_memory_degraded_total",
                                "Memory retrievals that lost a signal (HyDE or embeddings).")),
      improve_attempts(r.counter_family("mend_improve_attempts_total",
                                        "Improve attempts by outcome.", {"outcome"})) {
  // Known label values are exported at 0 from the start, so a rate over them is defined before
  // the first occurrence.
  for (const auto& [type, action] : kRecoveryEvents)
    recovery_actions.WithLabels({std::string(action)});
  recovery_actions.WithLabels({std::string(kOutageStarted)});
  recovery_actions.WithLabels({std::string(kOutageEnded)});
  for (std::string_view action : kHealActions) {
    heal_actions.WithLabels({heal_action_names.Get(action)});
  }
  for (std::string_view outcome : kRecallOutcomes)
    memory_recalls.WithLabels({std::string(outcome)});
  for (auto outcome : {ImproveAttemptOutcome::kProposal, ImproveAttemptOutcome::kNoImprovement,
                       ImproveAttemptOutcome::kRejected, ImproveAttemptOutcome::kError}) {
    improve_attempts.WithLabels({std::string(ImproveAttemptOutcomeName(outcome))});
  }
}

RuntimeMetrics::RuntimeMetrics(obs::MetricsRegistry& registry)
    : f_(std::make_unique<Families>(registry)) {}

RuntimeMetrics::~RuntimeMetrics() = default;

void RuntimeMetrics::RecordEvent(const obs::Event& event) {
  const std::string& type = event.type();
  if (type == "run.started") {
    f_->runs_started.Inc();
  } else if (type == "run.completed") {
    f_->runs_completed.Inc();
  } else if (type == "run.failed") {
    f_->runs_failed.WithLabels({f_->error_codes.Get(internal::EventString(event, "code"))}).Inc();
  } else if (type == "heal.action") {
    const std::string action = internal::EventString(event, "action");
    f_->heal_actions.WithLabels({f_->heal_action_names.Get(action)}).Inc();
  } else if (type == "memory.degraded") {
    f_->memory_degraded.Inc();
  } else if (type == "recovery.outage") {
    const bool in_outage = internal::EventBool(event, "in_outage");
    f_->recovery_outage.Set(EndpointsInOutage(event) > 0 ? 1 : 0);
    // An empty base URL is the provider's default one.
    const std::string url = internal::EventString(event, "base_url");
    f_->recovery_endpoint_outage
        .WithLabels({f_->outage_providers.Get(internal::EventString(event, "provider")),
                     f_->outage_urls.Get(url.empty() ? "default" : url)})
        .Set(in_outage ? 1 : 0);
    f_->recovery_actions.WithLabels({std::string(in_outage ? kOutageStarted : kOutageEnded)}).Inc();
  } else if (type.starts_with("recovery.")) {
    for (const auto& [name, action] : kRecoveryEvents) {
      if (type == name) f_->recovery_actions.WithLabels({std::string(action)}).Inc();
    }
  }
}

void RuntimeMetrics::RecordProviderRequest(const ProviderRequestSample& sample) {
  const std::string provider = f_->providers.Get(sample.provider);
  const std::string model = f_->models.Get(sample.model);
  f_->provider_requests.WithLabels({provider, model, std::string(ProviderOutcome(sample.status))})
      .Inc();
  f_->provider_duration.WithLabels({provider, model}).Observe(Seconds(sample.latency));
  if (!sample.status.ok()) return;
  f_->provider_tokens.WithLabels({provider, model, "input"})
      .Inc(static_cast<double>(sample.usage.input_tokens));
  f_->provider_tokens.WithLabels({provider, model, "output"})
      .Inc(static_cast<double>(sample.usage.output_tokens));
  f_->provider_cost.WithLabels({provider, model}).Inc(sample.cost_usd);
}

void RuntimeMetrics::RecordCheckpointSave(Duration latency, const Status& status) {
  f_->save_duration.Observe(Seconds(latency));
  // Status code names are a fixed set of 17, so the label needs no bound.
  if (!status.ok()) f_->save_errors.WithLabels({std::string(StatusCodeName(status.code()))}).Inc();
}

void RuntimeMetrics::RecordMemoryRecall(const Status& status, size_t injected_facts) {
  std::string_view outcome = !status.ok() ? "error" : injected_facts > 0 ? "injected" : "empty";
  f_->memory_recalls.WithLabels({std::string(outcome)}).Inc();
  if (status.ok()) f_->memory_injected_facts.Inc(static_cast<double>(injected_facts));
}

void RuntimeMetrics::RecordImproveAttempt(ImproveAttemptOutcome outcome) {
  f_->improve_attempts.WithLabels({std::string(ImproveAttemptOutcomeName(outcome))}).Inc();
}

void RuntimeMetrics::CollectRunCounts(store::CheckpointStore& store) {
  const std::array<std::pair<store::RunStatus, obs::Gauge*>, 3> gauges = {{
      {store::RunStatus::kRunning, &f_->runs_active},
      {store::RunStatus::kWaiting, &f_->runs_waiting},
      {store::RunStatus::kQuarantined, &f_->runs_quarantined},
  }};
  for (const auto& [status, gauge] : gauges) {
    store::PendingQuery query;
    query.statuses = {status};
    // The page is one row; `total` comes from counting the status index.
    query.limit = 1;
    Result<store::PendingPage> page = store.ListPending(query);
    if (!page.ok()) {
      f_->collect_errors.Inc();
      return;
    }
    gauge->Set(static_cast<double>(page->total));
  }
}

Status MetricsEventSink::Write(const obs::Event& event) {
  metrics_.RecordEvent(event);
  return OkStatus();
}

void RecordImproveAttempt(Runtime& runtime, ImproveAttemptOutcome outcome) {
  if (internal::PartsOf(runtime).run_metrics != nullptr)
    internal::PartsOf(runtime).run_metrics->RecordImproveAttempt(outcome);
}

}  // namespace mend::app
