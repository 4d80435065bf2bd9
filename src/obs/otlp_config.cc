// The text forms the OTLP exporter is configured with: protocol, headers, endpoint, Retry-After.

#include <time.h>

#include <algorithm>
#include <cctype>
#include <chrono>

#include "mend/base/retry_after.h"
#include "mend/base/utf8.h"
#include "mend/obs/otlp.h"

namespace mend::obs {
namespace {

// RFC 9110 token characters.
bool IsTokenChar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int hi = HexValue(text[i + 1]);
    const int lo = HexValue(text[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>((hi << 4) | lo);
    i += 2;
  }
  return out;
}

// Longer than any backoff cap; keeps arithmetic on far-off values from overflowing.
constexpr std::chrono::seconds kLongestWait(int64_t{60} * 60 * 24 * 365 * 30);

Status MemberError(size_t index, std::string_view what) {
  return InvalidArgumentError("observe.otlp.headers: member " + std::to_string(index) + " " +
                              std::string(what) + " (expected \"name=value,name2=value2\")");
}

}  // namespace

Result<OtlpProtocol> ParseOtlpProtocol(std::string_view text) {
  if (text == "http/protobuf") return OtlpProtocol::kHttpProtobuf;
  if (text == "http/json") return OtlpProtocol::kHttpJson;
  return InvalidArgumentError("observe.otlp.protocol: \"" + std::string(text) +
                              "\" is not one of http/protobuf, http/json");
}

std::string_view OtlpContentType(OtlpProtocol protocol) {
  return protocol == OtlpProtocol::kHttpJson ? "application/json" : "application/x-protobuf";
}

Result<std::vector<HttpHeader>> ParseOtlpHeaders(std::string_view text) {
  std::vector<HttpHeader> headers;
  size_t index = 0;
  while (!text.empty() || index == 0) {
    ++index;
    const size_t comma = text.find(',');
    const std::string_view member = Trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (member.empty()) {
      if (text.empty()) break;
      continue;
    }
    const size_t eq = member.find('=');
    if (eq == std::string_view::npos) return MemberError(index, "has no '='");
    const std::string_view name = Trim(member.substr(0, eq));
    if (name.empty()) return MemberError(index, "has an empty name");
    if (!std::all_of(name.begin(), name.end(), IsTokenChar)) {
      return MemberError(index, "has a name that is not an HTTP token");
    }
    std::optional<std::string> value = PercentDecode(Trim(member.substr(eq + 1)));
    if (!value) return MemberError(index, "has a malformed percent escape in its value");
    if (std::any_of(value->begin(), value->end(), [](char c) {
          return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f;
        })) {
      return MemberError(index, "has a control character in its value");
    }
    headers.emplace_back(std::string(name), std::move(*value));
  }
  return headers;
}

Result<std::string> OtlpTracesUrl(std::string_view endpoint) {
  const std::string where = "observe.otlp.endpoint: ";
  size_t scheme_end = endpoint.find("://");
  if (scheme_end == std::string_view::npos) {
    return InvalidArgumentError(where + "not a URL (expected http://host:port)");
  }
  std::string scheme(endpoint.substr(0, scheme_end));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (scheme != "http" && scheme != "https") {
    return InvalidArgumentError(where + "scheme must be http or https");
  }
  const size_t host_start = scheme_end + 3;
  const size_t path_start = endpoint.find_first_of("/?#", host_start);
  const std::string_view authority =
      endpoint.substr(host_start, path_start == std::string_view::npos ? std::string_view::npos
                                                                       : path_start - host_start);
  const size_t at = authority.rfind('@');
  const std::string_view host = at == std::string_view::npos ? authority : authority.substr(at + 1);
  if (host.empty() || host.front() == ':') return InvalidArgumentError(where + "has no host");
  if (std::any_of(endpoint.begin(), endpoint.end(),
                  [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; })) {
    return InvalidArgumentError(where + "contains whitespace or a control character");
  }
  if (path_start == std::string_view::npos) return std::string(endpoint) + "/v1/traces";
  const std::string_view rest = endpoint.substr(path_start);
  const size_t query = rest.find_first_of("?#");
  const std::string_view path = rest.substr(0, query);
  if (path.empty() || path == "/") {
    return std::string(endpoint.substr(0, path_start)) + "/v1/traces" +
           std::string(query == std::string_view::npos ? "" : rest.substr(query));
  }
  return std::string(endpoint);
}

std::optional<Duration> ParseRetryAfter(std::string_view value, Time now) {
  return mend::ParseRetryAfter(value, now, kLongestWait);
}

}  // namespace mend::obs
