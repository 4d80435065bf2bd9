#pragma once

#include <string_view>

#include "mend/obs/metrics.h"

namespace mend::lessonq {

// The lesson queue's ten metrics (the names and labels of docs/metrics.md, prefix mend_lessonq_),
// registered on one registry. Registering twice on the same registry returns the same metrics, so
// several queues of one process share them. The registry must outlive this object.
struct QueueMetrics {
  explicit QueueMetrics(obs::MetricsRegistry& registry);

  obs::CounterFamily& enqueue_total;  // {outcome}
  obs::Gauge& queue_depth;
  obs::HistogramFamily& processing_duration_seconds;  // {outcome}
  obs::CounterFamily& attempts_total;                 // {outcome}
  obs::CounterFamily& retry_total;                    // {attempt}
  obs::Gauge& dlq_size;
  obs::Gauge& wal_segments;
  obs::Counter& wal_corruption_total;
  obs::Counter& stale_discarded_total;
  // Incremented by the owner of the lesson sink when storing a lesson fails; registered here so
  // that the ten metrics always appear together.
  obs::Counter& persist_failures_total;
};

// Outcome labels of attempts_total and processing_duration_seconds.
inline constexpr std::string_view kOutcomeSuccess = "success";
inline constexpr std::string_view kOutcomeSkipped = "skipped";
inline constexpr std::string_view kOutcomeTransient = "transient";
inline constexpr std::string_view kOutcomePermanent = "permanent";

}  // namespace mend::lessonq
