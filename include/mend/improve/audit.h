#pragma once

// The audit folder of one improve attempt, `<home>/improve/<attempt-id>/` (docs/home.md). The
// layout and every file's fields are in docs/improve.md "Audit folder". AuditFolder writes it,
// ReadAudit reads it back, and RecomputeDecision checks a recorded decision against its scores.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mend/base/env.h"
#include "mend/base/file_system.h"
#include "mend/base/result.h"
#include "mend/improve/cases.h"
#include "mend/improve/gates.h"
#include "mend/improve/split.h"

namespace mend::improve {

/// True for "imp-<yyyymmdd>T<hhmmss>-<8 lowercase hex>", e.g. "imp-20250102T030405-0a1b2c3d". The
/// fixed shape keeps ids safe as a path component (no '/', no "..").
bool IsValidAttemptId(std::string_view id);

/// A fresh id from env.clock (UTC, whole seconds) and env.random (32 bits). kInvalidArgument when
/// the clock's year is outside 0000..9999.
Result<std::string> NewAttemptId(const Env& env);

/// The options of the attempt, recorded so a run can be reproduced.
struct AuditOptions {
  int repeats = 0;     ///< K, runs per case and arm
  int max_rounds = 0;  ///< editor rounds allowed
  GateOptions gates;   ///< the gates applied

  /// Field by field.
  friend bool operator==(const AuditOptions& a, const AuditOptions& b) {
    return a.repeats == b.repeats && a.max_rounds == b.max_rounds &&
           a.gates.max_cost_increase == b.gates.max_cost_increase &&
           a.gates.min_repeats == b.gates.min_repeats;
  }
};

/// inputs.json.
struct AuditInputs {
  std::string agent_dir;            ///< the agent folder improved
  std::string instructions_sha256;  ///< lowercase hex SHA-256 of instructions.md
  /// (skill file name, lowercase hex SHA-256 of its text), in the order given.
  std::vector<std::pair<std::string, std::string>> skills_sha256;
  std::vector<Case> cases;  ///< every case, in file order
  AuditOptions options;     ///< the options of the attempt

  /// Field by field.
  friend bool operator==(const AuditInputs&, const AuditInputs&) = default;
};

/// Hashes the texts (Sha256Hex) into an AuditInputs. Pure.
AuditInputs MakeAuditInputs(std::string agent_dir, std::string_view instructions,
                            const std::vector<std::pair<std::string, std::string>>& skills,
                            std::vector<Case> cases, AuditOptions options);

/// split.json.
struct AuditSplit {
  std::uint64_t seed = 0;                 ///< of SplitCases
  double held_out_fraction = 0;           ///< of SplitCases
  std::vector<std::string> training_ids;  ///< in input order
  std::vector<std::string> held_out_ids;  ///< in input order

  /// Field by field.
  friend bool operator==(const AuditSplit&, const AuditSplit&) = default;
};

/// One exchange with the editor: `editor/<round>-<n>.request.txt` and `.reply.txt`.
struct EditorExchange {
  int round = 0;                     ///< >= 1
  int n = 0;                         ///< >= 1, the exchange within the round
  std::string request;               ///< the messages sent, as text
  std::optional<std::string> reply;  ///< std::nullopt when no reply was recorded

  /// Field by field.
  friend bool operator==(const EditorExchange&, const EditorExchange&) = default;
};

/// One line of scores.jsonl: one run of one case in one arm.
struct ScoreRow {
  std::string case_id;    ///< the case
  bool held_out = false;  ///< a case only the gates see
  std::string arm;        ///< "baseline" or "candidate-<n>" with n >= 1
  int repeat = 0;         ///< 0-based run index within the arm
  bool pass = false;      ///< the check's verdict
  double score = 0;       ///< the check's score, if it gave one
  double cost_usd = 0;    ///< what the run cost

  /// Field by field.
  friend bool operator==(const ScoreRow&, const ScoreRow&) = default;
};

/// "candidate-<n>".
std::string CandidateArm(int n);

/// The cost figures of a decision (GateDecision's), as decision.json records them.
struct RecordedCosts {
  ArmCost baseline;                      ///< GateDecision::baseline_cost
  ArmCost candidate;                     ///< GateDecision::candidate_cost
  double max_cost_increase = 0;          ///< GateOptions::max_cost_increase
  std::optional<double> cost_limit_usd;  ///< GateDecision::cost_limit_usd
};

/// decision.json: the decision about one candidate as it was recorded.
struct RecordedDecision {
  int candidate = 0;                                  ///< the n of "candidate-<n>" the gates judged
  GateOutcome outcome = GateOutcome::kNoImprovement;  ///< as decided
  std::optional<Gate> refused_by;                     ///< as decided
  std::string reason;                                 ///< as decided
  std::vector<CaseResult> cases;                      ///< as decided
  /// Each case's gain (candidate_passes - baseline_passes) as recorded, in the order of `cases`;
  /// empty, like `costs`, in a folder written before mend recorded them.
  std::vector<int> gains;
  std::optional<RecordedCosts> costs;  ///< see gains
};

/// error.json: why an attempt stopped before it came to an outcome.
struct RecordedError {
  std::string code;     ///< StatusCodeName, e.g. "INVALID_ARGUMENT"
  std::string message;  ///< the error message
  /// Field by field.
  friend bool operator==(const RecordedError&, const RecordedError&) = default;
};

/// Everything read back from one audit folder. Files an unfinished attempt has not written yet are
/// absent (empty or std::nullopt); inputs.json is always there.
struct AuditRecord {
  std::string attempt_id;                    ///< the folder's name
  AuditInputs inputs;                        ///< inputs.json
  std::optional<AuditSplit> split;           ///< split.json
  std::vector<EditorExchange> editor;        ///< sorted by (round, n)
  std::vector<ScoreRow> scores;              ///< in file order
  std::optional<RecordedDecision> decision;  ///< decision.json
  std::optional<std::string> card;           ///< card.txt
  std::optional<RecordedError> error;        ///< error.json
};

/// Writes one attempt's folder through a FileSystem. Every file is written with
/// WriteFileAtomically (PosixFileSystem creates it 0600; new directories are 0700). Not
/// thread-safe; `fs` must outlive the object.
class AuditFolder {
 public:
  /// Creates `<home>/improve/<attempt_id>/` and its `editor/` folder. kInvalidArgument for an
  /// invalid id, kAlreadyExists when the folder exists (an id is used once).
  static Result<AuditFolder> Create(FileSystem& fs, std::string_view home, std::string attempt_id);

  /// The attempt the folder is for.
  const std::string& attempt_id() const { return attempt_id_; }
  /// The folder.
  const std::string& path() const { return path_; }

  /// inputs.json.
  Status WriteInputs(const AuditInputs& inputs);
  /// split.json.
  Status WriteSplit(const Split& split);
  /// kInvalidArgument for round or n < 1.
  Status WriteEditorRequest(int round, int n, std::string_view request);
  /// The reply to request `n` of `round`; kInvalidArgument for round or n < 1.
  Status WriteEditorReply(int round, int n, std::string_view reply);
  /// Adds rows to scores.jsonl (the whole file is rewritten atomically with every row so far).
  /// kInvalidArgument for an invalid arm, a negative repeat, an empty case id or a non-finite or
  /// negative score or cost; nothing is written then.
  Status AppendScores(const std::vector<ScoreRow>& rows);
  /// decision.json: the outcome, gate and reason, every case with its gain, and the cost figures.
  /// kInvalidArgument for candidate < 1.
  Status WriteDecision(int candidate, const GateDecision& decision);
  /// card.txt: the card as the person saw it.
  Status WriteCard(std::string_view card);
  /// error.json: the attempt stopped with `error` (not OK) and has no outcome.
  Status WriteError(const Status& error);

 private:
  AuditFolder(FileSystem& fs, std::string attempt_id, std::string path)
      : fs_(&fs), attempt_id_(std::move(attempt_id)), path_(std::move(path)) {}

  FileSystem* fs_;
  std::string attempt_id_;
  std::string path_;
  std::vector<ScoreRow> scores_;
};

/// Reads `<home>/improve/<attempt_id>/`. kInvalidArgument for an invalid id (nothing is read),
/// kNotFound when the folder does not exist, kDataLoss naming the file when a file is malformed,
/// inputs.json is missing or the editor folder holds a name outside the layout. Other file system
/// errors keep their code.
Result<AuditRecord> ReadAudit(FileSystem& fs, std::string_view home, std::string_view attempt_id);

/// Rebuilds the CaseScores of baseline against "candidate-<candidate>" from score rows: cases in
/// order of first appearance, runs ordered by repeat. Rows of other candidates are ignored.
/// kInvalidArgument for a repeated (case, arm, repeat) and for a case whose rows disagree on
/// held_out. Decide checks the arm sizes.
Result<std::vector<CaseScores>> CaseScoresFromRows(const std::vector<ScoreRow>& rows,
                                                   int candidate);

/// Decide() over the recorded scores of the recorded decision's candidate, so the recorded
/// decision can be checked against what the scores give. kFailedPrecondition when the record has
/// no decision; Decide's errors otherwise.
Result<GateDecision> RecomputeDecision(const AuditRecord& record, const GateOptions& options);

/// The first field of `recorded` that `recomputed` does not give, as
/// "<field>: recorded <value>, recomputed <value>", e.g.
/// "cases[3].verdict: recorded better, recomputed same (case fix-1)"; std::nullopt when every
/// recorded field agrees. Fields are compared in this order: outcome, gate, the cases (their
/// number, then each one's case_id, held_out and runs), every case's verdict, every case's
/// baseline_passes, candidate_passes and gain, the cost figures (baseline_cost and candidate_cost
/// with total_usd, runs, passes and per_success_usd; max_cost_increase; cost_limit_usd), the
/// reason. Costs agree within a relative 1e-9. Gains and costs a folder written before mend
/// recorded them lacks are not compared. Pure.
std::optional<std::string> FirstDecisionMismatch(const RecordedDecision& recorded,
                                                 const GateDecision& recomputed);

/// Whether an audit folder's scores give its recorded decision: RecomputeDecision with the gate
/// options of inputs.json, then FirstDecisionMismatch.
struct AuditCheck {
  bool matches = false;  ///< the scores give the recorded decision
  /// Why not: the first differing field, or "the recorded scores do not decide: <error>" when
  /// RecomputeDecision fails. Empty when they match.
  std::string mismatch;
};
/// kFailedPrecondition when the record has no decision.
Result<AuditCheck> CheckRecordedDecision(const AuditRecord& record);

}  // namespace mend::improve
