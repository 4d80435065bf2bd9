#pragma once

// The stages of one improve attempt (ImproveAgent, mend/improve/improve.h) once its cases are
// split and its audit folder exists: the baseline, the editor rounds, the decision and its record.
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "improve/improve_arms.h"
#include "mend/improve/audit.h"
#include "mend/improve/improve.h"
#include "mend/improve/split.h"

namespace mend::improve::internal {

// The Pareto front over training cases: arms no other arm dominates.
struct FrontMember {
  int candidate_index;  // into the evaluated candidates; -1: the baseline
  std::vector<int> passes;
};

// One attempt. Borrows the options, the audit folder and the report, which must outlive it; the
// stages run in order on one thread: Baseline, Rounds, Decide, Record. Each returns the first
// error of the evaluator or the audit folder (ImproveAgent then records it in error.json).
class Attempt {
 public:
  Attempt(const ImproveOptions& options, const Split& split, AuditFolder& audit,
          ImproveReport& report);

  // Evaluates the unchanged agent on every case; it is the first member of the Pareto front.
  Status Baseline();
  // For each round, asks the editor for `candidates` candidates reflecting on the failing
  // training runs of the round's parent (the front member with the most passing training runs)
  // and evaluates and judges each; stops early once the parent passes every training run.
  Status Rounds();
  // Chooses the card's subject (the best proposal, else the best candidate better on a training
  // case but refused by a gate, else the best of the others) and fills report.chosen,
  // report.result and report.card. Writes nothing.
  Status Decide();
  // Writes the subject's decision.json (when there is a subject) and the card.
  Status Record();

 private:
  void Progress(ImproveProgress::Kind kind, const std::string& arm, std::string message);
  Status Evaluate(Arm& arm);
  // The front member with the most passing training runs (ties: the earliest).
  const FrontMember& Parent() const;
  const Arm& ArmOf(int candidate_index) const;
  // The parent's failing training runs: per case, the first failing repeat.
  std::vector<EditorRunView> FailingRuns(const Arm& parent) const;
  // Asks the editor for candidate `k` of `round`; std::nullopt (with the reason in
  // editor_errors) when the call failed or the reply is malformed.
  Result<std::optional<EditorReply>> Ask(int round, int k, const Arm& parent);
  // One candidate: asked for, then evaluated and judged unless it changes nothing, repeats the
  // files of an earlier candidate, or holds text the folder cannot hold.
  Status Candidate(int round, int k, int parent_index);
  // Records a reply whose files are those of candidate `same_as` without evaluating it again.
  Status Identical(CandidateRecord record, int same_as);
  Status Judge(CandidateRecord record, Arm arm);
  void AddToFront(int candidate_index, std::vector<int> passes);
  // The card's subject; nullptr when no candidate was evaluated.
  const CandidateRecord* Subject() const;

  const ImproveOptions& options_;
  const std::vector<Case>& cases_;
  AuditFolder& audit_;
  ImproveReport& report_;
  std::set<std::string> held_;
  std::vector<std::size_t> training_;
  int training_runs_ = 0;
  std::map<std::string, std::string> reports_;  // failure reports of training cases
  Arm baseline_;
  std::vector<Arm> arms_;  // evaluated candidates, by n - 1
  std::vector<FrontMember> front_;
  int best_passes_ = 0;
  std::map<std::string, int> evaluated_;       // files digest -> n
  std::map<int, std::size_t> candidate_slot_;  // n -> index in report_.candidates
};

}  // namespace mend::improve::internal
