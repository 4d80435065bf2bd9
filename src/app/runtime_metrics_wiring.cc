// Where the runtime's metrics come from: a provider decorator, the event bus and a scrape-time
// collector over the store (the checkpoint store decorator is in timed_checkpoint_store.cc).
#include <memory>
#include <utility>

#include "app/runtime_metrics_internal.h"
#include "app/runtime_parts.h"
#include "mend/app/runtime.h"

namespace mend::app::internal {

MeteredProvider::MeteredProvider(std::unique_ptr<llm::LlmProvider> inner, RuntimeMetrics& metrics,
                                 Clock& clock, MeterLabels labels)
    : inner_(std::move(inner)), metrics_(metrics), clock_(clock), labels_(std::move(labels)) {}

Result<llm::Completion> MeteredProvider::Complete(const llm::CompletionRequest& request) {
  const Time start = clock_.Now();
  Result<llm::Completion> completion = inner_->Complete(request);
  ProviderRequestSample sample;
  sample.latency = clock_.Now() - start;
  // Read after the call: a provider built on first use knows its name only then.
  sample.provider = labels_.provider.empty() ? std::string(inner_->name()) : labels_.provider;
  sample.model = !request.model.empty() ? request.model : labels_.default_model;
  if (completion.ok()) {
    if (sample.model.empty()) sample.model = completion->model;
    sample.usage = completion->usage;
    sample.cost_usd = completion->cost_usd;
  } else {
    sample.status = completion.status();
  }
  metrics_.RecordProviderRequest(sample);
  return completion;
}

void InstallRuntimeMetrics(Runtime& runtime) {
  RuntimeMetrics* metrics = internal::PartsOf(runtime).run_metrics.get();
  if (metrics == nullptr || runtime.metrics == nullptr) return;
  if (runtime.events != nullptr) {
    runtime.events->Subscribe(std::make_shared<MetricsEventSink>(*metrics));
  }
  Runtime* owner = &runtime;
  internal::PartsOf(runtime).run_counts_collector = runtime.metrics->AddCollector([owner, metrics] {
    if (owner->store != nullptr) metrics->CollectRunCounts(*owner->store);
  });
}

void UninstallRuntimeMetrics(Runtime& runtime) {
  if (runtime.metrics == nullptr || !internal::PartsOf(runtime).run_counts_collector.has_value())
    return;
  runtime.metrics->RemoveCollector(*internal::PartsOf(runtime).run_counts_collector).IgnoreError();
  internal::PartsOf(runtime).run_counts_collector.reset();
}

}  // namespace mend::app::internal
