// Recorded improve attempts as the CLI and the HTTP API show them (improve_view.h).
#include "mend/app/improve_view.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "mend/base/hash.h"
#include "mend/base/home_layout.h"
#include "mend/improve/gates.h"
#include "mend/improve/proposal_diff.h"

namespace mend::app {
namespace {

// The text of `path`; nullopt when the file does not exist.
Result<std::optional<std::string>> ReadIfExists(FileSystem& fs, const std::string& path) {
  Result<std::string> text = ReadFileToString(fs, path);
  if (text.ok()) return std::optional<std::string>(*std::move(text));
  if (text.status().code() == StatusCode::kNotFound) return std::optional<std::string>();
  return text.status();
}

// The text `path` had when the attempt started ("" for a file the proposal adds), or its current
// text when it changed since (then `changed` is set).
Result<std::string> BaseText(FileSystem& fs, std::string_view home, const improve::Proposal& p,
                             const std::string& path, bool& changed) {
  auto base = p.base_sha256.find(path);
  const std::string base_sha = base == p.base_sha256.end() ? "" : base->second;
  changed = false;
  if (p.status == improve::ProposalStatus::kApplied) {
    // Apply backs up every file that existed; one without a base hash was added by it.
    if (base_sha.empty()) return std::string();
    const std::string attempt_dir = home::AttemptDir(home, p.attempt_id);
    MEND_ASSIGN_OR_RETURN(std::optional<std::string> old,
                          ReadIfExists(fs, JoinPath(JoinPath(attempt_dir, "backup"), path)));
    return old.value_or("");
  }
  MEND_ASSIGN_OR_RETURN(std::optional<std::string> current,
                        ReadIfExists(fs, JoinPath(p.agent_dir, path)));
  changed = (current.has_value() ? Sha256Hex(*current) : std::string()) != base_sha;
  return current.value_or("");
}

Status AddDiff(FileSystem& fs, std::string_view home, AttemptDetail& detail) {
  const improve::Proposal& p = *detail.proposal;
  for (const auto& [path, text] : p.files) {
    bool changed = false;
    MEND_ASSIGN_OR_RETURN(std::string before, BaseText(fs, home, p, path, changed));
    if (changed) detail.changed_files.push_back(path);
    detail.diff += improve::UnifiedDiff(path, before, text);
  }
  return OkStatus();
}

nlohmann::json OptionalUsd(const std::optional<double>& value) {
  if (!value.has_value()) return nullptr;
  return *value;
}

nlohmann::json ArmTotalsJson(const improve::ArmCost& arm) {
  return {{"total_usd", arm.total_usd}, {"runs", arm.runs}, {"passes", arm.passes}};
}

// The decision as decision.json recorded it: each case's passing runs per arm and gain, and the
// cost figures (null in a folder written before mend recorded them; gains too).
nlohmann::json RecordedDecisionJson(const std::optional<improve::RecordedDecision>& d) {
  if (!d.has_value()) return nullptr;
  nlohmann::json gate = nullptr;
  if (d->refused_by.has_value()) gate = improve::GateName(*d->refused_by);
  nlohmann::json cases = nlohmann::json::array();
  for (size_t i = 0; i < d->cases.size(); ++i) {
    nlohmann::json c = DecisionCaseJson(d->cases[i]);
    c["gain"] = i < d->gains.size() ? nlohmann::json(d->gains[i]) : nlohmann::json(nullptr);
    cases.push_back(std::move(c));
  }
  nlohmann::json cost = nullptr;
  if (d->costs.has_value()) {
    const improve::RecordedCosts& costs = *d->costs;
    cost = DecisionCostJson(costs.baseline, costs.candidate, costs.max_cost_increase,
                            costs.cost_limit_usd);
    cost["before"] = ArmTotalsJson(costs.baseline);
    cost["after"] = ArmTotalsJson(costs.candidate);
  }
  return {{"candidate", d->candidate},
          {"outcome", improve::GateOutcomeName(d->outcome)},
          {"gate", gate},
          {"reason", d->reason},
          {"cases", std::move(cases)},
          {"cost", std::move(cost)}};
}

}  // namespace

nlohmann::json DecisionCaseJson(const improve::CaseResult& c) {
  return {{"id", c.case_id},
          {"held_out", c.held_out},
          {"runs", c.runs},
          {"before", c.baseline_passes},
          {"after", c.candidate_passes},
          {"verdict", improve::CaseVerdictName(c.verdict)}};
}

nlohmann::json DecisionCostJson(const improve::ArmCost& baseline, const improve::ArmCost& candidate,
                                double max_cost_increase, const std::optional<double>& limit) {
  return {{"before_per_success_usd", OptionalUsd(baseline.per_success_usd)},
          {"after_per_success_usd", OptionalUsd(candidate.per_success_usd)},
          {"limit_usd", OptionalUsd(limit)},
          {"max_cost_increase", max_cost_increase}};
}

nlohmann::json ProposalJson(const std::optional<improve::Proposal>& p) {
  if (!p.has_value()) return nullptr;
  nlohmann::json files = nlohmann::json::array();
  for (const auto& [path, text] : p->files) files.push_back(path);
  return {{"status", improve::ProposalStatusName(p->status)},
          {"note", p->note},
          {"created_at", p->created_at},
          {"decided_at", p->decided_at},
          {"agent_dir", p->agent_dir},
          {"files", files}};
}

nlohmann::json AttemptListJson(const std::vector<improve::AttemptSummary>& attempts) {
  nlohmann::json list = nlohmann::json::array();
  for (const improve::AttemptSummary& a : attempts) {
    nlohmann::json proposal = nullptr;
    if (a.proposal.has_value()) proposal = improve::ProposalStatusName(*a.proposal);
    list.push_back({{"attempt_id", a.attempt_id},
                    {"agent_dir", a.agent_dir},
                    {"outcome", a.outcome},
                    {"gate", a.gate.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.gate)},
                    {"proposal", proposal},
                    {"host", a.host.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.host)}});
  }
  return {{"attempts", list}};
}

Result<AttemptDetail> ReadAttemptDetail(FileSystem& fs, improve::AttemptStore& store,
                                        std::string_view home, std::string_view attempt_id) {
  AttemptDetail detail;
  MEND_ASSIGN_OR_RETURN(detail.location, store.Locate(attempt_id));
  MEND_ASSIGN_OR_RETURN(detail.summary, store.Summary(attempt_id));
  if (detail.location.here) {
    MEND_ASSIGN_OR_RETURN(detail.record, improve::ReadAudit(fs, home, attempt_id));
  } else {
    // The audit folder is on another host: what the store recorded stands in for it.
    detail.record.attempt_id = std::string(attempt_id);
    detail.record.inputs.agent_dir = detail.summary.agent_dir;
  }
  Result<improve::Proposal> read = store.GetProposal(attempt_id);
  if (read.ok()) {
    detail.proposal = *std::move(read);
    MEND_RETURN_IF_ERROR(AddDiff(fs, home, detail));
  } else if (read.status().code() != StatusCode::kNotFound) {
    return read.status();
  }
  const improve::AuditRecord& record = detail.record;
  if (record.decision.has_value()) {
    MEND_ASSIGN_OR_RETURN(improve::AuditCheck check, improve::CheckRecordedDecision(record));
    detail.recomputed_matches = check.matches;
    detail.recomputed_mismatch = check.mismatch;
  }
  return detail;
}

nlohmann::json AttemptDetailJson(const AttemptDetail& detail) {
  const improve::AuditRecord& record = detail.record;
  nlohmann::json matches = nullptr;
  if (detail.recomputed_matches.has_value()) matches = *detail.recomputed_matches;
  nlohmann::json host = nullptr;
  if (!detail.location.host.empty()) host = detail.location.host;
  nlohmann::json mismatch = nullptr;
  if (!detail.recomputed_mismatch.empty()) mismatch = detail.recomputed_mismatch;
  nlohmann::json error = nullptr;
  if (record.error.has_value()) {
    error = {{"code", record.error->code}, {"message", record.error->message}};
  }
  return {{"attempt_id", record.attempt_id},
          {"agent_dir", record.inputs.agent_dir},
          {"host", host},
          {"audit_dir", detail.location.audit_dir},
          {"audit_here", detail.location.here},
          {"outcome", detail.summary.outcome},
          {"gate", detail.summary.gate.empty() ? nlohmann::json(nullptr)
                                               : nlohmann::json(detail.summary.gate)},
          {"cases", record.inputs.cases.size()},
          {"editor_exchanges", record.editor.size()},
          {"score_rows", record.scores.size()},
          {"decision", RecordedDecisionJson(record.decision)},
          {"recomputed_matches", matches},
          {"recomputed_mismatch", mismatch},
          {"error", error},
          {"card", record.card.value_or("")},
          {"proposal", ProposalJson(detail.proposal)},
          {"diff", detail.diff},
          {"changed_files", detail.changed_files}};
}

nlohmann::json ProposalDecisionJson(const improve::Proposal& proposal) {
  return {{"attempt_id", proposal.attempt_id}, {"proposal", ProposalJson(proposal)}};
}

}  // namespace mend::app
