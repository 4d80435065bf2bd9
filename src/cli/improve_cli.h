#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
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

// Which runs `--from-failures` took as the agent's (improve::FailureCases' counts): those recorded
// in the folder, and those of the same name recorded elsewhere with the same agent.toml.
struct FailureMatch {
  std::string agent;              // the agent's name
  std::string agent_toml_sha256;  // the folder's agent.toml digest
  int64_t runs_matched = 0;
  int64_t runs_in_folder = 0;
  int64_t runs_by_fingerprint = 0;
  std::vector<std::string> other_folders;
  int64_t left_out_agent_toml = 0;
  int64_t tasks = 0;
  int64_t skipped = 0;
  std::vector<std::string> run_ids;  // the runs the cases were made from, in case order
};
// "improve: 12 runs of agent `fixer` failed, ... (agent.toml 3fa2c1d0b4e5): 10 in this folder,
// 2 in /old/fixer with the same agent.toml; 3 tasks", one line.
std::string DescribeFailureMatch(const FailureMatch& match);
// The `from_failures` member of `mend improve --json`.
nlohmann::json FailureMatchJson(const FailureMatch& match);

// The cases `--from-failures` found, and what each failed run showed (for the editor).
struct FailureCases {
  std::vector<improve::Case> cases;
  std::map<std::string, std::string> reports;  // case id -> report
  int skipped = 0;  // matching runs that could not be read (an older run of the task was used)
  FailureMatch match;
};
// The failed, quarantined and no-progress runs of the agent in `agent_dir` as cases
// (improve/failures.h), with observe.db's spans when the home has one.
Result<FailureCases> LoadFailureCases(app::Runtime& runtime, const agent::AgentSpec& spec,
                                      const std::string& agent_dir);

// One finished attempt and what became of its proposal.
struct ImproveOutcome {
  improve::ImproveReport report;
  std::optional<improve::Proposal> proposal;
  std::optional<FailureMatch> failures;  // with --from-failures
};

// The card on stdout (and where the proposal went); with --json the `improve` shape of
// docs/improve.md.
void PrintImproveOutcome(CliContext& ctx, const ImproveOutcome& outcome);

// `mend improve list | show ID | apply ID | reject ID [--reason TEXT]`.
void AddImproveSubcommands(CLI::App& improve, CliContext& ctx);

}  // namespace mend::cli
