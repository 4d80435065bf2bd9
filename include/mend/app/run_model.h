#pragma once

// The model a run talks to (docs/runs.md): NewRunModel for a new run, RunModelFor for one that
// continues (and the scope of the provider flags), CheckRunModel, and ProviderFor, which builds a
// provider per model and keeps it.

#include <string>

#include "mend/agent/agent_spec.h"
#include "mend/agent/run_origin.h"
#include "mend/base/result.h"
#include "mend/llm/provider.h"

namespace mend::app {

struct Runtime;

/// What the provider.* flags of one invocation (--provider, --base-url, --model, --script-file) do
/// to a run that recorded its model (Runtime::provider_flag_scope).
enum class ProviderFlagScope {
  /// They switch it too: a flag on a command about one run (resume, approve, answer, fork, chat)
  /// is an explicit request to move that run.
  kEveryRun,
  /// It keeps its recorded model: the flags of a long-lived process (`mend recover`, `mend serve`)
  /// are defaults for the new runs it starts, unless it was started with --override-recorded.
  kNewRunsOnly,
};

/// The model a new run of `spec` records and talks to: provider.name and provider.base_url from
/// the configuration; the model from a --model flag, else the agent folder's `model`, else
/// provider.model; for the scripted provider, provider.script_file made absolute. With a provider
/// injected through RuntimeOptions, its name().
agent::RunModel NewRunModel(const Runtime& runtime, const agent::AgentSpec& spec);

/// The model run `origin` continues with (docs/runs.md): what it recorded, except what a flag of
/// this invocation (--provider, --base-url, --model, --script-file) sets when the runtime's
/// provider_flag_scope is kEveryRun. When --provider names another provider than the recorded one,
/// the recorded base URL and model do not carry over: they come from the configuration and the
/// folder as for a new run. A run that recorded nothing gets NewRunModel.
agent::RunModel RunModelFor(const Runtime& runtime, const agent::AgentSpec& spec,
                            const agent::RunOrigin& origin);

/// OK when `model` can be built from the configuration: a model for openai and anthropic, a script
/// file for scripted (the run's, else provider.script_file). Otherwise kInvalidArgument with detail
/// code kConfigInvalidDetail (a usage error, exit 2) naming the missing key and where it can
/// be set.
Status CheckRunModel(const Runtime& runtime, const agent::RunModel& model);

/// The provider for `model`, built on first use from the provider.* keys with the model's
/// provider, base URL and model in place of the configured ones (API key, timeouts and price file
/// stay the configured ones) and kept for later runs. The runtime's own provider when it matches
/// the configuration, or when it was injected (tests, `mend demo`). Errors: CheckRunModel's, then
/// those of building the provider (e.g. reading the script file). Thread-safe.
Result<llm::LlmProvider*> ProviderFor(Runtime& runtime, const agent::RunModel& model);

}  // namespace mend::app
