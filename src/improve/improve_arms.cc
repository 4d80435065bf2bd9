// What an improve attempt computes from its arms (improve_arms.h).
#include "improve/improve_arms.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/json.h"

namespace mend::improve::internal {
namespace {

double CostOrInfinity(const GateDecision& decision) {
  return decision.candidate_cost.per_success_usd.value_or(1e300);
}

}  // namespace

int Passes(const std::vector<CaseRun>& runs) {
  int passes = 0;
  for (const CaseRun& run : runs) passes += run.check.pass ? 1 : 0;
  return passes;
}

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

bool Preferred(const CandidateRecord& a, const CandidateRecord& b) {
  const int better_a = BetterTraining(a.decision);
  const int better_b = BetterTraining(b.decision);
  if (better_a != better_b) return better_a > better_b;
  if (a.training_passes != b.training_passes) return a.training_passes > b.training_passes;
  return CostOrInfinity(a.decision) < CostOrInfinity(b.decision);
}

// What candidate n was, where it came from and what the gates said, so the audit folder holds
// every candidate and every gate decision, not only the chosen one.
Status WriteCandidate(FileSystem& fs, const std::string& audit_dir, const CandidateRecord& c,
                      const std::vector<IdenticalCandidate>& identical) {
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
  nlohmann::json same = nlohmann::json::array();
  for (const IdenticalCandidate& i : identical) {
    if (i.same_as == c.n) same.push_back({{"round", i.round}, {"request", i.request}});
  }
  const nlohmann::json j = {{"candidate", c.n},
                            {"round", c.round},
                            {"request", c.request},
                            {"parent", c.parent},
                            {"edited", edited},
                            {"refused", refused},
                            {"rationale", c.rationale},
                            {"outcome", GateOutcomeName(c.decision.outcome)},
                            {"gate", gate},
                            {"reason", c.decision.reason},
                            {"training_passes", c.training_passes},
                            {"files_sha256", c.files_sha256},
                            {"identical_replies", same},
                            {"files", files}};
  const std::string dir = JoinPath(audit_dir, "candidates");
  MEND_RETURN_IF_ERROR(fs.CreateDirs(dir));
  return WriteFileAtomically(fs, JoinPath(dir, std::to_string(c.n) + ".json"),
                             DumpJson(j, 2) + "\n");
}

}  // namespace mend::improve::internal
