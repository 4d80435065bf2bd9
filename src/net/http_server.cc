// The connections of mend's HTTP servers (http_server.h). cpp-httplib accepts a connection and
// hands it to process_and_close_socket(), which is overridden here: the connection is registered
// and gets a thread of its own (a small stack), which reads requests through ConnectionStream and
// lets httplib's process_request() parse and route each one.
#include "mend/net/http_server.h"

#include <httplib.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <utility>

#include "net/connection_stream.h"

namespace mend::net {
namespace {

constexpr size_t kThreadStackBytes = 1 << 20;

SteadyTime Now() { return std::chrono::steady_clock::now(); }

// A request head whose framing another server on the path could read differently (RFC 9112,
// section 6.3): the head is answered and the connection closed before a byte of the body is read.
struct FramingRefusal {
  int status = 0;  // 0: none
  const char* reason = "";
  std::string message;
};

bool IsTokenChar(unsigned char c) {
  return std::isalnum(c) != 0 ||
         std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool AllDigits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

FramingRefusal CheckFraming(const httplib::Request& req) {
  for (const auto& [name, value] : req.headers) {
    if (name.empty() || !std::all_of(name.begin(), name.end(), IsTokenChar)) {
      return {400, "Bad Request", "a header name is not an HTTP token: \"" + name + "\""};
    }
  }
  const size_t lengths = req.headers.count("Content-Length");
  const size_t codings = req.headers.count("Transfer-Encoding");
  if (codings > 0 && lengths > 0) {
    return {400, "Bad Request", "the request has both Content-Length and Transfer-Encoding"};
  }
  if (codings > 1) return {400, "Bad Request", "the request has more than one Transfer-Encoding"};
  if (codings == 1) {
    std::string coding = req.get_header_value("Transfer-Encoding");
    std::transform(coding.begin(), coding.end(), coding.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (coding != "chunked") {
      return {501, "Not Implemented",
              "Transfer-Encoding \"" + coding + "\" is not supported (only chunked)"};
    }
  }
  if (lengths > 0) {
    auto [first, last] = req.headers.equal_range("Content-Length");
    const std::string& value = first->second;
    uint64_t length = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), length);
    if (error != std::errc() || end != value.data() + value.size()) {
      return {400, "Bad Request", "the request's Content-Length is not one decimal number"};
    }
    for (auto it = first; it != last; ++it) {
      if (!AllDigits(it->second) || it->second != value) {
        return {400, "Bad Request", "the request's Content-Length is not one decimal number"};
      }
    }
  }
  return {};
}

// The connections of one server and the turns of the requests they carry.
class ConnectionRunner {
 public:
  using Process =
      std::function<bool(httplib::Stream&, bool close_connection, bool& connection_closed,
                         const std::function<void(httplib::Request&)>& setup)>;

  ConnectionRunner(ConnectionLimits limits, SSL_CTX* tls, Process process)
      : limits_(std::move(limits)), tls_(tls), process_(std::move(process)) {}
  ~ConnectionRunner() { Shutdown(); }

  // Takes the accepted socket `fd`: registers it and starts its thread.
  void Adopt(int fd);
  // Closes the connections that wait for a request, lets the requests in progress finish, and
  // returns once every connection's thread has ended. Idempotent; later connections are closed.
  void Shutdown();

 private:
  struct Connection {
    int fd;
    bool waiting = true;  // no request in progress: may be closed to make room
    bool evicted = false;
    SteadyTime since;
    std::list<Connection*>::iterator position;
  };
  struct Start {
    ConnectionRunner* runner;
    Connection* connection;
  };

  static void* ThreadMain(void* arg);
  void Serve(Connection& connection);
  void Forget(Connection& connection);
  void SetWaiting(Connection& connection, bool waiting);
  void TakeTurn();
  void GiveTurnBack();
  bool stopping() {
    std::lock_guard<std::mutex> lock(mu_);
    return stopping_;
  }

  const ConnectionLimits limits_;
  SSL_CTX* const tls_;  // nullptr: plain HTTP
  const Process process_;

  std::mutex mu_;
  std::condition_variable changed_;
  std::list<Connection*> connections_;  // guarded by mu_
  size_t evicting_ = 0;                 // evicted connections whose threads have not ended
  size_t active_ = 0;                   // requests holding a turn
  bool stopping_ = false;
};

void ConnectionRunner::Adopt(int fd) {
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) {
    lock.unlock();
    ::close(fd);
    return;
  }
  if (connections_.size() - evicting_ >= limits_.max_connections) {
    Connection* oldest = nullptr;
    for (Connection* c : connections_) {
      if (c->waiting && !c->evicted && (oldest == nullptr || c->since < oldest->since)) oldest = c;
    }
    if (oldest == nullptr) {
      lock.unlock();
      ConnectionStream refused(fd, std::chrono::milliseconds(100), 0);
      refused.WriteRefusal(503, "Service Unavailable", "UNAVAILABLE",
                           "the server has no room for another connection");
      refused.Close(false);
      ::close(fd);
      return;
    }
    oldest->evicted = true;
    ++evicting_;
    ::shutdown(oldest->fd, SHUT_RDWR);  // its thread sees the end of the stream and leaves
  }
  auto* connection = new Connection{fd};
  connection->since = Now();
  connections_.push_back(connection);
  connection->position = std::prev(connections_.end());
  lock.unlock();

  auto* start = new Start{this, connection};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kThreadStackBytes);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  const int started = pthread_create(&thread, &attr, &ThreadMain, start);
  pthread_attr_destroy(&attr);
  if (started != 0) {
    delete start;
    Forget(*connection);  // no thread to serve it: closed
  }
}

void* ConnectionRunner::ThreadMain(void* arg) {
  std::unique_ptr<Start> start(static_cast<Start*>(arg));
  start->runner->Serve(*start->connection);
  return nullptr;
}

void ConnectionRunner::Forget(Connection& connection) {
  const int fd = connection.fd;
  {
    std::lock_guard<std::mutex> lock(mu_);
    connections_.erase(connection.position);
    if (connection.evicted) --evicting_;
    // Closed under the lock: an eviction never shuts down a number the kernel gave to another.
    ::close(fd);
    changed_.notify_all();
  }
  delete &connection;
}

void ConnectionRunner::SetWaiting(Connection& connection, bool waiting) {
  std::lock_guard<std::mutex> lock(mu_);
  connection.waiting = waiting;
  connection.since = Now();
  // A request that ends after Shutdown began (a long one, such as an event stream) leaves its
  // connection to be closed as the waiting ones were, not after a full idle timeout.
  if (waiting && stopping_) ::shutdown(connection.fd, SHUT_RDWR);
}

void ConnectionRunner::TakeTurn() {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [this] { return active_ < limits_.max_active || stopping_; });
  ++active_;
}

void ConnectionRunner::GiveTurnBack() {
  std::lock_guard<std::mutex> lock(mu_);
  --active_;
  changed_.notify_all();
}

void ConnectionRunner::Serve(Connection& connection) {
  ConnectionStream stream(connection.fd, limits_.io_timeout, limits_.max_header_bytes);
  const SteadyTime accepted = Now();
  bool open = tls_ == nullptr || stream.AcceptTls(tls_, accepted + limits_.header_timeout);
  bool refused = false;
  for (size_t served = 0; open && served < limits_.max_requests_per_connection; ++served) {
    const SteadyTime first_deadline =
        served == 0 ? accepted + limits_.header_timeout : Now() + limits_.idle_timeout;
    if (!stream.WaitForRequest(first_deadline) || stopping()) break;
    stream.BeginHead(served == 0 ? accepted + limits_.header_timeout
                                 : Now() + limits_.header_timeout);
    const bool last = served + 1 == limits_.max_requests_per_connection;
    bool closed = false;
    bool took_turn = false;
    FramingRefusal refusal;
    bool ok = false;
    bool chunked = false;
    size_t declared = 0;  // the body's Content-Length
    try {
      ok = process_(stream, last, closed, [&](httplib::Request& req) {
        stream.EndHead();
        refusal = CheckFraming(req);
        if (refusal.status != 0) throw refusal;
        chunked = req.has_header("Transfer-Encoding");
        if (req.has_header("Content-Length")) {
          // CheckFraming made sure it is one decimal number that fits.
          const std::string value = req.get_header_value("Content-Length");
          uint64_t length = 0;
          std::from_chars(value.data(), value.data() + value.size(), length);
          declared = static_cast<size_t>(length);
        }
        // httplib would cut every answer to a Range header's bytes and keep its status (200 with
        // a part of a JSON body); mend's routes serve whole answers.
        req.ranges.clear();
        SetWaiting(connection, false);
        TakeTurn();
        took_turn = true;
      });
    } catch (const FramingRefusal&) {
      ok = false;
    } catch (...) {
      ok = false;  // anything else thrown while reading or answering ends the connection
    }
    if (took_turn) GiveTurnBack();
    SetWaiting(connection, true);
    if (refusal.status != 0) {
      stream.WriteRefusal(refusal.status, refusal.reason, "INVALID_ARGUMENT", refusal.message);
      refused = true;
      break;
    }
    if (stream.failure() == StreamFailure::kHeadTooLarge) {
      stream.WriteRefusal(
          431, "Request Header Fields Too Large", "RESOURCE_EXHAUSTED",
          "the request head is larger than " + std::to_string(limits_.max_header_bytes) + " bytes");
      refused = true;
      break;
    }
    if (stream.failure() == StreamFailure::kHeadTimeout) {
      stream.WriteRefusal(408, "Request Timeout", "DEADLINE_EXCEEDED",
                          "the request head did not arrive within " +
                              std::to_string(limits_.header_timeout.count()) + " ms");
      refused = true;
      break;
    }
    if (!ok || closed || stream.response_closes() || stream.failure() != StreamFailure::kNone) {
      break;
    }
    // A request answered without its body read whole (refused before its body, a GET with a body,
    // a head httplib itself refused) leaves bytes that must never be read as the next request: the
    // connection ends with it. A chunked body counts as whole when its last chunk was read (a body
    // with trailers ends the connection too).
    if (stream.in_head()) break;
    if (chunked ? !stream.read_chunked_end() : stream.body_bytes() < declared) break;
  }
  stream.Close(refused);
  Forget(connection);
}

void ConnectionRunner::Shutdown() {
  std::unique_lock<std::mutex> lock(mu_);
  stopping_ = true;
  for (Connection* c : connections_) {
    if (c->waiting) ::shutdown(c->fd, SHUT_RDWR);
  }
  changed_.notify_all();
  changed_.wait(lock, [this] { return connections_.empty(); });
}

// httplib's accept loop runs a connection's task where it is handed over: process_and_close_socket
// only registers the connection, and stopping the loop shuts the connections down.
class RunnerQueue final : public httplib::TaskQueue {
 public:
  explicit RunnerQueue(ConnectionRunner* runner) : runner_(runner) {}
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override { runner_->Shutdown(); }

 private:
  ConnectionRunner* runner_;
};

template <typename Base>
class GuardedServer final : public Base {
 public:
  template <typename... Args>
  explicit GuardedServer(Args&&... args) : Base(std::forward<Args>(args)...) {}
  ~GuardedServer() override {
    if (runner_ != nullptr) runner_->Shutdown();
  }

  void Guard(const ConnectionLimits& limits, SSL_CTX* tls) {
    runner_ = std::make_unique<ConnectionRunner>(
        limits, tls,
        [this](httplib::Stream& stream, bool close_connection, bool& connection_closed,
               const std::function<void(httplib::Request&)>& setup) {
          return this->process_request(stream, close_connection, connection_closed, setup);
        });
    this->new_task_queue = [runner = runner_.get()] { return new RunnerQueue(runner); };
  }

 private:
  bool process_and_close_socket(socket_t sock) override {
    runner_->Adopt(sock);
    return true;
  }

  std::unique_ptr<ConnectionRunner> runner_;
};

}  // namespace

Status ValidateLimits(const ConnectionLimits& limits) {
  if (limits.max_connections < 1) return InvalidArgumentError("max_connections must be at least 1");
  if (limits.max_active < 1) return InvalidArgumentError("max_active must be at least 1");
  if (limits.max_header_bytes < 1024) {
    return InvalidArgumentError("max_header_bytes must be at least 1024");
  }
  if (limits.max_requests_per_connection < 1) {
    return InvalidArgumentError("max_requests_per_connection must be at least 1");
  }
  for (const auto& [name, timeout] : {std::pair{"header_timeout", limits.header_timeout},
                                      std::pair{"idle_timeout", limits.idle_timeout},
                                      std::pair{"io_timeout", limits.io_timeout}}) {
    if (timeout.count() < 1) return InvalidArgumentError(std::string(name) + " must be >= 1 ms");
  }
  if (limits.tls_cert.empty() != limits.tls_key.empty()) {
    return InvalidArgumentError(
        "tls_cert and tls_key go together: HTTPS needs the certificate and its key");
  }
  return OkStatus();
}

Result<std::unique_ptr<httplib::Server>> NewHttpServer(const ConnectionLimits& limits) {
  MEND_RETURN_IF_ERROR(ValidateLimits(limits));
  if (limits.tls_cert.empty()) {
    auto server = std::make_unique<GuardedServer<httplib::Server>>();
    server->Guard(limits, nullptr);
    return std::unique_ptr<httplib::Server>(std::move(server));
  }
  auto server = std::make_unique<GuardedServer<httplib::SSLServer>>(limits.tls_cert.c_str(),
                                                                    limits.tls_key.c_str());
  if (!server->is_valid()) {
    return InvalidArgumentError("cannot use " + limits.tls_cert + " and " + limits.tls_key +
                                " for TLS: they must be a PEM certificate and its private key");
  }
  server->Guard(limits, server->ssl_context());
  return std::unique_ptr<httplib::Server>(std::move(server));
}

}  // namespace mend::net
