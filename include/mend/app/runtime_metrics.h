#pragma once

// RuntimeMetrics, the runtime's own metric families (docs/metrics.md): how events, model requests,
// checkpoint saves, memory recalls and improve attempts are counted, with bounded label values.
// Thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "mend/base/clock.h"
#include "mend/base/status.h"
#include "mend/llm/types.h"
#include "mend/obs/events.h"
#include "mend/obs/metrics.h"
#include "mend/store/checkpoint_store.h"

namespace mend::app {

struct Runtime;

/// How one improve attempt ended, as `mend_improve_attempts_total{outcome}` counts it: the gate's
/// outcome of a finished attempt (improve::GateOutcome: proposal, no_improvement, rejected), or
/// kError when the attempt itself failed (ImproveAgent returned an error).
enum class ImproveAttemptOutcome { kProposal, kNoImprovement, kRejected, kError };
/// "proposal", "no_improvement", "rejected", "error".
std::string_view ImproveAttemptOutcomeName(ImproveAttemptOutcome outcome);

/// Counts one improve attempt in the runtime's metrics. Thread-safe.
void RecordImproveAttempt(Runtime& runtime, ImproveAttemptOutcome outcome);

/// One model request as the provider metrics see it. Label values are bounded by RuntimeMetrics.
struct ProviderRequestSample {
  std::string provider;  ///< "openai", "anthropic", "scripted", ...
  std::string model;     ///< the model asked for; "" when unknown
  Status status;         ///< the request's outcome
  Duration latency{};    ///< from sending to the end of the answer
  llm::Usage usage;      ///< of a successful request
  double cost_usd = 0;   ///< of a successful request
};

/// The runtime's own metric families (docs/metrics.md), registered on a MetricsRegistry, and the
/// mapping of everything the runtime sees onto them: the events of the bus (run.*, recovery.*,
/// heal.action, memory.degraded), model requests, checkpoint saves, memory recalls, improve
/// attempts, and the run counts of the store at scrape time. OpenRuntime creates one for every
/// runtime (Runtime::run_metrics) and wires it.
///
/// Label values that come from outside (models, provider names, error codes, action names) are
/// cleaned to [A-Za-z0-9._:/@+-] and at most 64 bytes, and each label keeps at most a fixed number
/// of distinct values (16 models, 8 providers, 32 error codes, 16 heal actions); later new values
/// are counted under "other". Run ids never become labels.
///
/// Thread-safe. The registry must outlive this object.
class RuntimeMetrics {
 public:
  /// Registers the families on `registry`, which is borrowed.
  explicit RuntimeMetrics(obs::MetricsRegistry& registry);
  ~RuntimeMetrics();
  RuntimeMetrics(const RuntimeMetrics&) = delete;
  RuntimeMetrics& operator=(const RuntimeMetrics&) = delete;

  /// Maps one event of the bus onto the counters; events it does not know are ignored.
  void RecordEvent(const obs::Event& event);
  /// One model request: counts, latency, tokens and cost per provider and model.
  void RecordProviderRequest(const ProviderRequestSample& sample);
  /// One CheckpointStore::Save: its duration, and its error code when it failed.
  void RecordCheckpointSave(Duration latency, const Status& status);
  /// One pre-run memory recall: `status` not OK when it failed; otherwise `injected_facts` facts
  /// went into the run's prompt (0: no section).
  void RecordMemoryRecall(const Status& status, size_t injected_facts);
  /// One improve attempt, by outcome.
  void RecordImproveAttempt(ImproveAttemptOutcome outcome);
  /// Sets the run gauges (running, waiting, quarantined) from `store`'s pending index: three
  /// ListPending calls of one row each. A store error leaves the gauges as they were and counts
  /// mend_metrics_collect_errors_total.
  void CollectRunCounts(store::CheckpointStore& store);

 private:
  struct Families;
  std::unique_ptr<Families> f_;
};

/// An EventSink that hands every event to RuntimeMetrics::RecordEvent. Never fails. `metrics` is
/// not owned and must outlive the sink.
class MetricsEventSink final : public obs::EventSink {
 public:
  /// `metrics` is borrowed.
  explicit MetricsEventSink(RuntimeMetrics& metrics) : metrics_(metrics) {}
  /// Hands `event` to RuntimeMetrics::RecordEvent; always OK.
  Status Write(const obs::Event& event) override;

 private:
  RuntimeMetrics& metrics_;
};

}  // namespace mend::app
