// What the long-lived commands (`mend recover`, `mend serve`) share: the recovery loop's log lines
// and the hourly retention loop.
#include <memory>
#include <ostream>
#include <string>

#include "cli/command.h"
#include "mend/app/retention.h"
#include "mend/app/runtime.h"
#include "mend/heal/recovery.h"

namespace mend::cli {

void LogRecoveryTo(heal::RecoveryOptions& options, std::ostream& log) {
  options.on_recovered = [&log](const std::string& id) { log << "recovered " << id << "\n"; };
  options.on_quarantined = [&log](const std::string& id) { log << "quarantined " << id << "\n"; };
  options.on_outage = [&log](const heal::OutageChange& change) {
    const std::string where = heal::DescribeEndpoint(change.endpoint);
    if (change.in_outage) {
      log << "provider outage at " << where << ": its runs wait; probing one at a time\n";
    } else {
      log << "provider back at " << where << ": its runs resume\n";
    }
  };
  options.on_error = [&log](const Status& error) {
    log << "recover: " << error.ToString() << "\n";
  };
}

std::unique_ptr<app::RetentionLoop> StartRetention(app::Runtime& runtime, std::ostream& log) {
  const auto keep = runtime.config.GetDuration("observe.retention");
  if (keep.count() <= 0) return nullptr;  // 0s: never
  auto retention = std::make_unique<app::RetentionLoop>(
      runtime, keep, app::kRetentionInterval, [&log](const Result<app::RetentionReport>& r) {
        if (!r.ok()) log << "prune: " << r.status().ToString() << "\n";
      });
  retention->Start();
  return retention;
}

}  // namespace mend::cli
