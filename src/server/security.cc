// Request checks of `mend serve` (security.h).
#include "server/security.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <string_view>

#include "mend/base/hash.h"
#include "mend/base/utf8.h"
#include "mend/server/server.h"
#include "server/otlp_receiver.h"

namespace mend::server {

// Requests on one keep-alive connection at most: reconnecting costs the client a handshake.
constexpr size_t kKeepAliveMaxRequests = 10000;

Result<net::ConnectionLimits> ConnectionLimitsOf(const ServerOptions& options) {
  net::ConnectionLimits limits;
  limits.max_connections = static_cast<size_t>(std::max<int64_t>(options.max_connections, 0));
  limits.max_active = static_cast<size_t>(std::max(options.threads, 0));
  limits.max_header_bytes = static_cast<size_t>(std::max<int64_t>(options.max_header_bytes, 0));
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  limits.header_timeout = duration_cast<milliseconds>(options.header_timeout);
  limits.idle_timeout = duration_cast<milliseconds>(options.idle_timeout);
  limits.io_timeout = duration_cast<milliseconds>(options.io_timeout);
  limits.max_requests_per_connection = kKeepAliveMaxRequests;
  limits.tls_cert = options.tls_cert;
  limits.tls_key = options.tls_key;
  if (Status valid = net::ValidateLimits(limits); !valid.ok()) {
    return InvalidArgumentError("serve." + std::string(valid.message()));
  }
  return limits;
}
namespace {

// The host part of a Host header or of an origin's authority ("[::1]:7070" -> "[::1]").
std::string HostOf(std::string_view authority) {
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    return ToLowerAscii(
        authority.substr(0, close == std::string_view::npos ? authority.size() : close + 1));
  }
  return ToLowerAscii(authority.substr(0, authority.find(':')));
}

bool IsStateChanging(const std::string& method) {
  return method != "GET" && method != "HEAD" && method != "OPTIONS";
}

// A browser says where a request comes from in Origin (every cross-origin request and every
// POST) and in Sec-Fetch-Site. Either naming another site than the Host the request was sent
// to means a page of another origin made it.
Status CheckSameOrigin(const httplib::Request& req) {
  const std::string site = ToLowerAscii(req.get_header_value("Sec-Fetch-Site"));
  if (!site.empty() && site != "same-origin" && site != "none") {
    return PermissionDeniedError("cross-site request refused (Sec-Fetch-Site: " + site + ")");
  }
  if (!req.has_header("Origin")) return OkStatus();
  const std::string origin = ToLowerAscii(req.get_header_value("Origin"));
  const std::string host = ToLowerAscii(req.get_header_value("Host"));
  const size_t scheme_end = origin.find("://");
  if (scheme_end == std::string::npos || origin.substr(scheme_end + 3) != host) {
    return PermissionDeniedError("cross-origin request refused (Origin: " + origin + ")");
  }
  return OkStatus();
}

}  // namespace

Status CheckBody(const httplib::Request& req, const ServerOptions& options, ProxyRoutes proxy) {
  const bool otlp = req.path == "/v1/traces";
  if (req.has_header("Content-Encoding")) {
    const std::string encoding = ToLowerAscii(req.get_header_value("Content-Encoding"));
    if (!otlp || (encoding != "gzip" && encoding != "identity")) {
      return InvalidArgumentError("Content-Encoding \"" + encoding + "\" is not accepted here");
    }
  }
  const std::string length_text = req.get_header_value("Content-Length");
  if (length_text.empty()) return OkStatus();
  uint64_t length = 0;
  auto [ptr, ec] =
      std::from_chars(length_text.data(), length_text.data() + length_text.size(), length);
  if (ec != std::errc() || ptr != length_text.data() + length_text.size()) {
    return InvalidArgumentError("Content-Length is not a number");
  }
  // The proxy's routes check their own limit (proxy.max_body) and answer in the API's shape.
  if (proxy == ProxyRoutes::kMounted && IsProxyPath(req.path)) return OkStatus();
  const uint64_t limit = otlp ? kMaxOtlpBodyBytes : static_cast<uint64_t>(options.max_body_bytes);
  if (length > limit) {
    return ResourceExhaustedError("the request body is too large (" + std::to_string(length) +
                                  " bytes; the limit is " + std::to_string(limit) + ")");
  }
  return OkStatus();
}

bool IsProxyPath(const std::string& path) {
  return path.rfind("/v1/", 0) == 0 && path != "/v1/traces";
}

bool IsPublicPath(const std::string& path) {
  if (path == "/healthz" || path == "/readyz") return true;
  return path == "/" || path.rfind("/ui/", 0) == 0 || path == "/favicon.ico";
}

Status CheckRequest(const httplib::Request& req, const ServerOptions& options, ProxyRoutes proxy) {
  // On loopback, a Host naming another machine means a page used DNS rebinding to reach us.
  if (IsLoopbackHost(options.host)) {
    const std::string host = HostOf(req.get_header_value("Host"));
    if (!host.empty() && !IsLoopbackHost(host)) {
      return PermissionDeniedError("Host \"" + host + "\" is not this server");
    }
  }
  if (IsStateChanging(req.method)) {
    if (Status same = CheckSameOrigin(req); !same.ok()) return same;
    // An HTML form can send text/plain or form bodies to another site without asking first; a
    // JSON body cannot be sent cross-site without a preflight this server never grants.
    const std::string type = ToLowerAscii(req.get_header_value("Content-Type"));
    // The check runs before the body is read, so the headers tell whether there is one.
    const std::string length = req.get_header_value("Content-Length");
    const bool has_body = (!length.empty() && length != "0") || req.has_header("Transfer-Encoding");
    if (req.path.rfind("/api/", 0) == 0 && has_body && type.rfind("application/json", 0) != 0) {
      return PermissionDeniedError("API request bodies must be application/json");
    }
  }
  // The proxy's routes check their clients' tokens themselves (proxy.token, proxy.tokens): their
  // Authorization header carries the client's API key for the upstream, not serve.token.
  if (options.token.empty() || IsPublicPath(req.path)) return OkStatus();
  if (proxy == ProxyRoutes::kMounted && IsProxyPath(req.path)) return OkStatus();
  const std::string auth = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "bearer ";
  if (auth.size() <= kBearer.size() || ToLowerAscii(auth.substr(0, kBearer.size())) != kBearer ||
      !ConstantTimeEquals(auth.substr(kBearer.size()), options.token)) {
    return UnauthenticatedError(
        "a valid \"Authorization: Bearer <serve.token>\" header is required");
  }
  return OkStatus();
}

}  // namespace mend::server
