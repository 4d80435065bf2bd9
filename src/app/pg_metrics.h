#pragma once

// The mend_pg_* families (docs/metrics.md): what the process's PostgreSQL connections and pools
// did (db::ProcessPgActivity) and its connection budget, read when the registry is rendered.
#include <memory>

#include "mend/obs/metrics.h"

namespace mend::db {
class PgBudget;
}  // namespace mend::db

namespace mend::app::internal {

// Adds the families and their collector to `registry`; `budget` may be null (no shared budget).
// The collector holds `budget`. Returns the collector's id.
obs::CollectorId InstallPostgresMetrics(obs::MetricsRegistry& registry,
                                        std::shared_ptr<db::PgBudget> budget);

}  // namespace mend::app::internal
