// A canaried agent's two arms (app/canary_agent.h, docs/improve.md "Canary").
#include "app/canary_agent.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "mend/agent/run_origin.h"
#include "mend/app/canary.h"
#include "mend/app/runtime.h"
#include "mend/heal/output_check.h"
#include "mend/improve/attempt_store.h"
#include "mend/improve/canary.h"

namespace mend::app::internal {
namespace {

class StringReadableFile final : public ReadableFile {
 public:
  explicit StringReadableFile(std::string data) : data_(std::move(data)) {}
  Status Read(size_t n, std::string* out) override {
    const size_t take = std::min(n, data_.size() - pos_);
    out->assign(data_, pos_, take);
    pos_ += take;
    return OkStatus();
  }

 private:
  std::string data_;
  size_t pos_ = 0;
};

// Reads `base`, with the files of `files` (absolute path -> text) in place of what is there. Only
// what loading an agent folder does is served from the overlay (reading, listing, stat); writes go
// to `base`, which the loader never does.
class OverlayFileSystem final : public FileSystem {
 public:
  OverlayFileSystem(FileSystem& base, std::map<std::string, std::string> files)
      : base_(base), files_(std::move(files)) {
    for (const auto& [path, text] : files_) {
      for (std::string dir = DirName(path); dir != "/" && dir != "."; dir = DirName(dir)) {
        dirs_.insert(dir);
      }
    }
  }

  Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path,
                                                     WriteMode mode) override {
    return base_.OpenWritable(path, mode);
  }
  Result<std::unique_ptr<ReadableFile>> OpenReadable(const std::string& path) override {
    auto it = files_.find(NormalizePath(path));
    if (it == files_.end()) return base_.OpenReadable(path);
    return std::unique_ptr<ReadableFile>(std::make_unique<StringReadableFile>(it->second));
  }
  Status Rename(const std::string& from, const std::string& to) override {
    return base_.Rename(from, to);
  }
  Status SyncDir(const std::string& dir) override { return base_.SyncDir(dir); }
  Status Unlink(const std::string& path) override { return base_.Unlink(path); }
  Result<std::vector<std::string>> List(const std::string& dir) override {
    const std::string d = NormalizePath(dir);
    std::set<std::string> names;
    Result<std::vector<std::string>> listed = base_.List(dir);
    if (listed.ok()) {
      names.insert(listed->begin(), listed->end());
    } else if (listed.status().code() != StatusCode::kNotFound || dirs_.count(d) == 0) {
      return listed;
    }
    for (const auto& [path, text] : files_) {
      if (DirName(path) == d) names.insert(BaseName(path));
    }
    for (const std::string& sub : dirs_) {
      if (DirName(sub) == d) names.insert(BaseName(sub));
    }
    return std::vector<std::string>(names.begin(), names.end());
  }
  Status CreateDirs(const std::string& dir) override { return base_.CreateDirs(dir); }
  Result<FileInfo> Stat(const std::string& path) override {
    const std::string p = NormalizePath(path);
    auto it = files_.find(p);
    if (it != files_.end()) return FileInfo{it->second.size(), false};
    Result<FileInfo> info = base_.Stat(path);
    if (!info.ok() && info.status().code() == StatusCode::kNotFound && dirs_.count(p) > 0) {
      return FileInfo{0, true};
    }
    return info;
  }
  Result<std::unique_ptr<FileLock>> Lock(const std::string& path) override {
    return base_.Lock(path);
  }

 private:
  FileSystem& base_;
  std::map<std::string, std::string> files_;
  std::set<std::string> dirs_;
};

class CanaryOutcomeHook final : public agent::PostRunHook {
 public:
  CanaryOutcomeHook(Runtime& runtime, std::string proposal_id, std::string arm,
                    agent::CanarySpec check)
      : runtime_(runtime),
        proposal_id_(std::move(proposal_id)),
        arm_(std::move(arm)),
        check_(std::move(check)) {}

  std::string_view name() const override { return "canary"; }

  Status AfterRun(agent::RunOutcome& outcome) override {
    if (outcome.run == nullptr) return OkStatus();
    improve::CanaryRunOutcome o;
    o.proposal_id = proposal_id_;
    o.run_id = outcome.run->run_id;
    o.arm = arm_;
    o.run.status = outcome.error.ok() ? store::RunStatus::kCompleted : store::RunStatus::kFailed;
    if (!outcome.error.ok()) {
      o.run.error_code = outcome.error.detail_code().empty()
                             ? std::string(StatusCodeName(outcome.error.code()))
                             : std::string(outcome.error.detail_code());
    }
    o.run.cost_usd = outcome.cost_usd;
    o.run.steps = outcome.steps;
    o.run.input_tokens = outcome.input_tokens;
    o.run.output_tokens = outcome.output_tokens;
    o.run.checks_passed = !outcome.Flag(heal::kChecksFailedFlag);
    if (o.run.checks_passed && outcome.error.ok() && !check_.check.empty()) {
      improve::CanaryCheckInput input;
      input.run_id = o.run_id;
      input.arm = arm_;
      input.task = outcome.run->task;
      input.status = "completed";
      input.output = outcome.output;
      improve::CheckVerdict verdict =
          improve::RunCanaryCheck(check_.check, outcome.run->workspace, input, check_.timeout);
      o.run.checks_passed = verdict.pass && verdict.error.empty();
    }
    return RecordCanaryRun(runtime_, o);
  }

 private:
  Runtime& runtime_;
  const std::string proposal_id_;
  const std::string arm_;
  const agent::CanarySpec check_;
};

class CanaryAgent final : public agent::Agent {
 public:
  CanaryAgent(Runtime& runtime, improve::Canary canary, std::unique_ptr<agent::Agent> baseline,
              std::unique_ptr<agent::Agent> proposal)
      : runtime_(runtime),
        canary_(std::move(canary)),
        baseline_(std::move(baseline)),
        proposal_(std::move(proposal)) {}

  void AddPreRunHook(std::shared_ptr<agent::PreRunHook> hook) override {
    baseline_->AddPreRunHook(hook);
    proposal_->AddPreRunHook(std::move(hook));
  }
  void AddPreToolHook(std::shared_ptr<agent::PreToolHook> hook) override {
    baseline_->AddPreToolHook(hook);
    proposal_->AddPreToolHook(std::move(hook));
  }
  void AddPostToolHook(std::shared_ptr<agent::PostToolHook> hook) override {
    baseline_->AddPostToolHook(hook);
    proposal_->AddPostToolHook(std::move(hook));
  }
  void AddPostRunHook(std::shared_ptr<agent::PostRunHook> hook) override {
    baseline_->AddPostRunHook(hook);
    proposal_->AddPostRunHook(std::move(hook));
  }

  Result<agent::RunResult> Send(const std::string& task,
                                const agent::SendOptions& options) override {
    agent::SendOptions chosen = options;
    if (chosen.run_id.empty()) chosen.run_id = agent::NewRunId(runtime_.env);
    // A turn that continues a run (a chat's next turn) stays on that run's arm, so a conversation
    // never changes instructions halfway; one begun before the canary goes on with the baseline.
    if (!chosen.continue_from.empty()) return For(chosen.continue_from).Send(task, chosen);
    agent::Agent& arm = improve::TakesProposal(canary_.proposal_id, chosen.run_id, canary_.percent)
                            ? *proposal_
                            : *baseline_;
    return arm.Send(task, chosen);
  }
  Result<agent::RunResult> Resume(const std::string& run_id) override {
    return For(run_id).Resume(run_id);
  }
  Result<std::vector<store::RunRecord>> Pending() override { return baseline_->Pending(); }
  Result<std::string> Fork(const std::string& run_id, std::optional<int64_t> step) override {
    return For(run_id).Fork(run_id, step);
  }
  Result<std::string> ForkWithNote(const std::string& run_id, const std::string& new_id,
                                   const std::string& note) override {
    return For(run_id).ForkWithNote(run_id, new_id, note);
  }
  Result<agent::RunResult> Approve(const std::string& run_id) override {
    return For(run_id).Approve(run_id);
  }
  Result<agent::RunResult> Deny(const std::string& run_id, const std::string& reason) override {
    return For(run_id).Deny(run_id, reason);
  }
  Result<agent::RunResult> Answer(const std::string& run_id, const std::string& answer) override {
    return For(run_id).Answer(run_id, answer);
  }

 private:
  // The Agent of the arm `run_id` recorded; the baseline's when it cannot be read (the call then
  // reports what is wrong with the run).
  agent::Agent& For(const std::string& run_id) {
    Result<store::RunRecord> run = runtime_.store->GetRun(run_id);
    if (!run.ok()) return *baseline_;
    Result<agent::RunOrigin> origin = agent::ParseRunOrigin(run->metadata, run_id);
    if (origin.ok() && origin->arm == canary_.proposal_id) return *proposal_;
    return *baseline_;
  }

  Runtime& runtime_;
  const improve::Canary canary_;
  std::unique_ptr<agent::Agent> baseline_;
  std::unique_ptr<agent::Agent> proposal_;
};

}  // namespace

Result<agent::AgentSpec> LoadProposalSpec(Runtime& runtime, const improve::Canary& canary) {
  MEND_ASSIGN_OR_RETURN(improve::AttemptStore * attempts, runtime.Attempts());
  MEND_ASSIGN_OR_RETURN(improve::Proposal proposal, attempts->GetProposal(canary.proposal_id));
  std::map<std::string, std::string> files;
  for (const auto& [path, text] : proposal.files) {
    files[NormalizePath(JoinPath(canary.agent_dir, path))] = text;
  }
  OverlayFileSystem overlay(*runtime.env.fs, std::move(files));
  Result<agent::AgentSpec> spec = agent::LoadAgentFolder(overlay, canary.agent_dir);
  if (!spec.ok()) return spec.status().Annotate("proposal " + canary.proposal_id + "'s files");
  return spec;
}

std::shared_ptr<agent::PostRunHook> NewCanaryOutcomeHook(Runtime& runtime, std::string proposal_id,
                                                         std::string arm, agent::CanarySpec check) {
  return std::make_shared<CanaryOutcomeHook>(runtime, std::move(proposal_id), std::move(arm),
                                             std::move(check));
}

std::unique_ptr<agent::Agent> NewCanaryAgent(Runtime& runtime, const improve::Canary& canary,
                                             std::unique_ptr<agent::Agent> baseline,
                                             std::unique_ptr<agent::Agent> proposal) {
  return std::make_unique<CanaryAgent>(runtime, canary, std::move(baseline), std::move(proposal));
}

}  // namespace mend::app::internal
