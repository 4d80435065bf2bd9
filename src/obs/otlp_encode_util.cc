#include "obs/otlp_encode_util.h"

#include <unistd.h>

#include <chrono>

#include "mend/base/utf8.h"
#include "mend/obs/otlp_encode.h"

namespace mend::obs {
namespace otlp_internal {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> HexToBytes(std::string_view hex, size_t bytes) {
  if (hex.size() != 2 * bytes) return std::nullopt;
  std::string out(bytes, '\0');
  for (size_t i = 0; i < bytes; ++i) {
    const int hi = HexDigit(hex[2 * i]);
    const int lo = HexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<char>((hi << 4) | lo);
  }
  return out;
}

uint64_t UnixNanos(Time t) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch());
  return ns.count() < 0 ? 0 : static_cast<uint64_t>(ns.count());
}

std::string_view ValidUtf8(std::string_view text, std::string& scratch) {
  if (IsValidUtf8(text)) return text;
  scratch = SanitizeUtf8(text);
  return scratch;
}

}  // namespace otlp_internal

OtlpResource MakeOtlpResource(std::string_view version, std::string_view host_name) {
  OtlpResource resource;
  resource.attributes.push_back({"service.name", std::string("mend")});
  if (!version.empty()) resource.attributes.push_back({"service.version", std::string(version)});
  if (!host_name.empty()) resource.attributes.push_back({"host.name", std::string(host_name)});
  resource.scope_version = std::string(version);
  return resource;
}

std::string LocalHostName() {
  char name[256] = {0};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

}  // namespace mend::obs
