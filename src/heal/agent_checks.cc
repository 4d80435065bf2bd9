// agent.toml's [[checks]] as OutputCheck specs.
#include "mend/heal/agent_checks.h"

#include <utility>
#include <vector>

namespace mend::heal {

OutputCheckSpec ToOutputCheckSpec(const agent::CheckSpec& check) {
  using Kind = OutputCheckSpec::Kind;
  OutputCheckSpec spec;
  switch (check.kind) {
    case agent::CheckSpec::Kind::kRegex:
      spec.kind = check.must_match ? Kind::kMustMatch : Kind::kMustNotMatch;
      break;
    case agent::CheckSpec::Kind::kJsonSchema:
      spec.kind = Kind::kJsonSchema;
      break;
    case agent::CheckSpec::Kind::kMaxBytes:
      spec.kind = Kind::kMaxBytes;
      break;
    case agent::CheckSpec::Kind::kCommand:
      spec.kind = Kind::kCommand;
      break;
  }
  spec.tool = check.tool;
  spec.action = check.action == agent::CheckSpec::Action::kReplace ? CheckAction::kReplace
                                                                   : CheckAction::kHint;
  spec.pattern = check.pattern;
  spec.schema = check.schema;
  spec.max_bytes = check.max_bytes;
  spec.command = check.command;
  if (check.timeout.has_value()) spec.timeout = *check.timeout;
  spec.message = check.message;
  return spec;
}

Result<std::unique_ptr<OutputCheck>> OutputCheckForAgent(const agent::AgentSpec& spec,
                                                         OutputCheckOptions options) {
  if (spec.checks.empty()) return std::unique_ptr<OutputCheck>();
  std::vector<OutputCheckSpec> checks;
  checks.reserve(spec.checks.size());
  for (const agent::CheckSpec& check : spec.checks) checks.push_back(ToOutputCheckSpec(check));
  return OutputCheck::Create(std::move(checks), std::move(options));
}

}  // namespace mend::heal
