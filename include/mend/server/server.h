#pragma once

// `mend serve`'s HTTP server (docs/serve.md, docs/http_api.md): ServerOptions with the listen
// address parser, and Server, which serves the JSON API, /metrics, the OTLP receiver and the web UI
// over a borrowed Runtime.

#include <cstdint>
#include <memory>
#include <string>

#include "mend/base/clock.h"
#include "mend/base/result.h"

namespace mend::app {
struct Runtime;
}  // namespace mend::app

namespace mend::server {

/// What `mend serve` is configured with (the serve.* keys, docs/configuration.md).
struct ServerOptions {
  std::string host = "127.0.0.1";  ///< the address to bind
  int port = 7070;                 ///< 0: any free port (tests); Server::port() tells which
  /// When not empty, every request but /healthz, /readyz and the web UI's static files must carry
  /// `Authorization: Bearer <token>`. Required for an address that is not loopback.
  std::string token;
  /// Folder whose subfolders are the agents POST /api/v1/runs may start runs of and
  /// POST /api/v1/improve may start improve attempts of. Empty: none.
  std::string agents_dir;
  int64_t max_body_bytes = 1 << 20;  ///< larger request bodies are refused
  int threads = 64;                  ///< requests handled at once (their heads read)
  /// The connection limits (docs/security.md, "Hostile networks"): open connections at most, the
  /// largest request head, the time a head may take, an idle connection may wait, and one read or
  /// write may wait for the client.
  int64_t max_connections = 1024;
  int64_t max_header_bytes = 64 << 10;                 ///< see max_connections
  Duration header_timeout = std::chrono::seconds(10);  ///< see max_connections
  Duration idle_timeout = std::chrono::seconds(5);     ///< see max_connections
  Duration io_timeout = std::chrono::seconds(30);      ///< see max_connections
  /// How long Stop() lets runs in flight take to reach a checkpoint.
  Duration drain_timeout = std::chrono::seconds(30);
  /// HTTPS: a PEM certificate (chain) file and the PEM file of its private key, both or neither.
  /// Empty: plain HTTP.
  std::string tls_cert;
  std::string tls_key;  ///< see tls_cert
};

/// Parses "host:port", "[v6]:port" or ":port" (loopback); kInvalidArgument otherwise.
Status ParseListen(const std::string& listen, ServerOptions& options);

/// Whether `host` is a loopback address or name (127.0.0.0/8, ::1, localhost).
bool IsLoopbackHost(const std::string& host);

/// The HTTP server of `mend serve` (docs/serve.md, docs/http_api.md): the JSON API under /api/v1,
/// /metrics, the OTLP receiver at /v1/traces, /healthz, /readyz and the embedded web UI, and,
/// with proxy.upstream set, `mend proxy`'s routes (docs/proxy.md). It
/// borrows the Runtime, which must outlive it. Start and Stop are called from one thread; request
/// handlers run on the server's own threads.
class Server {
 public:
  /// kInvalidArgument for options that are not allowed: a non-loopback host without a token, a
  /// bad port or limit, one of tls_cert and tls_key without the other, or files that do not hold
  /// a PEM certificate and its private key.
  static Result<std::unique_ptr<Server>> Create(app::Runtime& runtime, ServerOptions options);
  virtual ~Server() = default;

  /// Binds and starts serving on background threads. kUnavailable when the address cannot be
  /// bound (in use, not an address of this host).
  virtual Status Start() = 0;
  /// The bound port once Start returned OK.
  virtual int port() const = 0;
  /// Waits until no run is driven by this server (started, resumed, approved, denied or answered
  /// through the API) and no improve attempt started through it runs, or `timeout` passed on the
  /// runtime's clock, without stopping any. Returns how many still are. For tests and embedders
  /// that want a run's outcome; thread-safe.
  virtual int WaitForRuns(Duration timeout) = 0;
  /// Stops taking requests, asks the runs this server drives to stop at their next checkpoint and
  /// its improve attempt to stop (it is recorded as failed, CANCELLED), and waits for them up to
  /// drain_timeout. Returns how many were still in flight (runs resume from their last checkpoint
  /// later; an attempt still running is waited for when the server is destroyed). Idempotent.
  virtual int Stop() = 0;
};

}  // namespace mend::server
