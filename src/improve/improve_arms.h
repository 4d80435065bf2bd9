#pragma once

// What an improve attempt (improve.cc) computes from its arms: passing runs, the gates' input, the
// rows of scores.jsonl, which candidate the card is about, and each candidate's audit file. Not a
// public API.

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "mend/base/file_system.h"
#include "mend/base/result.h"
#include "mend/improve/audit.h"
#include "mend/improve/improve.h"

namespace mend::improve::internal {

// The baseline or one candidate: its text and, once evaluated, its runs.
struct Arm {
  std::string name;  // "baseline" | "candidate-<n>"
  AgentText text;
  ArmRuns runs;
};

int Passes(const std::vector<CaseRun>& runs);
// Passing runs per training case, in the order of `training` (indices into the arm's cases).
std::vector<int> TrainingPasses(const ArmRuns& runs, const std::vector<std::size_t>& training);
// True when `a` is at least `b` everywhere and above it somewhere (the Pareto order).
bool Dominates(const std::vector<int>& a, const std::vector<int>& b);
int Sum(const std::vector<int>& values);

// The gates' input: every case's runs in both arms; `held` holds the held-out case ids.
std::vector<CaseScores> ScoresOf(const std::vector<Case>& cases, const std::set<std::string>& held,
                                 const ArmRuns& baseline, const ArmRuns& candidate);
// The lines of scores.jsonl for one evaluated arm.
std::vector<ScoreRow> RowsOf(const std::vector<Case>& cases, const std::set<std::string>& held,
                             const Arm& arm);

int BetterTraining(const GateDecision& decision);
// True when `a` is a better subject for the card than `b`: more better training cases, then more
// passing training runs, then a lower cost per success.
bool Preferred(const CandidateRecord& a, const CandidateRecord& b);

// improve/<id>/candidates/<n>.json for an evaluated candidate (n >= 1), with the replies found
// identical to it (docs/improve.md "Audit folder").
Status WriteCandidate(FileSystem& fs, const std::string& audit_dir, const CandidateRecord& c,
                      const std::vector<IdenticalCandidate>& identical);

}  // namespace mend::improve::internal
