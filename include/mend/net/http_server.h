#pragma once

// The HTTP server under `mend serve` and `mend proxy` (docs/security.md, "Hostile networks"):
// cpp-httplib reads the requests and routes them; mend keeps the connections. A connection gets a
// thread of its own, so connections that wait (for a request, or in the middle of one) do not hold
// up the others; a request head must arrive whole within a deadline and a size; heads whose framing
// two servers could read differently (request smuggling) are refused; at the connection cap the
// connection that has waited longest without a request in progress makes room for a new one.
//
// The returned object is an httplib::Server (an httplib::SSLServer with TLS): add routes, bind and
// listen as usual. Callers include <httplib.h>.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "mend/base/result.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace mend::net {

/// How a server treats its connections. The defaults suit a daemon on an untrusted network.
struct ConnectionLimits {
  /// Connections open at once. At the cap, a new connection closes the one that has waited longest
  /// for a request (or for the rest of a request head); when every connection is handling a
  /// request, the new one is answered 503 and closed.
  size_t max_connections = 1024;
  /// Requests handled at once (their heads read); more wait for a turn. The head of a request is
  /// read before it takes a turn, so slow clients never hold one.
  size_t max_active = 64;
  /// The request line and headers of one request at most, in bytes; more: 431 and the connection
  /// is closed.
  size_t max_header_bytes = 64 << 10;
  /// The time a request head may take, from the connection (the first request; the TLS handshake
  /// included) or from its first byte (later requests on the connection); past it: 408 and the
  /// connection is closed.
  std::chrono::milliseconds header_timeout{10'000};
  /// How long an open connection may wait for its next request.
  std::chrono::milliseconds idle_timeout{5'000};
  /// How long one read of a request body, or one write of a response, may wait for the client.
  std::chrono::milliseconds io_timeout{30'000};
  /// Requests on one connection at most; the last answer says `Connection: close`.
  size_t max_requests_per_connection = 10'000;
  /// HTTPS: a PEM certificate (chain) file and the PEM file of its private key, both or neither.
  std::string tls_cert;
  std::string tls_key;  ///< see tls_cert
};

/// kInvalidArgument naming the first limit out of range (every count at least 1, every timeout
/// at least 1 ms, a header limit of at least 1 KiB, tls_cert and tls_key both or neither).
Status ValidateLimits(const ConnectionLimits& limits);

/// A server that serves its connections as ConnectionLimits says. kInvalidArgument for invalid
/// limits or TLS files that do not hold a PEM certificate and its key. Stopping the server
/// (httplib's stop()) closes the connections waiting for a request and waits for the requests in
/// progress; destroying it does the same.
Result<std::unique_ptr<httplib::Server>> NewHttpServer(const ConnectionLimits& limits);

}  // namespace mend::net
