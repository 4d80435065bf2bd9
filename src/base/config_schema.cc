#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/config.h"
#include "mend/base/home_layout.h"

namespace mend {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

ConfigKeySpec String(std::string name, std::string env_var, std::string flag, std::string help) {
  ConfigKeySpec spec;
  spec.name = std::move(name);
  spec.env_var = std::move(env_var);
  spec.flag = std::move(flag);
  spec.help = std::move(help);
  return spec;
}

ConfigKeySpec Bool(std::string name, bool default_value, std::string env_var, std::string help) {
  ConfigKeySpec spec = String(std::move(name), std::move(env_var), "", std::move(help));
  spec.type = ConfigType::kBool;
  spec.default_value = default_value ? "true" : "false";
  return spec;
}

ConfigKeySpec Int(std::string name, std::int64_t default_value, std::int64_t min, std::int64_t max,
                  std::string env_var, std::string help) {
  ConfigKeySpec spec = String(std::move(name), std::move(env_var), "", std::move(help));
  spec.type = ConfigType::kInt;
  spec.default_value = std::to_string(default_value);
  spec.int_min = min;
  spec.int_max = max;
  return spec;
}

ConfigKeySpec Duration(std::string name, std::string default_value, milliseconds min,
                       milliseconds max, std::string env_var, std::string flag, std::string help) {
  ConfigKeySpec spec =
      String(std::move(name), std::move(env_var), std::move(flag), std::move(help));
  spec.type = ConfigType::kDuration;
  spec.default_value = std::move(default_value);
  spec.duration_min = min;
  spec.duration_max = max;
  return spec;
}

void AddGeneralKeys(std::vector<ConfigKeySpec>& keys) {
  ConfigKeySpec home =
      String("home", "MEND_HOME", "home", "state directory of mend (docs/home.md)");
  home.default_value = home::kDefaultHome;
  home.file_allowed = false;
  keys.push_back(std::move(home));

  ConfigKeySpec file = String("config", "MEND_CONFIG", "",
                              "path of the configuration file; a file named here must exist "
                              "(the service's is /etc/mend/config.toml, docs/install.md)");
  file.default_value = "{home}/config.toml";
  file.file_allowed = false;
  keys.push_back(std::move(file));

  ConfigKeySpec store = String("store.url", "MEND_STORE", "",
                               "runs store: empty for SQLite in home, or postgres://...");
  store.sensitivity = Sensitivity::kUrl;
  keys.push_back(std::move(store));
  keys.push_back(Int("postgres.max_connections", 8, 1, 1000, "MEND_POSTGRES_MAX_CONNECTIONS",
                     "connections one process holds to the store.url database at most, shared "
                     "by runs, memory, the lesson queue and improve (docs/store_schema.md)"));

  ConfigKeySpec level = String("log.level", "MEND_LOG_LEVEL", "", "diagnostic log verbosity");
  level.type = ConfigType::kEnum;
  level.choices = {"debug", "info", "warn", "error"};
  level.default_value = "info";
  keys.push_back(std::move(level));
}

void AddProviderKeys(std::vector<ConfigKeySpec>& keys) {
  ConfigKeySpec name = String("provider.name", "MEND_PROVIDER", "provider", "LLM provider");
  name.type = ConfigType::kEnum;
  name.choices = {"openai", "anthropic", "scripted"};
  name.default_value = "openai";
  keys.push_back(std::move(name));

  keys.push_back(String("provider.model", "MEND_MODEL", "model",
                        "model name (required for openai and anthropic)"));
  ConfigKeySpec url = String("provider.base_url", "MEND_BASE_URL", "base-url",
                             "API base URL; empty for the provider's public endpoint");
  url.sensitivity = Sensitivity::kUrl;
  keys.push_back(std::move(url));

  ConfigKeySpec key = String("provider.api_key", "MEND_API_KEY", "", "API key (secret)");
  key.sensitivity = Sensitivity::kSecret;
  key.env_fallbacks = {{"provider.name", "openai", "OPENAI_API_KEY"},
                       {"provider.name", "anthropic", "ANTHROPIC_API_KEY"}};
  keys.push_back(std::move(key));
  // The keys of the other providers, for runs that recorded one of them (docs/runs.md): a run is
  // never sent with provider.api_key to another provider than provider.name.
  for (const auto& [kind, variable] :
       {std::pair{"openai", "OPENAI_API_KEY"}, std::pair{"anthropic", "ANTHROPIC_API_KEY"}}) {
    ConfigKeySpec other = String(std::string("provider.") + kind + "_api_key", variable, "",
                                 std::string("API key for runs recorded with provider ") + kind +
                                     " while provider.name is another (secret)");
    other.sensitivity = Sensitivity::kSecret;
    keys.push_back(std::move(other));
  }

  keys.push_back(Duration("provider.connect_timeout", "10s", milliseconds(100), minutes(5),
                          "MEND_CONNECT_TIMEOUT", "connect-timeout",
                          "time allowed to open a connection"));
  keys.push_back(Duration("provider.timeout", "2m", seconds(1), hours(1), "MEND_TIMEOUT", "timeout",
                          "total time allowed for one model request"));
  keys.push_back(Int("provider.retries", 2, 0, 10, "MEND_PROVIDER_RETRIES",
                     "times a run asks the model again after a transient error, before it "
                     "fails and waits for recovery (docs/runs.md, \"Model errors\")"));
  keys.push_back(Duration("provider.retry_delay", "1s", milliseconds(10), minutes(1),
                          "MEND_PROVIDER_RETRY_DELAY", "",
                          "pause before a run's first retry; doubles for each further one"));
  keys.push_back(Duration("provider.retry_max_delay", "30s", milliseconds(10), minutes(10),
                          "MEND_PROVIDER_RETRY_MAX_DELAY", "",
                          "longest pause between a run's retries; a longer Retry-After leaves the "
                          "run to recovery"));
  keys.push_back(String("provider.prices_file", "MEND_PRICES_FILE", "prices-file",
                        "path of a JSON price table overriding the built-in prices "
                        "(docs/prices_format.md)"));
  keys.push_back(String("provider.script_file", "MEND_SCRIPT_FILE", "script-file",
                        "path of the JSON script of responses for the scripted provider"));
}

// The reflexion keys mirror the seed's CHATCLI_QUALITY_REFLEXION_* variables
// (docs/lesson_queue.md).
void AddReflexionKeys(std::vector<ConfigKeySpec>& keys) {
  const std::string e = "MEND_QUALITY_REFLEXION_";
  keys.push_back(Bool("reflexion.enabled", true, e + "ENABLED", "master switch of reflexion"));
  keys.push_back(Bool("reflexion.on_error", true, e + "ON_ERROR", "reflect on errors"));
  keys.push_back(Bool("reflexion.on_hallucination", true, e + "ON_HALLUCINATION",
                      "reflect on verified_with_discrepancy"));
  keys.push_back(Bool("reflexion.on_low_quality", false, e + "ON_LOW_QUALITY",
                      "reflect on refine_low_quality"));
  keys.push_back(Bool("reflexion.persist", true, e + "PERSIST", "write lessons to memory"));
  keys.push_back(String("reflexion.model", e + "MODEL", "",
                        "model that writes lessons (empty: the provider's model)"));
}

// The signals reflexion consumes: chain-of-verification and critique-and-revise post-run hooks.
// Both cost model calls on every completed run, so they are off by default.
void AddQualityKeys(std::vector<ConfigKeySpec>& keys) {
  const std::string v = "MEND_QUALITY_VERIFY_";
  keys.push_back(Bool("quality.verify.enabled", false, v + "ENABLED",
                      "check answers with verification questions (flags discrepancies)"));
  keys.push_back(Int("quality.verify.max_questions", 3, 1, 10, v + "MAX_QUESTIONS",
                     "verification questions per answer"));
  keys.push_back(Bool("quality.verify.replace_answer", false, v + "REPLACE_ANSWER",
                      "replace an answer that failed verification with the verified one"));
  const std::string r = "MEND_QUALITY_REFINE_";
  keys.push_back(Bool("quality.refine.enabled", false, r + "ENABLED",
                      "critique every answer and revise a low-scored one"));
  keys.push_back(Int("quality.refine.threshold", 6, 1, 10, r + "THRESHOLD",
                     "a critique score (1-10) below this flags low quality"));
  keys.push_back(Bool("quality.refine.replace_answer", true, r + "REPLACE_ANSWER",
                      "replace a low-scored answer with its revision"));
}

void AddReflexionQueueKeys(std::vector<ConfigKeySpec>& keys) {
  const std::string q = "MEND_QUALITY_REFLEXION_QUEUE_";
  keys.push_back(Bool("reflexion.queue.enabled", true, q + "ENABLED", "durable lesson queue"));
  ConfigKeySpec backend = String("reflexion.queue.backend", q + "BACKEND", "",
                                 "where the durable lesson queue keeps its jobs: wal (files under "
                                 "base_dir) or postgres (the database of store.url)");
  backend.type = ConfigType::kEnum;
  backend.choices = {"wal", "postgres"};
  backend.default_value = "wal";
  keys.push_back(std::move(backend));
  keys.push_back(Int("reflexion.queue.workers", 2, 1, 64, q + "WORKERS", "lesson workers"));
  keys.push_back(
      Int("reflexion.queue.capacity", 1000, 1, 1'000'000, q + "CAPACITY", "in-memory queue depth"));
  keys.push_back(Bool("reflexion.queue.drop_oldest", false, q + "DROP_OLDEST",
                      "overflow policy: drop the oldest instead of blocking"));
  keys.push_back(Bool("reflexion.queue.chatcli_safe", false, q + "CHATCLI_SAFE",
                      "cut lesson records to what chatcli's reader takes whole (4096 bytes)"));
  keys.push_back(Duration("reflexion.queue.block_timeout", "5s", milliseconds(0), minutes(10),
                          q + "BLOCK_TIMEOUT", "", "how long a full queue blocks an enqueue"));
  keys.push_back(Int("reflexion.queue.max_attempts", 5, 1, 100, q + "MAX_ATTEMPTS",
                     "attempts per job before the dead-letter queue"));
  keys.push_back(Duration("reflexion.queue.initial_delay", "1s", milliseconds(1), hours(1),
                          q + "INITIAL_DELAY", "", "first retry delay"));
  keys.push_back(Duration("reflexion.queue.max_delay", "5m", milliseconds(1), hours(24),
                          q + "MAX_DELAY", "", "cap of the retry delay"));
  ConfigKeySpec jitter =
      String("reflexion.queue.jitter", q + "JITTER", "", "fractional jitter of the retry delay");
  jitter.type = ConfigType::kDouble;
  jitter.default_value = "0.2";
  jitter.double_max = 0.5;
  keys.push_back(std::move(jitter));
  keys.push_back(Duration("reflexion.queue.job_timeout", "2m", seconds(1), hours(1),
                          q + "JOB_TIMEOUT", "", "time allowed for one lesson job"));
  keys.push_back(Duration("reflexion.queue.claim_margin", "30s", milliseconds(0), hours(1),
                          q + "CLAIM_MARGIN", "",
                          "PostgreSQL queue: how long a claim outlives job_timeout before another "
                          "worker may take the job"));
  ConfigKeySpec claim_commit =
      String("reflexion.queue.claim_commit", q + "CLAIM_COMMIT", "",
             "PostgreSQL queue: whether claims and completions wait for the disk (sync) or not "
             "(async: faster; a server crash may run a job again)");
  claim_commit.type = ConfigType::kEnum;
  claim_commit.choices = {"async", "sync"};
  claim_commit.default_value = "async";
  keys.push_back(std::move(claim_commit));
  keys.push_back(Duration("reflexion.queue.drain_timeout", "30s", milliseconds(0), minutes(10),
                          q + "DRAIN_TIMEOUT", "",
                          "how long exit waits for lesson jobs in flight"));
  keys.push_back(Duration("reflexion.queue.stale_after", "168h", minutes(1), hours(24 * 365),
                          q + "STALE_AFTER", "", "pending jobs older than this are discarded"));
  ConfigKeySpec dir = String("reflexion.queue.base_dir", q + "BASE_DIR", "",
                             "directory of the lesson WAL and dead-letter queue");
  dir.default_value = home::kDefaultLessonQueueDir;
  keys.push_back(std::move(dir));
}

// Long-term memory (docs/memory.md): what runs receive and where embeddings come from.
void AddHealKeys(std::vector<ConfigKeySpec>& keys) {
  keys.push_back(Bool("heal.progress_guard", true, "MEND_HEAL_PROGRESS_GUARD",
                      "hint, deny, then stop a tool that keeps failing the same way"));
  keys.push_back(Int("heal.progress.hint_after", 2, 1, 100, "MEND_HEAL_PROGRESS_HINT_AFTER",
                     "the same failure this many times in a row gets the progress hint, in "
                     "runs and in `mend proxy`'s conversations"));
  keys.push_back(Int("heal.max_denials", 3, 1, 100, "MEND_HEAL_MAX_DENIALS",
                     "denied repeats before the run stops with MEND_RUN_NO_PROGRESS"));
  ConfigKeySpec shadow =
      Bool("heal.shadow", false, "MEND_HEAL_SHADOW",
           "shadow mode: only the tools of the agent's [shadow] read_only list run; the others "
           "return a simulated result");
  shadow.flag = "shadow";
  keys.push_back(std::move(shadow));
}

void AddRecoverKeys(std::vector<ConfigKeySpec>& keys) {
  keys.push_back(Duration("recover.interval", "30s", milliseconds(100), hours(24),
                          "MEND_RECOVER_INTERVAL", "interval", "time between recovery passes"));
  ConfigKeySpec attempts = Int("recover.max_attempts", 10, 1, 1000, "MEND_RECOVER_MAX_ATTEMPTS",
                               "consecutive failures before a run is quarantined");
  attempts.flag = "max-attempts";
  keys.push_back(std::move(attempts));
  ConfigKeySpec diagnosis =
      Bool("recover.retry_with_diagnosis", false, "MEND_RECOVER_RETRY_WITH_DIAGNOSIS",
           "before quarantining, try once more as a fork <id>.heal told why it failed");
  diagnosis.flag = "retry-with-diagnosis";
  keys.push_back(std::move(diagnosis));
  ConfigKeySpec per_pass =
      Int("recover.max_runs_per_pass", 1000, 1, 100000, "MEND_RECOVER_MAX_RUNS_PER_PASS",
          "runs one recovery pass reads and handles at most; the next pass goes on from there");
  per_pass.flag = "max-runs-per-pass";
  keys.push_back(std::move(per_pass));
}

void AddImproveKeys(std::vector<ConfigKeySpec>& keys) {
  keys.push_back(String("improve.editor_model", "MEND_IMPROVE_EDITOR_MODEL", "editor-model",
                        "model that proposes instruction edits; empty = the agent's model"));
  // The canary of an accepted proposal (docs/improve.md, "Canary").
  ConfigKeySpec share = String("improve.canary.share", "MEND_IMPROVE_CANARY_SHARE", "",
                               "percent of new runs an auto-mode proposal is canaried on before "
                               "it is promoted; 0 = auto mode applies it to every run at once");
  share.type = ConfigType::kDouble;
  share.default_value = "0";
  share.double_max = 100;
  keys.push_back(std::move(share));
  keys.push_back(Int("improve.canary.min_runs", 20, 1, 100000, "MEND_IMPROVE_CANARY_MIN_RUNS",
                     "finished runs each arm of a canary needs before any decision"));
  keys.push_back(Int("improve.canary.max_runs", 200, 1, 1000000, "MEND_IMPROVE_CANARY_MAX_RUNS",
                     "finished runs per arm after which an undecided canary is rolled back as "
                     "unproven"));
  ConfigKeySpec confidence =
      String("improve.canary.confidence", "MEND_IMPROVE_CANARY_CONFIDENCE", "",
             "posterior probability a canary's promotion or rollback needs, in (0.5, 1)");
  confidence.type = ConfigType::kDouble;
  confidence.default_value = "0.95";
  confidence.double_min = 0.501;
  confidence.double_max = 0.999999;
  keys.push_back(std::move(confidence));
  ConfigKeySpec cost =
      String("improve.canary.max_cost_increase", "MEND_IMPROVE_CANARY_MAX_COST_INCREASE", "",
             "a canaried proposal whose cost per successful run exceeds the baseline's by more "
             "than this fraction is rolled back (improve's cost gate)");
  cost.type = ConfigType::kDouble;
  cost.default_value = "0.5";
  cost.double_max = 100;
  keys.push_back(std::move(cost));
}

// The connection limits of a listening daemon (`serve`, `proxy`; docs/security.md, "Hostile
// networks").
void AddListenerKeys(std::vector<ConfigKeySpec>& keys, const std::string& daemon,
                     const std::string& env, int64_t max_connections, const char* idle_timeout,
                     const char* io_timeout) {
  keys.push_back(Int(daemon + ".max_connections", max_connections, 16, 100000,
                     env + "_MAX_CONNECTIONS",
                     "client connections open at once (a thread each); at the cap a new "
                     "connection closes the one that has waited longest without a request in "
                     "progress"));
  keys.push_back(Int(daemon + ".max_header_bytes", 64 << 10, 1024, 1 << 20,
                     env + "_MAX_HEADER_BYTES",
                     "a request line and headers larger than this are refused (431)"));
  keys.push_back(Duration(daemon + ".header_timeout", "10s", milliseconds(1), minutes(10),
                          env + "_HEADER_TIMEOUT", "",
                          "a request head (and the TLS handshake of a connection's first) must "
                          "arrive whole within this, or 408 and the connection is closed"));
  keys.push_back(Duration(daemon + ".idle_timeout", idle_timeout, milliseconds(1), hours(1),
                          env + "_IDLE_TIMEOUT", "",
                          "how long an open connection may wait for its next request"));
  keys.push_back(Duration(daemon + ".io_timeout", io_timeout, milliseconds(1), hours(1),
                          env + "_IO_TIMEOUT", "",
                          "how long one read of a request body or one write of an answer may "
                          "wait for the client"));
}

void AddServeKeys(std::vector<ConfigKeySpec>& keys) {
  ConfigKeySpec listen =
      String("serve.listen", "MEND_SERVE_LISTEN", "listen",
             "address and port `mend serve` listens on (host:port, [v6]:port or :port); not "
             "loopback needs serve.token");
  listen.default_value = "127.0.0.1:7070";
  keys.push_back(std::move(listen));
  ConfigKeySpec token = String("serve.token", "MEND_SERVE_TOKEN", "",
                               "bearer token every request to `mend serve` must carry (secret); "
                               "required when serve.listen is not loopback");
  token.sensitivity = Sensitivity::kSecret;
  keys.push_back(std::move(token));
  keys.push_back(String("serve.agents_dir", "MEND_SERVE_AGENTS_DIR", "agents-dir",
                        "folder whose subfolders are the agents the API may start; empty = the "
                        "API starts no new runs"));
  keys.push_back(Int("serve.max_body_bytes", 1 << 20, 1024, 1 << 30, "MEND_SERVE_MAX_BODY_BYTES",
                     "largest request body accepted, in bytes (larger: 413)"));
  keys.push_back(Int("serve.threads", 64, 2, 1024, "MEND_SERVE_THREADS",
                     "requests handled at once; a request takes its turn once its head has "
                     "arrived, so slow or idle connections hold none"));
  AddListenerKeys(keys, "serve", "MEND_SERVE", 1024, "5s", "30s");
  keys.push_back(Duration("serve.drain_timeout", "30s", milliseconds(0), minutes(10),
                          "MEND_SERVE_DRAIN_TIMEOUT", "",
                          "on SIGTERM, how long runs in flight may take to reach a checkpoint"));
  keys.push_back(String("serve.tls_cert", "MEND_SERVE_TLS_CERT", "tls-cert",
                        "PEM certificate (chain) file: `mend serve` speaks HTTPS; with "
                        "serve.tls_key"));
  keys.push_back(String("serve.tls_key", "MEND_SERVE_TLS_KEY", "tls-key",
                        "PEM private key file of serve.tls_cert"));
}

// `mend proxy` (docs/proxy.md).
void AddProxyKeys(std::vector<ConfigKeySpec>& keys) {
  ConfigKeySpec listen =
      String("proxy.listen", "MEND_PROXY_LISTEN", "listen",
             "address and port `mend proxy` listens on (host:port, [v6]:port or :port); not "
             "loopback needs proxy.token or proxy.tokens");
  listen.default_value = "127.0.0.1:7071";
  keys.push_back(std::move(listen));
  ConfigKeySpec upstream =
      String("proxy.upstream", "MEND_PROXY_UPSTREAM", "upstream",
             "base URL of the upstream API as its SDK takes it (e.g. ending in /v1); empty = "
             "provider.base_url, or the provider's public endpoint; when set, `mend serve` "
             "mounts the proxy too");
  upstream.sensitivity = Sensitivity::kUrl;
  keys.push_back(std::move(upstream));
  ConfigKeySpec kind = String("proxy.upstream_kind", "MEND_PROXY_UPSTREAM_KIND", "upstream-kind",
                              "API of the upstream: openai or anthropic; empty = provider.name");
  keys.push_back(std::move(kind));
  ConfigKeySpec key = String("proxy.upstream_api_key", "MEND_PROXY_UPSTREAM_API_KEY", "",
                             "API key sent upstream (secret); empty = provider.api_key");
  key.sensitivity = Sensitivity::kSecret;
  keys.push_back(std::move(key));
  keys.push_back(Bool("proxy.forward_client_key", false, "MEND_PROXY_FORWARD_CLIENT_KEY",
                      "send the client's own Authorization / x-api-key upstream"));
  ConfigKeySpec token = String("proxy.token", "MEND_PROXY_TOKEN", "",
                               "bearer token every proxy client must present (secret); required "
                               "when proxy.listen is not loopback, unless proxy.tokens is set");
  token.sensitivity = Sensitivity::kSecret;
  keys.push_back(std::move(token));
  ConfigKeySpec tokens =
      String("proxy.tokens", "MEND_PROXY_TOKENS", "",
             "client tokens, each TOKEN or TOKEN=WORKSPACE; each token's conversations are their "
             "own memory scope (secret)");
  tokens.sensitivity = Sensitivity::kSecret;
  tokens.list = true;
  keys.push_back(std::move(tokens));
  keys.push_back(Int("proxy.max_body", 8 << 20, 1024, 1 << 30, "MEND_PROXY_MAX_BODY",
                     "largest request body accepted, in bytes (larger: 413)"));
  keys.push_back(Duration("proxy.lesson_after", "10m", seconds(1), hours(24 * 7),
                          "MEND_PROXY_LESSON_AFTER", "",
                          "a tool failure nothing resolved becomes a lesson job after this long"));
  keys.push_back(Int("proxy.stop_after", 0, 0, 1000, "MEND_PROXY_STOP_AFTER",
                     "answer 'no progress' once the same failing call was seen this many times "
                     "(0 = off)"));
  ConfigKeySpec patterns =
      String("proxy.failure_patterns", "MEND_PROXY_FAILURE_PATTERNS", "",
             "RE2 patterns: a tool result matching one is a failure (besides the built-in rules)");
  patterns.list = true;
  keys.push_back(std::move(patterns));
  keys.push_back(Duration("proxy.conversation_ttl", "24h", minutes(1), hours(24 * 365),
                          "MEND_PROXY_CONVERSATION_TTL", "",
                          "a conversation's memory section and state are kept this long after "
                          "its last request"));
  keys.push_back(Int("proxy.max_attempts", 3, 1, 20, "MEND_PROXY_MAX_ATTEMPTS",
                     "attempts per request when the upstream fails transiently (before the "
                     "first byte reached the client)"));
  AddListenerKeys(keys, "proxy", "MEND_PROXY", 4096, "30s", "5m");
  keys.push_back(String("proxy.tls_cert", "MEND_PROXY_TLS_CERT", "tls-cert",
                        "PEM certificate (chain) file: `mend proxy` speaks HTTPS; with "
                        "proxy.tls_key"));
  keys.push_back(String("proxy.tls_key", "MEND_PROXY_TLS_KEY", "tls-key",
                        "PEM private key file of proxy.tls_cert"));
}

void AddMemoryKeys(std::vector<ConfigKeySpec>& keys) {
  keys.push_back(
      Bool("memory.enabled", true, "MEND_MEMORY_ENABLED", "inject long-term memory into runs"));
  keys.push_back(Int("memory.max_facts", 5, 0, 50, "MEND_MEMORY_MAX_FACTS",
                     "facts injected into a run at most"));
  keys.push_back(Int("memory.budget_chars", 4000, 0, 100'000, "MEND_MEMORY_BUDGET_CHARS",
                     "size of the long-term memory prompt section, in characters"));
  keys.push_back(Bool("memory.hyde", false, "MEND_MEMORY_HYDE",
                      "ask the model for a hypothetical lesson before retrieval"));
  keys.push_back(Bool("memory.local", false, "MEND_MEMORY_LOCAL",
                      "keep long-term memory in mend.db even when store.url is PostgreSQL"));

  ConfigKeySpec url =
      String("memory.embeddings.url", "MEND_EMBEDDINGS_URL", "",
             "OpenAI-compatible embeddings endpoint base URL; empty = lexical retrieval only");
  url.sensitivity = Sensitivity::kUrl;
  keys.push_back(std::move(url));

  ConfigKeySpec model =
      String("memory.embeddings.model", "MEND_EMBEDDINGS_MODEL", "", "embedding model name");
  model.default_value = "text-embedding-3-small";
  keys.push_back(std::move(model));

  ConfigKeySpec key = String("memory.embeddings.api_key", "MEND_EMBEDDINGS_API_KEY", "",
                             "embeddings API key (secret); empty = provider.api_key");
  key.sensitivity = Sensitivity::kSecret;
  keys.push_back(std::move(key));
  keys.push_back(Int("memory.embeddings.batch", 128, 1, 2048, "MEND_EMBEDDINGS_BATCH",
                     "texts per embeddings request (OpenAI's endpoint takes up to 2048)"));
  keys.push_back(Int("memory.embeddings.concurrency", 4, 1, 32, "MEND_EMBEDDINGS_CONCURRENCY",
                     "embeddings requests in flight at a time"));
  keys.push_back(Int("memory.embeddings.max_attempts", 4, 1, 20, "MEND_EMBEDDINGS_MAX_ATTEMPTS",
                     "attempts per embeddings request when its error is transient"));
  keys.push_back(Duration("memory.embeddings.retry_delay", "1s", milliseconds(0), minutes(1),
                          "MEND_EMBEDDINGS_RETRY_DELAY", "",
                          "pause after a failed embeddings request; doubles, at most 30s"));
}

void AddObserveKeys(std::vector<ConfigKeySpec>& keys) {
  keys.push_back(Bool("observe.enabled", true, "MEND_OBSERVE_ENABLED",
                      "record every run as a trace in observe.db (docs/observe.md)"));
  keys.push_back(
      Bool("observe.capture_content", false, "MEND_OBSERVE_CAPTURE_CONTENT",
           "record message and tool content on spans (secrets are redacted either way)"));
  keys.push_back(
      Int("observe.buffer_spans", 8192, 16, 1'000'000, "MEND_OBSERVE_BUFFER_SPANS",
          "finished spans waiting for observe.db at most; more are dropped and counted"));
  ConfigKeySpec retention = Duration(
      "observe.retention", "0s", milliseconds(0), hours(24 * 3650), "MEND_OBSERVE_RETENTION", "",
      "long-lived processes prune what is older than this on their own; 0s = never");
  keys.push_back(std::move(retention));
  keys.push_back(Int("observe.events.max_bytes", std::int64_t{64} << 20, 4096,
                     std::int64_t{1} << 40, "MEND_OBSERVE_EVENTS_MAX_BYTES",
                     "events.jsonl larger than this at start-up is renamed to "
                     "events-<UTC time>.jsonl and a new one begun (docs/events_format.md)"));

  ConfigKeySpec endpoint =
      String("observe.otlp.endpoint", "MEND_OTLP_ENDPOINT", "",
             "OTLP/HTTP traces endpoint (e.g. http://127.0.0.1:4318/v1/traces); empty = no export");
  endpoint.sensitivity = Sensitivity::kUrl;
  keys.push_back(std::move(endpoint));
  ConfigKeySpec headers = String("observe.otlp.headers", "MEND_OTLP_HEADERS", "",
                                 "extra request headers, \"name=value,name2=value2\" (secret)");
  headers.sensitivity = Sensitivity::kSecret;
  keys.push_back(std::move(headers));
  ConfigKeySpec protocol =
      String("observe.otlp.protocol", "MEND_OTLP_PROTOCOL", "", "OTLP/HTTP encoding");
  protocol.type = ConfigType::kEnum;
  protocol.choices = {"http/protobuf", "http/json"};
  protocol.default_value = "http/protobuf";
  keys.push_back(std::move(protocol));
  keys.push_back(Duration("observe.otlp.timeout", "10s", milliseconds(1), minutes(10),
                          "MEND_OTLP_TIMEOUT", "", "time limit of one export request"));
  keys.push_back(Int("observe.otlp.queue_spans", 2048, 16, 1'000'000, "MEND_OTLP_QUEUE_SPANS",
                     "spans waiting in memory for export at most; more wait in observe.db"));
  keys.push_back(Duration("observe.otlp.retention", "24h", minutes(1), hours(87600),
                          "MEND_OTLP_RETENTION", "",
                          "spans not exported yet are sent later from observe.db until they are "
                          "this old; then they are dropped and counted"));
}

std::vector<ConfigKeySpec> BuildSchema() {
  std::vector<ConfigKeySpec> keys;
  AddGeneralKeys(keys);
  AddProviderKeys(keys);
  AddReflexionKeys(keys);
  AddReflexionQueueKeys(keys);
  AddQualityKeys(keys);
  AddMemoryKeys(keys);
  AddHealKeys(keys);
  AddRecoverKeys(keys);
  AddImproveKeys(keys);
  AddServeKeys(keys);
  AddProxyKeys(keys);
  AddObserveKeys(keys);
  return keys;
}

}  // namespace

const std::vector<ConfigKeySpec>& DefaultConfigSchema() {
  static const std::vector<ConfigKeySpec>* const kSchema =
      new std::vector<ConfigKeySpec>(BuildSchema());
  return *kSchema;
}

}  // namespace mend
