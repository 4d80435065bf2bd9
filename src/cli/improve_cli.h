#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "mend/agent/agent_spec.h"
#include "mend/improve/cases.h"
#include "mend/improve/improve.h"
#include "mend/improve/proposal.h"

namespace mend::app {
struct Runtime;
}  // namespace mend::app

namespace mend::cli {

// The cases `--from-failures` found, and what each failed run showed (for the editor).
struct FailureCases {
  std::vector<improve::Case> cases;
  std::map<std::string, std::string> reports;  // case id -> report
  int skipped = 0;  // matching runs that could not be read (an older run of the task was used)
};
// The failed, quarantined and no-progress runs of the agent in `agent_dir` as cases
// (improve/failures.h), with observe.db's spans when the home has one.
Result<FailureCases> LoadFailureCases(app::Runtime& runtime, const agent::AgentSpec& spec,
                                      const std::string& agent_dir);

// One finished attempt and what became of its proposal.
struct ImproveOutcome {
  improve::ImproveReport report;
  std::optional<improve::Proposal> proposal;
};

// The card on stdout (and where the proposal went); with --json the `improve` shape of
// docs/improve.md.
void PrintImproveOutcome(CliContext& ctx, const ImproveOutcome& outcome);

// `mend improve list | show ID | apply ID | reject ID [--reason TEXT]`.
void AddImproveSubcommands(CLI::App& improve, CliContext& ctx);

}  // namespace mend::cli
