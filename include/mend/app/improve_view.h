#pragma once

// Recorded improve attempts as `mend improve list | show | apply | reject` and `mend serve`'s
// /api/v1/improve show them: the JSON shapes of docs/improve.md ("JSON output") and an attempt's
// details read back from its audit folder. Both surfaces call these, so their answers agree. The
// readers are as thread-safe as the FileSystem; the JSON builders are pure.
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/file_system.h"
#include "mend/base/result.h"
#include "mend/improve/attempt_store.h"
#include "mend/improve/audit.h"
#include "mend/improve/proposal.h"

namespace mend::app {

/// One case of a gate decision as `mend improve --json` prints it:
/// {"id","held_out","runs","before","after","verdict"} (`before`/`after`: passing runs out of
/// `runs` of the baseline and the candidate).
nlohmann::json DecisionCaseJson(const improve::CaseResult& c);

/// The cost figures of a gate decision as `mend improve --json` prints them:
/// {"before_per_success_usd","after_per_success_usd","limit_usd","max_cost_increase"}; a figure
/// that is undefined (no passing run, no limit) is null.
nlohmann::json DecisionCostJson(const improve::ArmCost& baseline, const improve::ArmCost& candidate,
                                double max_cost_increase, const std::optional<double>& limit);

/// {"status","note","created_at","decided_at","agent_dir","files":[path...]}, or null.
nlohmann::json ProposalJson(const std::optional<improve::Proposal>& proposal);

/// {"attempts":[{"attempt_id","agent_dir","outcome","gate":null|"...","proposal":null|"<status>",
/// "host":null|"..."}]}; host is where the audit folder is, when the attempts are shared on
/// PostgreSQL.
nlohmann::json AttemptListJson(const std::vector<improve::AttemptSummary>& attempts);

/// What `show` tells about one attempt.
struct AttemptDetail {
  /// Where the audit folder is. When it is on another host (`location.here` false) `record` holds
  /// only the attempt id and agent folder, and `summary` what the shared store recorded.
  improve::AttemptStore::Location location;
  improve::AttemptSummary summary;            ///< the list line of the attempt
  improve::AuditRecord record;                ///< what its audit folder holds
  std::optional<improve::Proposal> proposal;  ///< its proposal, if it made one
  /// Whether the recorded scores give the recorded decision, every recorded field of it
  /// (CheckRecordedDecision); nullopt without a decision. When not, `recomputed_mismatch` names the
  /// first field that differs ("cases[3].verdict: recorded better, recomputed same (case x)").
  std::optional<bool> recomputed_matches;
  std::string recomputed_mismatch;  ///< the first field that differs, when not
  /// The proposal as a unified diff per file (improve/proposal_diff.h), against the text the
  /// attempt started from: the backup of an applied proposal, else the agent folder's file while
  /// it still has the recorded hash. A file edited since the attempt started is diffed against its
  /// current text and named in `changed_files` (apply refuses it). Empty without a proposal.
  std::string diff;
  std::vector<std::string> changed_files;  ///< files edited since the attempt started
};

/// Reads the attempt from `store` and, when its audit folder is in this home, the folder
/// `<home>/improve/<attempt_id>/`: kInvalidArgument for an id that is not an attempt id, kNotFound
/// for an unknown one, kDataLoss for a malformed file; a missing proposal is not an error. File
/// system errors reading the agent folder for the diff come back as they are.
Result<AttemptDetail> ReadAttemptDetail(FileSystem& fs, improve::AttemptStore& store,
                                        std::string_view home, std::string_view attempt_id);

/// `show --json`: {"attempt_id","agent_dir","host":null|"...","audit_dir","audit_here","outcome",
/// "gate":null|"...","cases","editor_exchanges","score_rows",
/// "decision":null|{"candidate","outcome","gate","reason","cases":[DecisionCaseJson + "gain"],
/// "cost":null|DecisionCostJson + {"before","after"}:{"total_usd","runs","passes"}},
/// "recomputed_matches":null|bool,
/// "recomputed_mismatch":null|"<first differing field>","error":null|{"code","message"},"card",
/// "proposal":PROPOSAL,"diff","changed_files":[...]}.
nlohmann::json AttemptDetailJson(const AttemptDetail& detail);

/// `apply`/`reject --json`: {"attempt_id","proposal":PROPOSAL}.
nlohmann::json ProposalDecisionJson(const improve::Proposal& proposal);

}  // namespace mend::app
