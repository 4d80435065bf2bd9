#include "app/pg_metrics.h"

#include <utility>

#include "mend/db/pg_conn.h"

namespace mend::app::internal {
namespace {

// The families, and the process's totals as last copied into the counters (which only grow).
struct PgFamilies {
  explicit PgFamilies(obs::MetricsRegistry& r)
      : open(r.gauge("mend_pg_connections_open", "PostgreSQL connections this process has open.")),
        in_use(r.gauge("mend_pg_connections_in_use",
                       "PostgreSQL connections handed out by a pool and not yet returned.")),
        max(r.gauge("mend_pg_connections_max",
                    "The connection budget the process's pools share (postgres.max_connections).")),
        waiting(r.gauge("mend_pg_pool_waiting", "Callers waiting for the connection budget now.")),
        acquires(r.counter("mend_pg_pool_acquires_total",
                           "Connections handed out by the process's PostgreSQL pools.")),
        waits(r.counter("mend_pg_pool_waits_total",
                        "Connections a caller had to wait for (pool or budget exhausted).")),
        wait_seconds(r.counter("mend_pg_pool_wait_seconds_total",
                               "Time callers spent waiting for a PostgreSQL connection.")),
        round_trips(r.counter("mend_pg_round_trips_total",
                              "Requests sent to PostgreSQL and answered; a pipeline counts once.")),
        errors(
            r.counter("mend_pg_errors_total", "PostgreSQL statements and requests that failed.")),
        reprepared(r.counter("mend_pg_statements_reprepared_total",
                             "Prepared statements prepared again after the server lost them "
                             "(a pooler moved or reset the session).")) {}

  void Collect(const db::PgBudget* budget) {
    const db::PgActivity now = db::ProcessPgActivity();
    open.Set(static_cast<double>(now.connections_open));
    in_use.Set(static_cast<double>(now.connections_in_use));
    max.Set(budget != nullptr ? budget->max_connections() : 0);
    waiting.Set(budget != nullptr ? budget->waiting() : 0);
    Grow(acquires, static_cast<double>(now.acquires), last.acquires);
    Grow(waits, static_cast<double>(now.waits), last.waits);
    Grow(wait_seconds, now.wait_seconds, last.wait_seconds);
    Grow(round_trips, static_cast<double>(now.round_trips), last.round_trips);
    Grow(errors, static_cast<double>(now.errors), last.errors);
    Grow(reprepared, static_cast<double>(now.statements_reprepared), last.reprepared);
  }

  struct Seen {
    double acquires = 0, waits = 0, wait_seconds = 0, round_trips = 0, errors = 0, reprepared = 0;
  };
  static void Grow(obs::Counter& counter, double total, double& seen) {
    if (total > seen) counter.Inc(total - seen);
    seen = total;
  }

  obs::Gauge& open;
  obs::Gauge& in_use;
  obs::Gauge& max;
  obs::Gauge& waiting;
  obs::Counter& acquires;
  obs::Counter& waits;
  obs::Counter& wait_seconds;
  obs::Counter& round_trips;
  obs::Counter& errors;
  obs::Counter& reprepared;
  Seen last;
};

}  // namespace

obs::CollectorId InstallPostgresMetrics(obs::MetricsRegistry& registry,
                                        std::shared_ptr<db::PgBudget> budget) {
  auto families = std::make_shared<PgFamilies>(registry);
  // The process's totals start before the registry: the first scrape counts them all.
  return registry.AddCollector(
      [families, budget = std::move(budget)] { families->Collect(budget.get()); });
}

}  // namespace mend::app::internal
