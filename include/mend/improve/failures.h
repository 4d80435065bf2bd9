#pragma once

// `mend improve AGENT_DIR --from-failures` (docs/improve.md, "Cases from failures"):
// the unfinished runs of an agent that went wrong become improve cases, each with a failure report
// an editor model reads.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/result.h"
#include "mend/improve/cases.h"

namespace mend::store {
class CheckpointStore;
}  // namespace mend::store

namespace mend::obs {
class SpanStore;
}  // namespace mend::obs

namespace mend::improve {

/// Why a run counts as a failure. A run the progress guard stopped (status failed, error code
/// MEND_RUN_NO_PROGRESS) is kNoProgress, not kFailed; a quarantined run is kQuarantined whatever
/// its error. Completed, running and waiting runs are never failures.
enum class FailureKind { kFailed, kQuarantined, kNoProgress };
/// "failed", "quarantined", "no_progress".
std::string_view FailureKindName(FailureKind kind);

/// Which runs CasesFromFailures reads and how it reports them.
struct FailureOptions {
  /// Which runs belong to the agent (docs/improve.md "Which runs"). Every run must have the
  /// recorded name `agent_name` (RunRecord::agent) when it is set. Then a run matches when
  ///   - its recorded folder (RunRecord::agent_dir) equals `agent_dir` (kFolder), or
  ///   - `agent_dir` is empty: every folder matches on the name alone (kName), or
  ///   - it was recorded in another folder and the fingerprint it recorded has the agent.toml
  ///   digest
  ///     `agent_toml_sha256` (kFingerprint): the same agent, copied or moved. A run of that name in
  ///     another folder with another agent.toml (or none recorded: runs from before fingerprints)
  ///     is left out and counted in FailureCases::left_out_agent_toml.
  /// Folders are compared as text after lexical normalisation ("a/./b/" equals "a/b"), never
  /// through the file system: pass the absolute path runs record (the CLI records the absolute,
  /// normalised path of AGENT_DIR). At least one of `agent_dir` and `agent_name` must be set; the
  /// fingerprint is used only with both.
  std::string agent_dir;
  std::string agent_name;         ///< see agent_dir
  std::string agent_toml_sha256;  ///< AgentSpec::agent_toml_sha256 of the folder; may be empty
  /// The kinds to include; at least one, repeats ignored.
  std::vector<FailureKind> kinds = {FailureKind::kFailed, FailureKind::kQuarantined,
                                    FailureKind::kNoProgress};
  /// At most this many cases (one per task), the newest first; at least 1.
  std::size_t limit = 50;
  /// The escaped content of one untrusted-data block is at most this many bytes; at least 1.
  std::size_t max_block_bytes = 2048;
  /// A whole report is at most this many bytes; middle entries of the transcript and trace are
  /// left out (and say so) to stay within it. At least 2 × max_block_bytes + kReportReserveBytes,
  /// the room the parts that are always shown need.
  std::size_t max_report_bytes = 16 * 1024;
};

/// The report room reserved beyond the task and error blocks (headings, tags, the omission line).
inline constexpr std::size_t kReportReserveBytes = 1024;

/// How a run was found to be the agent's (FailureOptions).
enum class FailureMatch { kFolder, kName, kFingerprint };
/// "folder", "name", "fingerprint".
std::string_view FailureMatchName(FailureMatch match);

/// One case made from the newest readable failed run of a task.
struct FailureCase {
  /// id = the run's id (so `mend show <case id>` shows the run), or, for a run id that is not a
  /// valid case id (IsValidCaseId), "run-<hex>": the first 8 hex digits of SHA-256 of the
  /// normalised task, more when another case has that id; task = the run's task as recorded,
  /// workspace empty (no fixture: see docs/improve.md), tags {"from-failure", kind name, error
  /// code (when the run has one)}.
  Case c;
  std::string run_id;                               ///< the run the case comes from
  std::string agent_dir;                            ///< the folder the run recorded
  FailureMatch matched_by = FailureMatch::kFolder;  ///< how the run was found to be the agent's
  FailureKind kind = FailureKind::kFailed;          ///< why the run counts as a failure
  std::string error_code;     ///< RunError::code; "" when the run recorded none
  std::string error_message;  ///< RunError::message, as recorded (untrusted text)
  int duplicates = 0;         ///< other selected runs of the same task (older or unreadable)
  /// The run rendered for an editor: plain structure lines, and every text that came from a tool,
  /// a user or a model inside UntrustedBlock blocks. At most FailureOptions::max_report_bytes.
  std::string report;
};

/// A run that matched but could not be read; a case of its task (if any) comes from an older run.
struct SkippedRun {
  std::string run_id;  ///< the run
  Status reason;       ///< kDataLoss (a record, message or state that does not decode) or kNotFound
};

/// What CasesFromFailures found.
struct FailureCases {
  std::vector<FailureCase> cases;   ///< newest first (by the chosen run's creation)
  std::vector<SkippedRun> skipped;  ///< runs that could not be read
  std::int64_t runs_matched = 0;    ///< runs of the agent with a selected kind, sessions excluded
  std::int64_t tasks = 0;           ///< distinct normalised tasks among them
  /// How runs_matched divides by FailureMatch, and the other folders the kName and kFingerprint
  /// runs were recorded in (sorted, each once).
  std::int64_t runs_in_folder = 0;
  std::int64_t runs_by_name = 0;           ///< see runs_in_folder
  std::int64_t runs_by_fingerprint = 0;    ///< see runs_in_folder
  std::vector<std::string> other_folders;  ///< see runs_in_folder
  /// Runs of agent_name with a selected kind, recorded in another folder with another agent.toml
  /// (or no fingerprint): not the agent's, so not matched.
  std::int64_t left_out_agent_toml = 0;
};

/// The dedup key of a task: white space at both ends removed and every inner run of white space
/// (Unicode, as CollapseWhitespace) replaced by one space; case is kept.
std::string NormalizeTask(std::string_view task);

/// Builds the cases. Reads every unfinished run of the store that matches `options` (failed and
/// quarantined, in pages, newest first), groups them by NormalizeTask, and for the newest
/// `options.limit` groups reads the newest run whose conversation decodes; its trace comes from
/// `spans` when given (nullable, not owned), looked up by the trace id the run recorded. Session
/// turns (`mend chat`) are left out: their task alone does not reproduce the conversation.
///
/// A run whose record, messages or state does not decode (kDataLoss), or that disappeared meanwhile
/// (kNotFound), is listed in `skipped` and the next older run of its task is used instead; a
/// trace that cannot be read is said in the report and costs nothing else.
///
/// Errors: kInvalidArgument for options out of range (the message names the field); other errors
/// of the store keep their code. Reads only; thread-safe as the stores are.
Result<FailureCases> CasesFromFailures(store::CheckpointStore& runs, obs::SpanStore* spans,
                                       const FailureOptions& options);

}  // namespace mend::improve
