#pragma once

#include <memory>
#include <string>

#include "mend/app/runtime_metrics.h"
#include "mend/base/clock.h"
#include "mend/llm/provider.h"
#include "mend/store/checkpoint_store.h"

namespace mend::app {

struct Runtime;

namespace internal {

// The labels a MeteredProvider gives its requests when the provider or the request does not say.
struct MeterLabels {
  // The provider label; empty: the wrapped provider's name() after each request.
  std::string provider;
  // The model label of requests that name no model (the provider's configured model); empty:
  // the model of the completion, "unknown" for an error.
  std::string default_model;
};

// A provider that times every Complete() of `inner` with `clock` and records it in `metrics`
// (RecordProviderRequest). Forwards everything else; thread-safe as `inner` is. `metrics` and
// `clock` are not owned and must outlive it.
class MeteredProvider final : public llm::LlmProvider {
 public:
  MeteredProvider(std::unique_ptr<llm::LlmProvider> inner, RuntimeMetrics& metrics, Clock& clock,
                  MeterLabels labels);

  Result<llm::Completion> Complete(const llm::CompletionRequest& request) override;
  std::string_view name() const override { return inner_->name(); }

 private:
  std::unique_ptr<llm::LlmProvider> inner_;
  RuntimeMetrics& metrics_;
  Clock& clock_;
  const MeterLabels labels_;
};

// A store that times every Save() of `inner` with `clock` and records it in `metrics`
// (RecordCheckpointSave); every other call is forwarded unchanged. Thread-safe as `inner` is.
// `metrics` and `clock` are not owned and must outlive it.
std::unique_ptr<store::CheckpointStore> TimeCheckpointSaves(
    std::unique_ptr<store::CheckpointStore> inner, RuntimeMetrics& metrics, Clock& clock);

// Wires the runtime's run_metrics (RuntimeParts, already created) into the runtime: subscribes a
// MetricsEventSink to runtime.events and registers the collector that counts runs in runtime.store
// at each scrape (it reads runtime.store when it runs, so a store replaced later is the one
// counted).
void InstallRuntimeMetrics(Runtime& runtime);
// Removes that collector; ~Runtime calls it before the store goes away. Idempotent.
void UninstallRuntimeMetrics(Runtime& runtime);

}  // namespace internal
}  // namespace mend::app
