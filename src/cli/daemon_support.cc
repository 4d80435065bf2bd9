// What the long-lived commands (`mend recover`, `mend serve`) share: which runs their provider
// flags apply to, the recovery loop's log lines and the hourly retention loop.
#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <string>

#include "cli/command.h"
#include "mend/app/retention.h"
#include "mend/app/runtime.h"
#include "mend/heal/recovery.h"

namespace mend::cli {

void AddOverrideRecordedFlag(CLI::App& command, bool* override) {
  command.add_flag("--override-recorded", *override,
                   "let --provider, --base-url, --model and --script-file switch the runs this "
                   "process resumes too (each run records the switch); without it they are "
                   "defaults for new runs only and every run keeps the model it recorded");
}

void SetProviderFlagScope(app::Runtime& runtime, bool override_recorded) {
  runtime.provider_flag_scope =
      override_recorded ? app::ProviderFlagScope::kEveryRun : app::ProviderFlagScope::kNewRunsOnly;
}

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
