// The mend_pg_* families (docs/metrics.md): rendered from the process's PostgreSQL activity and
// the connection budget at every scrape. No server is needed: the families and the budget's
// gauges are there before the first connection.
#include "app/pg_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "mend/db/pg_conn.h"
#include "mend/obs/metrics.h"
#include "tests/app/metrics_text.h"

namespace mend::app {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

TEST(PgMetricsTest, EveryFamilyIsRenderedWithItsHelpAndType) {
  obs::MetricsRegistry registry;
  internal::InstallPostgresMetrics(registry, std::make_shared<db::PgBudget>(3));
  const std::string text = registry.RenderPrometheus();
  for (const char* gauge : {"mend_pg_connections_open", "mend_pg_connections_in_use",
                            "mend_pg_connections_max", "mend_pg_pool_waiting"}) {
    EXPECT_THAT(text, HasSubstr(std::string("# TYPE ") + gauge + " gauge")) << gauge;
    EXPECT_THAT(text, HasSubstr(std::string("# HELP ") + gauge + " ")) << gauge;
  }
  for (const char* counter : {"mend_pg_pool_acquires_total", "mend_pg_pool_waits_total",
                              "mend_pg_pool_wait_seconds_total", "mend_pg_round_trips_total",
                              "mend_pg_errors_total", "mend_pg_statements_reprepared_total"}) {
    EXPECT_THAT(text, HasSubstr(std::string("# TYPE ") + counter + " counter")) << counter;
  }
  EXPECT_THAT(SampleValue(text, "mend_pg_connections_max"), Optional(3.0));
  EXPECT_THAT(SampleValue(text, "mend_pg_pool_waiting"), Optional(0.0));
  // Nothing of this process has connected.
  EXPECT_THAT(SampleValue(text, "mend_pg_connections_open"), Optional(0.0));
  EXPECT_THAT(SampleValue(text, "mend_pg_round_trips_total"), Optional(0.0));
}

TEST(PgMetricsTest, WithoutABudgetItsMaximumIsZero) {
  obs::MetricsRegistry registry;
  internal::InstallPostgresMetrics(registry, nullptr);
  const std::string text = registry.RenderPrometheus();
  EXPECT_THAT(SampleValue(text, "mend_pg_connections_max"), Optional(0.0));
  // A second scrape adds nothing to the counters.
  EXPECT_THAT(SampleValue(registry.RenderPrometheus(), "mend_pg_pool_acquires_total"),
              Optional(0.0));
}

}  // namespace
}  // namespace mend::app
