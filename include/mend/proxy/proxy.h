#pragma once

// `mend proxy` (docs/proxy.md): ProxyService, the routes of a proxy in front of an OpenAI- or
// Anthropic-compatible upstream that gives prompts long-term memory and learns lessons from failed
// conversations, with its options and dependencies, and ProxyListener, its own HTTP listener.
// Thread-safe.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/lessonq/durable_queue.h"
#include "mend/llm/prices.h"

namespace httplib {
class Server;
}

namespace mend::obs {
class MetricsRegistry;
class Tracer;
}  // namespace mend::obs

namespace mend::proxy {

/// The API the upstream speaks (docs/proxy.md).
enum class UpstreamKind { kOpenAi, kAnthropic };

/// "openai" / "anthropic"; kInvalidArgument for anything else.
Result<UpstreamKind> ParseUpstreamKind(std::string_view text);
/// "openai" or "anthropic".
std::string_view UpstreamKindName(UpstreamKind kind);

/// One bearer token a client may present, and the memory scope of its conversations: the facts
/// and lessons of `workspace` (and global ones) reach its prompts, and its lessons are stored in
/// `workspace`. Two tokens with different workspaces never see each other's lessons.
struct ClientToken {
  std::string token;      ///< the bearer token
  std::string workspace;  ///< its memory scope
};

/// Transient upstream errors (429, 5xx, connection failures, timeouts) are retried before the
/// first byte went to the client: at most `max_attempts` attempts in all, waiting
/// min(max_delay, base_delay * 2^(n-1)) after the n-th, or the upstream's Retry-After when it asks
/// for longer (but never more than max_delay).
struct RetryOptions {
  int max_attempts = 3;                                  ///< attempts in all
  Duration base_delay = std::chrono::milliseconds(250);  ///< the first pause
  Duration max_delay = std::chrono::seconds(8);          ///< the longest pause
};

/// How the proxy forwards, remembers and learns (the proxy.* keys, docs/proxy.md).
struct ProxyOptions {
  /// The upstream's base URL as its SDK takes it, e.g. "https://api.openai.com/v1": a request for
  /// /v1/chat/completions goes to `<upstream>/chat/completions`.
  std::string upstream;
  UpstreamKind upstream_kind = UpstreamKind::kOpenAi;  ///< the API the upstream speaks
  /// Sent upstream (Authorization: Bearer, or x-api-key for Anthropic) unless forward_client_key
  /// is set, in which case the client's own Authorization / x-api-key goes upstream.
  std::string upstream_api_key;
  bool forward_client_key = false;  ///< see upstream_api_key
  /// Bearer tokens a client must present (Authorization: Bearer or x-api-key). Empty: none is
  /// asked (loopback only; the command refuses other addresses without one).
  std::vector<ClientToken> tokens;
  /// The workspace of conversations that name none (X-Mend-Workspace) and present no token.
  std::string default_workspace;
  size_t max_body = 8u << 20;  ///< larger bodies: 413 before they are read
  bool memory = true;          ///< memory.enabled: add the long-term memory section
  /// A failure nothing resolved becomes a lesson job this long after it was first seen.
  Duration lesson_after = std::chrono::minutes(10);
  /// The same failing call seen this many times in one conversation adds the progress hint.
  int hint_after = 2;
  /// ... and this many times answers with the no-progress message instead (0: off).
  int stop_after = 0;
  /// Tool results matching one of these RE2 patterns are failures (besides the built-in rules).
  std::vector<std::string> failure_patterns;
  /// A conversation's state is forgotten this long after its last request.
  Duration conversation_ttl = std::chrono::hours(24);
  RetryOptions retry;  ///< retries of transient upstream errors
  ///@{
  /// The outage breaker (recovery's, docs/heal.md): opens after `outage_threshold` consecutive
  /// transient failures (after retries), probes after outage_interval, doubling up to
  /// outage_max_wait.
  int outage_threshold = 3;
  Duration outage_interval = std::chrono::seconds(30);
  Duration outage_max_wait = std::chrono::minutes(15);
  ///@}
  Duration connect_timeout = std::chrono::seconds(10);  ///< opening a connection upstream
  /// The longest silence of the upstream inside one response before it is abandoned.
  Duration upstream_idle_timeout = std::chrono::minutes(5);
};

/// Where the memory section comes from: app's RecallForTask and the section renderer, so the
/// proxy's prompts get what a run for the same task and workspace gets.
class MemorySource {
 public:
  virtual ~MemorySource() = default;
  /// The `## Long-term Memory` section for `task` in `workspace` ("" when nothing fits).
  virtual Result<std::string> SectionFor(const std::string& task, const std::string& workspace) = 0;
};

/// What the proxy borrows from the process; everything must outlive the service.
struct ProxyDeps {
  Clock* clock = nullptr;                      ///< required
  std::string database_path;                   ///< required: mend.db, the conversations table
  MemorySource* memory = nullptr;              ///< null: no memory section
  lessonq::LessonEnqueuer* lessons = nullptr;  ///< null: failures are not turned into lessons
  obs::Tracer* tracer = nullptr;               ///< null: no spans
  obs::MetricsRegistry* metrics = nullptr;     ///< null: no metrics
  const llm::PriceTable* prices = nullptr;     ///< null: spans carry no cost
  ///@{
  /// What the lesson jobs record as their provider (LessonRequest::provider/base_url/model).
  std::string lesson_provider;
  std::string lesson_base_url;
  std::string lesson_model;
  ///@}
};

/// The proxy's request handling (docs/proxy.md): the routes of `mend proxy`, mounted on its own
/// listener or on `mend serve`'s. Thread-safe: handlers run on many threads at once.
class ProxyService {
 public:
  /// kInvalidArgument for bad options (an upstream that is not http(s), a pattern that does not
  /// compile); errors of opening the conversations table.
  static Result<std::unique_ptr<ProxyService>> Create(ProxyOptions options, ProxyDeps deps);
  virtual ~ProxyService() = default;

  /// Registers the routes (/v1/chat/completions, /v1/messages, /v1/responses, /v1/models,
  /// /v1/embeddings, and the 404 of other /v1/ paths) on `server`.
  virtual void Mount(httplib::Server& server) = 0;

  /// Enqueues the lessons of failures that waited lesson_after without a resolution and forgets
  /// expired conversations. The service's own timer calls it; tests call it directly.
  virtual Status Sweep() = 0;
  /// Starts / stops the timer that calls Sweep about every minute.
  virtual void StartSweeper() = 0;
  /// See StartSweeper.
  virtual void StopSweeper() = 0;

  /// The options it runs with.
  virtual const ProxyOptions& options() const = 0;
};

/// `mend proxy`'s own listener: an HTTP server whose connections each get a thread, so that many
/// streams can stay open at once, serving one ProxyService.
/// Where ProxyListener listens.
struct ListenerOptions {
  std::string host = "127.0.0.1";  ///< the address to bind
  int port = 7071;                 ///< 0: an ephemeral port
  size_t max_connections = 4096;   ///< open connections at most
  /// The other connection limits (docs/security.md, "Hostile networks"): the largest request
  /// head, the time a head may take, an idle connection may wait, and one read or write may wait
  /// for the client.
  size_t max_header_bytes = 64 << 10;
  std::chrono::milliseconds header_timeout{10'000};  ///< see max_header_bytes
  std::chrono::milliseconds idle_timeout{30'000};    ///< see max_header_bytes
  std::chrono::milliseconds io_timeout{300'000};     ///< see max_header_bytes
  /// HTTPS: a PEM certificate (chain) file and the PEM file of its private key, both or neither.
  /// Empty: plain HTTP.
  std::string tls_cert;
  std::string tls_key;  ///< see tls_cert
};

/// The HTTP server of `mend proxy` (ListenerOptions).
class ProxyListener {
 public:
  /// Binds and starts serving; kUnavailable when the address cannot be bound, kInvalidArgument
  /// for one of tls_cert and tls_key without the other or files that do not hold a PEM certificate
  /// and its key. `service` must outlive the listener.
  static Result<std::unique_ptr<ProxyListener>> Start(ProxyService& service,
                                                      ListenerOptions options);
  virtual ~ProxyListener() = default;
  /// The bound port.
  virtual int port() const = 0;
  /// Stops accepting, closes open connections and waits for their threads. Idempotent.
  virtual void Stop() = 0;
};

}  // namespace mend::proxy
