#include "mend/improve/proposal.h"

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "mend/base/hash.h"
#include "mend/base/home_layout.h"
#include "mend/base/json.h"
#include "mend/base/time_format.h"
#include "mend/improve/attempt_store.h"
#include "mend/improve/audit.h"
#include "mend/improve/editor_protocol.h"

namespace mend::improve {
namespace {

constexpr std::string_view kProposalFile = "proposal.json";

std::string AttemptDir(std::string_view home, std::string_view attempt_id) {
  return home::AttemptDir(home, attempt_id);
}

Result<ProposalStatus> ParseStatus(std::string_view name) {
  if (name == "queued") return ProposalStatus::kQueued;
  if (name == "applied") return ProposalStatus::kApplied;
  if (name == "rejected") return ProposalStatus::kRejected;
  return DataLossError("unknown proposal status \"" + std::string(name) + "\"");
}

nlohmann::json ToJson(const Proposal& p) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& [path, text] : p.files) {
    auto base = p.base_sha256.find(path);
    files.push_back({{"path", path},
                     {"base_sha256", base == p.base_sha256.end() ? "" : base->second},
                     {"text", text}});
  }
  return {{"attempt_id", p.attempt_id},
          {"agent_dir", p.agent_dir},
          {"status", ProposalStatusName(p.status)},
          {"created_at", p.created_at},
          {"decided_at", p.decided_at},
          {"note", p.note},
          {"files", files}};
}

Result<Proposal> FromJson(const nlohmann::json& j) {
  if (!j.is_object()) return DataLossError("not a JSON object");
  Proposal p;
  MEND_ASSIGN_OR_RETURN(p.attempt_id, GetString(j, "attempt_id"));
  MEND_ASSIGN_OR_RETURN(p.agent_dir, GetString(j, "agent_dir"));
  MEND_ASSIGN_OR_RETURN(std::string status, GetString(j, "status"));
  MEND_ASSIGN_OR_RETURN(p.status, ParseStatus(status));
  MEND_ASSIGN_OR_RETURN(p.created_at, GetString(j, "created_at"));
  MEND_ASSIGN_OR_RETURN(p.decided_at, GetString(j, "decided_at"));
  MEND_ASSIGN_OR_RETURN(p.note, GetString(j, "note"));
  MEND_ASSIGN_OR_RETURN(const nlohmann::json* files, GetArray(j, "files"));
  for (const nlohmann::json& file : *files) {
    if (!file.is_object()) return DataLossError("a file entry is not an object");
    MEND_ASSIGN_OR_RETURN(std::string path, GetString(file, "path"));
    // Only the editable set may be written: a hand-edited proposal.json cannot reach agent.toml.
    if (RefusalForPath(path).has_value()) {
      return DataLossError("proposal names a file that is not editable: " + path);
    }
    MEND_ASSIGN_OR_RETURN(std::string base, GetString(file, "base_sha256"));
    MEND_ASSIGN_OR_RETURN(std::string text, GetString(file, "text"));
    p.base_sha256[path] = std::move(base);
    p.files[path] = std::move(text);
  }
  return p;
}

// The current text's hash of `path` in the agent folder, "" when the file does not exist.
Result<std::string> CurrentSha(FileSystem& fs, const std::string& agent_dir,
                               const std::string& path) {
  Result<std::string> text = ReadFileToString(fs, JoinPath(agent_dir, path));
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) return std::string();
    return text.status();
  }
  return Sha256Hex(*text);
}

}  // namespace

std::string_view ProposalStatusName(ProposalStatus status) {
  switch (status) {
    case ProposalStatus::kQueued:
      return "queued";
    case ProposalStatus::kApplied:
      return "applied";
    case ProposalStatus::kRejected:
      return "rejected";
  }
  return "queued";
}

Proposal MakeProposal(std::string attempt_id, std::string agent_dir, const AgentText& base,
                      const AgentText& after, Time now) {
  Proposal p;
  p.attempt_id = std::move(attempt_id);
  p.agent_dir = std::move(agent_dir);
  p.created_at = FormatRfc3339Seconds(now);
  if (base.instructions != after.instructions) {
    p.files["instructions.md"] = after.instructions;
    p.base_sha256["instructions.md"] = Sha256Hex(base.instructions);
  }
  for (const auto& [path, text] : after.skills) {
    auto old = base.skills.find(path);
    if (old != base.skills.end() && old->second == text) continue;
    p.files[path] = text;
    p.base_sha256[path] = old == base.skills.end() ? "" : Sha256Hex(old->second);
  }
  return p;
}

Status WriteProposal(FileSystem& fs, std::string_view home, const Proposal& proposal) {
  if (!IsValidAttemptId(proposal.attempt_id)) {
    return InvalidArgumentError("not an improve attempt id: " + proposal.attempt_id);
  }
  const std::string dir = AttemptDir(home, proposal.attempt_id);
  Result<FileInfo> info = fs.Stat(dir);
  if (!info.ok()) return info.status();
  return WriteFileAtomically(fs, JoinPath(dir, kProposalFile), ProposalToJsonText(proposal));
}

Result<Proposal> ReadProposal(FileSystem& fs, std::string_view home, std::string_view attempt_id) {
  if (!IsValidAttemptId(attempt_id)) {
    return InvalidArgumentError("not an improve attempt id: " + std::string(attempt_id));
  }
  const std::string dir = AttemptDir(home, attempt_id);
  if (Result<FileInfo> info = fs.Stat(dir); !info.ok()) {
    if (info.status().code() == StatusCode::kNotFound) {
      return NotFoundError("no improve attempt named " + std::string(attempt_id));
    }
    return info.status();
  }
  const std::string path = JoinPath(dir, kProposalFile);
  Result<std::string> text = ReadFileToString(fs, path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return NotFoundError("improve attempt " + std::string(attempt_id) + " made no proposal");
    }
    return text.status();
  }
  Result<nlohmann::json> j = ParseJson(*text);
  if (!j.ok()) return DataLossError(path + ": " + std::string(j.status().message()));
  Result<Proposal> p = FromJson(*j);
  if (!p.ok()) return DataLossError(path + ": " + std::string(p.status().message()));
  if (p->attempt_id != attempt_id) {
    return DataLossError(path + ": names attempt " + p->attempt_id);
  }
  return p;
}

Status ApplyProposalFiles(FileSystem& fs, Clock& clock, std::string_view home, Proposal& p) {
  // Every file must still be what the attempt started from, or a person's edit would be lost.
  std::map<std::string, std::string> old_texts;
  for (const auto& [path, base_sha] : p.base_sha256) {
    MEND_ASSIGN_OR_RETURN(std::string current, CurrentSha(fs, p.agent_dir, path));
    if (current != base_sha) {
      return FailedPreconditionError(
          JoinPath(p.agent_dir, path) +
          " changed since the improve attempt started; the proposal was not applied (review it "
          "with `mend improve show " +
          p.attempt_id + "`, then run improve again)");
    }
    if (!base_sha.empty()) {
      MEND_ASSIGN_OR_RETURN(old_texts[path], ReadFileToString(fs, JoinPath(p.agent_dir, path)));
    }
  }
  const std::string backup = JoinPath(AttemptDir(home, p.attempt_id), "backup");
  for (const auto& [path, text] : old_texts) {
    const std::string target = JoinPath(backup, path);
    MEND_RETURN_IF_ERROR(fs.CreateDirs(DirName(target)));
    MEND_RETURN_IF_ERROR(WriteFileAtomically(fs, target, text));
  }
  for (const auto& [path, text] : p.files) {
    const std::string target = JoinPath(p.agent_dir, path);
    MEND_RETURN_IF_ERROR(fs.CreateDirs(DirName(target)));
    MEND_RETURN_IF_ERROR(WriteFileAtomically(fs, target, text));
  }
  p.status = ProposalStatus::kApplied;
  p.decided_at = FormatRfc3339Seconds(clock.Now());
  return OkStatus();
}

Result<Proposal> ApplyProposal(FileSystem& fs, Clock& clock, std::string_view home,
                               std::string_view attempt_id) {
  std::unique_ptr<AttemptStore> store = OpenLocalAttemptStore(fs, std::string(home));
  return ApplyProposal(fs, clock, *store, home, attempt_id);
}

Result<Proposal> RejectProposal(FileSystem& fs, Clock& clock, std::string_view home,
                                std::string_view attempt_id, std::string reason) {
  std::unique_ptr<AttemptStore> store = OpenLocalAttemptStore(fs, std::string(home));
  return RejectProposal(clock, *store, attempt_id, std::move(reason));
}

Result<AttemptSummary> SummarizeAttempt(FileSystem& fs, std::string_view home,
                                        std::string_view attempt_id) {
  if (!IsValidAttemptId(attempt_id)) {
    return InvalidArgumentError("not an improve attempt id: " + std::string(attempt_id));
  }
  AttemptSummary s;
  s.attempt_id = std::string(attempt_id);
  Result<Proposal> proposal = ReadProposal(fs, home, attempt_id);
  if (proposal.ok()) s.proposal = proposal->status;
  Result<AuditRecord> record = ReadAudit(fs, home, attempt_id);
  if (!record.ok()) {
    if (record.status().code() == StatusCode::kNotFound) return record.status();
    s.outcome = "unreadable";
    return s;
  }
  s.agent_dir = record->inputs.agent_dir;
  if (record->decision.has_value()) {
    s.outcome = GateOutcomeName(record->decision->outcome);
    if (record->decision->refused_by.has_value()) s.gate = GateName(*record->decision->refused_by);
  } else if (record->error.has_value()) {
    s.outcome = "failed";
  } else {
    s.outcome = record->card.has_value() ? "no_improvement" : "unfinished";
  }
  return s;
}

Result<std::vector<AttemptSummary>> ListAttempts(FileSystem& fs, std::string_view home) {
  const std::string root = home::ImproveDir(home);
  Result<std::vector<std::string>> names = fs.List(root);
  if (!names.ok()) {
    if (names.status().code() == StatusCode::kNotFound) return std::vector<AttemptSummary>{};
    return names.status();
  }
  std::vector<std::string> ids;
  for (const std::string& name : *names) {
    if (IsValidAttemptId(name)) ids.push_back(name);
  }
  std::sort(ids.rbegin(), ids.rend());
  std::vector<AttemptSummary> out;
  for (const std::string& id : ids) {
    Result<AttemptSummary> s = SummarizeAttempt(fs, home, id);
    // A folder removed meanwhile is no longer an attempt.
    if (!s.ok() && s.status().code() == StatusCode::kNotFound) continue;
    MEND_RETURN_IF_ERROR(s.status());
    out.push_back(*std::move(s));
  }
  return out;
}

std::string ProposalToJsonText(const Proposal& proposal) {
  return DumpJson(ToJson(proposal), 2) + "\n";
}

Result<Proposal> ProposalFromJsonText(std::string_view text) {
  MEND_ASSIGN_OR_RETURN(nlohmann::json j, ParseJson(text));
  return FromJson(j);
}

}  // namespace mend::improve
