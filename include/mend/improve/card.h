#pragma once

#include <string>
#include <vector>

#include "mend/improve/editor_protocol.h"
#include "mend/improve/gates.h"

namespace mend::improve {

// One changed file of a proposal.
struct FileDiff {
  std::string path;
  std::string diff;  // UnifiedDiff(path, before, after)
};

// Everything a person needs to accept or refuse one improve attempt.
struct ImproveResult {
  GateDecision decision;  // outcome, refusing gate and reason, per-case verdicts, costs
  std::string rationale;  // the editor's, as it wrote it
  std::vector<FileDiff> diffs;
  std::vector<RefusedEdit> refused_edits;  // EditorReply::refused
};

// Renders `result` as a plain-text card: the outcome line (with the refusing gate), the reason, a
// table of cases (before/after passes out of K, verdict, held-out marked), cost per successful run
// before/after with the limit, the rationale, the diffs and the refused edits with their reasons.
// Control characters other than newline and tab in model-written text (rationale, diffs, refused
// paths and reasons) are shown as \xHH so the card cannot drive a terminal. Pure and thread-safe.
std::string FormatImproveResult(const ImproveResult& result);

}  // namespace mend::improve
