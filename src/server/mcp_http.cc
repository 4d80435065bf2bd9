#include "mend/server/mcp_http.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>

#include "mend/base/json.h"
#include "mend/base/random.h"
#include "mend/mcp/jsonrpc.h"
#include "server/security.h"

namespace mend::server {
namespace {

constexpr char kEndpoint[] = "/mcp";
constexpr size_t kMaxSessions = 10'000;

void WriteRpcError(httplib::Response& res, int status, int64_t code, const std::string& message) {
  res.status = status;
  res.set_content(mcp::SerializeRpcMessage(mcp::RpcMessage::Error(nullptr, code, message)),
                  "application/json");
}

class McpHttpServerImpl final : public McpHttpServer {
 public:
  McpHttpServerImpl(mcp::McpServer& mcp, ServerOptions options,
                    std::unique_ptr<httplib::Server> http)
      : mcp_(mcp),
        options_(std::move(options)),
        owned_http_(std::move(http)),
        http_(*owned_http_) {}
  ~McpHttpServerImpl() override { Stop(); }

  Status Start() override {
    Configure();
    if (options_.port == 0) {
      port_ = http_.bind_to_any_port(options_.host);
      if (port_ <= 0) return UnavailableError("cannot listen on " + options_.host);
    } else {
      if (!http_.bind_to_port(options_.host, options_.port)) {
        return UnavailableError("cannot listen on " + options_.host + ":" +
                                std::to_string(options_.port) + " (in use, or not this host's)");
      }
      port_ = options_.port;
    }
    listener_ = std::thread([this] {
      http_.listen_after_bind();
      done_.store(true);
    });
    // stop() only acts on a running accept loop; it starts within microseconds.
    while (!http_.is_running() && !done_.load()) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return OkStatus();
  }

  int port() const override { return port_; }

  void Stop() override {
    if (!listener_.joinable()) return;
    http_.stop();
    listener_.join();
  }

 private:
  std::string NewSessionId() {
    char id[33];
    std::snprintf(id, sizeof(id), "%016llx%016llx",
                  static_cast<unsigned long long>(random_->Next64()),
                  static_cast<unsigned long long>(random_->Next64()));
    return id;
  }

  bool KnownSession(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    return sessions_.count(id) > 0;
  }

  void Post(const httplib::Request& req, httplib::Response& res) {
    const std::string type = req.get_header_value("Content-Type");
    if (type.rfind("application/json", 0) != 0) {
      WriteRpcError(res, 415, mcp::kInvalidRequest, "Content-Type must be application/json");
      return;
    }
    Result<mcp::RpcMessage> parsed = mcp::ParseRpcMessage(req.body);
    const bool initialize = parsed.ok() && parsed->method == "initialize";
    const std::string session = req.get_header_value("Mcp-Session-Id");
    if (!initialize) {
      if (session.empty()) {
        WriteRpcError(res, 400, mcp::kInvalidRequest, "Mcp-Session-Id is required");
        return;
      }
      if (!KnownSession(session)) {
        WriteRpcError(res, 404, mcp::kInvalidRequest, "no session " + session.substr(0, 64));
        return;
      }
    }
    std::optional<std::string> answer = mcp_.Handle(req.body);
    if (!answer.has_value()) {
      res.status = 202;
      return;
    }
    if (initialize) {
      const std::string id = NewSessionId();
      {
        std::lock_guard<std::mutex> lock(mu_);
        // A server that lives long forgets the oldest sessions first (ids are random, so this
        // forgets arbitrary ones; their clients get 404 and initialize again, as the spec says).
        if (sessions_.size() >= kMaxSessions) sessions_.erase(sessions_.begin());
        sessions_.insert(id);
      }
      res.set_header("Mcp-Session-Id", id);
    }
    res.status = 200;
    res.set_content(*answer, "application/json");
  }

  void Configure() {
    http_.set_payload_max_length(static_cast<size_t>(options_.max_body_bytes));
    http_.set_tcp_nodelay(true);
    http_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      Status allowed = CheckRequest(req, options_, ProxyRoutes::kAbsent);
      if (allowed.ok()) allowed = CheckBody(req, options_, ProxyRoutes::kAbsent);
      if (allowed.ok()) return httplib::Server::HandlerResponse::Unhandled;
      const int status = allowed.code() == StatusCode::kUnauthenticated     ? 401
                         : allowed.code() == StatusCode::kPermissionDenied  ? 403
                         : allowed.code() == StatusCode::kResourceExhausted ? 413
                                                                            : 400;
      if (status == 401) res.set_header("WWW-Authenticate", "Bearer");
      WriteRpcError(res, status, mcp::kInvalidRequest, std::string(allowed.message()));
      return httplib::Server::HandlerResponse::Handled;
    });
    http_.Post(kEndpoint,
               [this](const httplib::Request& req, httplib::Response& res) { Post(req, res); });
    // No stream of server-initiated messages: mend's server never sends one.
    http_.Get(kEndpoint, [](const httplib::Request&, httplib::Response& res) {
      res.status = 405;
      res.set_header("Allow", "POST, DELETE");
    });
    http_.Delete(kEndpoint, [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      res.status = sessions_.erase(req.get_header_value("Mcp-Session-Id")) > 0 ? 204 : 404;
    });
  }

  mcp::McpServer& mcp_;
  const ServerOptions options_;
  Random* random_ = SystemRandom::Default();
  std::unique_ptr<httplib::Server> owned_http_;  // mend's HTTP server (mend/net/http_server.h)
  httplib::Server& http_;
  std::thread listener_;
  std::atomic<bool> done_{false};
  int port_ = 0;
  std::mutex mu_;
  std::set<std::string> sessions_;  // guarded by mu_
};

}  // namespace

Result<std::unique_ptr<McpHttpServer>> McpHttpServer::Create(mcp::McpServer& mcp,
                                                             ServerOptions options) {
  if (!IsLoopbackHost(options.host) && options.token.empty()) {
    return InvalidArgumentError("listening on " + options.host +
                                " (not loopback) requires serve.token (MEND_SERVE_TOKEN)");
  }
  if (options.threads < 1) return InvalidArgumentError("threads must be at least 1");
  MEND_ASSIGN_OR_RETURN(net::ConnectionLimits limits, ConnectionLimitsOf(options));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<httplib::Server> http, net::NewHttpServer(limits));
  return std::unique_ptr<McpHttpServer>(
      new McpHttpServerImpl(mcp, std::move(options), std::move(http)));
}

}  // namespace mend::server
