#pragma once

// Bytes over a plain TCP socket to a server under test, for requests no HTTP client would send
// (half-sent heads, conflicting framing, oversized headers). Every read gives up after 20 s, so a
// server that hangs fails the test instead of hanging it.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>

namespace mend::testing {

// A connected socket to 127.0.0.1:port; the caller closes it.
inline int RawConnect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << errno;
  timeval tv{20, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  return fd;
}

// Sends what the server takes; a server that closes early is the caller's to check.
inline void RawSend(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// Everything the server sends until it closes the connection.
inline std::string RawReadToClose(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// One response whose body has a Content-Length (or none).
inline std::string RawReadResponse(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const size_t head_end = out.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const size_t at = out.find("Content-Length: ");
      const size_t length =
          at == std::string::npos || at > head_end ? 0 : std::stoul(out.substr(at + 16));
      if (out.size() >= head_end + 4 + length) return out.substr(0, head_end + 4 + length);
    }
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

// A request whose exchange is the whole connection: sends `request`, returns all the answer.
inline std::string RawExchange(int port, std::string_view request) {
  const int fd = RawConnect(port);
  RawSend(fd, request);
  std::string answer = RawReadToClose(fd);
  ::close(fd);
  return answer;
}

}  // namespace mend::testing
