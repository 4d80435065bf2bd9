// `mend serve`'s HTTP server (server.h): routing, limits, the request checks and the health
// endpoints; the route groups live in api_<group>.cc.
#include "mend/server/server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <thread>
#include <utility>

#include "mend/app/proxy.h"
#include "mend/app/runtime.h"
#include "mend/net/http_server.h"
#include "server/api.h"
#include "server/improve_gauges.h"
#include "server/otlp_receiver.h"
#include "server/security.h"
#include "server/serve_context.h"

namespace mend::server {

bool IsLoopbackHost(const std::string& host) {
  std::string h = host;
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (h == "localhost" || h == "::1") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  return false;
}

Status ParseListen(const std::string& listen, ServerOptions& options) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgumentError("listen address \"" + listen + "\" is not host:port");
  }
  std::string host = listen.substr(0, colon);
  const std::string port_text = listen.substr(colon + 1);
  int port = -1;
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    return InvalidArgumentError("listen address \"" + listen + "\": port must be 0-65535");
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  options.host = host.empty() ? "127.0.0.1" : host;
  options.port = port;
  return OkStatus();
}

namespace {

// How stale the improve gauges of /metrics may be: counting reads every attempt's audit folder.
constexpr Duration kImproveGaugesRefresh = std::chrono::seconds(30);
// cpp-httplib listens with a backlog of 5; under 50 clients, connections beyond it wait for SYN
// retransmits (1 s, 3 s, ...). Linux lets listen() be called again to raise it.
constexpr int kListenBacklog = 1024;

class HttpServer final : public Server {
 public:
  HttpServer(app::Runtime& runtime, ServerOptions options, std::unique_ptr<httplib::Server> http)
      : context_(runtime, std::move(options)), http_(std::move(http)) {}
  ~HttpServer() override { Stop(); }

  Status Start() override;
  int port() const override { return port_; }
  int WaitForRuns(Duration timeout) override {
    Clock& clock = *context_.runtime().env.clock;
    const Time deadline = clock.Now() + timeout;
    const int runs = context_.runs().WaitIdle(clock, timeout);
    const Duration left = std::max(Duration::zero(), deadline - clock.Now());
    return runs + context_.improve().WaitIdle(clock, left);
  }
  int Stop() override;

 private:
  void Configure();
  void AddHealthRoutes();

  ServeContext context_;
  std::unique_ptr<app::Proxy> proxy_;  // with proxy.upstream set
  std::unique_ptr<ImproveGauges> improve_gauges_;
  std::unique_ptr<httplib::Server> http_;  // an httplib::SSLServer with TLS
  std::thread listener_;
  std::atomic<bool> listener_done_{false};
  std::atomic<int> listen_fd_{-1};  // the listening socket, once bound
  int port_ = 0;
  bool stopped_ = false;
  int still_running_ = 0;
};

void HttpServer::Configure() {
  const ServerOptions& options = context_.options();
  // CheckBody refuses a body over its path's limit before it is read; this is the backstop.
  size_t payload_limit = std::max(static_cast<size_t>(options.max_body_bytes), kMaxOtlpBodyBytes);
  if (proxy_ != nullptr)
    payload_limit = std::max(payload_limit, proxy_->service->options().max_body);
  http_->set_payload_max_length(payload_limit);
  // Answers go out in more than one write (headers, body); with Nagle's algorithm the second
  // waits for the client's delayed ACK, which adds ~40 ms to every keep-alive request.
  http_->set_tcp_nodelay(true);
  // httplib's default is SO_REUSEPORT, which lets a second server bind the same port and take
  // half its connections; SO_REUSEADDR alone still allows a quick restart.
  http_->set_socket_options([this](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_fd_.store(sock);
  });
  http_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    const ProxyRoutes proxy = proxy_ != nullptr ? ProxyRoutes::kMounted : ProxyRoutes::kAbsent;
    // An EventSource cannot send the token: a ticket bought with it stands in, once.
    ServerOptions ticketed;
    const ServerOptions* checked = &context_.options();
    if (RedeemsEventTicket(req, context_.events())) {
      ticketed = *checked;
      ticketed.token.clear();
      checked = &ticketed;
    }
    Status allowed = CheckRequest(req, *checked, proxy);
    if (allowed.ok()) {
      allowed = CheckBody(req, context_.options(), proxy);
      if (allowed.ok()) return httplib::Server::HandlerResponse::Unhandled;
      // The body is never read: close the connection rather than read past it.
      res.set_header("Connection", "close");
      const int status = allowed.code() == StatusCode::kResourceExhausted    ? 413
                         : allowed.code() == StatusCode::kFailedPrecondition ? 411
                                                                             : 400;
      WriteJson(res, ErrorBody(allowed), status);
      return httplib::Server::HandlerResponse::Handled;
    }
    if (allowed.code() == StatusCode::kUnauthenticated) {
      res.set_header("WWW-Authenticate", "Bearer");
    }
    WriteError(res, allowed);
    return httplib::Server::HandlerResponse::Handled;
  });
  // Errors httplib produces itself (no route, body too large) get the API's error body too.
  http_->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 404) {
      WriteError(res, NotFoundError("no such endpoint: " + req.method + " " + req.path));
    } else if (res.status == 413) {
      WriteJson(res, ErrorBody(ResourceExhaustedError("the request body is too large")), 413);
    } else {
      WriteJson(res, ErrorBody(InvalidArgumentError("bad request")), res.status);
    }
  });
  http_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        WriteError(res, InternalError("the request failed unexpectedly"));
      });
  improve_gauges_ = std::make_unique<ImproveGauges>(context_.runtime(), kImproveGaugesRefresh);
  AddHealthRoutes();
  ApiRoutes routes(*http_, static_cast<size_t>(options.max_body_bytes));
  AddRunRoutes(routes, context_);
  AddMemoryRoutes(routes, context_);
  AddLessonRoutes(routes, context_);
  AddTraceRoutes(routes, context_);
  AddImproveRoutes(routes, context_);
  AddMetricsRoutes(routes, context_);
  AddUiRoutes(routes, context_);
  AddEventRoutes(routes, context_);
  AddSeriesRoutes(routes, context_);
  AddAgentRoutes(routes, context_);
  AddSessionRoutes(routes, context_);
  // Last, so that serve's own /v1/traces comes first.
  if (proxy_ != nullptr) proxy_->service->Mount(*http_);
}

void HttpServer::AddHealthRoutes() {
  http_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    WriteJson(res, {{"status", "ok"}});
  });
  http_->Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    app::Runtime& runtime = context_.runtime();
    nlohmann::json checks = nlohmann::json::object();
    bool ready = true;
    auto check = [&](const char* name, const Status& status) {
      checks[name] = status.ok() ? "ok" : std::string(status.message());
      ready = ready && status.ok();
    };
    store::PendingQuery probe;
    probe.limit = 1;
    check("store", runtime.store->ListPending(probe).status());
    check("memory", runtime.facts->Count().status());
    check("lessons", runtime.lessons.enqueuer != nullptr
                         ? OkStatus()
                         : UnavailableError("the lesson queue is not open"));
    if (context_.runs().stopping().load()) check("server", UnavailableError("shutting down"));
    WriteJson(res, {{"status", ready ? "ready" : "unavailable"}, {"checks", checks}},
              ready ? 200 : 503);
  });
}

Status HttpServer::Start() {
  const ServerOptions& options = context_.options();
  if (app::ServeMountsProxy(context_.runtime())) {
    MEND_ASSIGN_OR_RETURN(proxy_, app::OpenProxy(context_.runtime()));
    // serve.token does not guard the proxy's routes (their Authorization is the client's API
    // key), so another address needs the proxy's own token as `mend proxy` does.
    if (!IsLoopbackHost(options.host) && proxy_->service->options().tokens.empty()) {
      return InvalidArgumentError("listening on " + options.host +
                                  " (not loopback) with proxy.upstream set requires proxy.token "
                                  "or proxy.tokens (MEND_PROXY_TOKEN)");
    }
  }
  Configure();
  if (options.port == 0) {
    port_ = http_->bind_to_any_port(options.host);
    if (port_ <= 0) return UnavailableError("cannot listen on " + options.host);
  } else {
    if (!http_->bind_to_port(options.host, options.port)) {
      return UnavailableError("cannot listen on " + options.host + ":" +
                              std::to_string(options.port) + " (in use, or not this host's)");
    }
    port_ = options.port;
  }
  if (listen_fd_.load() >= 0) ::listen(listen_fd_.load(), kListenBacklog);
  listener_ = std::thread([this] {
    http_->listen_after_bind();
    listener_done_.store(true);
  });
  // httplib's stop() only acts on a server whose accept loop already runs; wait for it so a Stop
  // right after Start cannot be lost (the loop starts within microseconds).
  while (!http_->is_running() && !listener_done_.load())
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  if (proxy_ != nullptr) proxy_->service->StartSweeper();
  return OkStatus();
}

int HttpServer::Stop() {
  if (stopped_) return still_running_;
  stopped_ = true;
  // First, so that an attempt is told before the server stops answering (a client that sees it
  // gone may count on it).
  context_.improve().RequestStop();
  // Open event streams would hold their connections, and so the server's stop, until their
  // clients left.
  context_.events().Shutdown();
  if (listener_.joinable()) {
    http_->stop();
    listener_.join();
  }
  if (proxy_ != nullptr) proxy_->service->StopSweeper();
  app::Runtime& runtime = context_.runtime();
  Clock& clock = *runtime.env.clock;
  // The improve attempt was told first; its runs stop at their checkpoints as the API's do.
  const Time deadline = clock.Now() + context_.options().drain_timeout;
  still_running_ = context_.runs().Drain(clock, context_.options().drain_timeout);
  const Duration left = std::max(Duration::zero(), deadline - clock.Now());
  still_running_ += context_.improve().Drain(clock, left);
  return still_running_;
}

}  // namespace

Result<std::unique_ptr<Server>> Server::Create(app::Runtime& runtime, ServerOptions options) {
  if (options.port < 0 || options.port > 65535) {
    return InvalidArgumentError("port must be 0-65535");
  }
  if (!IsLoopbackHost(options.host) && options.token.empty()) {
    return InvalidArgumentError("listening on " + options.host +
                                " (not loopback) requires serve.token (MEND_SERVE_TOKEN)");
  }
  if (options.threads < 2) return InvalidArgumentError("serve.threads must be at least 2");
  if (options.max_body_bytes < 1) return InvalidArgumentError("serve.max_body_bytes must be > 0");
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return InvalidArgumentError(
        "serve.tls_cert and serve.tls_key go together: HTTPS needs the certificate and its key");
  }
  MEND_ASSIGN_OR_RETURN(net::ConnectionLimits limits, ConnectionLimitsOf(options));
  Result<std::unique_ptr<httplib::Server>> http = net::NewHttpServer(limits);
  if (!http.ok()) {
    return InvalidArgumentError("serve.tls_cert " + options.tls_cert + " and serve.tls_key " +
                                options.tls_key +
                                " could not be loaded: they must be readable PEM files of a "
                                "certificate and of the private key that matches it");
  }
  return std::unique_ptr<Server>(new HttpServer(runtime, std::move(options), *std::move(http)));
}

}  // namespace mend::server
