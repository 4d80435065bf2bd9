// The runtime builder: the effective configuration becomes a provider, a store, an event bus, a
// lease identity and long-term memory here, and nowhere else.
#include "mend/app/runtime.h"

#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

#include "app/canary_agent.h"
#include "app/deferred_provider.h"
#include "app/event_log.h"
#include "app/lessons_internal.h"
#include "app/pg_metrics.h"
#include "app/runtime_metrics_internal.h"
#include "app/runtime_parts.h"
#include "app/unavailable_fact_store.h"
#include "mend/agent/agent_spec.h"
#include "mend/app/canary.h"
#include "mend/app/check_hooks.h"
#include "mend/app/mcp_tools.h"
#include "mend/app/memory_hooks.h"
#include "mend/app/run_model.h"
#include "mend/base/home_layout.h"
#include "mend/base/subprocess.h"
#include "mend/db/pg_conn.h"
#include "mend/heal/progress_guard.h"
#include "mend/memory/postgres_fact_store.h"
#include "mend/obs/otlp.h"
#include "mend/obs/otlp_encode.h"
#include "mend/obs/otlp_transport.h"
#include "mend/obs/span_store.h"
#include "mend/obs/span_writer.h"
#include "mend/store/postgres_store.h"
#include "mend/store/sqlite_store.h"

namespace mend::app {
namespace {

// The version in OTLP resources (service.version).
constexpr char kMendVersion[] = MEND_VERSION;

// "" when the current directory cannot be read (it was removed, say): runs then need a
// `workspace` in their agent folder.
std::string CurrentDirectory() {
  std::error_code error;
  std::filesystem::path dir = std::filesystem::current_path(error);
  return error ? std::string() : dir.lexically_normal().string();
}

Result<std::unique_ptr<store::CheckpointStore>> OpenConfiguredStore(const Runtime& runtime) {
  const std::string& url = runtime.config.GetString("store.url");
  if (store::IsPostgresUrl(url)) {
    store::PostgresStoreOptions options;
    options.url = url;
    options.connections = internal::PartsOf(runtime).postgres_connections;
    options.local = runtime.holder;
    options.process_alive = store::ProcessAlive;
    return store::OpenPostgresStore(options, *runtime.env.clock);
  }
  if (!url.empty()) {
    return InvalidArgumentError(
        "store.url must be empty (SQLite in the home directory) or a postgres:// URL");
  }
  store::SqliteStoreOptions options;
  options.path = home::DatabaseFile(runtime.home);
  options.local = runtime.holder;
  options.process_alive = store::ProcessAlive;
  return store::OpenSqliteStore(options, *runtime.env.clock);
}

// Long-term memory goes where the runs go (store.url), unless memory.local keeps it in mend.db.
Result<std::unique_ptr<memory::FactStore>> OpenConfiguredFacts(const Runtime& runtime) {
  const std::string& url = runtime.config.GetString("store.url");
  if (store::IsPostgresUrl(url) && !runtime.config.GetBool("memory.local")) {
    memory::PostgresFactStoreOptions options;
    options.url = url;
    options.connections = internal::PartsOf(runtime).postgres_connections;
    return memory::OpenPostgresFactStore(options, *runtime.env.clock);
  }
  memory::FactStoreOptions options;
  options.clock = runtime.env.clock;
  return memory::FactStore::Open(home::DatabaseFile(runtime.home), options);
}

// The embeddings key falls back to the provider's: one OpenAI-compatible account serves both.
std::string EmbeddingsApiKey(const Config& config) {
  const std::string& key = config.GetString("memory.embeddings.api_key");
  return key.empty() ? config.GetString("provider.api_key") : key;
}

// The tracer and where its spans go: the injected processor (tests) and, with observe.enabled,
// observe.db and the OTLP exporter (docs/observe.md).
Status OpenTracer(Runtime& runtime, std::shared_ptr<obs::SpanProcessor> injected) {
  const bool enabled = runtime.config.GetBool("observe.enabled");
  if (!enabled && injected == nullptr) return OkStatus();
  obs::TracerOptions options;
  options.clock = runtime.env.clock;
  options.random = runtime.env.random != nullptr ? runtime.env.random : SystemRandom::Default();
  options.capture_content = runtime.config.GetBool("observe.capture_content");
  runtime.tracer = std::make_unique<obs::Tracer>(options);
  runtime.tracer->AddRedactor(runtime.config.GetString("provider.api_key"));
  runtime.tracer->AddRedactor(runtime.config.GetString("memory.embeddings.api_key"));
  runtime.tracer->AddRedactor(runtime.config.GetString("proxy.upstream_api_key"));
  runtime.tracer->AddRedactor(runtime.config.GetString("proxy.token"));
  if (injected != nullptr) runtime.tracer->AddProcessor(std::move(injected));
  if (!enabled) return OkStatus();

  // observe.db: a store that cannot be opened (a corrupt file, a full disk) costs the traces,
  // never the run; the event log says why.
  const std::string& endpoint = runtime.config.GetString("observe.otlp.endpoint");
  std::shared_ptr<obs::SpanStore> span_store;
  Result<std::unique_ptr<obs::SpanStore>> store =
      obs::SpanStore::Open(home::ObserveFile(runtime.home));
  if (store.ok()) {
    std::shared_ptr<obs::SpanStore> shared = std::move(store).value();
    span_store = shared;
    // Unfinished runs keep their whole trace, as they keep their checkpoints.
    store::CheckpointStore* runs = runtime.store.get();
    runtime.prune_spans = [shared, runs](Time cutoff, store::PruneMode mode) -> Result<int64_t> {
      store::ListOptions unfinished;
      unfinished.unfinished_only = true;
      MEND_ASSIGN_OR_RETURN(std::vector<store::RunRecord> pending, runs->ListRuns(unfinished));
      std::vector<std::string> keep;
      keep.reserve(pending.size());
      for (const store::RunRecord& run : pending) keep.push_back(run.id);
      MEND_ASSIGN_OR_RETURN(obs::SpanPruneResult pruned,
                            shared->DeleteEndedBefore(cutoff,
                                                      mode == store::PruneMode::kDryRun
                                                          ? obs::SpanStore::Mode::kDryRun
                                                          : obs::SpanStore::Mode::kDelete,
                                                      keep));
      return pruned.spans;
    };
    obs::BatchSpanWriterOptions writer;
    writer.clock = runtime.env.clock;
    writer.metrics = runtime.metrics.get();
    writer.buffer_spans = static_cast<size_t>(runtime.config.GetInt("observe.buffer_spans"));
    // With an exporter, observe.db is also its durable copy: a span waits there until a
    // collector took it (docs/observe.md, "Spans a collector has not taken").
    writer.otlp = endpoint.empty() ? obs::OtlpExport::kNone : obs::OtlpExport::kAwait;
    runtime.tracer->AddProcessor(std::make_shared<obs::BatchSpanWriter>(std::move(shared), writer));
  } else if (runtime.events != nullptr) {
    obs::Event e("observe.unavailable");
    e.AddString("error", std::string(store.status().message()));
    runtime.events->Publish(std::move(e));
  }

  if (endpoint.empty()) return OkStatus();
  // A wrong export setting is a configuration error (exit 2), reported before any run starts.
  auto config_error = [](std::string_view key, const Status& s) {
    return InvalidArgumentError(std::string(key) + ": " + std::string(s.message()))
        .WithDetailCode(kConfigInvalidDetail);
  };
  obs::OtlpExporterOptions otlp;
  Result<std::string> url = obs::OtlpTracesUrl(endpoint);
  if (!url.ok()) return config_error("observe.otlp.endpoint", url.status());
  otlp.url = std::move(url).value();
  Result<std::vector<obs::HttpHeader>> headers =
      obs::ParseOtlpHeaders(runtime.config.GetString("observe.otlp.headers"));
  if (!headers.ok()) return config_error("observe.otlp.headers", headers.status());
  otlp.headers = std::move(headers).value();
  Result<obs::OtlpProtocol> protocol =
      obs::ParseOtlpProtocol(runtime.config.GetString("observe.otlp.protocol"));
  if (!protocol.ok()) return config_error("observe.otlp.protocol", protocol.status());
  otlp.protocol = *protocol;
  otlp.timeout = runtime.config.GetDuration("observe.otlp.timeout");
  otlp.queue_capacity = static_cast<size_t>(runtime.config.GetInt("observe.otlp.queue_spans"));
  otlp.resource = obs::MakeOtlpResource(kMendVersion, obs::LocalHostName());
  otlp.transport = obs::NewCurlOtlpTransport();
  otlp.clock = runtime.env.clock;
  otlp.random = options.random;
  otlp.metrics = runtime.metrics.get();
  otlp.backlog = std::move(span_store);
  otlp.retention = runtime.config.GetDuration("observe.otlp.retention");
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<obs::OtlpExporter> exporter,
                        obs::OtlpExporter::Create(std::move(otlp)));
  runtime.tracer->AddProcessor(std::move(exporter));
  return OkStatus();
}

Status OpenEvents(Runtime& runtime, EventLog log) {
  runtime.events = std::make_unique<obs::EventBus>(*runtime.env.clock);
  runtime.events->AddRedactor(runtime.config.GetString("provider.api_key"));
  runtime.events->AddRedactor(runtime.config.GetString("memory.embeddings.api_key"));
  runtime.events->AddRedactor(runtime.config.GetString("proxy.upstream_api_key"));
  runtime.events->AddRedactor(runtime.config.GetString("proxy.token"));
  if (log == EventLog::kNone) return OkStatus();
  // Rotated here only, before this process appends: a log is never renamed under our own sink.
  MEND_RETURN_IF_ERROR(internal::RotateEventLog(
                           *runtime.env.fs, runtime.home,
                           static_cast<uint64_t>(runtime.config.GetInt("observe.events.max_bytes")),
                           runtime.env.clock->Now())
                           .status());
  MEND_ASSIGN_OR_RETURN(
      std::unique_ptr<obs::JsonlFileSink> sink,
      obs::JsonlFileSink::Open(*runtime.env.fs, home::EventLogFile(runtime.home)));
  runtime.events->Subscribe(std::move(sink));
  return OkStatus();
}

// The provider factory of a deferred provider: reads nothing until a model is needed.
DeferredProvider::Factory ConfiguredProviderFactory(const Config& config, Env env) {
  return [config, env](const std::string& fallback_model) {
    return llm::CreateProvider(ProviderOptionsFromConfig(config, fallback_model), env);
  };
}

Status OpenMemory(Runtime& runtime, std::unique_ptr<memory::FactStore> injected) {
  const Config& config = runtime.config;
  if (injected != nullptr) {
    runtime.facts = std::move(injected);
  } else {
    Result<std::unique_ptr<memory::FactStore>> facts = OpenConfiguredFacts(runtime);
    if (facts.ok()) {
      runtime.facts = std::move(facts).value();
    } else {
      // Memory that cannot be opened (a newer mend wrote it, say) disables memory, not mend.
      runtime.facts = std::make_unique<internal::UnavailableFactStore>(
          facts.status().Annotate("long-term memory unavailable"));
    }
  }
  runtime.embed_options.batch = static_cast<size_t>(config.GetInt("memory.embeddings.batch"));
  runtime.embed_options.concurrency =
      static_cast<size_t>(config.GetInt("memory.embeddings.concurrency"));
  runtime.embed_options.max_attempts =
      static_cast<int>(config.GetInt("memory.embeddings.max_attempts"));
  runtime.embed_options.first_delay = config.GetDuration("memory.embeddings.retry_delay");
  if (!config.GetString("memory.embeddings.url").empty()) {
    MEND_ASSIGN_OR_RETURN(
        runtime.embedder,
        CreateConfiguredEmbedder(runtime, config.GetString("memory.embeddings.model")));
    memory::BackfillOptions backfill;
    backfill.batch = runtime.embed_options.batch;
    runtime.backfill = std::make_unique<memory::EmbeddingBackfill>(
        runtime.facts.get(), runtime.embedder.get(), runtime.env.clock, backfill);
  }
  memory::RetrieverOptions options;
  options.max_facts = static_cast<size_t>(config.GetInt("memory.max_facts"));
  options.budget_chars = static_cast<size_t>(config.GetInt("memory.budget_chars"));
  options.hyde = config.GetBool("memory.hyde");
  // HyDE goes through the runtime's provider. When that is built on demand and its build fails,
  // Complete() returns the build error and the retriever falls back to the lexical signals.
  runtime.retriever = std::make_unique<memory::Retriever>(
      runtime.facts.get(), runtime.env.clock, options, runtime.embedder.get(),
      options.hyde ? runtime.provider.get() : nullptr);
  return OkStatus();
}

}  // namespace

Result<std::unique_ptr<llm::Embedder>> CreateConfiguredEmbedder(const Runtime& runtime,
                                                                const std::string& model) {
  const Config& config = runtime.config;
  if (config.GetString("memory.embeddings.url").empty()) {
    return FailedPreconditionError(
        "no embeddings endpoint is configured (set memory.embeddings.url)");
  }
  llm::EmbedderOptions options;
  options.kind = "openai";
  options.base_url = config.GetString("memory.embeddings.url");
  options.model = model;
  options.api_key = EmbeddingsApiKey(config);
  options.dimension = 0;  // whatever the endpoint returns
  return llm::CreateEmbedder(options, runtime.env);
}

llm::ProviderOptions ProviderOptionsFromConfig(const Config& config,
                                               const std::string& fallback_model) {
  llm::ProviderOptions options;
  options.kind = config.GetString("provider.name");
  options.model = config.GetString("provider.model");
  if (options.model.empty()) options.model = fallback_model;
  options.base_url = config.GetString("provider.base_url");
  options.api_key = config.GetString("provider.api_key");
  options.connect_timeout = config.GetDuration("provider.connect_timeout");
  options.timeout = config.GetDuration("provider.timeout");
  options.prices_file = config.GetString("provider.prices_file");
  options.script_file = config.GetString("provider.script_file");
  return options;
}

Result<std::unique_ptr<Runtime>> OpenRuntime(const Config& config, Env env,
                                             RuntimeOptions options) {
  if (env.fs == nullptr || env.clock == nullptr || env.random == nullptr) {
    return InvalidArgumentError("OpenRuntime needs a file system, a clock and randomness");
  }
  auto runtime = std::unique_ptr<Runtime>(new Runtime{env, config});
  runtime->home = config.GetString("home");
  MEND_RETURN_IF_ERROR(env.fs->CreateDirs(runtime->home));
  // Secrets read from config.toml: the environment's are found by name when a child's
  // environment is built (mend/base/subprocess.h), these only by value.
  for (const char* key :
       {"provider.api_key", "provider.openai_api_key", "provider.anthropic_api_key",
        "memory.embeddings.api_key", "serve.token", "observe.otlp.headers", "store.url",
        "proxy.upstream_api_key", "proxy.token", "proxy.tokens"}) {
    AddChildEnvironmentSecret(config.GetString(key));
  }
  runtime->caller_dir = options.caller_dir.empty() ? CurrentDirectory() : options.caller_dir;
  runtime->holder = store::LocalLeaseHolder(options.holder_prefix);
  runtime->metrics = std::make_unique<obs::MetricsRegistry>();
  internal::PartsOf(*runtime).run_metrics = std::make_unique<RuntimeMetrics>(*runtime->metrics);
  if (store::IsPostgresUrl(config.GetString("store.url"))) {
    // One budget for the process's connections to the database, whichever module asks.
    auto budget =
        std::make_shared<db::PgBudget>(static_cast<int>(config.GetInt("postgres.max_connections")));
    internal::PartsOf(*runtime).postgres_connections = budget;
    internal::InstallPostgresMetrics(*runtime->metrics, std::move(budget));
  }
  std::unique_ptr<store::CheckpointStore> store = std::move(options.store);
  if (store == nullptr) {
    MEND_ASSIGN_OR_RETURN(store, OpenConfiguredStore(*runtime));
  }
  runtime->store = internal::TimeCheckpointSaves(
      std::move(store), *internal::PartsOf(*runtime).run_metrics, *env.clock);
  MEND_RETURN_IF_ERROR(OpenEvents(*runtime, options.event_log));
  internal::InstallRuntimeMetrics(*runtime);
  internal::MeterLabels labels;
  std::unique_ptr<llm::LlmProvider> provider = std::move(options.provider);
  if (provider == nullptr) {
    auto deferred = std::make_unique<DeferredProvider>(ConfiguredProviderFactory(config, env));
    internal::PartsOf(*runtime).deferred = deferred.get();
    provider = std::move(deferred);
    // Named now: a provider whose build fails never learns its name.
    labels.provider = config.GetString("provider.name");
    labels.default_model = config.GetString("provider.model");
  }
  runtime->provider = std::make_unique<internal::MeteredProvider>(
      std::move(provider), *internal::PartsOf(*runtime).run_metrics, *env.clock, std::move(labels));
  MEND_RETURN_IF_ERROR(OpenMemory(*runtime, std::move(options.facts)));
  MEND_RETURN_IF_ERROR(OpenTracer(*runtime, std::move(options.span_processor)));
  MEND_RETURN_IF_ERROR(internal::OpenLessons(*runtime));
  return runtime;
}

Result<improve::AttemptStore*> Runtime::Attempts() {
  std::lock_guard<std::mutex> lock(attempts_mu_);
  if (attempts_ != nullptr) return attempts_.get();
  const std::string& url = config.GetString("store.url");
  if (store::IsPostgresUrl(url)) {
    improve::PostgresAttemptStoreOptions options;
    options.url = url;
    options.connections = internal::PartsOf(*this).postgres_connections;
    options.host = obs::LocalHostName();
    options.home = home;
    Result<std::unique_ptr<improve::AttemptStore>> opened =
        improve::OpenPostgresAttemptStore(options, *env.fs);
    if (!opened.ok()) return opened.status().Annotate("improve attempts");
    attempts_ = *std::move(opened);
  } else {
    attempts_ = improve::OpenLocalAttemptStore(*env.fs, home);
  }
  return attempts_.get();
}

Runtime::Runtime(Env env_in, Config config_in)
    : env(env_in),
      config(std::move(config_in)),
      parts_(std::make_unique<internal::RuntimeParts>()) {}

Status Runtime::RecordingStatus() {
  std::lock_guard<std::mutex> lock(parts_->run_providers_mu);
  for (const auto& recorder : parts_->recorders) {
    MEND_RETURN_IF_ERROR(recorder->last_write_status());
  }
  return OkStatus();
}

Runtime::~Runtime() {
  // The run-count collector reads the store, which goes away before the registry.
  internal::UninstallRuntimeMetrics(*this);
  // Lesson jobs still in flight get the configured time to finish; unfinished ones stay in the
  // WAL for the next start.
  const Status stopped =
      StopLessonWorkers(*this, config.GetDuration("reflexion.queue.drain_timeout"));
  if (!stopped.ok() && events != nullptr) {
    obs::Event e("reflexion.shutdown_incomplete");
    e.AddString("error", std::string(stopped.message()));
    events->Publish(std::move(e));
  }
  // Spans still buffered get a bounded moment to reach observe.db and the collector.
  if (tracer != nullptr) tracer->Shutdown(std::chrono::seconds(2));
}

void StartBackgroundWork(Runtime& runtime, lessonq::JobsTaken lessons_taken) {
  if (runtime.backfill != nullptr) runtime.backfill->Start();
  // Workers only for the durable queue: legacy mode has none, and a queue that could not be
  // opened has already said why (reflexion.unavailable).
  const Lessons& lessons = runtime.lessons;
  if (!lessons.triggers.enabled || lessons.queue == nullptr ||
      lessons.enqueuer != lessons.queue.get()) {
    return;
  }
  const Status started = StartLessonWorkers(runtime, lessons_taken);
  // Another process owning the workers is normal: it picks up this process's records.
  if (!started.ok() && started.code() != StatusCode::kUnavailable && runtime.events != nullptr) {
    obs::Event e("reflexion.workers_failed");
    e.AddString("error", std::string(started.message()));
    runtime.events->Publish(std::move(e));
  }
}

Status PrepareProvider(Runtime& runtime, const std::string& fallback_model) {
  if (internal::PartsOf(runtime).deferred == nullptr) return OkStatus();
  return internal::PartsOf(runtime).deferred->Prepare(fallback_model);
}

namespace {

// The Agent of `spec` for runs on `model` (recorded in new runs; see AgentOptions::run_model),
// with every hook the configuration asks for.
// The canary arm an Agent's runs take: none (both empty), or the proposal `canary`'s arm `arm`
// ("baseline" or the proposal id).
struct ArmOf {
  std::string canary;
  std::string arm;
};

// The tools of the folder's MCP servers for an Agent that drives runs; none for a command that
// drives no run (fork, pending) or a folder without servers. The servers live as long as any of
// the tools does.
Result<McpTools> StartMcpToolsFor(Runtime& runtime, const agent::AgentSpec& spec, ProviderUse use) {
  if (use != ProviderUse::kDrivesRuns || spec.mcp_servers.empty()) return McpTools();
  McpToolsOptions mcp_options;
  mcp_options.workspace = spec.workspace.empty() ? runtime.caller_dir : spec.workspace;
  mcp_options.events = runtime.events.get();
  return StartMcpTools(spec, std::move(mcp_options));
}

// `mcp`: the MCP tools the Agent gets (StartMcpToolsFor); null: started for this Agent.
Result<std::unique_ptr<agent::Agent>> OpenAgentOn(Runtime& runtime, agent::AgentSpec spec,
                                                  const agent::RunModel& model, ShadowMode shadow,
                                                  ProviderUse use, const std::atomic<bool>* stop,
                                                  const ArmOf& arm = {},
                                                  const McpTools* mcp = nullptr) {
  agent::AgentOptions options;
  options.arm = arm.arm;
  options.canary = arm.canary;
  options.stop = stop;
  options.env = runtime.env;
  options.provider = runtime.provider.get();
  if (use == ProviderUse::kDrivesRuns) {
    MEND_ASSIGN_OR_RETURN(options.provider, ProviderFor(runtime, model));
  }
  if (use == ProviderUse::kDrivesRuns && !runtime.record_path.empty()) {
    auto recorder = std::make_unique<llm::RecordingProvider>(*options.provider, *runtime.env.fs,
                                                             runtime.record_path);
    options.provider = recorder.get();
    std::lock_guard<std::mutex> lock(internal::PartsOf(runtime).run_providers_mu);
    internal::PartsOf(runtime).recorders.push_back(std::move(recorder));
  }
  options.store = runtime.store.get();
  options.events = runtime.events.get();
  options.tracer = runtime.tracer.get();
  options.holder = runtime.holder;
  options.caller_dir = runtime.caller_dir;
  options.run_model = model;
  options.model = model.model;
  options.shadow = shadow == ShadowMode::kOn;
  options.model_retry.retries = static_cast<int>(runtime.config.GetInt("provider.retries"));
  options.model_retry.first_delay = runtime.config.GetDuration("provider.retry_delay");
  options.model_retry.max_delay = runtime.config.GetDuration("provider.retry_max_delay");
  // The tools of the folder's MCP servers, shut down with the last Agent holding them.
  McpTools own;
  if (mcp == nullptr) {
    MEND_ASSIGN_OR_RETURN(own, StartMcpToolsFor(runtime, spec, use));
    mcp = &own;
  }
  options.extra_tools = mcp->tools;
  for (const std::string& name : mcp->read_only) spec.shadow.read_only.push_back(name);
  // The spec is copied, not moved: AddCheckHooks reads its checks and shadow list.
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        agent::Agent::Create(spec, std::move(options)));
  MEND_RETURN_IF_ERROR(AddCheckHooks(runtime, *agent, spec, shadow));
  if (runtime.config.GetBool("memory.enabled")) AddMemoryHooks(runtime, *agent);
  AddQualityHooks(runtime, *agent, model);
  if (runtime.config.GetBool("heal.progress_guard")) {
    heal::ProgressGuardOptions guard_options;
    guard_options.max_denials = static_cast<int>(runtime.config.GetInt("heal.max_denials"));
    guard_options.repeat_threshold =
        static_cast<int>(runtime.config.GetInt("heal.progress.hint_after"));
    guard_options.events = runtime.events.get();
    auto guard = std::make_shared<heal::ProgressGuard>(guard_options);
    agent->AddPreToolHook(guard);
    agent->AddPostToolHook(guard);
  }
  // After the check hooks: the outcome hook reads their flag.
  if (!arm.canary.empty()) {
    agent->AddPostRunHook(
        internal::NewCanaryOutcomeHook(runtime, arm.canary, arm.arm, spec.canary));
  }
  return agent;
}

// The running canary of the agent folder `dir`, if any. A canary store that cannot be read runs
// the agent as it is (the baseline) and says so: no run is lost to it.
std::optional<improve::Canary> RunningCanary(Runtime& runtime, const std::string& dir) {
  Result<improve::CanaryStore*> canaries = Canaries(runtime);
  Result<std::optional<improve::Canary>> running =
      canaries.ok() ? (*canaries)->Running(NormalizePath(dir))
                    : Result<std::optional<improve::Canary>>(canaries.status());
  if (running.ok()) return *running;
  if (runtime.warn) {
    runtime.warn("canaries could not be read, so new runs take the agent folder as it is: " +
                 running.status().ToString());
  }
  return std::nullopt;
}

}  // namespace

Result<std::unique_ptr<agent::Agent>> OpenAgent(Runtime& runtime, const std::string& agent_dir,
                                                ProviderUse use, const std::atomic<bool>* stop) {
  MEND_ASSIGN_OR_RETURN(agent::AgentSpec spec, agent::LoadAgentFolder(*runtime.env.fs, agent_dir));
  const agent::RunModel model = NewRunModel(runtime, spec);
  const ShadowMode shadow =
      runtime.config.GetBool("heal.shadow") ? ShadowMode::kOn : ShadowMode::kOff;
  std::optional<improve::Canary> canary = RunningCanary(runtime, spec.dir);
  if (!canary.has_value()) return OpenAgentOn(runtime, std::move(spec), model, shadow, use, stop);
  MEND_ASSIGN_OR_RETURN(agent::AgentSpec proposed, internal::LoadProposalSpec(runtime, *canary));
  // A proposal changes instructions.md and skills only, never agent.toml: both arms have the
  // same MCP servers, started once.
  MEND_ASSIGN_OR_RETURN(McpTools mcp, StartMcpToolsFor(runtime, spec, use));
  MEND_ASSIGN_OR_RETURN(
      std::unique_ptr<agent::Agent> baseline,
      OpenAgentOn(runtime, std::move(spec), model, shadow, use, stop,
                  ArmOf{canary->proposal_id, std::string(improve::kBaselineArm)}, &mcp));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> proposal,
                        OpenAgentOn(runtime, std::move(proposed), model, shadow, use, stop,
                                    ArmOf{canary->proposal_id, canary->proposal_id}, &mcp));
  return internal::NewCanaryAgent(runtime, *canary, std::move(baseline), std::move(proposal));
}

Result<store::RunRecord> FindRun(Runtime& runtime, const std::string& run_id) {
  Result<store::RunRecord> run = runtime.store->GetRun(run_id);
  if (!run.ok() && run.status().code() == StatusCode::kNotFound) {
    return NotFoundError("no run named " + run_id);
  }
  return run;
}

Result<std::unique_ptr<agent::Agent>> OpenAgentForRun(Runtime& runtime, const store::RunRecord& run,
                                                      ProviderUse use,
                                                      const std::atomic<bool>* stop) {
  if (run.agent_dir.empty()) {
    return FailedPreconditionError("run " + run.id + " does not record its agent folder");
  }
  MEND_ASSIGN_OR_RETURN(agent::RunOrigin origin, agent::ParseRunOrigin(run.metadata, run.id));
  MEND_ASSIGN_OR_RETURN(agent::AgentSpec spec,
                        agent::LoadAgentFolder(*runtime.env.fs, run.agent_dir));
  const agent::RunModel model = RunModelFor(runtime, spec, origin);
  // A run started in shadow mode stays in it: resuming it must not run the tools it simulated.
  const ShadowMode shadow =
      runtime.config.GetBool("heal.shadow") || origin.shadow ? ShadowMode::kOn : ShadowMode::kOff;
  // A run of a canary keeps its arm while the canary runs; once it is decided the agent folder
  // holds what won (the proposal's files after a promotion, the baseline after a rollback), and
  // the run goes on with that, uncounted.
  if (!origin.canary.empty()) {
    Result<improve::CanaryStore*> canaries = Canaries(runtime);
    MEND_RETURN_IF_ERROR(canaries.status());
    Result<improve::Canary> canary = (*canaries)->Get(origin.canary);
    if (canary.ok() && canary->state == improve::CanaryState::kRunning) {
      if (origin.arm == canary->proposal_id) {
        MEND_ASSIGN_OR_RETURN(spec, internal::LoadProposalSpec(runtime, *canary));
      }
      return OpenAgentOn(runtime, std::move(spec), model, shadow, use, stop,
                         ArmOf{origin.canary, origin.arm});
    }
    if (!canary.ok() && canary.status().code() != StatusCode::kNotFound) return canary.status();
  }
  return OpenAgentOn(runtime, std::move(spec), model, shadow, use, stop);
}

Result<std::unique_ptr<agent::Agent>> OpenAgentForRun(Runtime& runtime, const std::string& run_id,
                                                      ProviderUse use,
                                                      const std::atomic<bool>* stop) {
  MEND_ASSIGN_OR_RETURN(store::RunRecord run, FindRun(runtime, run_id));
  return OpenAgentForRun(runtime, run, use, stop);
}

}  // namespace mend::app
