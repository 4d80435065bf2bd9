#pragma once

// The entry point of an embedding program (docs/architecture.md, "The path of a run"): OpenRuntime
// builds a Runtime (store, provider, events, memory, lessons, tracing) from the configuration, and
// OpenAgent and OpenAgentForRun give the Agent that runs an agent folder. Destroy every Agent
// before its Runtime.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mend/agent/agent.h"
#include "mend/app/lessons.h"
#include "mend/app/run_model.h"
#include "mend/app/runtime_metrics.h"
#include "mend/base/config.h"
#include "mend/base/env.h"
#include "mend/base/result.h"
#include "mend/improve/attempt_store.h"
#include "mend/llm/embedder.h"
#include "mend/llm/factory.h"
#include "mend/llm/provider.h"
#include "mend/llm/recording_provider.h"
#include "mend/memory/backfill.h"
#include "mend/memory/fact_store.h"
#include "mend/memory/retriever.h"
#include "mend/obs/events.h"
#include "mend/obs/metrics.h"
#include "mend/obs/trace.h"
#include "mend/store/checkpoint_store.h"

namespace mend::app {

class DeferredProvider;
namespace internal {
struct RuntimeParts;
struct RuntimeAccess;
}  // namespace internal

/// Where the runtime's events go.
enum class EventLog {
  /// $MEND_HOME/events.jsonl (one JSON object per line); a log larger than
  /// observe.events.max_bytes is first renamed to `events-<UTC time>.jsonl` (docs/events_format.md)
  kJsonlFile,
  kNone,  ///< nowhere: the bus exists but has no sink
};

/// Substitutions for tests and `mend demo`; the defaults build everything from the configuration.
struct RuntimeOptions {
  /// Used instead of the configured provider when set.
  std::unique_ptr<llm::LlmProvider> provider;
  /// Used instead of the configured store when set.
  std::unique_ptr<store::CheckpointStore> store;
  /// Used instead of the fact store at `<home>/mend.db` when set.
  std::unique_ptr<memory::FactStore> facts;
  EventLog event_log = EventLog::kJsonlFile;  ///< where the runtime's events go
  /// Finished spans also go here (tests, in-process inspection), whatever observe.* says.
  std::shared_ptr<obs::SpanProcessor> span_processor;
  /// The start of this process's lease holder id ("<prefix>-<pid>@<host>").
  std::string holder_prefix = "mend";
  /// The workspace of new runs whose agent folder names none; empty: the process's current
  /// directory.
  std::string caller_dir;
};

/// Everything a command needs to run agents, built from the effective configuration in one place
/// (docs/architecture.md: only app knows all others). Owns the provider, the store and
/// the event bus; the Env's pointers are borrowed and must outlive the Runtime. Members are
/// thread-safe as their own types document. Destroy Agents created from a Runtime before it.
struct Runtime {
  /// Holds `env` and `config`; OpenRuntime builds the rest.
  Runtime(Env env_in, Config config_in);

  Env env;           ///< borrowed seams
  Config config;     ///< the effective configuration
  std::string home;  ///< the state directory; exists once OpenRuntime returned
  /// The caller's current directory (absolute): the workspace of new runs whose agent folder
  /// names none (RuntimeOptions::caller_dir).
  std::string caller_dir;
  /// The process's metrics (docs/metrics.md), rendered by `mend serve` at /metrics. Declared
  /// before everything that records into it, so it outlives them all.
  std::unique_ptr<obs::MetricsRegistry> metrics;
  // What only app's own files use (the runtime's metric families, the providers of runs on other
  // endpoints, the --record cassettes; app/runtime_parts.h). Declared right after `metrics`: it
  // records into it, and everything declared below records into its metric families.
 private:
  friend struct internal::RuntimeAccess;
  std::unique_ptr<internal::RuntimeParts> parts_;

 public:
  /// The model provider. Unless injected through RuntimeOptions it is built from the provider.*
  /// keys on first use (so commands that need no model work without an API key); see
  /// PrepareProvider to build it up front. Either way it is wrapped so every request is counted in
  /// run_metrics; name() is the wrapped provider's.
  std::unique_ptr<llm::LlmProvider> provider;
  /// `mend run --record FILE`: when not empty, the Agents OpenAgent and OpenAgentForRun create
  /// record every model response of their runs to this cassette (llm/recording_provider.h);
  /// RecordingStatus says whether every write reached it.
  std::string record_path;
  /// Where warnings for the person running mend go, one line each without "mend: " (e.g. a hosted
  /// provider with no API key configured, said before its first request). The CLI prints them on
  /// stderr; unset, they are dropped. Called from the thread that needs the provider.
  std::function<void(const std::string&)> warn;
  /// Wrapped so every Save is timed in run_metrics.
  std::unique_ptr<store::CheckpointStore> store;
  std::unique_ptr<obs::EventBus> events;  ///< every module publishes its events here
  /// Every run as a trace (docs/observe.md): agents, recovery and lesson workers start their spans
  /// here. Null when observe.enabled is off and no span processor was injected. Declared before
  /// everything that ends spans, so it outlives them; ~Runtime flushes it.
  std::unique_ptr<obs::Tracer> tracer;
  store::LeaseHolder holder;  ///< who this process is, for leases
  /// Whether the provider.* flags of this invocation also switch the runs it continues from the
  /// model they recorded (RunModelFor in run_model.h). `mend recover` and `mend serve` set
  /// kNewRunsOnly unless --override-recorded is given (docs/heal.md, docs/serve.md).
  ProviderFlagScope provider_flag_scope = ProviderFlagScope::kEveryRun;
  /// Retention of spans (PruneOlderThan in retention.h): removes the spans that ended before the
  /// cutoff (kDryRun: counts them) and returns how many. Empty when there is no span store.
  std::function<Result<int64_t>(Time cutoff, store::PruneMode mode)> prune_spans;

  /// Long-term memory (docs/memory.md). The declaration order is the teardown order in reverse:
  /// the backfill thread stops before the retriever, embedder and fact store it uses go away.
  std::unique_ptr<memory::FactStore> facts;  ///< always open (`<home>/mend.db`)
  /// Only when memory.embeddings.url is set; vectors then join the lexical signals.
  std::unique_ptr<llm::Embedder> embedder;
  /// Built from the memory.* keys; HyDE (memory.hyde) asks `provider`.
  std::unique_ptr<memory::Retriever> retriever;
  /// Present with `embedder`; runs only after StartBackgroundWork.
  std::unique_ptr<memory::EmbeddingBackfill> backfill;
  /// How `mend memory` commands send texts to the embedder (memory.embeddings.batch, max_attempts,
  /// retry_delay).
  memory::EmbedOptions embed_options;

  /// improve's attempts and proposals (improve/attempt_store.h): shared on PostgreSQL when
  /// store.url is postgres://, else this home's audit folders. Opened on first use, so commands
  /// that never improve open nothing; its errors (an unreachable server, a newer schema) come back
  /// to each caller. Thread-safe.
  Result<improve::AttemptStore*> Attempts();

  /// The first failed write to the record_path cassette of any run of this runtime, OK when every
  /// response was recorded (or nothing was to be).
  Status RecordingStatus();

  /// Reflexion (docs/reflexion.md). Declared last: its workers use the provider, the fact store and
  /// the metrics, so they stop first.
  Lessons lessons;
  ~Runtime();

 private:
  std::mutex attempts_mu_;
  std::unique_ptr<improve::AttemptStore> attempts_;  // guarded by attempts_mu_
};

/// Builds the runtime: creates the home directory, opens the store named by store.url (empty:
/// SQLite at `<home>/mend.db`; postgres://...: PostgreSQL (facts stay in `<home>/mend.db`);
/// anything else: kInvalidArgument), the event bus with its JSONL sink (the API keys registered as
/// redactions), this process's lease holder, and long-term memory: the fact store at
/// `<home>/mend.db`, the embedder when memory.embeddings.url is set (kInvalidArgument for a bad
/// embedder configuration) and the retriever. Errors of the file system and the stores come back as
/// they are.
Result<std::unique_ptr<Runtime>> OpenRuntime(const Config& config, Env env,
                                             RuntimeOptions options = {});

/// Starts the background work of long-lived commands (`mend run`, `mend chat`): the embedding
/// backfill, when there is an embedder, and the lesson workers when this process can own them
/// (StartLessonWorkers on `lessons_taken`; another owner is fine). `mend run` passes kOwn: its
/// workers generate its own runs' lessons only, never another run's before or during its model
/// calls. Short commands never call it. Call it once.
void StartBackgroundWork(Runtime& runtime,
                         lessonq::JobsTaken lessons_taken = lessonq::JobsTaken::kAll);

/// An embedder like the runtime's (memory.embeddings.*) for `model` instead of
/// memory.embeddings.model. kFailedPrecondition when memory.embeddings.url is empty.
Result<std::unique_ptr<llm::Embedder>> CreateConfiguredEmbedder(const Runtime& runtime,
                                                                const std::string& model);

/// The provider options the provider.* keys describe. `fallback_model` is used when
/// provider.model is empty (an agent folder that names its model).
llm::ProviderOptions ProviderOptionsFromConfig(const Config& config,
                                               const std::string& fallback_model = "");

/// Builds the configured provider now, if it is built on demand and not built yet, so a bad
/// provider configuration is reported before a run starts. kInvalidArgument naming what is
/// missing or wrong (e.g. a model for openai); errors reading the script or price file as they
/// come. Idempotent: a failed build is reported again by later calls and by every Complete().
Status PrepareProvider(Runtime& runtime, const std::string& fallback_model = "");

/// Whether OpenAgent builds the provider before creating the agent.
enum class ProviderUse {
  kDrivesRuns,  ///< send, resume, approve, answer: the provider must work
  kNoModel,     ///< fork, pending: no model call will be made
};

/// Loads the agent folder at `agent_dir` and creates its Agent for new runs on the runtime's store,
/// event bus and lease holder, with the folder's checks and shadow mode (check_hooks.h; shadow mode
/// when heal.shadow is set), the memory hooks (memory_hooks.h) when memory.enabled is true, the
/// quality hooks and the progress guard. New runs record the model of NewRunModel
/// (run_model.h) and, when the folder names no workspace, the runtime's caller_dir. Errors: those
/// of LoadAgentFolder, ProviderFor (kDrivesRuns: a missing model or script is a configuration
/// error, exit 2) and Agent::Create. `stop` (optional, borrowed, must outlive the Agent) becomes
/// AgentOptions::stop: once it reads true the Agent's runs stop at their next checkpoint.
Result<std::unique_ptr<agent::Agent>> OpenAgent(Runtime& runtime, const std::string& agent_dir,
                                                ProviderUse use = ProviderUse::kDrivesRuns,
                                                const std::atomic<bool>* stop = nullptr);

/// The record of run `run_id`; kNotFound "no run named <id>" when the store has none.
Result<store::RunRecord> FindRun(Runtime& runtime, const std::string& run_id);

/// OpenAgent for the folder `run` was started from, on the model the run recorded unless a flag of
/// this invocation overrides it (RunModelFor in run_model.h; the agent records the change), and in
/// shadow mode when the run started in it. Also
/// kDataLoss for metadata that does not parse, kFailedPrecondition for a run without a folder.
Result<std::unique_ptr<agent::Agent>> OpenAgentForRun(Runtime& runtime, const store::RunRecord& run,
                                                      ProviderUse use = ProviderUse::kDrivesRuns,
                                                      const std::atomic<bool>* stop = nullptr);
/// The same for the run named `run_id` (FindRun's errors).
Result<std::unique_ptr<agent::Agent>> OpenAgentForRun(Runtime& runtime, const std::string& run_id,
                                                      ProviderUse use = ProviderUse::kDrivesRuns,
                                                      const std::atomic<bool>* stop = nullptr);

}  // namespace mend::app
