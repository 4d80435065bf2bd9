#pragma once

// Prometheus metrics (docs/metrics.md): Counter, Gauge, Histogram and their labelled families, and
// MetricsRegistry, which owns them and renders the text format of /metrics. Thread-safe; misuse is
// recorded in MetricsRegistry::status(), never thrown.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mend/base/status.h"

namespace mend::obs {

/// The Content-Type of RenderPrometheus() output (text exposition format 0.0.4).
inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

/// A monotonically increasing value. Lock-free and thread-safe.
class Counter {
 public:
  /// Adds `delta`. Counters never go down: a negative or NaN delta is ignored.
  void Inc(double delta = 1.0);
  /// The current value.
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

/// A value that goes up and down. Lock-free and thread-safe.
class Gauge {
 public:
  ///@{
  /// Sets, adds to, increments or decrements the value.
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double delta);
  void Inc(double delta = 1.0) { Add(delta); }
  void Dec(double delta = 1.0) { Add(-delta); }
  ///@}
  /// The current value.
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

/// Counts observations into buckets with fixed upper bounds (plus an implicit +Inf bucket) and
/// keeps their sum. Observe() is lock-free and thread-safe. A snapshot taken while other threads
/// observe may lag by those observations, but its buckets and count always agree.
class Histogram {
 public:
  /// `upper_bounds` must be finite and strictly increasing (MetricsRegistry checks this).
  explicit Histogram(std::vector<double> upper_bounds);

  /// Records `value` in the first bucket whose bound is >= value. NaN lands only in +Inf.
  void Observe(double value);

  /// The buckets, count and sum at one moment.
  struct Snapshot {
    std::vector<uint64_t> cumulative;  ///< one per upper bound, then +Inf
    uint64_t count = 0;                ///< == cumulative.back()
    double sum = 0.0;                  ///< of every observed value
  };
  /// The current buckets, count and sum.
  Snapshot snapshot() const;
  /// The bucket bounds, without +Inf.
  const std::vector<double>& upper_bounds() const { return upper_bounds_; }

 private:
  std::vector<double> upper_bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // per bucket, not cumulative; last is +Inf
  std::atomic<double> sum_{0.0};
};

namespace internal {
/// Collects misuse of the registry (see MetricsRegistry::status()). Thread-safe.
class ErrorLog {
 public:
  void Record(Status error);
  Status first() const;
  int count() const;

 private:
  mutable std::mutex mu_;
  Status first_;
  int count_ = 0;
};

class FamilyBase {
 public:
  virtual ~FamilyBase() = default;
};
}  // namespace internal

/// A metric with labels: one child metric per distinct tuple of label values. Children are created
/// on first use and never removed, so a reference returned by WithLabels stays valid for the
/// lifetime of the registry; hot paths should look a child up once and keep the reference.
/// Thread-safe; WithLabels takes a mutex.
template <typename T>
class MetricFamily final : public internal::FamilyBase {
 public:
  /// The child for `values`, given in the order of label_names(). A wrong number of values is a
  /// programmer error: it is recorded in the registry's status() and a working child that is never
  /// exported is returned, so the caller does not crash.
  T& WithLabels(const std::vector<std::string>& values);

  /// The names of the labels, in WithLabels order.
  const std::vector<std::string>& label_names() const { return label_names_; }

  /// Every exported child with its label values, sorted by the values (a stable order).
  std::vector<std::pair<std::vector<std::string>, const T*>> Children() const;

  /// Constructed only by MetricsRegistry (public for std::make_unique).
  MetricFamily(std::vector<std::string> label_names, std::vector<double> upper_bounds,
               internal::ErrorLog* errors);

 private:
  std::unique_ptr<T> MakeChild() const;

  const std::vector<std::string> label_names_;
  const std::vector<double> upper_bounds_;  // histograms only
  internal::ErrorLog* const errors_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> children_;
  std::unique_ptr<T> invalid_child_;
};

extern template class MetricFamily<Counter>;
extern template class MetricFamily<Gauge>;
extern template class MetricFamily<Histogram>;

///@{
/// The labelled families of each metric type.
using CounterFamily = MetricFamily<Counter>;
using GaugeFamily = MetricFamily<Gauge>;
using HistogramFamily = MetricFamily<Histogram>;
///@}

/// Names a collector added with MetricsRegistry::AddCollector.
enum class CollectorId : uint64_t {};

/// Owns metrics and renders them in the Prometheus text exposition format 0.0.4.
///
/// Registering a name again with the same type, label names (and buckets) returns the metric
/// registered first (its help text wins). Misuse never crashes and never throws: an invalid metric
/// name ([a-zA-Z_:][a-zA-Z0-9_:]*), an invalid label name ([a-zA-Z_][a-zA-Z0-9_]*, no "__" prefix,
/// no duplicates, no "le" on histograms), invalid buckets (non-finite or not strictly increasing),
/// or a conflicting re-registration (another type, other labels or buckets, or a name that clashes
/// with a histogram's _bucket/_sum/_count series) returns a working metric that is never exported
/// and records the error, which status() reports. Such misuse is a programmer error; tests and
/// start-up code check status().
///
/// All methods are thread-safe. Returned references are valid for the lifetime of the registry.
class MetricsRegistry {
 public:
  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  ///@{
  /// Registers (or finds) a metric named `name` with `help`: a counter, a gauge or a histogram,
  /// alone or as a family with `label_names`. Misuse as described above.
  Counter& counter(std::string_view name, std::string_view help);
  CounterFamily& counter_family(std::string_view name, std::string_view help,
                                std::vector<std::string> label_names);
  Gauge& gauge(std::string_view name, std::string_view help);
  GaugeFamily& gauge_family(std::string_view name, std::string_view help,
                            std::vector<std::string> label_names);
  Histogram& histogram(std::string_view name, std::string_view help,
                       std::vector<double> upper_bounds = DefaultBuckets());
  HistogramFamily& histogram_family(std::string_view name, std::string_view help,
                                    std::vector<std::string> label_names,
                                    std::vector<double> upper_bounds = DefaultBuckets());
  ///@}

  /// Registers `collect`, called by every RenderPrometheus before any metric is read, on the
  /// rendering thread, so values kept elsewhere (a row count in a database, say) are set on their
  /// gauges at scrape time. Collectors run one at a time in the order added; a collector may
  /// register and update metrics, but must not render, add or remove collectors (that deadlocks).
  /// It must not throw. Whatever `collect` references must stay valid until RemoveCollector.
  CollectorId AddCollector(std::function<void()> collect);
  /// Removes the collector; once this returns it is not running and never runs again, so what it
  /// references may go away. kNotFound when `id` is not (or no longer) registered.
  Status RemoveCollector(CollectorId id);

  /// Runs the collectors, then renders all exported metrics: families sorted by name, children
  /// sorted by label values.
  std::string RenderPrometheus() const;

  /// OK, or the first misuse: kInvalidArgument for an invalid name, label set or bucket list, or a
  /// wrong number of label values; kAlreadyExists for a conflicting re-registration.
  Status status() const { return errors_.first(); }
  /// How many misuses were recorded.
  int error_count() const { return errors_.count(); }

  /// Prometheus's default buckets: .005 .01 .025 .05 .1 .25 .5 1 2.5 5 10.
  static std::vector<double> DefaultBuckets();

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Entry;

  template <typename T>
  MetricFamily<T>& Register(Type type, std::string_view name, std::string_view help,
                            std::vector<std::string> label_names, std::vector<double> bounds);
  Status Check(Type type, const std::string& name, const std::vector<std::string>& label_names,
               const std::vector<double>& bounds) const;
  Status CheckNoSeriesClash(Type type, const std::string& name) const;

  // Held while collectors run, so RemoveCollector waits for a running one; never taken under mu_.
  mutable std::mutex collect_mu_;
  std::vector<std::pair<CollectorId, std::function<void()>>> collectors_;
  uint64_t next_collector_ = 1;

  mutable std::mutex mu_;
  internal::ErrorLog errors_;
  std::map<std::string, std::unique_ptr<Entry>, std::less<>> entries_;
  std::vector<std::unique_ptr<internal::FamilyBase>> detached_;  // misused registrations
};

}  // namespace mend::obs
