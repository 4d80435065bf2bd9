#include "net/connection_stream.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>

#include "mend/base/json.h"

namespace mend::net {
namespace {

constexpr size_t kBufferBytes = 16 << 10;
constexpr std::chrono::milliseconds kLinger{500};
constexpr size_t kLingerBytes = 1 << 20;

SteadyTime Now() { return std::chrono::steady_clock::now(); }

void AddressOf(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
    port = ntohs(v4->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
    port = ntohs(v6->sin6_port);
  }
  ip = text;
}

// Whether the header block at the start of `data` has a `Connection: close` line.
bool SaysConnectionClose(std::string_view data) {
  const size_t end = data.find("\r\n\r\n");
  std::string head(data.substr(0, end));
  std::transform(head.begin(), head.end(), head.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return head.find("\r\nconnection: close\r\n") != std::string::npos ||
         (end == std::string_view::npos && head.find("\r\nconnection: close") != std::string::npos);
}

}  // namespace

ConnectionStream::ConnectionStream(int fd, std::chrono::milliseconds io_timeout,
                                   size_t max_header_bytes)
    : fd_(fd), io_timeout_(io_timeout), max_header_bytes_(max_header_bytes) {
  const int flags = fcntl(fd_, F_GETFL, 0);
  if (flags >= 0) fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
}

ConnectionStream::~ConnectionStream() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

bool ConnectionStream::AcceptTls(SSL_CTX* ctx, SteadyTime deadline) {
  ssl_ = SSL_new(ctx);
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) {
    Fail(StreamFailure::kClosed);
    return false;
  }
  SSL_set_mode(ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  for (;;) {
    ERR_clear_error();
    const int r = SSL_accept(ssl_);
    if (r == 1) return true;
    const int err = SSL_get_error(ssl_, r);
    short events = 0;
    if (err == SSL_ERROR_WANT_READ) {
      events = POLLIN;
    } else if (err == SSL_ERROR_WANT_WRITE) {
      events = POLLOUT;
    } else {
      Fail(StreamFailure::kClosed);
      return false;
    }
    if (!WaitFor(events, deadline)) {
      Fail(StreamFailure::kHeadTimeout);
      return false;
    }
  }
}

bool ConnectionStream::WaitForRequest(SteadyTime deadline) {
  if (begin_ < end_) return true;
  if (ssl_ != nullptr && SSL_pending(ssl_) > 0) return true;
  return WaitFor(POLLIN, deadline);
}

void ConnectionStream::BeginHead(SteadyTime deadline) {
  in_head_ = true;
  head_deadline_ = deadline;
  head_bytes_ = 0;
  body_bytes_ = 0;
  body_tail_.clear();
  response_closes_ = false;
}

void ConnectionStream::EndHead() {
  in_head_ = false;
  response_started_ = true;
}

bool ConnectionStream::read_chunked_end() const {
  const std::string_view tail(body_tail_);
  if (body_bytes_ == 5) return tail == "0\r\n\r\n";
  return tail.size() == 7 && tail.substr(1) == "\n0\r\n\r\n";
}

void ConnectionStream::Fail(StreamFailure failure) {
  if (failure_ == StreamFailure::kNone) failure_ = failure;
}

bool ConnectionStream::WaitFor(short events, SteadyTime deadline) const {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Now()).count();
    if (left <= 0) return false;
    pollfd p{fd_, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 60'000)));
    if (n > 0) return true;  // readiness, or an error/hang-up the next call reports
    if (n < 0 && errno != EINTR) return false;
  }
}

ssize_t ConnectionStream::RecvOnce(char* ptr, size_t size, short* events) {
  if (ssl_ != nullptr) {
    ERR_clear_error();
    const int r = SSL_read(ssl_, ptr, static_cast<int>(std::min<size_t>(size, 1 << 30)));
    if (r > 0) return r;
    const int err = SSL_get_error(ssl_, r);
    if (err == SSL_ERROR_ZERO_RETURN) return 0;
    if (err == SSL_ERROR_WANT_READ) return *events = POLLIN, -1;
    if (err == SSL_ERROR_WANT_WRITE) return *events = POLLOUT, -1;
    return -2;
  }
  const ssize_t r = ::recv(fd_, ptr, size, 0);
  if (r >= 0) return r;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return *events = POLLIN, -1;
  return -2;
}

ssize_t ConnectionStream::SendOnce(const char* ptr, size_t size, short* events) {
  if (ssl_ != nullptr) {
    ERR_clear_error();
    const int r = SSL_write(ssl_, ptr, static_cast<int>(std::min<size_t>(size, 1 << 30)));
    if (r > 0) return r;
    const int err = SSL_get_error(ssl_, r);
    if (err == SSL_ERROR_WANT_READ) return *events = POLLIN, -1;
    if (err == SSL_ERROR_WANT_WRITE) return *events = POLLOUT, -1;
    return -2;
  }
  const ssize_t r = ::send(fd_, ptr, size, MSG_NOSIGNAL);
  if (r >= 0) return r;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return *events = POLLOUT, -1;
  return -2;
}

bool ConnectionStream::Fill(SteadyTime deadline) {
  if (buffer_.empty()) buffer_.resize(kBufferBytes);
  begin_ = end_ = 0;
  for (;;) {
    short events = 0;
    const ssize_t r = RecvOnce(buffer_.data(), buffer_.size(), &events);
    if (r > 0) {
      end_ = static_cast<size_t>(r);
      return true;
    }
    if (r == 0 || r == -2) {
      Fail(StreamFailure::kClosed);
      return false;
    }
    if (!WaitFor(events, deadline)) {
      Fail(in_head_ && deadline == head_deadline_ ? StreamFailure::kHeadTimeout
                                                  : StreamFailure::kTimeout);
      return false;
    }
  }
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  if (failure_ != StreamFailure::kNone) return -1;
  if (begin_ == end_) {
    SteadyTime deadline = Now() + io_timeout_;
    if (in_head_) deadline = std::min(deadline, head_deadline_);
    if (!Fill(deadline)) return -1;
  }
  size_t n = std::min(size, end_ - begin_);
  if (in_head_) {
    if (head_bytes_ + n > max_header_bytes_) {
      Fail(StreamFailure::kHeadTooLarge);
      return -1;
    }
    head_bytes_ += n;
  } else {
    body_bytes_ += n;
    body_tail_.append(buffer_.data() + begin_ + (n > 7 ? n - 7 : 0), std::min<size_t>(n, 7));
    if (body_tail_.size() > 7) body_tail_.erase(0, body_tail_.size() - 7);
  }
  std::memcpy(ptr, buffer_.data() + begin_, n);
  begin_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  // After a failed head, httplib would answer 400; the caller answers for itself instead.
  if (failure_ != StreamFailure::kNone) return -1;
  if (response_started_) {
    response_started_ = false;
    response_closes_ = SaysConnectionClose(std::string_view(ptr, size));
  }
  size_t sent = 0;
  while (sent < size) {
    short events = 0;
    const ssize_t r = SendOnce(ptr + sent, size - sent, &events);
    if (r > 0) {
      sent += static_cast<size_t>(r);
      continue;
    }
    if (r == 0 || r == -2) {
      Fail(StreamFailure::kClosed);
      return -1;
    }
    if (!WaitFor(events, Now() + io_timeout_)) {
      Fail(StreamFailure::kTimeout);
      return -1;
    }
  }
  return static_cast<ssize_t>(size);
}

bool ConnectionStream::is_readable() const {
  if (failure_ != StreamFailure::kNone) return false;
  if (begin_ < end_) return true;
  if (ssl_ != nullptr && SSL_pending(ssl_) > 0) return true;
  return WaitFor(POLLIN, Now() + io_timeout_);
}

bool ConnectionStream::is_writable() const {
  if (failure_ != StreamFailure::kNone) return false;
  return WaitFor(POLLOUT, Now() + io_timeout_);
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  port = 0;
  ip.clear();
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) AddressOf(addr, ip, port);
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  port = 0;
  ip.clear();
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) AddressOf(addr, ip, port);
}

void ConnectionStream::WriteRefusal(int status, const char* reason, const std::string& code,
                                    const std::string& message) {
  if (failure_ == StreamFailure::kClosed) return;
  const std::string body =
      DumpJson(nlohmann::json{{"error", {{"code", code}, {"message", message}}}}) + "\n";
  const std::string answer = "HTTP/1.1 " + std::to_string(status) + " " + reason +
                             "\r\nContent-Type: application/json\r\nCache-Control: no-store"
                             "\r\nConnection: close\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\n\r\n" + body;
  const StreamFailure failure = failure_;
  failure_ = StreamFailure::kNone;  // write() refuses on a failed stream
  in_head_ = false;
  response_started_ = false;
  write(answer.data(), answer.size());
  if (failure_ == StreamFailure::kNone) failure_ = failure;
}

void ConnectionStream::Close(bool linger) {
  if (ssl_ != nullptr && failure_ != StreamFailure::kClosed) {
    ERR_clear_error();
    SSL_shutdown(ssl_);  // one close_notify, not waiting for the peer's
  }
  if (linger && failure_ != StreamFailure::kClosed) {
    ::shutdown(fd_, SHUT_WR);
    const SteadyTime until = Now() + kLinger;
    char sink[4096];
    size_t dropped = 0;
    while (dropped < kLingerBytes && WaitFor(POLLIN, until)) {
      const ssize_t r = ::recv(fd_, sink, sizeof(sink), 0);
      if (r <= 0 && !(r < 0 && (errno == EAGAIN || errno == EINTR))) break;
      if (r > 0) dropped += static_cast<size_t>(r);
    }
  }
  ::shutdown(fd_, SHUT_RDWR);
}

}  // namespace mend::net
