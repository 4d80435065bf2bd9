#pragma once

// Who may call `mend serve` (docs/http_api.md, "Security"): the bearer token, the Host check
// against DNS rebinding and the protection of state-changing requests against cross-site
// requests from a browser.
#include <string>

#include "mend/base/result.h"
#include "mend/net/http_server.h"

namespace httplib {
struct Request;
}  // namespace httplib

namespace mend::server {

struct ServerOptions;

// The connection limits of ServerOptions (serve.* keys; docs/security.md, "Hostile networks"):
// kInvalidArgument naming the key of one out of range.
Result<net::ConnectionLimits> ConnectionLimitsOf(const ServerOptions& options);

// Whether `path` is served without a token: /healthz, /readyz and the web UI's static files
// (they hold no data; the UI asks for the token and sends it with every API call).
bool IsPublicPath(const std::string& path);

// Whether `path` is one of `mend proxy`'s (/v1/..., except the OTLP receiver's /v1/traces): with
// proxy.upstream set, the proxy's routes answer these and check proxy.token themselves, since a
// client's Authorization carries its API key (docs/proxy.md).
bool IsProxyPath(const std::string& path);

// Whether the server mounted the proxy's routes (proxy.upstream set). Only then do proxy paths
// skip serve.token and serve's body limit; without the proxy they are guarded like any other.
enum class ProxyRoutes { kAbsent, kMounted };

// OK when `req` may proceed; otherwise kUnauthenticated (no or wrong bearer token) or
// kPermissionDenied (a Host that is not this server's on a loopback listener, or a
// state-changing request from another origin or without a JSON content type).
Status CheckRequest(const httplib::Request& req, const ServerOptions& options, ProxyRoutes proxy);

// Whether the body `req` announces may be read, before it is read: kResourceExhausted (413) for
// a Content-Length over the limit of its path (ServerOptions::max_body_bytes, or
// kMaxOtlpBodyBytes for /v1/traces); kInvalidArgument for a Content-Encoding other than gzip on
// /v1/traces, or any on other paths. Bodies without a length (chunked) are bounded while read
// (ReadBoundedBody), after cpp-httplib inflated gzip, so the bound is on the inflated bytes.
Status CheckBody(const httplib::Request& req, const ServerOptions& options, ProxyRoutes proxy);

}  // namespace mend::server
