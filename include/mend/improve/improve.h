#pragma once

// ImproveAgent, the improve loop (docs/improve.md, "The improve loop"): split, baseline, editor
// rounds, evaluation, gates and the audit folder; with its options, progress and report, and the
// editor's messages.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mend/base/env.h"
#include "mend/base/result.h"
#include "mend/improve/audit.h"
#include "mend/improve/card.h"
#include "mend/improve/cases.h"
#include "mend/improve/evaluate.h"
#include "mend/improve/gates.h"
#include "mend/llm/provider.h"

namespace mend::improve {

/// What ImproveAgent reports while it works (a progress display; never parse `message`).
struct ImproveProgress {
  /// The editor is asked for a candidate, or an arm (the baseline or a candidate) was judged.
  /// Runs finishing inside an arm are reported by the evaluator (EvaluateOptions::on_run).
  enum class Kind { kEditorAsked, kArmJudged };
  Kind kind = Kind::kEditorAsked;  ///< what happened
  std::string arm;                 ///< "baseline" or "candidate-<n>"; empty for kEditorAsked
  int best_training_passes = 0;    ///< the best arm so far: passing training runs
  int training_runs = 0;           ///< training cases × repeats
  std::string message;             ///< for a person; never parse it
};

/// Evaluates one arm (EvaluateArm by default; tests inject their own).
using ArmEvaluator =
    std::function<Result<ArmRuns>(const AgentText& text, const std::vector<Case>& cases)>;

/// What ImproveAgent works on and how (docs/improve.md).
struct ImproveOptions {
  Env env;                  ///< clock, random and fs; fs is the real one
  std::string home;         ///< the audit folder goes to `<home>/improve/<attempt-id>/`
  std::string agent_dir;    ///< read, never written by ImproveAgent (ApplyProposal writes)
  std::vector<Case> cases;  ///< the cases, unique ids
  /// Case id -> what the failed run showed (CasesFromFailures' report, untrusted blocks inside);
  /// given to the editor for training cases only.
  std::map<std::string, std::string> failure_reports;
  double held_out_fraction = 0.25;  ///< share of cases only the gates see
  std::uint64_t seed = 0;           ///< the split's seed (recorded)

  /// The editor model.
  llm::LlmProvider* editor = nullptr;  ///< not owned
  std::string editor_model;            ///< empty: the provider's configured model
  int candidates = 2;                  ///< per round, >= 1
  int rounds = 2;                      ///< >= 1
  /// Bytes of one run's transcript shown to the editor (in untrusted blocks).
  std::size_t max_transcript_bytes = 8 * 1024;

  int repeats = 3;        ///< K runs per case and arm
  GateOptions gates;      ///< the limits of the gates
  ArmEvaluator evaluate;  ///< required
  /// Optional: what `evaluate` would refuse before its first run (CheckEvaluation), called with the
  /// folder's text before anything is recorded, so an attempt refused for its inputs (a case whose
  /// workspace is not a folder, say) leaves no audit folder behind.
  std::function<Status(const AgentText& text, const std::vector<Case>& cases)> check_inputs;
  std::function<void(const ImproveProgress&)> on_progress;  ///< optional, called on this thread
  /// Optional: called once the audit folder exists, with the attempt's id (before any run), so a
  /// caller can record an attempt that then stops on an error.
  std::function<void(const std::string& attempt_id)> on_started;
};

/// One candidate: its text, where it came from and what the gates said about it.
struct CandidateRecord {
  /// "candidate-<n>", 1-based over the whole attempt, for an evaluated candidate; 0 for a reply
  /// that was not evaluated: it changed no editable file (and is kept for its refused edits), or
  /// its files are those of candidate `identical_to`.
  int n = 0;
  int round = 0;                     ///< 1-based
  int request = 0;                   ///< the editor request of the round it answered, 1-based
  int parent = 0;                    ///< 0: the baseline
  AgentText text;                    ///< the candidate's editable files
  std::string files_sha256;          ///< AgentTextSha256(text)
  std::vector<FileEdit> edits;       ///< the edits of its reply
  std::string rationale;             ///< the editor's
  std::vector<RefusedEdit> refused;  ///< blocks of its reply not applied
  GateDecision decision;             ///< the gates' decision
  int training_passes = 0;           ///< passing training runs
  int identical_to = 0;              ///< n of the evaluated candidate with the same files; 0: none
};

/// What ImproveAgent did.
struct ImproveReport {
  std::string attempt_id;  ///< the attempt
  std::string audit_dir;   ///< its audit folder
  AgentText base;          ///< the folder's text when the attempt started
  /// The card's subject: the proposal, or the candidate that came closest (most better training
  /// cases); std::nullopt when no candidate could be evaluated (e.g. every reply was malformed or
  /// proposed nothing).
  std::optional<CandidateRecord> chosen;
  ImproveResult result;                     ///< what the card shows
  std::string card;                         ///< FormatImproveResult(result)
  std::vector<CandidateRecord> candidates;  ///< every candidate, in order
  /// Malformed replies, failed editor calls, replies that change nothing and candidates whose text
  /// the agent folder cannot hold.
  std::vector<std::string> editor_errors;
  int runs = 0;  ///< agent runs evaluated in all
};

/// Lowercase hex SHA-256 of a text's editable files: every path (instructions.md, then the skills
/// in path order) and its content, each length-prefixed, so two texts give one digest exactly when
/// they hold the same files with the same bytes. Pure.
std::string AgentTextSha256(const AgentText& text);

/// docs/improve.md, "The improve loop": splits the cases (seeded), evaluates the
/// unchanged agent on every case, then for `rounds` rounds asks the editor for `candidates`
/// candidates reflecting on the failing training runs of the round's parent (the Pareto front's
/// member with the most passing training runs; the baseline in round 1), evaluates each on every
/// case and judges it against the baseline with Decide. Held-out cases are evaluated and judged but
/// nothing about them reaches the editor. Every step is written to the audit folder. The outcome
/// is the best proposal (most better training cases, then most passing training runs, then lowest
/// cost per success); else the best candidate that was better on a training case but refused by a
/// gate; else the best of the others. The card's decision is that candidate's exactly as Decide
/// gave it (a candidate worse on some case and better on none is `rejected` by `worse_case`).
/// A candidate whose files are those of an earlier one (by AgentTextSha256) is not evaluated
/// again: it is recorded as identical to that one (ImproveResult::identical).
///
/// kInvalidArgument for bad options, and check_inputs' error, before anything is recorded; errors
/// of the file system and of the evaluator on the baseline come back as they are, after error.json
/// is written to the audit folder (so the attempt is listed as "failed"). Editor failures, and a
/// candidate the evaluator refuses with kInvalidArgument (text the folder cannot hold), do not stop
/// the attempt: they are recorded in editor_errors.
Result<ImproveReport> ImproveAgent(const ImproveOptions& options);

/// The editor's request for one candidate (exposed for tests and the audit): the system prompt
/// (role, the reply protocol, kUntrustedNotice) and the user message (the current files, the
/// failing training runs with their check verdicts and transcripts in untrusted blocks, the
/// failure reports). `n`/`of` number the candidate within the round.
struct EditorRunView {
  const Case* c = nullptr;       ///< the case
  const CaseRun* run = nullptr;  ///< one of its failing runs
  int passes = 0;                ///< passing runs of the case
  int runs = 0;                  ///< runs of the case
};
/// The messages of the editor request described above.
std::vector<llm::Message> BuildEditorMessages(const AgentText& text,
                                              const std::vector<EditorRunView>& failing,
                                              const std::map<std::string, std::string>& reports,
                                              std::size_t max_transcript_bytes, int n, int of);

/// Applies the edits of a reply to `base` (a FileEdit replaces instructions.md or a skill file).
AgentText ApplyEdits(const AgentText& base, const std::vector<FileEdit>& edits);

}  // namespace mend::improve
