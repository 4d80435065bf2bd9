#include "mend/improve/improve.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/hash.h"
#include "mend/base/json.h"
#include "mend/improve/editor_protocol.h"
#include "mend/improve/proposal_diff.h"
#include "mend/improve/split.h"
#include "mend/improve/untrusted.h"

namespace mend::improve {
namespace {

constexpr std::string_view kEditorRole =
    "You improve the instructions of an AI agent. The agent's behaviour is defined by the file "
    "instructions.md (its system prompt) and optional skill files skills/<name>.md (front matter "
    "with name and description, then Markdown). You may change only those files; tools, "
    "agent.toml, limits and permissions are not yours to change and any attempt is refused.\n"
    "\n"
    "You are shown runs of the agent that failed a check. Find what in the instructions made the "
    "agent fail and write a corrected version. Keep what works; change as little as fixes the "
    "failures; do not mention the specific test cases.\n"
    "\n"
    "Answer only with file blocks and one rationale block, each tag on a line of its own:\n"
    "<file path=\"instructions.md\">\n"
    "the complete new text of the file\n"
    "</file>\n"
    "<rationale>\n"
    "one or two sentences: what failed and why the change fixes it\n"
    "</rationale>\n"
    "A file block holds the whole new file, not a diff. Leave out files you do not change. "
    "Nothing may stand outside the blocks.\n";

std::string MessageRoleName(llm::Role role) {
  switch (role) {
    case llm::Role::kSystem:
      return "system";
    case llm::Role::kUser:
      return "user";
    case llm::Role::kAssistant:
      return "assistant";
    case llm::Role::kTool:
      return "tool";
  }
  return "message";
}

// A member's string value, or `fallback` when it is absent or not a string (never throws).
std::string StringMember(const nlohmann::json& object, const char* key, std::string fallback = "") {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

// A transcript (CaseRun::transcript, a JSON array) as text for the editor: every message's text
// inside an untrusted block (tool results and the model's own words may both echo hostile data),
// bounded to `max_bytes` in all by shrinking every block evenly.
std::string RenderTranscript(const std::string& transcript_json, std::size_t max_bytes) {
  std::string out;
  Result<nlohmann::json> parsed = ParseJson(transcript_json);
  if (!parsed.ok() || !parsed->is_array()) {
    return UntrustedBlock("transcript", transcript_json, max_bytes);
  }
  const std::size_t entries = std::max<std::size_t>(parsed->size(), 1);
  const std::size_t per_block = std::max<std::size_t>(max_bytes / entries, 256);
  for (const nlohmann::json& message : *parsed) {
    if (!message.is_object()) continue;
    const std::string role = StringMember(message, "role", "message");
    if (role == "system") continue;  // the instructions are shown once, as the file
    std::string text = StringMember(message, "content");
    auto calls = message.find("tool_calls");
    if (calls != message.end() && calls->is_array()) {
      for (const nlohmann::json& call : *calls) {
        if (!call.is_object()) continue;
        auto arguments = call.find("arguments");
        std::string argument_text;
        if (arguments != call.end()) {
          argument_text =
              arguments->is_string() ? arguments->get<std::string>() : DumpJson(*arguments);
        }
        text += "\n[calls " + StringMember(call, "name", "?") + " with " + argument_text + "]";
      }
    }
    std::string source = role;
    if (role == "tool") source = "tool:" + StringMember(message, "name", "?");
    const std::string decision = StringMember(message, "hook_decision");
    if (!decision.empty()) source += " (" + decision + " by a hook)";
    out += UntrustedBlock(source, text, per_block);
  }
  return out;
}

}  // namespace

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

std::vector<llm::Message> BuildEditorMessages(const AgentText& text,
                                              const std::vector<EditorRunView>& failing,
                                              const std::map<std::string, std::string>& reports,
                                              std::size_t max_transcript_bytes, int n, int of) {
  std::string system(kEditorRole);
  system += "\n";
  system += kUntrustedNotice;
  system += "\n";

  std::string user = "Candidate " + std::to_string(n) + " of " + std::to_string(of) + ".";
  if (of > 1) user += " Each candidate should try a different fix.";
  user += "\n\n## Current files\n\n<file path=\"instructions.md\">\n" + text.instructions;
  if (!text.instructions.empty() && text.instructions.back() != '\n') user += "\n";
  user += "</file>\n";
  for (const auto& [path, content] : text.skills) {
    user += "<file path=\"" + path + "\">\n" + content;
    if (!content.empty() && content.back() != '\n') user += "\n";
    user += "</file>\n";
  }
  user += "\n## Failing runs\n";
  if (failing.empty()) user += "\n(none: every training case passed)\n";
  for (const EditorRunView& view : failing) {
    user += "\n### Case " + view.c->id + " (passed " + std::to_string(view.passes) + " of " +
            std::to_string(view.runs) + " runs)\n\nTask:\n";
    user += UntrustedBlock("task", view.c->task, 4096);
    if (view.run != nullptr) {
      user += "Run status: " + view.run->status + "\n";
      if (!view.run->error.empty()) user += UntrustedBlock("run error", view.run->error, 1024);
      if (!view.run->output.empty())
        user += "Final answer:\n" + UntrustedBlock("answer", view.run->output, 2048);
      user += "Check verdict: " + std::string(view.run->check.pass ? "pass" : "fail");
      if (!view.run->check.error.empty()) user += " (" + view.run->check.error + ")";
      user += "\nTranscript:\n" + RenderTranscript(view.run->transcript, max_transcript_bytes);
    }
    auto report = reports.find(view.c->id);
    if (report != reports.end()) {
      user += "What the original failed run showed:\n" + report->second;
      if (!report->second.empty() && report->second.back() != '\n') user += "\n";
    }
  }
  std::vector<llm::Message> messages;
  messages.push_back(llm::Message::System(std::move(system)));
  messages.push_back(llm::Message::User(std::move(user)));
  return messages;
}

namespace {

struct Arm {
  std::string name;  // "baseline" | "candidate-<n>"
  AgentText text;
  ArmRuns runs;
};

int Passes(const std::vector<CaseRun>& runs) {
  int passes = 0;
  for (const CaseRun& run : runs) passes += run.check.pass ? 1 : 0;
  return passes;
}

// Passing runs per training case, in the order of `training_index`.
std::vector<int> TrainingPasses(const ArmRuns& runs, const std::vector<std::size_t>& training) {
  std::vector<int> out;
  out.reserve(training.size());
  for (std::size_t index : training) out.push_back(Passes(runs.cases[index]));
  return out;
}

bool Dominates(const std::vector<int>& a, const std::vector<int>& b) {
  bool strictly = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] < b[i]) return false;
    if (a[i] > b[i]) strictly = true;
  }
  return strictly;
}

int Sum(const std::vector<int>& values) {
  int sum = 0;
  for (int v : values) sum += v;
  return sum;
}

std::vector<CaseScores> ScoresOf(const std::vector<Case>& cases, const std::set<std::string>& held,
                                 const ArmRuns& baseline, const ArmRuns& candidate) {
  std::vector<CaseScores> scores;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CaseScores s;
    s.case_id = cases[i].id;
    s.held_out = held.count(cases[i].id) > 0;
    for (const CaseRun& run : baseline.cases[i]) s.baseline.push_back(run.score());
    for (const CaseRun& run : candidate.cases[i]) s.candidate.push_back(run.score());
    scores.push_back(std::move(s));
  }
  return scores;
}

std::vector<ScoreRow> RowsOf(const std::vector<Case>& cases, const std::set<std::string>& held,
                             const Arm& arm) {
  std::vector<ScoreRow> rows;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    for (const CaseRun& run : arm.runs.cases[i]) {
      ScoreRow row;
      row.case_id = cases[i].id;
      row.held_out = held.count(cases[i].id) > 0;
      row.arm = arm.name;
      row.repeat = run.repeat;
      row.pass = run.check.pass;
      row.score = std::isfinite(run.check.score) && run.check.score >= 0 ? run.check.score : 0;
      row.cost_usd = std::isfinite(run.cost_usd) && run.cost_usd >= 0 ? run.cost_usd : 0;
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

int BetterTraining(const GateDecision& decision) {
  int better = 0;
  for (const CaseResult& c : decision.cases) {
    if (!c.held_out && c.verdict == CaseVerdict::kBetter) ++better;
  }
  return better;
}

double CostOrInfinity(const GateDecision& decision) {
  return decision.candidate_cost.per_success_usd.value_or(1e300);
}

// True when `a` is a better subject for the card than `b`.
bool Preferred(const CandidateRecord& a, const CandidateRecord& b) {
  const int better_a = BetterTraining(a.decision);
  const int better_b = BetterTraining(b.decision);
  if (better_a != better_b) return better_a > better_b;
  if (a.training_passes != b.training_passes) return a.training_passes > b.training_passes;
  return CostOrInfinity(a.decision) < CostOrInfinity(b.decision);
}

// improve/<id>/candidates/<n>.json: what candidate n was, where it came from and what the gates
// said, so the audit folder holds every candidate and every gate decision, not only the chosen one.
Status WriteCandidate(FileSystem& fs, const std::string& audit_dir, const CandidateRecord& c) {
  nlohmann::json files = nlohmann::json::object();
  files["instructions.md"] = c.text.instructions;
  for (const auto& [path, text] : c.text.skills) files[path] = text;
  nlohmann::json edited = nlohmann::json::array();
  for (const FileEdit& e : c.edits) edited.push_back(e.path);
  nlohmann::json refused = nlohmann::json::array();
  for (const RefusedEdit& r : c.refused) {
    refused.push_back({{"path", r.path}, {"refusal", EditRefusalName(r.refusal)}});
  }
  nlohmann::json gate = nullptr;
  if (c.decision.refused_by.has_value()) gate = GateName(*c.decision.refused_by);
  const nlohmann::json j = {{"candidate", c.n},
                            {"round", c.round},
                            {"parent", c.parent},
                            {"edited", edited},
                            {"refused", refused},
                            {"rationale", c.rationale},
                            {"outcome", GateOutcomeName(c.decision.outcome)},
                            {"gate", gate},
                            {"reason", c.decision.reason},
                            {"training_passes", c.training_passes},
                            {"files", files}};
  const std::string dir = JoinPath(audit_dir, "candidates");
  MEND_RETURN_IF_ERROR(fs.CreateDirs(dir));
  return WriteFileAtomically(fs, JoinPath(dir, std::to_string(c.n) + ".json"),
                             DumpJson(j, 2) + "\n");
}

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

}  // namespace

Result<ImproveReport> ImproveAgent(const ImproveOptions& options) {
  MEND_RETURN_IF_ERROR(CheckOptions(options));
  FileSystem& fs = *options.env.fs;
  MEND_ASSIGN_OR_RETURN(Split split,
                        CheckedSplitCases(options.cases, options.held_out_fraction, options.seed));
  MEND_ASSIGN_OR_RETURN(AgentText base, ReadAgentText(fs, options.agent_dir));

  ImproveReport report;
  report.base = base;
  MEND_ASSIGN_OR_RETURN(report.attempt_id, NewAttemptId(options.env));
  MEND_ASSIGN_OR_RETURN(AuditFolder audit,
                        AuditFolder::Create(fs, options.home, report.attempt_id));
  report.audit_dir = audit.path();

  std::vector<std::pair<std::string, std::string>> skills(base.skills.begin(), base.skills.end());
  AuditOptions audit_options{options.repeats, options.rounds, options.gates};
  MEND_RETURN_IF_ERROR(audit.WriteInputs(
      MakeAuditInputs(options.agent_dir, base.instructions, skills, options.cases, audit_options)));
  MEND_RETURN_IF_ERROR(audit.WriteSplit(split));

  // Cases in the file's order; held-out ones marked.
  const std::vector<Case>& cases = options.cases;
  std::set<std::string> held;
  for (const Case& c : split.held_out) held.insert(c.id);
  std::vector<std::size_t> training;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (held.count(cases[i].id) == 0) training.push_back(i);
  }
  const int training_runs = static_cast<int>(training.size()) * options.repeats;

  auto progress = [&](ImproveProgress::Kind kind, const std::string& arm, int best,
                      std::string message) {
    if (!options.on_progress) return;
    ImproveProgress p;
    p.kind = kind;
    p.arm = arm;
    p.best_training_passes = best;
    p.training_runs = training_runs;
    p.message = std::move(message);
    options.on_progress(p);
  };

  auto evaluate = [&](Arm& arm) -> Status {
    MEND_ASSIGN_OR_RETURN(arm.runs, options.evaluate(arm.text, cases));
    if (arm.runs.cases.size() != cases.size()) {
      return InternalError("improve: the evaluator returned runs for " +
                           std::to_string(arm.runs.cases.size()) + " cases, not " +
                           std::to_string(cases.size()));
    }
    for (auto& case_runs : arm.runs.cases) report.runs += static_cast<int>(case_runs.size());
    return audit.AppendScores(RowsOf(cases, held, arm));
  };

  Arm baseline{"baseline", base, {}};
  MEND_RETURN_IF_ERROR(evaluate(baseline));
  std::vector<int> baseline_passes = TrainingPasses(baseline.runs, training);
  progress(ImproveProgress::Kind::kArmJudged, "baseline", Sum(baseline_passes),
           "baseline: " + std::to_string(Sum(baseline_passes)) + "/" +
               std::to_string(training_runs) + " training runs pass");

  // The Pareto front over training cases: arms no other arm dominates. Index -1 is the baseline.
  struct FrontMember {
    int candidate_index;  // -1: baseline
    std::vector<int> passes;
  };
  std::vector<FrontMember> front{{-1, baseline_passes}};
  std::vector<Arm> arms;  // candidates, by n - 1
  int best_passes = Sum(baseline_passes);

  for (int round = 1; round <= options.rounds; ++round) {
    // The parent: the front member with the most passing training runs (ties: the earliest).
    const FrontMember* parent = &front.front();
    for (const FrontMember& member : front) {
      if (Sum(member.passes) > Sum(parent->passes)) parent = &member;
    }
    if (Sum(parent->passes) == training_runs) break;  // nothing left to fix
    const int parent_index = parent->candidate_index;
    const Arm& parent_arm = parent_index < 0 ? baseline : arms[parent_index];
    const AgentText parent_text = parent_arm.text;

    // The parent's failing training runs: per case, the first failing repeat.
    std::vector<EditorRunView> failing;
    for (std::size_t index : training) {
      const auto& runs = parent_arm.runs.cases[index];
      const int passes = Passes(runs);
      if (passes == static_cast<int>(runs.size())) continue;
      EditorRunView view;
      view.c = &cases[index];
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
    std::map<std::string, std::string> reports;
    for (const auto& [id, text] : options.failure_reports) {
      if (held.count(id) == 0) reports[id] = text;
    }

    for (int k = 1; k <= options.candidates; ++k) {
      progress(ImproveProgress::Kind::kEditorAsked, "", best_passes,
               "round " + std::to_string(round) + ": asking the editor for candidate " +
                   std::to_string(k) + " of " + std::to_string(options.candidates));
      llm::CompletionRequest request;
      request.model = options.editor_model;
      request.messages = BuildEditorMessages(parent_text, failing, reports,
                                             options.max_transcript_bytes, k, options.candidates);
      std::string request_text;
      for (const llm::Message& m : request.messages) {
        request_text += "=== " + MessageRoleName(m.role) + "\n" + m.content + "\n";
      }
      MEND_RETURN_IF_ERROR(audit.WriteEditorRequest(round, k, request_text));
      Result<llm::Completion> completion = options.editor->Complete(request);
      if (!completion.ok()) {
        report.editor_errors.push_back(
            "round " + std::to_string(round) + " candidate " + std::to_string(k) +
            ": the editor call failed: " + completion.status().ToString());
        continue;
      }
      MEND_RETURN_IF_ERROR(audit.WriteEditorReply(round, k, completion->text));
      Result<EditorReply> reply = ParseEditorReply(completion->text);
      if (!reply.ok()) {
        report.editor_errors.push_back(
            "round " + std::to_string(round) + " candidate " + std::to_string(k) +
            ": malformed reply: " + std::string(reply.status().message()));
        continue;
      }
      CandidateRecord record;
      record.round = round;
      record.parent = parent_index + 1;
      record.edits = reply->edits;
      record.rationale = reply->rationale;
      record.refused = reply->refused;
      record.text = ApplyEdits(parent_text, reply->edits);
      if (record.text == parent_text || record.text == base) {
        // Nothing to evaluate: the reply changed no file (or only refused ones).
        report.editor_errors.push_back("round " + std::to_string(round) + " candidate " +
                                       std::to_string(k) + ": the reply changes no editable file");
        CandidateRecord empty = record;
        empty.n = 0;
        if (!record.refused.empty()) {
          // Keep refused edits visible on the card even though nothing was evaluated.
          report.candidates.push_back(std::move(empty));
        }
        continue;
      }
      record.n = static_cast<int>(arms.size()) + 1;
      Arm arm{CandidateArm(record.n), record.text, {}};
      MEND_RETURN_IF_ERROR(evaluate(arm));
      MEND_ASSIGN_OR_RETURN(record.decision,
                            Decide(ScoresOf(cases, held, baseline.runs, arm.runs), options.gates));
      std::vector<int> passes = TrainingPasses(arm.runs, training);
      record.training_passes = Sum(passes);
      best_passes = std::max(best_passes, record.training_passes);
      progress(ImproveProgress::Kind::kArmJudged, arm.name, best_passes,
               arm.name + ": " + std::string(GateOutcomeName(record.decision.outcome)) + ", " +
                   std::to_string(record.training_passes) + "/" + std::to_string(training_runs) +
                   " training runs pass");
      MEND_RETURN_IF_ERROR(WriteCandidate(fs, report.audit_dir, record));
      arms.push_back(std::move(arm));
      report.candidates.push_back(record);

      // Update the Pareto front.
      bool dominated = false;
      for (const FrontMember& member : front) {
        if (Dominates(member.passes, passes) || member.passes == passes) dominated = true;
      }
      if (!dominated) {
        std::vector<FrontMember> kept;
        for (FrontMember& member : front) {
          if (!Dominates(passes, member.passes)) kept.push_back(std::move(member));
        }
        kept.push_back({record.n - 1, passes});
        front = std::move(kept);
      }
    }
  }

  // The card's subject.
  const CandidateRecord* chosen = nullptr;
  const CandidateRecord* best_proposal = nullptr;
  const CandidateRecord* best_rejected = nullptr;
  const CandidateRecord* best_other = nullptr;
  for (const CandidateRecord& c : report.candidates) {
    if (c.n == 0) continue;
    const CandidateRecord** slot = &best_other;
    if (c.decision.outcome == GateOutcome::kProposal) {
      slot = &best_proposal;
    } else if (c.decision.outcome == GateOutcome::kRejected && BetterTraining(c.decision) > 0) {
      slot = &best_rejected;
    }
    if (*slot == nullptr || Preferred(c, **slot)) *slot = &c;
  }
  chosen = best_proposal != nullptr   ? best_proposal
           : best_rejected != nullptr ? best_rejected
                                      : best_other;

  ImproveResult& result = report.result;
  if (chosen != nullptr) {
    report.chosen = *chosen;
    // The gates' decision as Decide gave it, so decision.json recomputes from scores.jsonl: a
    // candidate worse somewhere is `rejected (worse_case)` even when it is better nowhere.
    result.decision = chosen->decision;
    result.rationale = chosen->rationale;
    const AgentText& before = base;
    const AgentText& after = chosen->text;
    if (before.instructions != after.instructions) {
      result.diffs.push_back({"instructions.md", UnifiedDiff("instructions.md", before.instructions,
                                                             after.instructions)});
    }
    for (const auto& [path, content] : after.skills) {
      auto it = before.skills.find(path);
      const std::string old = it == before.skills.end() ? std::string() : it->second;
      if (old != content) result.diffs.push_back({path, UnifiedDiff(path, old, content)});
    }
    MEND_RETURN_IF_ERROR(audit.WriteDecision(chosen->n, result.decision));
  } else {
    // No candidate could be evaluated: the baseline against itself is the honest card.
    MEND_ASSIGN_OR_RETURN(
        result.decision,
        Decide(ScoresOf(cases, held, baseline.runs, baseline.runs), options.gates));
    result.decision.reason = report.editor_errors.empty() ? "the editor proposed no change"
                                                          : "no candidate could be evaluated: " +
                                                                report.editor_errors.front();
  }
  for (const CandidateRecord& c : report.candidates) {
    for (const RefusedEdit& refused : c.refused) result.refused_edits.push_back(refused);
  }
  report.card = FormatImproveResult(result);
  MEND_RETURN_IF_ERROR(audit.WriteCard(report.card));
  return report;
}

}  // namespace mend::improve
