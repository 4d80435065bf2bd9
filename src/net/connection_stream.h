#pragma once

// One client connection as cpp-httplib reads and writes it (http_server.cc): a non-blocking socket,
// TLS or not, with a read buffer, the deadline and size limit of the request head being read, and a
// timeout for every other wait.

#include <httplib.h>
#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace mend::net {

using SteadyTime = std::chrono::steady_clock::time_point;

// Why a connection's stream stopped working.
enum class StreamFailure {
  kNone,
  kHeadTimeout,   // the request head did not arrive in time
  kHeadTooLarge,  // the request head is over the limit
  kTimeout,       // a read or write waited longer than the I/O timeout
  kClosed,        // the peer closed, reset, or broke TLS
};

class ConnectionStream final : public httplib::Stream {
 public:
  // Takes `fd` (made non-blocking) but does not close it: the caller does, after Close().
  ConnectionStream(int fd, std::chrono::milliseconds io_timeout, size_t max_header_bytes);
  ~ConnectionStream() override;
  ConnectionStream(const ConnectionStream&) = delete;
  ConnectionStream& operator=(const ConnectionStream&) = delete;

  // Runs the TLS handshake by `deadline`; every later read and write goes through TLS.
  bool AcceptTls(SSL_CTX* ctx, SteadyTime deadline);
  // Waits until a request starts (bytes are buffered or arrive) or `deadline` passes; false when
  // the deadline passed or the peer closed.
  bool WaitForRequest(SteadyTime deadline);
  // The request head starts now: reads count against max_header_bytes and end at `deadline`.
  void BeginHead(SteadyTime deadline);
  // The head has been read; reads wait io_timeout again and count as the request's body.
  void EndHead();
  // Whether the current request's head is still being read (it never completed when the request
  // is over and this is still true: httplib refused the head itself).
  bool in_head() const { return in_head_; }
  // The bytes of the current request read after its head.
  size_t body_bytes() const { return body_bytes_; }
  // Whether what was read after the head ends as a whole chunked body does ("0" CRLF CRLF, no
  // trailer).
  bool read_chunked_end() const;
  // Whether the last response's header said `Connection: close`.
  bool response_closes() const { return response_closes_; }
  StreamFailure failure() const { return failure_; }
  // Writes a whole answer of our own (status, JSON error body, Connection: close), best effort.
  void WriteRefusal(int status, const char* reason, const std::string& code,
                    const std::string& message);
  // Ends TLS (best effort) and shuts the socket down both ways. After a refusal it first reads
  // and drops what the client still sends for a moment, so that closing with unread bytes does not
  // reset the connection before the client has read the answer.
  void Close(bool linger);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

 private:
  // Reads into the buffer; false with failure_ set when nothing could be read by `deadline`.
  bool Fill(SteadyTime deadline);
  // One non-blocking receive or send: > 0 bytes, 0 end of stream, -1 would block (`*events` tells
  // on what to wait), -2 error.
  ssize_t RecvOnce(char* ptr, size_t size, short* events);
  ssize_t SendOnce(const char* ptr, size_t size, short* events);
  // poll(2) for `events` until `deadline`; false on timeout or error.
  bool WaitFor(short events, SteadyTime deadline) const;
  void Fail(StreamFailure failure);

  const int fd_;
  const std::chrono::milliseconds io_timeout_;
  const size_t max_header_bytes_;
  SSL* ssl_ = nullptr;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;  // the unread bytes of buffer_
  bool in_head_ = false;
  SteadyTime head_deadline_{};
  size_t head_bytes_ = 0;
  size_t body_bytes_ = 0;
  std::string body_tail_;          // the last bytes read after the head, at most 7
  bool response_started_ = false;  // the next write starts a response
  bool response_closes_ = false;
  StreamFailure failure_ = StreamFailure::kNone;
};

}  // namespace mend::net
