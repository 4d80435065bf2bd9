#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/hooks_runner.h"
#include "agent/run_tools.h"
#include "agent/step_loop.h"
#include "mend/agent/agent.h"

namespace mend::agent {

// The Agent of include/mend/agent/agent.h over a CheckpointStore and an LlmProvider.
class AgentImpl final : public Agent {
 public:
  AgentImpl(AgentSpec spec, AgentOptions options, std::shared_ptr<const RunTools> tools);

  void AddPreRunHook(std::shared_ptr<PreRunHook> hook) override;
  void AddPreToolHook(std::shared_ptr<PreToolHook> hook) override;
  void AddPostToolHook(std::shared_ptr<PostToolHook> hook) override;
  void AddPostRunHook(std::shared_ptr<PostRunHook> hook) override;

  Result<RunResult> Send(const std::string& task, const SendOptions& options) override;
  Result<RunResult> Resume(const std::string& run_id) override;
  Result<std::vector<store::RunRecord>> Pending() override;
  Result<std::string> Fork(const std::string& run_id, std::optional<int64_t> step) override;
  Result<std::string> ForkWithNote(const std::string& run_id, const std::string& new_id,
                                   const std::string& note) override;
  Result<RunResult> Approve(const std::string& run_id) override;
  Result<RunResult> Deny(const std::string& run_id, const std::string& reason) override;
  Result<RunResult> Answer(const std::string& run_id, const std::string& answer) override;

 private:
  // Changes a held run that waits for a person (clears the wait and records the decision).
  using Decision = std::function<Status(ActiveRun&, StepLoop&)>;

  HooksRunner MakeHooksRunner();
  // The workspace of a new run: the options' override, the spec's, else the caller's directory.
  std::string NewRunWorkspace() const;
  RunInfo MakeInfo(const std::string& run_id, const std::string& task,
                   const RunOrigin& origin) const;
  Result<std::vector<llm::Message>> PriorConversation(const std::string& run_id);
  Status StartConversation(ActiveRun& run, StepLoop& loop, HooksRunner& hooks,
                           std::vector<llm::Message> prior);
  Result<ActiveRun> LoadHeld(const std::string& run_id, const store::Lease& lease);
  // What LoadHeld does once the run's conversation is loaded: checks the tools the run used
  // against the agent's, brings changed instructions and skills into the system prompt, and
  // records a model chosen by the caller. Errors leave the run as it was.
  Status AdoptHeld(ActiveRun& run, RunOrigin& origin);
  Result<RunResult> DriveHeld(ActiveRun& run, HooksRunner& hooks, const Decision& decision);
  // `attempt_name` names the attempt in its span ("approve", "deny", "answer").
  Result<RunResult> ContinueWaiting(const std::string& run_id, std::string_view kind,
                                    std::string_view attempt_name, const Decision& decision);
  // Send and Resume once their attempt span is active.
  Result<RunResult> SendTraced(store::RunRecord& record, const RunOrigin& origin,
                               const std::string& metadata, std::vector<llm::Message> prior,
                               Time now, const std::function<void(const std::string&)>& on_created);
  Result<RunResult> ResumeTraced(store::RunRecord record);
  Result<RunResult> DriveReleasingOnError(StepLoop& loop, ActiveRun& run);

  const AgentSpec spec_;
  const AgentOptions options_;
  const std::shared_ptr<const RunTools> tools_;
  const AgentFingerprint fingerprint_;
  LoopDeps deps_;
  std::mutex mu_;  // guards hooks_
  HooksRunner::Hooks hooks_;
};

}  // namespace mend::agent
