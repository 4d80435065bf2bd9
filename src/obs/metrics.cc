#include "mend/obs/metrics.h"

#include <algorithm>
#include <cmath>

namespace mend::obs {

void Counter::Inc(double delta) {
  // `!(delta > 0)` also rejects NaN, which would poison the counter forever.
  if (!(delta > 0)) return;
  value_.fetch_add(delta, std::memory_order_relaxed);
}

void Gauge::Add(double delta) { value_.fetch_add(delta, std::memory_order_relaxed); }

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(upper_bounds_.size() + 1)) {}

void Histogram::Observe(double value) {
  size_t bucket = upper_bounds_.size();  // +Inf, also where NaN belongs
  if (!std::isnan(value)) {
    bucket =
        static_cast<size_t>(std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value) -
                            upper_bounds_.begin());
  }
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.cumulative.reserve(upper_bounds_.size() + 1);
  uint64_t total = 0;
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) {
    total += counts_[i].load(std::memory_order_relaxed);
    s.cumulative.push_back(total);
  }
  // The count is derived from the buckets so that it always equals the +Inf bucket, even while
  // other threads are observing.
  s.count = total;
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

namespace internal {

void ErrorLog::Record(Status error) {
  std::lock_guard lock(mu_);
  if (count_ == 0) first_ = std::move(error);
  ++count_;
}

Status ErrorLog::first() const {
  std::lock_guard lock(mu_);
  return first_;
}

int ErrorLog::count() const {
  std::lock_guard lock(mu_);
  return count_;
}

}  // namespace internal

template <typename T>
MetricFamily<T>::MetricFamily(std::vector<std::string> label_names,
                              std::vector<double> upper_bounds, internal::ErrorLog* errors)
    : label_names_(std::move(label_names)),
      upper_bounds_(std::move(upper_bounds)),
      errors_(errors) {}

template <typename T>
std::unique_ptr<T> MetricFamily<T>::MakeChild() const {
  if constexpr (std::is_same_v<T, Histogram>) {
    return std::make_unique<Histogram>(upper_bounds_);
  } else {
    return std::make_unique<T>();
  }
}

template <typename T>
T& MetricFamily<T>::WithLabels(const std::vector<std::string>& values) {
  std::lock_guard lock(mu_);
  if (values.size() != label_names_.size()) {
    errors_->Record(InvalidArgumentError("metric family with " +
                                         std::to_string(label_names_.size()) + " labels given " +
                                         std::to_string(values.size()) + " label values"));
    if (invalid_child_ == nullptr) invalid_child_ = MakeChild();
    return *invalid_child_;
  }
  auto it = children_.find(values);
  if (it == children_.end()) it = children_.emplace(values, MakeChild()).first;
  return *it->second;
}

template <typename T>
std::vector<std::pair<std::vector<std::string>, const T*>> MetricFamily<T>::Children() const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::vector<std::string>, const T*>> out;
  out.reserve(children_.size());
  for (const auto& [values, child] : children_) out.emplace_back(values, child.get());
  return out;
}

template class MetricFamily<Counter>;
template class MetricFamily<Gauge>;
template class MetricFamily<Histogram>;

}  // namespace mend::obs
