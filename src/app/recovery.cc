#include "mend/app/recovery.h"

#include <utility>

#include "mend/app/canary.h"
#include "mend/app/run_model.h"

namespace mend::app {

Result<agent::Agent*> RuntimeRunDriver::AgentFor(const store::RunRecord& run) {
  if (run.agent_dir.empty()) {
    return FailedPreconditionError("run " + run.id + " does not record its agent folder");
  }
  // Runs of one folder share an Agent when they continue on the same model: a daemon started
  // with other settings resumes each run on the model it recorded.
  MEND_ASSIGN_OR_RETURN(agent::RunOrigin origin, agent::ParseRunOrigin(run.metadata, run.id));
  const std::string key = run.agent_dir + "\n" + origin.model.provider + "\n" +
                          origin.model.base_url + "\n" + origin.model.model + "\n" +
                          origin.model.script_file + (origin.shadow ? "\nshadow" : "");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = agents_.find(key);
  if (it != agents_.end()) return it->second.get();
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        OpenAgentForRun(runtime_, run, ProviderUse::kDrivesRuns, stop_));
  agent::Agent* raw = agent.get();
  agents_.emplace(key, std::move(agent));
  return raw;
}

heal::ProviderEndpoint RuntimeRunDriver::EndpointFor(const store::RunRecord& run) {
  Result<agent::RunOrigin> origin = agent::ParseRunOrigin(run.metadata, run.id);
  if (!origin.ok()) return heal::ProviderEndpoint{};
  // Only the model's name can come from the agent folder; its provider and base URL never do, so
  // the endpoint needs no folder loaded.
  return heal::EndpointOf(RunModelFor(runtime_, agent::AgentSpec{}, *origin));
}

Result<agent::RunResult> RuntimeRunDriver::Resume(const store::RunRecord& run) {
  MEND_ASSIGN_OR_RETURN(agent::Agent * agent, AgentFor(run));
  return agent->Resume(run.id);
}

Status RuntimeRunDriver::ForkWithNote(const store::RunRecord& run, const std::string& new_id,
                                      const std::string& note) {
  MEND_ASSIGN_OR_RETURN(agent::Agent * agent, AgentFor(run));
  return agent->ForkWithNote(run.id, new_id, note).status();
}

heal::RecoveryOptions RecoveryOptionsFor(Runtime& runtime) {
  heal::RecoveryOptions options;
  options.store = runtime.store.get();
  options.clock = runtime.env.clock;
  options.events = runtime.events.get();
  options.tracer = runtime.tracer.get();
  options.interval = runtime.config.GetDuration("recover.interval");
  options.max_attempts = static_cast<int>(runtime.config.GetInt("recover.max_attempts"));
  options.retry_with_diagnosis = runtime.config.GetBool("recover.retry_with_diagnosis");
  options.max_runs_per_pass =
      static_cast<size_t>(runtime.config.GetInt("recover.max_runs_per_pass"));
  // A quarantined run of a canary counts for its arm (docs/improve.md, "Canary").
  options.on_quarantined = [&runtime](const std::string& run_id) {
    Status s = RecordQuarantinedCanaryRun(runtime, run_id);
    if (!s.ok() && runtime.warn) {
      runtime.warn("the canary did not count quarantined run " + run_id + ": " + s.ToString());
    }
  };
  return options;
}

}  // namespace mend::app
