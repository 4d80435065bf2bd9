#include "mend/improve/failures.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "improve/failure_report.h"
#include "mend/agent/run_origin.h"
#include "mend/agent/run_view.h"
#include "mend/base/hash.h"
#include "mend/base/utf8.h"
#include "mend/heal/progress_guard.h"
#include "mend/obs/span_store.h"
#include "mend/store/checkpoint_store.h"

namespace mend::improve {
namespace {

// Case ids start with this many hex digits of the task's hash and grow by as many when two
// tasks share them (about one pair in 2^32 / n²).
constexpr std::size_t kIdHexDigits = 8;

// Both sides as the CLI records them (absolute and lexically normal) compare equal even when one
// was written with a trailing slash or a "./" part.
std::string NormalDir(const std::string& dir) {
  std::string out = std::filesystem::path(dir).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

Status ValidateOptions(const FailureOptions& options) {
  if (options.agent_dir.empty() && options.agent_name.empty()) {
    return InvalidArgumentError("from failures: agent_dir or agent_name must be set");
  }
  if (options.kinds.empty()) return InvalidArgumentError("from failures: kinds is empty");
  if (options.limit < 1) return InvalidArgumentError("from failures: limit must be at least 1");
  if (options.max_block_bytes < 1) {
    return InvalidArgumentError("from failures: max_block_bytes must be at least 1");
  }
  // The header always holds two blocks (task and error) and the reserve; nothing less can hold
  // them.
  const bool overflows = options.max_block_bytes > (SIZE_MAX - kReportReserveBytes) / 2;
  if (overflows || options.max_report_bytes < 2 * options.max_block_bytes + kReportReserveBytes) {
    return InvalidArgumentError("from failures: max_report_bytes must be at least " +
                                std::string("2 x max_block_bytes + ") +
                                std::to_string(kReportReserveBytes));
  }
  return OkStatus();
}

std::optional<FailureKind> KindOf(const store::RunRecord& run) {
  if (run.status == store::RunStatus::kQuarantined) return FailureKind::kQuarantined;
  if (run.status != store::RunStatus::kFailed) return std::nullopt;
  if (run.last_error.has_value() && run.last_error->code == heal::kNoProgressCode) {
    return FailureKind::kNoProgress;
  }
  return FailureKind::kFailed;
}

struct Selected {
  store::RunRecord run;
  FailureKind kind;
  FailureMatch match;
};

// What a listed run of a selected kind is to the agent. Metadata that does not decode is not
// judged here: reading the run reports it.
enum class Belongs { kYes, kSession, kOtherAgent, kOtherAgentToml };

Belongs Classify(const store::RunRecord& run, const FailureOptions& options, const std::string& dir,
                 FailureMatch& match) {
  Result<agent::RunOrigin> origin = agent::ParseRunOrigin(run.metadata, run.id);
  // A session turn's task is one message of a longer conversation: rerunning it alone tests
  // something else.
  if (origin.ok() && origin->kind == "session") return Belongs::kSession;
  if (dir.empty()) {
    match = FailureMatch::kName;
    return Belongs::kYes;
  }
  if (NormalDir(run.agent_dir) == dir) {
    match = FailureMatch::kFolder;
    return Belongs::kYes;
  }
  // Another folder: the same agent only when it has the same name (the query's filter) and the
  // agent.toml it ran with is this folder's, i.e. the folder was copied or moved.
  if (options.agent_name.empty() || options.agent_toml_sha256.empty()) return Belongs::kOtherAgent;
  if (origin.ok() && origin->fingerprint.agent_toml == options.agent_toml_sha256) {
    match = FailureMatch::kFingerprint;
    return Belongs::kYes;
  }
  return Belongs::kOtherAgentToml;
}

struct Matching {
  std::vector<Selected> runs;
  std::int64_t left_out_agent_toml = 0;
};

// Every matching run, newest first, read in pages of the store's largest size.
Result<Matching> ListMatching(store::CheckpointStore& runs, const FailureOptions& options) {
  const std::set<FailureKind> kinds(options.kinds.begin(), options.kinds.end());
  store::PendingQuery query;
  if (kinds.count(FailureKind::kFailed) != 0 || kinds.count(FailureKind::kNoProgress) != 0) {
    query.statuses.push_back(store::RunStatus::kFailed);
  }
  if (kinds.count(FailureKind::kQuarantined) != 0) {
    query.statuses.push_back(store::RunStatus::kQuarantined);
  }
  query.agent = options.agent_name;
  query.limit = store::kMaxPendingPageSize;
  const std::string dir = options.agent_dir.empty() ? "" : NormalDir(options.agent_dir);
  Matching out;
  while (true) {
    MEND_ASSIGN_OR_RETURN(store::PendingPage page, runs.ListPending(query));
    for (store::RunRecord& run : page.runs) {
      std::optional<FailureKind> kind = KindOf(run);
      if (!kind.has_value() || kinds.count(*kind) == 0) continue;
      FailureMatch match = FailureMatch::kFolder;
      const Belongs belongs = Classify(run, options, dir, match);
      if (belongs == Belongs::kOtherAgentToml) ++out.left_out_agent_toml;
      if (belongs != Belongs::kYes) continue;
      out.runs.push_back({std::move(run), *kind, match});
    }
    if (!page.next.has_value()) break;
    query.before = page.next;
  }
  return out;
}

// The runs of one normalised task, newest first.
struct TaskGroup {
  std::string key;
  std::vector<const Selected*> runs;
};

std::vector<TaskGroup> GroupByTask(const std::vector<Selected>& selected) {
  std::vector<TaskGroup> groups;
  std::map<std::string, std::size_t> index;
  for (const Selected& s : selected) {
    std::string key = NormalizeTask(s.run.task);
    if (key.empty()) continue;  // nothing to send: Case::task is never empty
    auto [it, added] = index.emplace(key, groups.size());
    if (added) groups.push_back({std::move(key), {}});
    groups[it->second].runs.push_back(&s);
  }
  return groups;
}

internal::RunTrace ReadTrace(obs::SpanStore* spans, const agent::RunView& view) {
  internal::RunTrace trace;
  if (spans == nullptr) return trace;
  trace.trace_id = view.origin.trace_id;
  Status status;
  if (trace.trace_id.empty()) {
    Result<std::string> id = spans->TraceIdOfRun(view.run.id);
    if (id.ok()) trace.trace_id = *id;
    status = id.status();
  }
  if (status.ok()) {
    Result<std::vector<obs::SpanData>> all = spans->SpansOfTrace(trace.trace_id);
    status = all.status();
    // A trace also holds the spans of the run's forks (and of lesson jobs): only this run's count.
    if (all.ok()) {
      for (obs::SpanData& span : *all) {
        if (span.run_id == view.run.id) trace.spans.push_back(std::move(span));
      }
    }
  }
  // The trace is diagnostics: a busy or damaged observe.db costs the report its trace, no more.
  if (!status.ok() && status.code() != StatusCode::kNotFound) {
    trace.state = internal::RunTrace::State::kUnreadable;
    trace.error = status.code();
  } else {
    trace.state =
        trace.spans.empty() ? internal::RunTrace::State::kNone : internal::RunTrace::State::kRead;
  }
  return trace;
}

// Reads the newest run of `group` that decodes and makes its case; runs that do not decode go to
// `skipped`. nullopt when none decodes.
Result<std::optional<FailureCase>> CaseOfGroup(store::CheckpointStore& runs, obs::SpanStore* spans,
                                               const TaskGroup& group,
                                               const FailureOptions& options,
                                               std::vector<SkippedRun>& skipped) {
  for (const Selected* s : group.runs) {
    Result<agent::RunView> view = agent::ReadRunView(runs, s->run.id);
    if (view.status().code() == StatusCode::kDataLoss ||
        view.status().code() == StatusCode::kNotFound) {
      skipped.push_back({s->run.id, view.status()});
      continue;
    }
    if (!view.ok()) return view.status();
    const internal::RunTrace trace = ReadTrace(spans, *view);
    FailureCase out;
    out.run_id = s->run.id;
    out.agent_dir = s->run.agent_dir;
    out.matched_by = s->match;
    out.kind = s->kind;
    if (s->run.last_error.has_value()) {
      out.error_code = s->run.last_error->code;
      out.error_message = s->run.last_error->message;
    }
    out.duplicates = static_cast<int>(group.runs.size() - 1);
    out.c.task = s->run.task;
    out.c.tags = {"from-failure", std::string(FailureKindName(s->kind))};
    if (!out.error_code.empty()) out.c.tags.push_back(out.error_code);
    // The report shows the run as listed (status, error) with the conversation as read.
    view->run.status = s->run.status;
    view->run.last_error = s->run.last_error;
    out.report = internal::RenderFailureReport(*view, s->kind, out.duplicates, trace, options);
    return std::optional<FailureCase>(std::move(out));
  }
  return std::optional<FailureCase>();
}

// A case is named after its run, so `mend show <case id>` shows what failed. A run id that is not
// a valid case id gives "run-" and the shortest multiple of kIdHexDigits hex digits of the task's
// hash that no other case has.
void AssignIds(std::vector<FailureCase>& cases, const std::vector<std::string>& keys) {
  std::set<std::string> taken;
  for (FailureCase& c : cases) {
    if (IsValidCaseId(c.run_id)) {
      c.c.id = c.run_id;
      taken.insert(c.run_id);
    }
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (!cases[i].c.id.empty()) continue;
    const std::string hash = Sha256Hex(keys[i]);
    std::size_t digits = kIdHexDigits;
    while (digits < hash.size() && taken.count("run-" + hash.substr(0, digits)) != 0) {
      digits += kIdHexDigits;
    }
    cases[i].c.id = "run-" + hash.substr(0, digits);
    taken.insert(cases[i].c.id);
  }
}

}  // namespace

std::string_view FailureKindName(FailureKind kind) {
  switch (kind) {
    case FailureKind::kFailed:
      return "failed";
    case FailureKind::kQuarantined:
      return "quarantined";
    case FailureKind::kNoProgress:
      return "no_progress";
  }
  return "failed";
}

std::string_view FailureMatchName(FailureMatch match) {
  switch (match) {
    case FailureMatch::kFolder:
      return "folder";
    case FailureMatch::kName:
      return "name";
    case FailureMatch::kFingerprint:
      return "fingerprint";
  }
  return "folder";
}

std::string NormalizeTask(std::string_view task) { return CollapseWhitespace(task); }

Result<FailureCases> CasesFromFailures(store::CheckpointStore& runs, obs::SpanStore* spans,
                                       const FailureOptions& options) {
  MEND_RETURN_IF_ERROR(ValidateOptions(options));
  MEND_ASSIGN_OR_RETURN(Matching matching, ListMatching(runs, options));
  const std::vector<Selected>& selected = matching.runs;
  const std::vector<TaskGroup> groups = GroupByTask(selected);
  FailureCases out;
  out.runs_matched = static_cast<std::int64_t>(selected.size());
  out.tasks = static_cast<std::int64_t>(groups.size());
  out.left_out_agent_toml = matching.left_out_agent_toml;
  std::set<std::string> other_folders;
  for (const Selected& s : selected) {
    switch (s.match) {
      case FailureMatch::kFolder:
        ++out.runs_in_folder;
        continue;
      case FailureMatch::kName:
        ++out.runs_by_name;
        break;
      case FailureMatch::kFingerprint:
        ++out.runs_by_fingerprint;
        break;
    }
    other_folders.insert(s.run.agent_dir);
  }
  out.other_folders.assign(other_folders.begin(), other_folders.end());
  std::vector<std::string> keys;
  for (const TaskGroup& group : groups) {
    if (out.cases.size() == options.limit) break;
    MEND_ASSIGN_OR_RETURN(std::optional<FailureCase> c,
                          CaseOfGroup(runs, spans, group, options, out.skipped));
    if (!c.has_value()) continue;
    out.cases.push_back(std::move(*c));
    keys.push_back(group.key);
  }
  AssignIds(out.cases, keys);
  return out;
}

}  // namespace mend::improve
