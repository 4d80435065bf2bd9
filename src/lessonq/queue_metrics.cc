#include "lessonq/queue_metrics.h"

#include <vector>

namespace mend::lessonq {
namespace {

// Lesson jobs are dominated by one LLM call: from milliseconds (a skip) to the job timeout.
std::vector<double> DurationBuckets() {
  return {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
}

}  // namespace

QueueMetrics::QueueMetrics(obs::MetricsRegistry& r)
    : enqueue_total(r.counter_family("mend_lessonq_enqueue_total",
                                     "Lesson enqueue calls by outcome.", {"outcome"})),
      queue_depth(r.gauge("mend_lessonq_queue_depth", "Lesson jobs held in memory.")),
      processing_duration_seconds(
          r.histogram_family("mend_lessonq_processing_duration_seconds",
                             "Time from dequeue to the outcome of a lesson job attempt.",
                             {"outcome"}, DurationBuckets())),
      attempts_total(r.counter_family("mend_lessonq_attempts_total",
                                      "Lesson job attempts by outcome.", {"outcome"})),
      retry_total(r.counter_family("mend_lessonq_retry_total",
                                   "Lesson job retries by the number of the failed attempt.",
                                   {"attempt"})),
      dlq_size(r.gauge("mend_lessonq_dlq_size", "Lesson jobs in the dead-letter queue.")),
      wal_segments(r.gauge("mend_lessonq_wal_segments", "Record files in the lesson WAL.")),
      wal_corruption_total(r.counter("mend_lessonq_wal_corruption_total",
                                     "Lesson WAL records removed because they failed a check.")),
      stale_discarded_total(r.counter("mend_lessonq_stale_discarded_total",
                                      "Lesson WAL records discarded at replay for their age.")),
      persist_failures_total(r.counter("mend_lessonq_persist_failures_total",
                                       "Lessons that could not be stored in memory.")) {}

}  // namespace mend::lessonq
