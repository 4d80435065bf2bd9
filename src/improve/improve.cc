#include "mend/improve/improve.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "improve/attempt_stages.h"
#include "improve/untrusted.h"
#include "mend/base/hash.h"
#include "mend/base/json.h"
#include "mend/improve/editor_protocol.h"
#include "mend/improve/proposal_diff.h"
#include "mend/improve/split.h"

namespace mend::improve {

AgentText ApplyEdits(const AgentText& base, const std::vector<FileEdit>& edits) {
  AgentText out = base;
  for (const FileEdit& edit : edits) {
    if (edit.path == "instructions.md") {
      out.instructions = edit.content;
    } else {
      out.skills[edit.path] = edit.content;
    }
  }
  return out;
}

namespace {

Status CheckOptions(const ImproveOptions& options) {
  if (options.editor == nullptr) return InvalidArgumentError("improve: no editor model");
  if (!options.evaluate) return InvalidArgumentError("improve: no evaluator");
  if (options.env.fs == nullptr || options.env.clock == nullptr || options.env.random == nullptr) {
    return InvalidArgumentError("improve: the Env needs a file system, a clock and randomness");
  }
  if (options.cases.empty()) return InvalidArgumentError("improve: no case to run");
  if (options.candidates < 1 || options.candidates > 20) {
    return InvalidArgumentError("improve: --candidates must be between 1 and 20");
  }
  if (options.rounds < 1 || options.rounds > 20) {
    return InvalidArgumentError("improve: --rounds must be between 1 and 20");
  }
  if (options.repeats < options.gates.min_repeats || options.repeats > 100) {
    return InvalidArgumentError("improve: --repeats must be between " +
                                std::to_string(options.gates.min_repeats) + " and 100");
  }
  if (options.home.empty() || options.agent_dir.empty()) {
    return InvalidArgumentError("improve: home and agent folder are required");
  }
  return OkStatus();
}

// The split stage: the cases split (seeded) and the folder's text read, and the inputs checked
// (check_inputs), before anything is recorded.
struct Prepared {
  Split split;
  AgentText base;
};

Result<Prepared> Prepare(const ImproveOptions& options) {
  Prepared prepared;
  MEND_ASSIGN_OR_RETURN(prepared.split,
                        CheckedSplitCases(options.cases, options.held_out_fraction, options.seed));
  MEND_ASSIGN_OR_RETURN(prepared.base, ReadAgentText(*options.env.fs, options.agent_dir));
  if (options.check_inputs) {
    MEND_RETURN_IF_ERROR(options.check_inputs(prepared.base, options.cases));
  }
  return prepared;
}

// Records what the attempt starts from: its inputs and the split.
Status RecordInputs(const ImproveOptions& options, const Split& split, AuditFolder& audit,
                    const AgentText& base) {
  std::vector<std::pair<std::string, std::string>> skills(base.skills.begin(), base.skills.end());
  AuditOptions audit_options{options.repeats, options.rounds, options.gates};
  MEND_RETURN_IF_ERROR(audit.WriteInputs(
      MakeAuditInputs(options.agent_dir, base.instructions, skills, options.cases, audit_options)));
  return audit.WriteSplit(split);
}

// The stages once the audit folder exists, in order; the first error stops them.
Status RunStages(const ImproveOptions& options, const Split& split, AuditFolder& audit,
                 ImproveReport& report) {
  MEND_RETURN_IF_ERROR(RecordInputs(options, split, audit, report.base));
  internal::Attempt attempt(options, split, audit, report);
  MEND_RETURN_IF_ERROR(attempt.Baseline());
  MEND_RETURN_IF_ERROR(attempt.Rounds());
  MEND_RETURN_IF_ERROR(attempt.Decide());
  return attempt.Record();
}

}  // namespace

std::string AgentTextSha256(const AgentText& text) {
  std::string bytes;
  auto add = [&bytes](std::string_view field) {
    bytes += std::to_string(field.size());
    bytes += ':';
    bytes += field;
  };
  add("instructions.md");
  add(text.instructions);
  for (const auto& [path, content] : text.skills) {
    add(path);
    add(content);
  }
  return Sha256Hex(bytes);
}

Result<ImproveReport> ImproveAgent(const ImproveOptions& options) {
  MEND_RETURN_IF_ERROR(CheckOptions(options));
  MEND_ASSIGN_OR_RETURN(Prepared prepared, Prepare(options));
  ImproveReport report;
  report.base = std::move(prepared.base);
  MEND_ASSIGN_OR_RETURN(report.attempt_id, NewAttemptId(options.env));
  MEND_ASSIGN_OR_RETURN(AuditFolder audit,
                        AuditFolder::Create(*options.env.fs, options.home, report.attempt_id));
  report.audit_dir = audit.path();
  if (options.on_started) options.on_started(report.attempt_id);

  Status status = RunStages(options, prepared.split, audit, report);
  if (!status.ok()) {
    // Without it the attempt would be listed as unfinished forever. Best effort: the disk that
    // failed the attempt may fail this too, and the attempt's own error is what the caller needs.
    audit.WriteError(status).IgnoreError();
    return status;
  }
  return report;
}

}  // namespace mend::improve
