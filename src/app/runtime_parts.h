#pragma once

// The parts of a Runtime that only app's own files use: kept out of the public struct so callers
// see what they need and nothing of how app counts, builds and records providers.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mend/app/runtime.h"
#include "mend/app/runtime_metrics.h"
#include "mend/improve/canary_store.h"
#include "mend/llm/provider.h"
#include "mend/llm/recording_provider.h"
#include "mend/obs/metrics.h"

namespace mend::db {
class PgBudget;
}  // namespace mend::db

namespace mend::app::internal {

struct RuntimeParts {
  // The runtime's own families on Runtime::metrics (runs, recovery, heal, provider requests,
  // checkpoint saves, memory, improve) and what feeds them: OpenRuntime wraps the provider and the
  // store, subscribes it to `events` and counts runs in `store` at each scrape. Declared first, so
  // it outlives the providers counted into it.
  std::unique_ptr<RuntimeMetrics> run_metrics;
  // The collector of `metrics` that reads the run counts from `store`; removed by ~Runtime before
  // the store goes away.
  std::optional<obs::CollectorId> run_counts_collector;
  // With store.url on PostgreSQL, the connections every module's pool takes from
  // (postgres.max_connections); else null.
  std::shared_ptr<db::PgBudget> postgres_connections;
  // Runtime::provider when it is built on demand; else null.
  DeferredProvider* deferred = nullptr;
  // Providers of runs that recorded another provider or base URL than the configured ones
  // (ProviderFor in run_model.h), by "<provider>\n<base_url>", counted like Runtime::provider.
  // This mutex guards them, `recorders` and `warned_endpoints`.
  std::mutex run_providers_mu;
  std::map<std::string, std::unique_ptr<llm::LlmProvider>> run_providers;
  // The recorders of Runtime::record_path, one per Agent that records.
  std::vector<std::unique_ptr<llm::RecordingProvider>> recorders;
  // Endpoints already warned about (Runtime::warn).
  std::set<std::string> warned_endpoints;
  // The canary store (Canaries in canary.h), opened on first use; canaries_mu guards it.
  std::mutex canaries_mu;
  std::unique_ptr<improve::CanaryStore> canaries;
};

// The one way in to a Runtime's parts, for app's files and app's tests.
struct RuntimeAccess {
  static RuntimeParts& Parts(Runtime& runtime) { return *runtime.parts_; }
  static const RuntimeParts& Parts(const Runtime& runtime) { return *runtime.parts_; }
};

inline RuntimeParts& PartsOf(Runtime& runtime) { return RuntimeAccess::Parts(runtime); }
inline const RuntimeParts& PartsOf(const Runtime& runtime) { return RuntimeAccess::Parts(runtime); }

}  // namespace mend::app::internal
