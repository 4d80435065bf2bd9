#include "mend/heal/output_check.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "heal/heal_event.h"
#include "mend/agent/command_vars.h"
#include "mend/agent/json_schema.h"
#include "mend/base/json.h"
#include "mend/base/pattern.h"
#include "mend/base/utf8.h"

namespace mend::heal {
namespace internal {

struct CompiledCheck {
  OutputCheckSpec spec;
  std::optional<Pattern> pattern;  // Set for kMustMatch and kMustNotMatch.
  nlohmann::json schema;
};

}  // namespace internal

namespace {

using internal::CompiledCheck;
using Kind = OutputCheckSpec::Kind;

Status CompileOne(CompiledCheck& check) {
  const OutputCheckSpec& spec = check.spec;
  if (spec.tool.empty()) return InvalidArgumentError("no tool name (use \"*\" for every tool)");
  switch (spec.kind) {
    case Kind::kMustMatch:
    case Kind::kMustNotMatch: {
      MEND_ASSIGN_OR_RETURN(check.pattern, Pattern::Compile(spec.pattern));
      return OkStatus();
    }
    case Kind::kJsonSchema: {
      MEND_ASSIGN_OR_RETURN(check.schema, ParseJson(spec.schema));
      return agent::ValidateJsonSchema(check.schema);
    }
    case Kind::kMaxBytes:
      if (spec.max_bytes == 0) return InvalidArgumentError("max_bytes must be positive");
      return OkStatus();
    case Kind::kCommand:
      if (spec.command.empty()) return InvalidArgumentError("command check without a command");
      return OkStatus();
  }
  return InvalidArgumentError("unknown check kind");
}

bool AppliesTo(const OutputCheckSpec& spec, const std::string& tool) {
  return spec.tool == "*" || spec.tool == tool;
}

std::string SchemaFailure(const CompiledCheck& check, const std::string& output) {
  Result<nlohmann::json> parsed = ParseJson(output);
  if (!parsed.ok()) {
    return "output is not valid JSON: " + Excerpt(parsed.status().message());
  }
  Status valid = agent::ValidateAgainstSchema(*parsed, check.schema);
  if (valid.ok()) return "";
  return "output does not match the JSON schema: " + Excerpt(valid.message());
}

}  // namespace

Result<std::unique_ptr<OutputCheck>> OutputCheck::Create(std::vector<OutputCheckSpec> checks,
                                                         OutputCheckOptions options) {
  std::vector<std::unique_ptr<CompiledCheck>> compiled;
  for (size_t i = 0; i < checks.size(); ++i) {
    auto check = std::make_unique<CompiledCheck>();
    check->spec = std::move(checks[i]);
    Status s = CompileOne(*check);
    if (!s.ok()) {
      return InvalidArgumentError("output check " + std::to_string(i) + ": " +
                                  std::string(s.message()));
    }
    compiled.push_back(std::move(check));
  }
  if (options.runner == nullptr) options.runner = MakeSubprocessRunner();
  return std::make_unique<OutputCheck>(std::move(compiled), std::move(options));
}

OutputCheck::OutputCheck(std::vector<std::unique_ptr<CompiledCheck>> checks,
                         OutputCheckOptions options)
    : checks_(std::move(checks)), options_(std::move(options)) {}

OutputCheck::~OutputCheck() = default;

Result<std::string> OutputCheck::Evaluate(const CompiledCheck& check,
                                          const agent::ToolCallInfo& call,
                                          const std::string& output, std::string& command_stdout) {
  const OutputCheckSpec& spec = check.spec;
  switch (spec.kind) {
    case Kind::kMustMatch: {
      if (check.pattern->Search(output)) return std::string();
      return "output does not match /" + spec.pattern + "/";
    }
    case Kind::kMustNotMatch: {
      if (!check.pattern->Search(output)) return std::string();
      return "output matches /" + spec.pattern + "/";
    }
    case Kind::kJsonSchema:
      return SchemaFailure(check, output);
    case Kind::kMaxBytes:
      if (output.size() <= spec.max_bytes) return std::string();
      return "output is " + std::to_string(output.size()) + " bytes, more than the limit of " +
             std::to_string(spec.max_bytes);
    case Kind::kCommand: {
      std::string cwd = call.run == nullptr ? "" : call.run->workspace;
      const std::string agent_dir =
          call.run == nullptr || call.run->agent == nullptr ? "" : call.run->agent->dir;
      MEND_ASSIGN_OR_RETURN(CommandRun run,
                            options_.runner->Run(agent::ExpandCommand(spec.command, agent_dir, cwd),
                                                 cwd, output, spec.timeout));
      command_stdout = std::string(Trim(run.stdout_data));
      if (run.timed_out) {
        return "check command " + spec.command[0] + " timed out after " +
               std::to_string(spec.timeout.count()) + " ms";
      }
      if (run.exit_code == 0) return std::string();
      return "check command " + spec.command[0] + " failed (exit " + std::to_string(run.exit_code) +
             ")";
    }
  }
  return std::string();
}

Result<agent::PostToolAction> OutputCheck::AfterTool(const agent::ToolCallInfo& call,
                                                     const agent::ToolResult& result) {
  agent::PostToolAction action;
  if (result.is_error) return action;
  for (const auto& check : checks_) {
    const OutputCheckSpec& spec = check->spec;
    if (!AppliesTo(spec, call.tool)) continue;
    std::string command_stdout;
    MEND_ASSIGN_OR_RETURN(std::string failure,
                          Evaluate(*check, call, result.content, command_stdout));
    if (failure.empty()) continue;
    std::string text = !spec.message.empty()     ? spec.message
                       : !command_stdout.empty() ? command_stdout
                                                 : "output check failed: " + failure;
    bool replace = spec.action == CheckAction::kReplace;
    if (call.run != nullptr) {
      std::lock_guard<std::mutex> lock(mu_);
      failed_runs_.insert(call.run->run_id);
    }
    PublishHealAction(options_.events, call, replace ? "replace" : "hint", failure);
    if (replace) {
      action.replacement = agent::ToolResult::Error(std::move(text));
      return action;
    }
    if (!action.append_hint.empty()) action.append_hint += "\n";
    action.append_hint += text;
  }
  return action;
}

Status OutputCheck::AfterRun(agent::RunOutcome& outcome) {
  if (outcome.run == nullptr) return OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_runs_.erase(outcome.run->run_id) > 0) {
    outcome.flags[std::string(kChecksFailedFlag)] = true;
  }
  return OkStatus();
}

}  // namespace mend::heal
