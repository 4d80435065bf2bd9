// Candidate evaluation (docs/improve.md): validation, the scratch folder and the pool of runs. One
// run is evaluate_run.cc, the check command evaluate_check.cc, the copies evaluate_tree.cc.
#include "mend/improve/evaluate.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "improve/evaluate_run.h"
#include "improve/evaluate_tree.h"
#include "mend/agent/agent_spec.h"
#include "mend/base/home_layout.h"
#include "mend/store/sqlite_store.h"

namespace mend::improve {
namespace {

using internal::ArmContext;

constexpr std::string_view kSkillsPrefix = "skills/";
constexpr std::string_view kSkillSuffix = ".md";

// What LoadAgentFolder reads as a skill: "skills/<name>.md", one level deep, not hidden.
bool IsSkillPath(std::string_view path) {
  if (!path.starts_with(kSkillsPrefix) || !path.ends_with(kSkillSuffix)) return false;
  std::string_view name = path.substr(kSkillsPrefix.size());
  return name.size() > kSkillSuffix.size() && name[0] != '.' &&
         name.find_first_of(std::string_view("/\\\0", 3)) == std::string_view::npos;
}

Status ValidateOptions(const AgentText& text, const std::vector<Case>& cases,
                       const EvaluateOptions& o) {
  if (o.provider == nullptr) return InvalidArgumentError("evaluation needs a model provider");
  if (o.env.fs == nullptr || o.env.clock == nullptr) {
    return InvalidArgumentError("evaluation needs a file system and a clock");
  }
  if (o.repeats < 1) return InvalidArgumentError("repeats must be at least 1");
  if (o.concurrency < 1) return InvalidArgumentError("concurrency must be at least 1");
  if (o.check_command.empty() || o.check_command[0].empty()) {
    return InvalidArgumentError("the check command is empty");
  }
  if (o.check_timeout.count() <= 0) return InvalidArgumentError("check timeout must be positive");
  if (o.agent_dir.empty()) return InvalidArgumentError("no agent folder given");
  if (o.scratch_dir.empty()) return InvalidArgumentError("no scratch folder given");
  for (const auto& [path, unused] : text.skills) {
    if (!IsSkillPath(path)) {
      return InvalidArgumentError("skill path \"" + path + "\" is not skills/<name>.md");
    }
  }
  std::set<std::string, std::less<>> ids;
  for (const Case& c : cases) {
    if (c.id.empty()) return InvalidArgumentError("a case has no id");
    if (!ids.insert(c.id).second) return InvalidArgumentError("case id " + c.id + " is repeated");
    if (c.workspace.empty()) continue;
    Result<FileInfo> info = o.env.fs->Stat(c.workspace);
    if (!info.ok() || !info->is_directory) {
      return InvalidArgumentError("case " + c.id + ": workspace fixture " + c.workspace +
                                  " is not a folder");
    }
  }
  return OkStatus();
}

// Where agent.toml's `workspace`, when it was a relative path, points from the folder.
struct OwnWorkspace {
  // Below the folder ("ws" for `workspace = "ws"`): runs use the case's fixture instead, so the
  // copies get it empty rather than copy it with every run. Empty when it is not below the folder,
  // is the folder itself, or is skills/ or tools/ (which the copies need).
  std::string inside;
  // Outside the folder (`workspace = "../project"`, or an absolute path): a copy resolves an
  // absolute path as the folder does, and cannot resolve a relative one.
  bool leaves = false;
};

// The loader keeps the workspace in normal form (docs/agent_folder.md), so a workspace below the
// folder starts with it; one outside that a copy of the folder fails to load was relative.
OwnWorkspace LocateOwnWorkspace(const agent::AgentSpec& spec, const std::string& from) {
  OwnWorkspace out;
  const std::string dir = NormalizePath(from);
  if (spec.workspace.empty() || spec.workspace == dir) return out;
  if (!spec.workspace.starts_with(dir + "/")) {
    out.leaves = true;
    return out;
  }
  out.inside = spec.workspace.substr(dir.size() + 1);
  if (out.inside == "skills" || out.inside == "tools") out.inside.clear();
  return out;
}

Status WriteFile(FileSystem& fs, const std::string& path, std::string_view data) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                        fs.OpenWritable(path, WriteMode::kTruncate));
  MEND_RETURN_IF_ERROR(file->Append(data));
  return file->Close();
}

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos)) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

// Copies the original folder to `to`, writes the candidate's text into the copy and loads it, so
// text the folder cannot hold (a skill without front matter, say) stops the arm before any run.
Status PrepareAgentCopy(FileSystem& fs, const agent::AgentSpec& original, const AgentText& text,
                        const std::string& from, const std::string& to) {
  const OwnWorkspace own = LocateOwnWorkspace(original, from);
  internal::CopyTreeOptions copy;
  copy.empty_subdir = own.inside;
  MEND_RETURN_IF_ERROR(internal::CopyTree(fs, from, to, copy));
  MEND_RETURN_IF_ERROR(WriteFile(fs, JoinPath(to, "instructions.md"), text.instructions));
  if (!text.skills.empty()) MEND_RETURN_IF_ERROR(fs.CreateDirs(JoinPath(to, "skills")));
  for (const auto& [path, body] : text.skills) {
    MEND_RETURN_IF_ERROR(WriteFile(fs, JoinPath(to, path), body));
  }
  Result<agent::AgentSpec> loaded = agent::LoadAgentFolder(fs, to);
  if (loaded.ok()) return OkStatus();
  if (own.leaves) {
    return InvalidArgumentError(
        from + "/agent.toml: workspace " + original.workspace +
        " is a relative path out of the folder, which a copy of the folder cannot resolve; make "
        "it absolute or leave it out to evaluate the folder");
  }
  // The loader names files of the copy; the user knows them by the original folder's name.
  return Status(loaded.status().code(),
                "with the candidate's text: " +
                    ReplaceAll(std::string(loaded.status().message()), to + "/", from + "/"));
}

// Takes scratch_dir for this arm: creates it, or accepts an existing empty folder. Returns
// whether it was created (and so is removed again at the end).
Result<bool> ClaimScratch(FileSystem& fs, const std::string& dir) {
  Result<FileInfo> info = fs.Stat(dir);
  if (!info.ok() && info.status().code() == StatusCode::kNotFound) {
    MEND_RETURN_IF_ERROR(fs.CreateDirs(dir));
    return true;
  }
  MEND_RETURN_IF_ERROR(info);
  if (!info->is_directory) return AlreadyExistsError("scratch folder " + dir + " is a file");
  MEND_ASSIGN_OR_RETURN(std::vector<std::string> names, fs.List(dir));
  if (!names.empty()) return AlreadyExistsError("scratch folder " + dir + " is not empty");
  return false;
}

// Empties the scratch folder when the arm ends, however it ends; declared before the store so
// the store is closed first.
class ScratchCleanup {
 public:
  ScratchCleanup(FileSystem& fs, std::string dir, bool remove_dir)
      : fs_(fs), dir_(std::move(dir)), remove_dir_(remove_dir) {}
  ScratchCleanup(const ScratchCleanup&) = delete;
  ScratchCleanup& operator=(const ScratchCleanup&) = delete;
  // Best effort: a leftover is in a private folder and does not change any result.
  ~ScratchCleanup() {
    if (remove_dir_) {
      internal::RemoveTree(dir_).IgnoreError();
      return;
    }
    Result<std::vector<std::string>> names = fs_.List(dir_);
    if (!names.ok()) return;
    for (const std::string& name : *names) internal::RemoveTree(JoinPath(dir_, name)).IgnoreError();
  }

 private:
  FileSystem& fs_;
  const std::string dir_;
  const bool remove_dir_;
};

// `concurrency` workers (the calling thread among them) take jobs in order from a shared counter;
// job j is case j / K, repeat j % K, and its result lands at index j whatever finishes first.
std::vector<CaseRun> RunAll(const ArmContext& ctx, const std::vector<Case>& cases) {
  const EvaluateOptions& options = *ctx.options;
  const size_t repeats = static_cast<size_t>(options.repeats);
  const size_t total = cases.size() * repeats;
  std::vector<CaseRun> runs(total);
  std::atomic<size_t> next{0};
  std::mutex on_run_mu;
  auto work = [&] {
    for (size_t job = next.fetch_add(1); job < total; job = next.fetch_add(1)) {
      if (options.stop != nullptr && options.stop->load()) return;  // EvaluateArm says so
      const size_t c = job / repeats;
      runs[job] = internal::RunCase(ctx, cases[c], c, static_cast<int>(job % repeats));
      if (!options.on_run) continue;
      std::lock_guard<std::mutex> lock(on_run_mu);
      options.on_run(runs[job]);
    }
  };
  const size_t workers = std::min(static_cast<size_t>(options.concurrency), total);
  std::vector<std::thread> threads;
  for (size_t i = 1; i < workers; ++i) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  return runs;
}

// What EvaluateArm does before its first run: validates, takes the scratch folder (emptied again
// by `cleanup` however the arm ends) and prepares the copy of the agent folder in it. Returns the
// scratch folder's absolute path.
Result<std::string> PrepareArm(const AgentText& text, const std::vector<Case>& cases,
                               const EvaluateOptions& options,
                               std::optional<ScratchCleanup>& cleanup) {
  MEND_RETURN_IF_ERROR(ValidateOptions(text, cases, options));
  FileSystem& fs = *options.env.fs;
  MEND_ASSIGN_OR_RETURN(agent::AgentSpec original, agent::LoadAgentFolder(fs, options.agent_dir));
  MEND_ASSIGN_OR_RETURN(bool created, ClaimScratch(fs, options.scratch_dir));
  cleanup.emplace(fs, options.scratch_dir, created);
  // Absolute, so the workspaces runs record and the check's working directory do not depend on
  // this process's current directory.
  MEND_ASSIGN_OR_RETURN(std::string scratch, internal::RealPath(options.scratch_dir));
  MEND_RETURN_IF_ERROR(
      PrepareAgentCopy(fs, original, text, options.agent_dir, home::ScratchAgentDir(scratch)));
  return scratch;
}

}  // namespace

Result<AgentText> ReadAgentText(FileSystem& fs, const std::string& agent_dir) {
  MEND_ASSIGN_OR_RETURN(FileInfo info, fs.Stat(agent_dir));
  if (!info.is_directory) return InvalidArgumentError(agent_dir + " is not a folder");
  AgentText text;
  Result<std::string> instructions = ReadFileToString(fs, JoinPath(agent_dir, "instructions.md"));
  if (instructions.ok()) {
    text.instructions = std::move(*instructions);
  } else if (instructions.status().code() != StatusCode::kNotFound) {
    return instructions.status();
  }
  const std::string skills_dir = JoinPath(agent_dir, "skills");
  Result<std::vector<std::string>> names = fs.List(skills_dir);
  if (!names.ok() && names.status().code() == StatusCode::kNotFound) return text;
  MEND_RETURN_IF_ERROR(names);
  for (const std::string& name : *names) {
    const std::string path = std::string(kSkillsPrefix) + name;
    if (!IsSkillPath(path)) continue;
    MEND_ASSIGN_OR_RETURN(text.skills[path], ReadFileToString(fs, JoinPath(agent_dir, path)));
  }
  return text;
}

Status CheckEvaluation(const AgentText& text, const std::vector<Case>& cases,
                       const EvaluateOptions& options) {
  std::optional<ScratchCleanup> cleanup;
  return PrepareArm(text, cases, options, cleanup).status();
}

Result<ArmRuns> EvaluateArm(const AgentText& text, const std::vector<Case>& cases,
                            const EvaluateOptions& options) {
  std::optional<ScratchCleanup> cleanup;
  MEND_ASSIGN_OR_RETURN(std::string scratch, PrepareArm(text, cases, options, cleanup));
  FileSystem& fs = *options.env.fs;
  ArmContext ctx;
  ctx.options = &options;
  ctx.agent_dir = home::ScratchAgentDir(scratch);
  ctx.runs_dir = home::ScratchRunsDir(scratch);
  MEND_RETURN_IF_ERROR(fs.CreateDirs(ctx.runs_dir));

  store::SqliteStoreOptions store_options;
  store_options.path = home::ScratchStoreFile(scratch);
  MEND_RETURN_IF_ERROR(PosixFileSystem::MakePrivateFile(store_options.path));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<store::CheckpointStore> store,
                        store::OpenSqliteStore(store_options, *options.env.clock));
  ctx.store = store.get();

  std::vector<CaseRun> runs = RunAll(ctx, cases);
  // Runs skipped or cut short are no evidence: the arm has no result.
  if (options.stop != nullptr && options.stop->load()) {
    return CancelledError("the evaluation was stopped before its runs ended");
  }
  ArmRuns arm;
  const size_t repeats = static_cast<size_t>(options.repeats);
  for (size_t c = 0; c < cases.size(); ++c) {
    arm.cases.emplace_back(std::make_move_iterator(runs.begin() + c * repeats),
                           std::make_move_iterator(runs.begin() + (c + 1) * repeats));
  }
  return arm;
}

}  // namespace mend::improve
