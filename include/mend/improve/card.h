#pragma once

// The card of an improve attempt: ImproveResult and FormatImproveResult, the plain text a person
// reads to accept or refuse a proposal (docs/improve.md). Pure.

#include <string>
#include <vector>

#include "mend/improve/editor_protocol.h"
#include "mend/improve/gates.h"

namespace mend::improve {

/// One changed file of a proposal.
struct FileDiff {
  std::string path;  ///< relative to the agent folder
  std::string diff;  ///< UnifiedDiff(path, before, after)
};

/// A reply whose files were those of an earlier candidate, so it was not evaluated again.
struct IdenticalCandidate {
  int round = 0;            ///< the reply: round and request within the round, 1-based
  int request = 0;          ///< see round
  int same_as = 0;          ///< the n of "candidate-<n>" it is identical to
  int same_as_round = 0;    ///< that candidate's round
  int same_as_request = 0;  ///< and request within it
  /// Field by field.
  friend bool operator==(const IdenticalCandidate&, const IdenticalCandidate&) = default;
};

/// Everything a person needs to accept or refuse one improve attempt.
struct ImproveResult {
  GateDecision decision;        ///< outcome, refusing gate and reason, per-case verdicts, costs
  std::string rationale;        ///< the editor's, as it wrote it
  std::vector<FileDiff> diffs;  ///< the proposed changes
  std::vector<RefusedEdit> refused_edits;     ///< EditorReply::refused
  std::vector<IdenticalCandidate> identical;  ///< replies not evaluated again
};

/// Renders `result` as a plain-text card: the outcome line (with the refusing gate), the reason, a
/// table of cases (before/after passes out of K, verdict, held-out marked), cost per successful run
/// before/after with the limit (in dollars, with as many decimals as the smallest figure needs for
/// three significant digits, at least four, the same for all three), the rationale, the diffs, the
/// refused edits with their reasons and the replies identical to an earlier candidate.
/// Control characters other than newline and tab in model-written text (rationale, diffs, refused
/// paths and reasons) are shown as `\xHH` so the card cannot drive a terminal. Pure and
/// thread-safe.
std::string FormatImproveResult(const ImproveResult& result);

}  // namespace mend::improve
