// The baseline and the editor rounds of an improve attempt (attempt_stages.h).
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "improve/attempt_stages.h"
#include "mend/improve/editor_protocol.h"

namespace mend::improve::internal {
namespace {

std::string RequestName(int round, int request) {
  return "round " + std::to_string(round) + " candidate " + std::to_string(request);
}

}  // namespace

Attempt::Attempt(const ImproveOptions& options, const Split& split, AuditFolder& audit,
                 ImproveReport& report)
    : options_(options), cases_(options.cases), audit_(audit), report_(report) {
  for (const Case& c : split.held_out) held_.insert(c.id);
  for (std::size_t i = 0; i < cases_.size(); ++i) {
    if (held_.count(cases_[i].id) == 0) training_.push_back(i);
  }
  training_runs_ = static_cast<int>(training_.size()) * options.repeats;
  for (const auto& [id, text] : options.failure_reports) {
    if (held_.count(id) == 0) reports_[id] = text;
  }
}

void Attempt::Progress(ImproveProgress::Kind kind, const std::string& arm, std::string message) {
  if (!options_.on_progress) return;
  ImproveProgress p;
  p.kind = kind;
  p.arm = arm;
  p.best_training_passes = best_passes_;
  p.training_runs = training_runs_;
  p.message = std::move(message);
  options_.on_progress(p);
}

Status Attempt::Evaluate(Arm& arm) {
  MEND_ASSIGN_OR_RETURN(arm.runs, options_.evaluate(arm.text, cases_));
  if (arm.runs.cases.size() != cases_.size()) {
    return InternalError("improve: the evaluator returned runs for " +
                         std::to_string(arm.runs.cases.size()) + " cases, not " +
                         std::to_string(cases_.size()));
  }
  for (auto& case_runs : arm.runs.cases) report_.runs += static_cast<int>(case_runs.size());
  return audit_.AppendScores(RowsOf(cases_, held_, arm));
}

Status Attempt::Baseline() {
  baseline_ = {"baseline", report_.base, {}};
  MEND_RETURN_IF_ERROR(Evaluate(baseline_));
  const std::vector<int> passes = TrainingPasses(baseline_.runs, training_);
  best_passes_ = Sum(passes);
  Progress(ImproveProgress::Kind::kArmJudged, "baseline",
           "baseline: " + std::to_string(best_passes_) + "/" + std::to_string(training_runs_) +
               " training runs pass");
  front_ = {{-1, passes}};
  return OkStatus();
}

Status Attempt::Rounds() {
  for (int round = 1; round <= options_.rounds; ++round) {
    const FrontMember& parent = Parent();
    if (Sum(parent.passes) == training_runs_) break;  // nothing left to fix
    const int parent_index = parent.candidate_index;
    for (int k = 1; k <= options_.candidates; ++k) {
      MEND_RETURN_IF_ERROR(Candidate(round, k, parent_index));
    }
  }
  return OkStatus();
}

// The front member with the most passing training runs (ties: the earliest).
const FrontMember& Attempt::Parent() const {
  const FrontMember* parent = &front_.front();
  for (const FrontMember& member : front_) {
    if (Sum(member.passes) > Sum(parent->passes)) parent = &member;
  }
  return *parent;
}

const Arm& Attempt::ArmOf(int candidate_index) const {
  return candidate_index < 0 ? baseline_ : arms_[static_cast<std::size_t>(candidate_index)];
}

// The parent's failing training runs: per case, the first failing repeat.
std::vector<EditorRunView> Attempt::FailingRuns(const Arm& parent) const {
  std::vector<EditorRunView> failing;
  for (std::size_t index : training_) {
    const std::vector<CaseRun>& runs = parent.runs.cases[index];
    const int passes = Passes(runs);
    if (passes == static_cast<int>(runs.size())) continue;
    EditorRunView view;
    view.c = &cases_[index];
    view.passes = passes;
    view.runs = static_cast<int>(runs.size());
    for (const CaseRun& run : runs) {
      if (!run.check.pass) {
        view.run = &run;
        break;
      }
    }
    failing.push_back(view);
  }
  return failing;
}

// Asks the editor for candidate `k` of `round`; std::nullopt (with the reason in
// editor_errors) when the call failed or the reply is malformed.
Result<std::optional<EditorReply>> Attempt::Ask(int round, int k, const Arm& parent) {
  Progress(ImproveProgress::Kind::kEditorAsked, "",
           "round " + std::to_string(round) + ": asking the editor for candidate " +
               std::to_string(k) + " of " + std::to_string(options_.candidates));
  llm::CompletionRequest request;
  request.model = options_.editor_model;
  request.messages = BuildEditorMessages(parent.text, FailingRuns(parent), reports_,
                                         options_.max_transcript_bytes, k, options_.candidates);
  std::string request_text;
  for (const llm::Message& m : request.messages) {
    request_text += "=== " + std::string(llm::RoleName(m.role)) + "\n" + m.content + "\n";
  }
  MEND_RETURN_IF_ERROR(audit_.WriteEditorRequest(round, k, request_text));
  Result<llm::Completion> completion = options_.editor->Complete(request);
  if (!completion.ok()) {
    report_.editor_errors.push_back(RequestName(round, k) +
                                    ": the editor call failed: " + completion.status().ToString());
    return std::optional<EditorReply>();
  }
  MEND_RETURN_IF_ERROR(audit_.WriteEditorReply(round, k, completion->text));
  Result<EditorReply> reply = ParseEditorReply(completion->text);
  if (!reply.ok()) {
    report_.editor_errors.push_back(RequestName(round, k) +
                                    ": malformed reply: " + std::string(reply.status().message()));
    return std::optional<EditorReply>();
  }
  return std::optional<EditorReply>(*std::move(reply));
}

// One candidate: asked for, then evaluated and judged unless it changes nothing, repeats the
// files of an earlier candidate, or holds text the folder cannot hold.
Status Attempt::Candidate(int round, int k, int parent_index) {
  const AgentText parent_text = ArmOf(parent_index).text;
  MEND_ASSIGN_OR_RETURN(std::optional<EditorReply> reply, Ask(round, k, ArmOf(parent_index)));
  if (!reply.has_value()) return OkStatus();
  CandidateRecord record;
  record.round = round;
  record.request = k;
  record.parent = parent_index + 1;
  record.edits = reply->edits;
  record.rationale = reply->rationale;
  record.refused = reply->refused;
  record.text = ApplyEdits(parent_text, reply->edits);
  record.files_sha256 = AgentTextSha256(record.text);
  if (record.text == parent_text || record.text == report_.base) {
    report_.editor_errors.push_back(RequestName(round, k) + ": the reply changes no editable file");
    // Kept for the refused edits it shows on the card, though nothing was evaluated.
    if (!record.refused.empty()) report_.candidates.push_back(std::move(record));
    return OkStatus();
  }
  if (auto same = evaluated_.find(record.files_sha256); same != evaluated_.end()) {
    return Identical(std::move(record), same->second);
  }
  record.n = static_cast<int>(arms_.size()) + 1;
  Arm arm{CandidateArm(record.n), record.text, {}};
  Status evaluated = Evaluate(arm);
  if (evaluated.code() == StatusCode::kInvalidArgument) {
    // The inputs were checked before the attempt, so it is the candidate's text the folder
    // cannot hold (a skill without front matter, say): the editor's mistake, not the attempt's.
    report_.editor_errors.push_back(
        RequestName(round, k) +
        ": the candidate cannot be evaluated: " + std::string(evaluated.message()));
    return OkStatus();
  }
  MEND_RETURN_IF_ERROR(evaluated);
  return Judge(std::move(record), std::move(arm));
}

// Records a reply whose files are those of candidate `same_as` without evaluating it again.
Status Attempt::Identical(CandidateRecord record, int same_as) {
  const CandidateRecord& original = report_.candidates[candidate_slot_.at(same_as)];
  IdenticalCandidate identical{record.round, record.request, same_as, original.round,
                               original.request};
  report_.result.identical.push_back(identical);
  record.identical_to = same_as;
  report_.candidates.push_back(std::move(record));
  Progress(ImproveProgress::Kind::kArmJudged, CandidateArm(same_as),
           RequestName(identical.round, identical.request) + ": the same files as " +
               CandidateArm(same_as) + ", not evaluated again");
  return WriteCandidate(*options_.env.fs, report_.audit_dir,
                        report_.candidates[candidate_slot_.at(same_as)], report_.result.identical);
}

Status Attempt::Judge(CandidateRecord record, Arm arm) {
  MEND_ASSIGN_OR_RETURN(
      record.decision,
      improve::Decide(ScoresOf(cases_, held_, baseline_.runs, arm.runs), options_.gates));
  std::vector<int> passes = TrainingPasses(arm.runs, training_);
  record.training_passes = Sum(passes);
  best_passes_ = std::max(best_passes_, record.training_passes);
  Progress(ImproveProgress::Kind::kArmJudged, arm.name,
           arm.name + ": " + std::string(GateOutcomeName(record.decision.outcome)) + ", " +
               std::to_string(record.training_passes) + "/" + std::to_string(training_runs_) +
               " training runs pass");
  MEND_RETURN_IF_ERROR(
      WriteCandidate(*options_.env.fs, report_.audit_dir, record, report_.result.identical));
  evaluated_[record.files_sha256] = record.n;
  candidate_slot_[record.n] = report_.candidates.size();
  arms_.push_back(std::move(arm));
  AddToFront(record.n - 1, std::move(passes));
  report_.candidates.push_back(std::move(record));
  return OkStatus();
}

void Attempt::AddToFront(int candidate_index, std::vector<int> passes) {
  for (const FrontMember& member : front_) {
    if (Dominates(member.passes, passes) || member.passes == passes) return;
  }
  std::vector<FrontMember> kept;
  for (FrontMember& member : front_) {
    if (!Dominates(passes, member.passes)) kept.push_back(std::move(member));
  }
  kept.push_back({candidate_index, std::move(passes)});
  front_ = std::move(kept);
}

}  // namespace mend::improve::internal
