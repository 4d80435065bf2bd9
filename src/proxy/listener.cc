// `mend proxy`'s own HTTP listener (proxy.h): cpp-httplib with a thread per connection rather
// than a fixed pool, so a thousand open streams do not starve new requests.
#include <httplib.h>
#include <pthread.h>
#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "mend/proxy/proxy.h"

namespace mend::proxy {
namespace {

// Threads of connections: a small stack each (the handlers keep little on it), at most `limit`
// at once; a connection beyond it waits for a thread to end.
class ConnectionThreads final : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(size_t limit) : limit_(limit) {}
  ~ConnectionThreads() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [this] { return running_ < limit_; });
    ++running_;
    lock.unlock();
    auto* task = new std::function<void()>([this, fn = std::move(fn)] {
      fn();
      std::lock_guard<std::mutex> done(mu_);
      --running_;
      changed_.notify_all();
    });
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, kStackBytes);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    const int started = pthread_create(&thread, &attr, &Run, task);
    pthread_attr_destroy(&attr);
    if (started != 0) {
      // No thread: serve the connection on the accepting thread rather than drop it.
      Run(task);
    }
  }

  // Waits for every connection's thread to end.
  void shutdown() override {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [this] { return running_ == 0; });
  }

 private:
  static constexpr size_t kStackBytes = 512u << 10;

  static void* Run(void* arg) {
    std::unique_ptr<std::function<void()>> task(static_cast<std::function<void()>*>(arg));
    (*task)();
    return nullptr;
  }

  const size_t limit_;
  std::mutex mu_;
  std::condition_variable changed_;
  size_t running_ = 0;  // guarded by mu_
};

constexpr int kListenBacklog = 4096;
constexpr size_t kKeepAliveMaxRequests = 100000;

class HttpListener final : public ProxyListener {
 public:
  HttpListener(ProxyService& service, ListenerOptions options,
               std::unique_ptr<httplib::Server> http)
      : service_(service), options_(std::move(options)), http_(std::move(http)) {}
  ~HttpListener() override { Stop(); }

  Status Start() {
    const size_t limit = options_.max_connections;
    http_->new_task_queue = [limit] { return new ConnectionThreads(limit); };
    http_->set_payload_max_length(service_.options().max_body);
    http_->set_keep_alive_max_count(kKeepAliveMaxRequests);
    http_->set_keep_alive_timeout(30);
    http_->set_read_timeout(std::chrono::minutes(5));
    http_->set_write_timeout(std::chrono::minutes(5));
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
  std::unique_ptr<httplib::Server> http;
  if (options.tls_cert.empty()) {
    http = std::make_unique<httplib::Server>();
  } else {
    auto tls =
        std::make_unique<httplib::SSLServer>(options.tls_cert.c_str(), options.tls_key.c_str());
    if (!tls->is_valid()) {
      return InvalidArgumentError("proxy.tls_cert " + options.tls_cert + " and proxy.tls_key " +
                                  options.tls_key +
                                  " could not be loaded: they must be readable PEM files of a "
                                  "certificate and of the private key that matches it");
    }
    http = std::move(tls);
  }
  auto listener = std::make_unique<HttpListener>(service, std::move(options), std::move(http));
  MEND_RETURN_IF_ERROR(listener->Start());
  return std::unique_ptr<ProxyListener>(std::move(listener));
}

}  // namespace mend::proxy
