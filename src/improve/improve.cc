#include "mend/improve/improve.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "improve/improve_arms.h"
#include "mend/base/hash.h"
#include "mend/base/json.h"
#include "mend/improve/editor_protocol.h"
#include "mend/improve/proposal_diff.h"
#include "mend/improve/split.h"
#include "mend/improve/untrusted.h"

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

// The Pareto front over training cases: arms no other arm dominates.
struct FrontMember {
  int candidate_index;  // into the evaluated candidates; -1: the baseline
  std::vector<int> passes;
};

std::string RequestName(int round, int request) {
  return "round " + std::to_string(round) + " candidate " + std::to_string(request);
}

// One attempt once its audit folder exists: the baseline, the rounds, the card.
class Attempt {
 public:
  Attempt(const ImproveOptions& options, const Split& split, AuditFolder& audit,
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

  Status Run() {
    baseline_ = {"baseline", report_.base, {}};
    MEND_RETURN_IF_ERROR(Evaluate(baseline_));
    const std::vector<int> passes = internal::TrainingPasses(baseline_.runs, training_);
    best_passes_ = internal::Sum(passes);
    Progress(ImproveProgress::Kind::kArmJudged, "baseline",
             "baseline: " + std::to_string(best_passes_) + "/" + std::to_string(training_runs_) +
                 " training runs pass");
    front_ = {{-1, passes}};
    for (int round = 1; round <= options_.rounds; ++round) {
      const FrontMember& parent = Parent();
      if (internal::Sum(parent.passes) == training_runs_) break;  // nothing left to fix
      const int parent_index = parent.candidate_index;
      for (int k = 1; k <= options_.candidates; ++k) {
        MEND_RETURN_IF_ERROR(Candidate(round, k, parent_index));
      }
    }
    return Finish();
  }

 private:
  void Progress(ImproveProgress::Kind kind, const std::string& arm, std::string message) {
    if (!options_.on_progress) return;
    ImproveProgress p;
    p.kind = kind;
    p.arm = arm;
    p.best_training_passes = best_passes_;
    p.training_runs = training_runs_;
    p.message = std::move(message);
    options_.on_progress(p);
  }

  Status Evaluate(internal::Arm& arm) {
    MEND_ASSIGN_OR_RETURN(arm.runs, options_.evaluate(arm.text, cases_));
    if (arm.runs.cases.size() != cases_.size()) {
      return InternalError("improve: the evaluator returned runs for " +
                           std::to_string(arm.runs.cases.size()) + " cases, not " +
                           std::to_string(cases_.size()));
    }
    for (auto& case_runs : arm.runs.cases) report_.runs += static_cast<int>(case_runs.size());
    return audit_.AppendScores(internal::RowsOf(cases_, held_, arm));
  }

  // The front member with the most passing training runs (ties: the earliest).
  const FrontMember& Parent() const {
    const FrontMember* parent = &front_.front();
    for (const FrontMember& member : front_) {
      if (internal::Sum(member.passes) > internal::Sum(parent->passes)) parent = &member;
    }
    return *parent;
  }

  const internal::Arm& ArmOf(int candidate_index) const {
    return candidate_index < 0 ? baseline_ : arms_[static_cast<std::size_t>(candidate_index)];
  }

  // The parent's failing training runs: per case, the first failing repeat.
  std::vector<EditorRunView> FailingRuns(const internal::Arm& parent) const {
    std::vector<EditorRunView> failing;
    for (std::size_t index : training_) {
      const std::vector<CaseRun>& runs = parent.runs.cases[index];
      const int passes = internal::Passes(runs);
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
  Result<std::optional<EditorReply>> Ask(int round, int k, const internal::Arm& parent) {
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
      report_.editor_errors.push_back(
          RequestName(round, k) + ": the editor call failed: " + completion.status().ToString());
      return std::optional<EditorReply>();
    }
    MEND_RETURN_IF_ERROR(audit_.WriteEditorReply(round, k, completion->text));
    Result<EditorReply> reply = ParseEditorReply(completion->text);
    if (!reply.ok()) {
      report_.editor_errors.push_back(
          RequestName(round, k) + ": malformed reply: " + std::string(reply.status().message()));
      return std::optional<EditorReply>();
    }
    return std::optional<EditorReply>(*std::move(reply));
  }

  // One candidate: asked for, then evaluated and judged unless it changes nothing, repeats the
  // files of an earlier candidate, or holds text the folder cannot hold.
  Status Candidate(int round, int k, int parent_index) {
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
      report_.editor_errors.push_back(RequestName(round, k) +
                                      ": the reply changes no editable file");
      // Kept for the refused edits it shows on the card, though nothing was evaluated.
      if (!record.refused.empty()) report_.candidates.push_back(std::move(record));
      return OkStatus();
    }
    if (auto same = evaluated_.find(record.files_sha256); same != evaluated_.end()) {
      return Identical(std::move(record), same->second);
    }
    record.n = static_cast<int>(arms_.size()) + 1;
    internal::Arm arm{CandidateArm(record.n), record.text, {}};
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
  Status Identical(CandidateRecord record, int same_as) {
    const CandidateRecord& original = report_.candidates[candidate_slot_.at(same_as)];
    IdenticalCandidate identical{record.round, record.request, same_as, original.round,
                                 original.request};
    report_.result.identical.push_back(identical);
    record.identical_to = same_as;
    report_.candidates.push_back(std::move(record));
    Progress(ImproveProgress::Kind::kArmJudged, CandidateArm(same_as),
             RequestName(identical.round, identical.request) + ": the same files as " +
                 CandidateArm(same_as) + ", not evaluated again");
    return internal::WriteCandidate(*options_.env.fs, report_.audit_dir,
                                    report_.candidates[candidate_slot_.at(same_as)],
                                    report_.result.identical);
  }

  Status Judge(CandidateRecord record, internal::Arm arm) {
    MEND_ASSIGN_OR_RETURN(
        record.decision,
        Decide(internal::ScoresOf(cases_, held_, baseline_.runs, arm.runs), options_.gates));
    std::vector<int> passes = internal::TrainingPasses(arm.runs, training_);
    record.training_passes = internal::Sum(passes);
    best_passes_ = std::max(best_passes_, record.training_passes);
    Progress(ImproveProgress::Kind::kArmJudged, arm.name,
             arm.name + ": " + std::string(GateOutcomeName(record.decision.outcome)) + ", " +
                 std::to_string(record.training_passes) + "/" + std::to_string(training_runs_) +
                 " training runs pass");
    MEND_RETURN_IF_ERROR(internal::WriteCandidate(*options_.env.fs, report_.audit_dir, record,
                                                  report_.result.identical));
    evaluated_[record.files_sha256] = record.n;
    candidate_slot_[record.n] = report_.candidates.size();
    arms_.push_back(std::move(arm));
    AddToFront(record.n - 1, std::move(passes));
    report_.candidates.push_back(std::move(record));
    return OkStatus();
  }

  void AddToFront(int candidate_index, std::vector<int> passes) {
    for (const FrontMember& member : front_) {
      if (internal::Dominates(member.passes, passes) || member.passes == passes) return;
    }
    std::vector<FrontMember> kept;
    for (FrontMember& member : front_) {
      if (!internal::Dominates(passes, member.passes)) kept.push_back(std::move(member));
    }
    kept.push_back({candidate_index, std::move(passes)});
    front_ = std::move(kept);
  }

  // The card's subject: the best proposal, else the best candidate better on a training case but
  // refused by a gate, else the best of the others; nullptr when none was evaluated.
  const CandidateRecord* Subject() const {
    const CandidateRecord* best_proposal = nullptr;
    const CandidateRecord* best_rejected = nullptr;
    const CandidateRecord* best_other = nullptr;
    for (const CandidateRecord& c : report_.candidates) {
      if (c.n == 0) continue;
      const CandidateRecord** slot = &best_other;
      if (c.decision.outcome == GateOutcome::kProposal) {
        slot = &best_proposal;
      } else if (c.decision.outcome == GateOutcome::kRejected &&
                 internal::BetterTraining(c.decision) > 0) {
        slot = &best_rejected;
      }
      if (*slot == nullptr || internal::Preferred(c, **slot)) *slot = &c;
    }
    return best_proposal != nullptr   ? best_proposal
           : best_rejected != nullptr ? best_rejected
                                      : best_other;
  }

  Status Finish() {
    ImproveResult& result = report_.result;
    if (const CandidateRecord* chosen = Subject(); chosen != nullptr) {
      report_.chosen = *chosen;
      // The gates' decision as Decide gave it, so decision.json recomputes from scores.jsonl: a
      // candidate worse somewhere is `rejected (worse_case)` even when it is better nowhere.
      result.decision = chosen->decision;
      result.rationale = chosen->rationale;
      result.diffs = Diffs(report_.base, chosen->text);
      MEND_RETURN_IF_ERROR(audit_.WriteDecision(chosen->n, result.decision));
    } else {
      // No candidate could be evaluated: the baseline against itself is the honest card.
      MEND_ASSIGN_OR_RETURN(
          result.decision, Decide(internal::ScoresOf(cases_, held_, baseline_.runs, baseline_.runs),
                                  options_.gates));
      result.decision.reason = report_.editor_errors.empty() ? "the editor proposed no change"
                                                             : "no candidate could be evaluated: " +
                                                                   report_.editor_errors.front();
    }
    for (const CandidateRecord& c : report_.candidates) {
      for (const RefusedEdit& refused : c.refused) result.refused_edits.push_back(refused);
    }
    report_.card = FormatImproveResult(result);
    return audit_.WriteCard(report_.card);
  }

  static std::vector<FileDiff> Diffs(const AgentText& before, const AgentText& after) {
    std::vector<FileDiff> diffs;
    if (before.instructions != after.instructions) {
      diffs.push_back({"instructions.md",
                       UnifiedDiff("instructions.md", before.instructions, after.instructions)});
    }
    for (const auto& [path, content] : after.skills) {
      auto it = before.skills.find(path);
      const std::string old = it == before.skills.end() ? std::string() : it->second;
      if (old != content) diffs.push_back({path, UnifiedDiff(path, old, content)});
    }
    return diffs;
  }

  const ImproveOptions& options_;
  const std::vector<Case>& cases_;
  AuditFolder& audit_;
  ImproveReport& report_;
  std::set<std::string> held_;
  std::vector<std::size_t> training_;
  int training_runs_ = 0;
  std::map<std::string, std::string> reports_;  // failure reports of training cases
  internal::Arm baseline_;
  std::vector<internal::Arm> arms_;  // evaluated candidates, by n - 1
  std::vector<FrontMember> front_;
  int best_passes_ = 0;
  std::map<std::string, int> evaluated_;       // files digest -> n
  std::map<int, std::size_t> candidate_slot_;  // n -> index in report_.candidates
};

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
  FileSystem& fs = *options.env.fs;
  MEND_ASSIGN_OR_RETURN(Split split,
                        CheckedSplitCases(options.cases, options.held_out_fraction, options.seed));
  MEND_ASSIGN_OR_RETURN(AgentText base, ReadAgentText(fs, options.agent_dir));
  if (options.check_inputs) MEND_RETURN_IF_ERROR(options.check_inputs(base, options.cases));

  ImproveReport report;
  report.base = base;
  MEND_ASSIGN_OR_RETURN(report.attempt_id, NewAttemptId(options.env));
  MEND_ASSIGN_OR_RETURN(AuditFolder audit,
                        AuditFolder::Create(fs, options.home, report.attempt_id));
  report.audit_dir = audit.path();
  if (options.on_started) options.on_started(report.attempt_id);

  Status status = [&]() -> Status {
    std::vector<std::pair<std::string, std::string>> skills(base.skills.begin(), base.skills.end());
    AuditOptions audit_options{options.repeats, options.rounds, options.gates};
    MEND_RETURN_IF_ERROR(audit.WriteInputs(MakeAuditInputs(options.agent_dir, base.instructions,
                                                           skills, options.cases, audit_options)));
    MEND_RETURN_IF_ERROR(audit.WriteSplit(split));
    return Attempt(options, split, audit, report).Run();
  }();
  if (!status.ok()) {
    // Without it the attempt would be listed as unfinished forever. Best effort: the disk that
    // failed the attempt may fail this too, and the attempt's own error is what the caller needs.
    audit.WriteError(status).IgnoreError();
    return status;
  }
  return report;
}

}  // namespace mend::improve
