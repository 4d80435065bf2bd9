// The HTTP API's request handling before a handler runs (src/server/security.cc, api.cc,
// otlp_receiver.cc): who may call, whether the body may be read, and the request as handlers see
// it (query parameters, the JSON body and its fields). cpp-httplib parses the bytes on the wire;
// this target starts from the request it hands to mend.
//
// Input: "method\0path\0headers\0query\0body", headers one "Name: value" per line, the query as
// "a=1&b=2". Invariants: with a token, a request that passes CheckRequest on a non-public path
// carried that token (on a proxy path too unless the proxy's routes are mounted: they check
// their own tokens); a body ToApiRequest accepts is a JSON object; field and parameter readers
// return errors, never throw.
#include <httplib.h>

#include <string>

#include "fuzz/fuzz_util.h"
#include "mend/server/server.h"
#include "server/api.h"
#include "server/otlp_receiver.h"
#include "server/security.h"

namespace mend::server {
namespace {

constexpr std::string_view kToken = "fuzz-token-0123456789abcdef";

void AddHeaders(std::string_view text, httplib::Request& req) {
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    req.headers.emplace(std::string(line.substr(0, colon)), std::string(value));
  }
}

void AddQuery(std::string_view text, httplib::Request& req) {
  while (!text.empty()) {
    size_t end = text.find('&');
    std::string_view pair = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    size_t eq = pair.find('=');
    req.params.emplace(std::string(pair.substr(0, eq)),
                       eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1)));
  }
}

void CheckRequestOf(const httplib::Request& req, const ServerOptions& options, ProxyRoutes proxy) {
  const Status allowed = CheckRequest(req, options, proxy);
  const bool own_check = proxy == ProxyRoutes::kMounted && IsProxyPath(req.path);
  if (allowed.ok() && !options.token.empty() && !IsPublicPath(req.path) && !own_check) {
    const std::string auth = req.get_header_value("Authorization");
    FUZZ_CHECK(auth.size() == 7 + kToken.size() && auth.substr(7) == kToken,
               "a request without the token passed");
  }
  (void)CheckBody(req, options, proxy);
}

}  // namespace
}  // namespace mend::server

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mend;
  using namespace mend::server;
  std::vector<std::string_view> parts = fuzz::SplitParts(fuzz::AsText(data, size), 5);
  httplib::Request req;
  req.method = std::string(parts[0]);
  req.path = std::string(parts[1]);
  AddHeaders(parts[2], req);
  AddQuery(parts[3], req);
  const std::string body(parts[4]);

  ServerOptions loopback;
  ServerOptions with_token;
  with_token.host = "0.0.0.0";
  with_token.token = std::string(kToken);
  for (ProxyRoutes proxy : {ProxyRoutes::kAbsent, ProxyRoutes::kMounted}) {
    CheckRequestOf(req, loopback, proxy);
    CheckRequestOf(req, with_token, proxy);
  }

  if (req.has_header("Content-Type")) (void)OtlpProtocolOf(req.get_header_value("Content-Type"));

  Result<ApiRequest> api = ToApiRequest(req, body);
  if (!api.ok()) {
    FUZZ_CHECK(api.status().code() == StatusCode::kInvalidArgument, api.status().ToString());
    return 0;
  }
  FUZZ_CHECK(api->body.is_null() || api->body.is_object(), "a body that is not an object");
  for (const char* field : {"task", "agent", "text", "content", "id", "reason", "metadata"}) {
    Result<std::string> value = api->OptionalBodyString(field);
    if (!value.ok()) FUZZ_CHECK(value.status().code() == StatusCode::kInvalidArgument, field);
    (void)api->BodyString(field);
  }
  for (const char* param : {"limit", "offset", "k", "since"}) {
    Result<int64_t> n = api->QueryInt(param, 20, 1, 1000);
    if (n.ok()) FUZZ_CHECK(*n >= 1 && *n <= 1000 || *n == 20, "a parameter out of range");
  }
  (void)HttpStatusOf(api.status());
  return 0;
}
