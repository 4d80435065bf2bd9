// `mend proxy`'s own HTTP listener (proxy.h), on mend's HTTP server (mend/net/http_server.h): a
// thread per connection rather than a fixed pool, so a thousand open streams do not starve new
// requests, and the same limits on slow and malformed requests as `mend serve`.
#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <thread>

#include "mend/net/http_server.h"
#include "mend/proxy/proxy.h"

namespace mend::proxy {
namespace {

constexpr int kListenBacklog = 4096;
constexpr size_t kKeepAliveMaxRequests = 100000;

class HttpListener final : public ProxyListener {
 public:
  HttpListener(ProxyService& service, ListenerOptions options,
               std::unique_ptr<httplib::Server> http)
      : service_(service), options_(std::move(options)), http_(std::move(http)) {}
  ~HttpListener() override { Stop(); }

  Status Start() {
    http_->set_payload_max_length(service_.options().max_body);
    http_->set_tcp_nodelay(true);
    http_->set_socket_options([this](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listen_fd_.store(sock);
    });
    service_.Mount(*http_);
    http_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{\"status\":\"ok\"}", "application/json");
    });
    if (options_.port == 0) {
      port_ = http_->bind_to_any_port(options_.host);
      if (port_ <= 0) return UnavailableError("cannot listen on " + options_.host);
    } else {
      if (!http_->bind_to_port(options_.host, options_.port)) {
        return UnavailableError("cannot listen on " + options_.host + ":" +
                                std::to_string(options_.port) + " (in use, or not this host's)");
      }
      port_ = options_.port;
    }
    if (listen_fd_.load() >= 0) ::listen(listen_fd_.load(), kListenBacklog);
    listener_ = std::thread([this] {
      http_->listen_after_bind();
      listener_done_.store(true);
    });
    // stop() only acts on a server whose accept loop runs; wait for it (microseconds).
    while (!http_->is_running() && !listener_done_.load()) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return OkStatus();
  }

  int port() const override { return port_; }

  void Stop() override {
    if (stopped_) return;
    stopped_ = true;
    if (listener_.joinable()) {
      http_->stop();
      listener_.join();
    }
  }

 private:
  ProxyService& service_;
  ListenerOptions options_;
  std::unique_ptr<httplib::Server> http_;  // an httplib::SSLServer with TLS
  std::thread listener_;
  std::atomic<bool> listener_done_{false};
  std::atomic<int> listen_fd_{-1};
  int port_ = 0;
  bool stopped_ = false;
};

}  // namespace

Result<std::unique_ptr<ProxyListener>> ProxyListener::Start(ProxyService& service,
                                                            ListenerOptions options) {
  if (options.port < 0 || options.port > 65535) {
    return InvalidArgumentError("port must be 0-65535");
  }
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return InvalidArgumentError(
        "proxy.tls_cert and proxy.tls_key go together: HTTPS needs the certificate and its key");
  }
  net::ConnectionLimits limits;
  limits.max_connections = options.max_connections;
  limits.max_active = options.max_connections;  // a stream holds its turn for its whole length
  limits.max_header_bytes = options.max_header_bytes;
  limits.header_timeout = options.header_timeout;
  limits.idle_timeout = options.idle_timeout;
  limits.io_timeout = options.io_timeout;
  limits.max_requests_per_connection = kKeepAliveMaxRequests;
  limits.tls_cert = options.tls_cert;
  limits.tls_key = options.tls_key;
  if (Status valid = net::ValidateLimits(limits); !valid.ok()) {
    return InvalidArgumentError("proxy." + std::string(valid.message()));
  }
  Result<std::unique_ptr<httplib::Server>> http = net::NewHttpServer(limits);
  if (!http.ok()) {
    return InvalidArgumentError("proxy.tls_cert " + options.tls_cert + " and proxy.tls_key " +
                                options.tls_key +
                                " could not be loaded: they must be readable PEM files of a "
                                "certificate and of the private key that matches it");
  }
  auto listener = std::make_unique<HttpListener>(service, std::move(options), *std::move(http));
  MEND_RETURN_IF_ERROR(listener->Start());
  return std::unique_ptr<ProxyListener>(std::move(listener));
}

}  // namespace mend::proxy
