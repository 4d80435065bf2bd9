#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "mend/base/result.h"
#include "mend/obs/metrics.h"
#include "obs/prometheus_format.h"

namespace mend::obs {
namespace {

constexpr std::array<std::string_view, 3> kHistogramSuffixes = {"_bucket", "_sum", "_count"};

// `{a="x",b="y"}` from names and values, with an optional extra `le` label; empty when there are
// no labels at all.
std::string LabelSet(const std::vector<std::string>& names, const std::vector<std::string>& values,
                     const std::string* le = nullptr) {
  if (names.empty() && le == nullptr) return "";
  std::string out = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i] + "=\"" + EscapePrometheusLabelValue(values[i]) + '"';
  }
  if (le != nullptr) {
    if (!names.empty()) out += ',';
    out += "le=\"" + *le + '"';
  }
  return out + "}";
}

void AppendSample(std::string* out, std::string_view name, const std::string& labels,
                  double value) {
  out->append(name);
  out->append(labels);
  out->push_back(' ');
  out->append(FormatPrometheusValue(value));
  out->push_back('\n');
}

template <typename T>
void AppendSimple(std::string* out, const std::string& name, const internal::FamilyBase& base) {
  const auto& family = static_cast<const MetricFamily<T>&>(base);
  for (const auto& [values, child] : family.Children()) {
    AppendSample(out, name, LabelSet(family.label_names(), values), child->value());
  }
}

void AppendHistograms(std::string* out, const std::string& name, const internal::FamilyBase& base) {
  const auto& family = static_cast<const HistogramFamily&>(base);
  for (const auto& [values, child] : family.Children()) {
    const Histogram::Snapshot snap = child->snapshot();
    const std::vector<double>& bounds = child->upper_bounds();
    for (size_t i = 0; i < snap.cumulative.size(); ++i) {
      const std::string le = i < bounds.size() ? FormatPrometheusValue(bounds[i]) : "+Inf";
      AppendSample(out, name + "_bucket", LabelSet(family.label_names(), values, &le),
                   static_cast<double>(snap.cumulative[i]));
    }
    const std::string labels = LabelSet(family.label_names(), values);
    AppendSample(out, name + "_sum", labels, snap.sum);
    AppendSample(out, name + "_count", labels, static_cast<double>(snap.count));
  }
}

Status CheckBounds(const std::vector<double>& bounds) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i])) return InvalidArgumentError("histogram bucket is not finite");
    if (i > 0 && !(bounds[i - 1] < bounds[i])) {
      return InvalidArgumentError("histogram buckets are not strictly increasing");
    }
  }
  return OkStatus();
}

}  // namespace

struct MetricsRegistry::Entry {
  Type type;
  std::string help;
  std::vector<std::string> label_names;
  std::vector<double> bounds;
  std::unique_ptr<internal::FamilyBase> family;
};

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

std::vector<double> MetricsRegistry::DefaultBuckets() {
  return {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};
}

Status MetricsRegistry::Check(Type type, const std::string& name,
                              const std::vector<std::string>& label_names,
                              const std::vector<double>& bounds) const {
  if (!IsValidMetricName(name)) return InvalidArgumentError("invalid metric name \"" + name + '"');
  std::set<std::string_view> seen;
  for (const std::string& label : label_names) {
    const bool reserved = type == Type::kHistogram && label == "le";
    if (!IsValidLabelName(label) || reserved || !seen.insert(label).second) {
      return InvalidArgumentError("invalid label name \"" + label + "\" for metric " + name);
    }
  }
  MEND_RETURN_IF_ERROR(CheckBounds(bounds));
  return CheckNoSeriesClash(type, name);
}

Status MetricsRegistry::CheckNoSeriesClash(Type type, const std::string& name) const {
  // The series a histogram emits must not collide with another family's series.
  std::vector<std::string> series = {name};
  if (type == Type::kHistogram) {
    series.clear();
    for (std::string_view suffix : kHistogramSuffixes) series.push_back(name + std::string(suffix));
  }
  for (const std::string& s : series) {
    auto plain = entries_.find(s);
    if (plain != entries_.end() && plain->second->type != Type::kHistogram) {
      return AlreadyExistsError("metric " + name + " collides with " + s);
    }
    for (std::string_view suffix : kHistogramSuffixes) {
      if (!s.ends_with(suffix)) continue;
      auto hist = entries_.find(std::string_view(s).substr(0, s.size() - suffix.size()));
      if (hist != entries_.end() && hist->second->type == Type::kHistogram) {
        return AlreadyExistsError("metric " + name + " collides with histogram " + hist->first);
      }
    }
  }
  return OkStatus();
}

template <typename T>
MetricFamily<T>& MetricsRegistry::Register(Type type, std::string_view name, std::string_view help,
                                           std::vector<std::string> label_names,
                                           std::vector<double> bounds) {
  // A trailing +Inf is implicit in every histogram; accept it when spelled out.
  if (!bounds.empty() && bounds.back() == HUGE_VAL) bounds.pop_back();
  std::lock_guard lock(mu_);
  Status error;
  if (auto it = entries_.find(name); it != entries_.end()) {
    Entry& e = *it->second;
    if (e.type == type && e.label_names == label_names && e.bounds == bounds) {
      return static_cast<MetricFamily<T>&>(*e.family);
    }
    error = AlreadyExistsError("metric " + std::string(name) +
                               " already registered with another type, labels or buckets");
  } else {
    error = Check(type, std::string(name), label_names, bounds);
  }
  auto family = std::make_unique<MetricFamily<T>>(label_names, bounds, &errors_);
  MetricFamily<T>& ref = *family;
  if (!error.ok()) {
    errors_.Record(std::move(error));
    detached_.push_back(std::move(family));
    return ref;
  }
  entries_.emplace(std::string(name),
                   std::make_unique<Entry>(Entry{type, std::string(help), std::move(label_names),
                                                 std::move(bounds), std::move(family)}));
  return ref;
}

Counter& MetricsRegistry::counter(std::string_view name, std::string_view help) {
  return Register<Counter>(Type::kCounter, name, help, {}, {}).WithLabels({});
}

CounterFamily& MetricsRegistry::counter_family(std::string_view name, std::string_view help,
                                               std::vector<std::string> label_names) {
  return Register<Counter>(Type::kCounter, name, help, std::move(label_names), {});
}

Gauge& MetricsRegistry::gauge(std::string_view name, std::string_view help) {
  return Register<Gauge>(Type::kGauge, name, help, {}, {}).WithLabels({});
}

GaugeFamily& MetricsRegistry::gauge_family(std::string_view name, std::string_view help,
                                           std::vector<std::string> label_names) {
  return Register<Gauge>(Type::kGauge, name, help, std::move(label_names), {});
}

Histogram& MetricsRegistry::histogram(std::string_view name, std::string_view help,
                                      std::vector<double> upper_bounds) {
  return Register<Histogram>(Type::kHistogram, name, help, {}, std::move(upper_bounds))
      .WithLabels({});
}

HistogramFamily& MetricsRegistry::histogram_family(std::string_view name, std::string_view help,
                                                   std::vector<std::string> label_names,
                                                   std::vector<double> upper_bounds) {
  return Register<Histogram>(Type::kHistogram, name, help, std::move(label_names),
                             std::move(upper_bounds));
}

CollectorId MetricsRegistry::AddCollector(std::function<void()> collect) {
  std::lock_guard lock(collect_mu_);
  const CollectorId id{next_collector_++};
  collectors_.emplace_back(id, std::move(collect));
  return id;
}

Status MetricsRegistry::RemoveCollector(CollectorId id) {
  std::lock_guard lock(collect_mu_);
  auto it = std::find_if(collectors_.begin(), collectors_.end(),
                         [id](const auto& entry) { return entry.first == id; });
  if (it == collectors_.end()) return NotFoundError("no such metrics collector");
  collectors_.erase(it);
  return OkStatus();
}

std::string MetricsRegistry::RenderPrometheus() const {
  {
    // Collectors update metrics, which may register families under mu_: run them before taking it.
    std::lock_guard collect_lock(collect_mu_);
    for (const auto& [id, collect] : collectors_) collect();
  }
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, entry] : entries_) {
    // HELP is optional in the format; an empty one is left out rather than rendered blank.
    if (!entry->help.empty()) {
      out += "# HELP " + name + ' ' + EscapePrometheusHelp(entry->help) + '\n';
    }
    switch (entry->type) {
      case Type::kCounter:
        out += "# TYPE " + name + " counter\n";
        AppendSimple<Counter>(&out, name, *entry->family);
        break;
      case Type::kGauge:
        out += "# TYPE " + name + " gauge\n";
        AppendSimple<Gauge>(&out, name, *entry->family);
        break;
      case Type::kHistogram:
        out += "# TYPE " + name + " histogram\n";
        AppendHistograms(&out, name, *entry->family);
        break;
    }
  }
  return out;
}

}  // namespace mend::obs
