#include "mend/obs/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "obs/prometheus_format.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(MetricsRegistryTest, RendersExactTextExposition) {
  MetricsRegistry registry;
  CounterFamily& jobs = registry.counter_family("mend_lessonq_jobs_total",
                                                "Jobs by outcome.\nSecond \\ line", {"outcome"});
  jobs.WithLabels({"accepted"}).Inc(3);
  jobs.WithLabels({"a\"b\\c\nd"}).Inc();
  Gauge& depth = registry.gauge("mend_lessonq_queue_depth", "Jobs waiting.");
  depth.Set(7);
  depth.Dec(2);
  depth.Add(0.5);
  HistogramFamily& duration = registry.histogram_family(
      "mend_lessonq_processing_duration_seconds", "Time per job.", {"outcome"}, {0.125, 1, 10});
  Histogram& ok = duration.WithLabels({"ok"});
  for (double v : {0.0625, 0.125, 0.5, 20.0}) ok.Observe(v);

  EXPECT_EQ(registry.RenderPrometheus(),
            "# HELP mend_lessonq_jobs_total Jobs by outcome.\\nSecond \\\\ line\n"
            "# TYPE mend_lessonq_jobs_total counter\n"
            "mend_lessonq_jobs_total{outcome=\"a\\\"b\\\\c\\nd\"} 1\n"
            "mend_lessonq_jobs_total{outcome=\"accepted\"} 3\n"
            "# HELP mend_lessonq_processing_duration_seconds Time per job.\n"
            "# TYPE mend_lessonq_processing_duration_seconds histogram\n"
            "mend_lessonq_processing_duration_seconds_bucket{outcome=\"ok\",le=\"0.125\"} 2\n"
            "mend_lessonq_processing_duration_seconds_bucket{outcome=\"ok\",le=\"1\"} 3\n"
            "mend_lessonq_processing_duration_seconds_bucket{outcome=\"ok\",le=\"10\"} 3\n"
            "mend_lessonq_processing_duration_seconds_bucket{outcome=\"ok\",le=\"+Inf\"} 4\n"
            "mend_lessonq_processing_duration_seconds_sum{outcome=\"ok\"} 20.6875\n"
            "mend_lessonq_processing_duration_seconds_count{outcome=\"ok\"} 4\n"
            "# HELP mend_lessonq_queue_depth Jobs waiting.\n"
            "# TYPE mend_lessonq_queue_depth gauge\n"
            "mend_lessonq_queue_depth 5.5\n");
  EXPECT_THAT(registry.status(), IsOk());
}

TEST(MetricsRegistryTest, CollectorsSetValuesBeforeEveryRender) {
  MetricsRegistry registry;
  Gauge& rows = registry.gauge("rows", "Rows in a table.");
  int scrapes = 0;
  registry.AddCollector([&] { rows.Set(++scrapes * 10); });
  EXPECT_THAT(registry.RenderPrometheus(), HasSubstr("rows 10\n"));
  EXPECT_THAT(registry.RenderPrometheus(), HasSubstr("rows 20\n"));
  EXPECT_EQ(scrapes, 2);
}

TEST(MetricsRegistryTest, CollectorMayRegisterMetrics) {
  MetricsRegistry registry;
  registry.AddCollector([&] {
    registry.gauge_family("late", "Registered while collecting.", {"k"}).WithLabels({"v"}).Set(3);
  });
  EXPECT_THAT(registry.RenderPrometheus(), HasSubstr("late{k=\"v\"} 3\n"));
  EXPECT_THAT(registry.status(), IsOk());
}

TEST(MetricsRegistryTest, RemovedCollectorNeverRunsAgain) {
  MetricsRegistry registry;
  int first = 0;
  int second = 0;
  const CollectorId a = registry.AddCollector([&] { ++first; });
  registry.AddCollector([&] { ++second; });
  registry.RenderPrometheus();
  MEND_EXPECT_OK(registry.RemoveCollector(a));
  registry.RenderPrometheus();
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 2);
  EXPECT_THAT(registry.RemoveCollector(a), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(registry.RemoveCollector(CollectorId{12345}), StatusIs(StatusCode::kNotFound));
}

TEST(MetricsRegistryTest, UnlabelledHistogramUsesDefaultBuckets) {
  MetricsRegistry registry;
  registry.histogram("latency_seconds", "").Observe(0.003);
  EXPECT_EQ(registry.RenderPrometheus(),
            "# TYPE latency_seconds histogram\n"
            "latency_seconds_bucket{le=\"0.005\"} 1\n"
            "latency_seconds_bucket{le=\"0.01\"} 1\n"
            "latency_seconds_bucket{le=\"0.025\"} 1\n"
            "latency_seconds_bucket{le=\"0.05\"} 1\n"
            "latency_seconds_bucket{le=\"0.1\"} 1\n"
            "latency_seconds_bucket{le=\"0.25\"} 1\n"
            "latency_seconds_bucket{le=\"0.5\"} 1\n"
            "latency_seconds_bucket{le=\"1\"} 1\n"
            "latency_seconds_bucket{le=\"2.5\"} 1\n"
            "latency_seconds_bucket{le=\"5\"} 1\n"
            "latency_seconds_bucket{le=\"10\"} 1\n"
            "latency_seconds_bucket{le=\"+Inf\"} 1\n"
            "latency_seconds_sum 0.003\n"
            "latency_seconds_count 1\n");
}

TEST(MetricsRegistryTest, FamilyWithoutChildrenRendersOnlyMetadata) {
  MetricsRegistry registry;
  registry.counter_family("dlq_total", "Dead letters.", {"reason"});
  EXPECT_EQ(registry.RenderPrometheus(),
            "# HELP dlq_total Dead letters.\n# TYPE dlq_total counter\n");
}

TEST(PrometheusFormatTest, FormatsValuesAsPrometheusSpellsThem) {
  EXPECT_EQ(FormatPrometheusValue(3), "3");
  EXPECT_EQ(FormatPrometheusValue(-12), "-12");
  EXPECT_EQ(FormatPrometheusValue(0), "0");
  EXPECT_EQ(FormatPrometheusValue(0.25), "0.25");
  EXPECT_EQ(FormatPrometheusValue(0.1), "0.1");
  EXPECT_EQ(FormatPrometheusValue(1e300), "1e+300");
  EXPECT_EQ(FormatPrometheusValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(FormatPrometheusValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatPrometheusValue(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(PrometheusFormatTest, ValuesRoundTrip) {
  for (double v : {0.1, 1.0 / 3.0, 123456.789, 1e-300, 2.5e20, -7.75, 9007199254740993.0,
                   std::numeric_limits<double>::max(), std::numeric_limits<double>::min()}) {
    const std::string text = FormatPrometheusValue(v);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), v) << text;
  }
}

TEST(PrometheusFormatTest, ValidatesNames) {
  EXPECT_TRUE(IsValidMetricName("mend:lessonq_jobs_total2"));
  EXPECT_TRUE(IsValidMetricName("_x"));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_FALSE(IsValidMetricName("1abc"));
  EXPECT_FALSE(IsValidMetricName("a-b"));
  EXPECT_FALSE(IsValidMetricName("a b"));
  EXPECT_TRUE(IsValidLabelName("outcome"));
  EXPECT_TRUE(IsValidLabelName("_x1"));
  EXPECT_FALSE(IsValidLabelName("__name"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
  EXPECT_FALSE(IsValidLabelName("9a"));
  EXPECT_FALSE(IsValidLabelName(""));
}

TEST(CounterTest, IgnoresNegativeAndNanDeltas) {
  Counter c;
  c.Inc();
  c.Inc(2.5);
  c.Inc(-1);
  c.Inc(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(c.value(), 3.5);
}

TEST(GaugeTest, SetIncDecAdd) {
  Gauge g;
  g.Set(10);
  g.Inc();
  g.Dec(4);
  g.Add(-0.5);
  EXPECT_EQ(g.value(), 6.5);
}

TEST(HistogramTest, BoundsAreInclusiveAndNanGoesToInf) {
  Histogram h({1, 2});
  h.Observe(1);
  h.Observe(1.5);
  h.Observe(std::numeric_limits<double>::quiet_NaN());
  const Histogram::Snapshot s = h.snapshot();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(s.count, 3u);
  EXPECT_TRUE(std::isnan(s.sum));
}

TEST(MetricsRegistryTest, SameRegistrationReturnsSameMetric) {
  MetricsRegistry registry;
  Counter& a = registry.counter("requests_total", "Requests.");
  Counter& b = registry.counter("requests_total", "Other help is ignored.");
  EXPECT_EQ(&a, &b);
  CounterFamily& f1 = registry.counter_family("jobs_total", "Jobs.", {"outcome"});
  CounterFamily& f2 = registry.counter_family("jobs_total", "Jobs.", {"outcome"});
  EXPECT_EQ(&f1, &f2);
  EXPECT_EQ(&f1.WithLabels({"x"}), &f2.WithLabels({"x"}));
  Histogram& h1 = registry.histogram("h", "H.", {1, 2});
  Histogram& h2 = registry.histogram("h", "H.", {1, 2, std::numeric_limits<double>::infinity()});
  EXPECT_EQ(&h1, &h2);
  EXPECT_THAT(registry.status(), IsOk());
  EXPECT_EQ(registry.error_count(), 0);
}

TEST(MetricsRegistryTest, ConflictingTypeIsRecordedAndNotExported) {
  MetricsRegistry registry;
  registry.counter("x", "A counter.").Inc(2);
  Gauge& g = registry.gauge("x", "A gauge.");
  g.Set(99);  // Works, but is never exported.
  EXPECT_EQ(g.value(), 99);
  EXPECT_THAT(registry.status(), StatusIs(StatusCode::kAlreadyExists));
  EXPECT_EQ(registry.RenderPrometheus(), "# HELP x A counter.\n# TYPE x counter\nx 2\n");
}

TEST(MetricsRegistryTest, ConflictingLabelsOrBucketsAreRecorded) {
  MetricsRegistry registry;
  registry.counter_family("jobs_total", "Jobs.", {"outcome"});
  registry.counter_family("jobs_total", "Jobs.", {"reason"});
  EXPECT_THAT(registry.status(), StatusIs(StatusCode::kAlreadyExists));
  registry.histogram("h", "H.", {1, 2});
  registry.histogram("h", "H.", {1, 3});
  EXPECT_EQ(registry.error_count(), 2);
}

TEST(MetricsRegistryTest, InvalidNamesAreRecorded) {
  MetricsRegistry registry;
  registry.counter("1bad", "Bad.").Inc();
  EXPECT_THAT(registry.status(), StatusIs(StatusCode::kInvalidArgument, HasSubstr("1bad")));
  registry.counter_family("ok_total", "Ok.", {"__reserved"});
  registry.counter_family("ok2_total", "Ok.", {"a", "a"});
  registry.histogram_family("h", "H.", {"le"});
  registry.gauge_family("g", "G.", {"a-b"});
  EXPECT_EQ(registry.error_count(), 5);
  EXPECT_EQ(registry.RenderPrometheus(), "");
}

TEST(MetricsRegistryTest, InvalidBucketsAreRecorded) {
  for (const std::vector<double>& bounds :
       {std::vector<double>{1, 1}, std::vector<double>{2, 1},
        std::vector<double>{std::numeric_limits<double>::quiet_NaN()},
        std::vector<double>{-std::numeric_limits<double>::infinity(), 1}}) {
    MetricsRegistry registry;
    registry.histogram("h", "H.", bounds).Observe(1);
    EXPECT_THAT(registry.status(), StatusIs(StatusCode::kInvalidArgument));
    EXPECT_EQ(registry.RenderPrometheus(), "");
  }
}

TEST(MetricsRegistryTest, HistogramSeriesMayNotClashWithOtherFamilies) {
  MetricsRegistry registry;
  registry.histogram("latency", "L.");
  registry.counter("latency_count", "Clash.");
  EXPECT_THAT(registry.status(), StatusIs(StatusCode::kAlreadyExists));

  MetricsRegistry other;
  other.gauge("size_sum", "S.");
  other.histogram("size", "Clash.");
  EXPECT_THAT(other.status(), StatusIs(StatusCode::kAlreadyExists));
  EXPECT_THAT(other.RenderPrometheus(), Not(HasSubstr("histogram")));
}

TEST(MetricsRegistryTest, WrongNumberOfLabelValuesIsRecorded) {
  MetricsRegistry registry;
  CounterFamily& jobs = registry.counter_family("jobs_total", "Jobs.", {"outcome"});
  Counter& bad = jobs.WithLabels({"a", "b"});
  bad.Inc();
  EXPECT_EQ(bad.value(), 1);
  EXPECT_THAT(registry.status(), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_TRUE(jobs.Children().empty());
}

TEST(MetricsRegistryTest, ConcurrentUpdatesAreExact) {
  MetricsRegistry registry;
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20000;
  Counter& total = registry.counter("ops_total", "Ops.");
  CounterFamily& by_outcome = registry.counter_family("by_outcome_total", "Ops.", {"outcome"});
  Gauge& inflight = registry.gauge("inflight", "In flight.");
  Histogram& sizes = registry.histogram("sizes", "Sizes.", {1, 10});
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Counter& mine = by_outcome.WithLabels({t % 2 == 0 ? "even" : "odd"});
      for (int i = 0; i < kPerThread; ++i) {
        total.Inc();
        mine.Inc();
        inflight.Inc();
        sizes.Observe(i % 3 == 0 ? 0.5 : 5);
        inflight.Dec();
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(total.value(), kThreads * kPerThread);
  EXPECT_EQ(by_outcome.WithLabels({"even"}).value(), kThreads / 2 * kPerThread);
  EXPECT_EQ(by_outcome.WithLabels({"odd"}).value(), kThreads / 2 * kPerThread);
  EXPECT_EQ(inflight.value(), 0);
  EXPECT_EQ(sizes.snapshot().count, static_cast<uint64_t>(kThreads * kPerThread));
  EXPECT_THAT(registry.RenderPrometheus(), HasSubstr("ops_total 160000\n"));
}

}  // namespace
}  // namespace mend::obs
