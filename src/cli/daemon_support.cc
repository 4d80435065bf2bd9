// What the long-lived commands (`mend recover`, `mend serve`) share on the command line: which
// runs their provider flags apply to.
#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "mend/app/runtime.h"

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

}  // namespace mend::cli
