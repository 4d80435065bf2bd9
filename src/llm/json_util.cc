#include "llm/json_util.h"

namespace mend::llm {

std::string ForMessage(std::string_view s, size_t max_bytes) {
  std::string clean = SanitizeUtf8(s);
  for (char& c : clean) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') c = ' ';
  }
  if (clean.size() <= max_bytes) return clean;
  size_t cut = max_bytes;
  // Back up to a character boundary (never inside a multi-byte sequence).
  while (cut > 0 && (static_cast<unsigned char>(clean[cut]) & 0xC0) == 0x80) --cut;
  clean.resize(cut);
  return clean + "...";
}

Result<Json> ParseJson(std::string_view text) {
  std::string clean = SanitizeUtf8(text);
  try {
    return Json::parse(clean);
  } catch (const Json::exception& e) {
    return InvalidArgumentError(std::string("invalid JSON: ") + e.what());
  }
}

std::string DumpJson(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

const Json* Member(const Json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::optional<std::string> StringMember(const Json& j, std::string_view key) {
  const Json* m = Member(j, key);
  if (m == nullptr || !m->is_string()) return std::nullopt;
  return m->get_ref<const std::string&>();
}

std::optional<int64_t> IntMember(const Json& j, std::string_view key) {
  const Json* m = Member(j, key);
  if (m == nullptr || !m->is_number()) return std::nullopt;
  if (m->is_number_float()) {
    double d = m->get<double>();
    // Out-of-range doubles would make the cast undefined; such a count is garbage anyway.
    if (!(d >= -9.0e18 && d <= 9.0e18)) return std::nullopt;
    return static_cast<int64_t>(d);
  }
  if (m->is_number_unsigned()) {
    uint64_t u = m->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  return m->get<int64_t>();
}

std::optional<int64_t> CountMember(const Json& j, std::string_view key) {
  std::optional<int64_t> n = IntMember(j, key);
  if (n && *n < 0) return std::nullopt;
  return n;
}

std::optional<double> NumberMember(const Json& j, std::string_view key) {
  const Json* m = Member(j, key);
  if (m == nullptr || !m->is_number()) return std::nullopt;
  return m->get<double>();
}

}  // namespace mend::llm
