#include "obs/otlp_decode_common.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <utility>

#include "mend/base/utf8.h"

namespace mend::obs::otlp_internal {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendJsonString(std::string_view text, std::string& out) {
  out += '"';
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20) {
      out += "\\u00";
      out += kHexDigits[u >> 4];
      out += kHexDigits[u & 0xf];
    } else {
      out += c;
    }
  }
  out += '"';
}

void AppendJsonDouble(double v, std::string& out) {
  if (std::isnan(v)) {
    out += "\"NaN\"";
  } else if (std::isinf(v)) {
    out += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  } else {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, ec == std::errc() ? end : buf);
  }
}

// The JSON text of a value nested in an array or kvlist. The depth was bounded when decoding.
void RenderJson(const OtlpValue& value, std::string& out) {
  using Type = OtlpValue::Type;
  switch (value.type) {
    case Type::kEmpty:
      out += "null";
      return;
    case Type::kString:
      return AppendJsonString(value.text, out);
    case Type::kBool:
      out += value.bool_value ? "true" : "false";
      return;
    case Type::kInt:
      out += std::to_string(value.int_value);
      return;
    case Type::kDouble:
      return AppendJsonDouble(value.double_value, out);
    case Type::kBytes:
      return AppendJsonString(Base64Encode(value.text), out);
    case Type::kArray:
      out += '[';
      for (size_t i = 0; i < value.items.size(); ++i) {
        if (i > 0) out += ',';
        RenderJson(value.items[i], out);
      }
      out += ']';
      return;
    case Type::kKvList:
      out += '{';
      for (size_t i = 0; i < value.entries.size(); ++i) {
        if (i > 0) out += ',';
        AppendJsonString(value.entries[i].key, out);
        out += ':';
        RenderJson(value.entries[i].value, out);
      }
      out += '}';
      return;
  }
}

bool AllStrings(const std::vector<OtlpValue>& items) {
  for (const OtlpValue& item : items) {
    if (item.type != OtlpValue::Type::kString) return false;
  }
  return true;
}

}  // namespace

std::string OtlpPath::Render() const {
  std::vector<const OtlpPath*> chain;
  for (const OtlpPath* p = this; p != nullptr; p = p->parent) chain.push_back(p);
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (!out.empty()) out += '.';
    out += (*it)->name;
    if ((*it)->index >= 0) out += "[" + std::to_string((*it)->index) + "]";
  }
  return out;
}

Status DecodeError(std::string_view format, const OtlpPath* at, std::string_view what) {
  std::string message = "OTLP " + std::string(format) + ": ";
  if (at != nullptr) message += at->Render() + ": ";
  message += what;
  return InvalidArgumentError(message);
}

Status DecodeBudget::AddSpan() {
  if (++spans_ > limits_.max_spans) {
    return DecodeError(format_, nullptr,
                       "the request holds more than " + std::to_string(limits_.max_spans) +
                           " spans, the receiver's limit");
  }
  return OkStatus();
}

Status DecodeBudget::Add(size_t values, size_t bytes) {
  values_ += values;
  bytes_ += bytes;
  if (values_ > limits_.max_values) {
    return DecodeError(format_, nullptr,
                       "the request holds more than " + std::to_string(limits_.max_values) +
                           " attributes, events, links and array elements (resource attributes "
                           "counted once per span), the receiver's limit");
  }
  if (bytes_ > limits_.max_string_bytes) {
    return DecodeError(format_, nullptr,
                       "the request's attributes hold more than " +
                           std::to_string(limits_.max_string_bytes) +
                           " bytes of text (resource attributes counted once per span), the "
                           "receiver's limit");
  }
  return OkStatus();
}

std::string HexIdFromBytes(std::string_view raw, size_t bytes, std::string* error) {
  if (raw.size() != bytes) {
    *error = "is " + std::to_string(raw.size()) + " bytes, want " + std::to_string(bytes);
    return "";
  }
  std::string hex(2 * bytes, '0');
  bool zero = true;
  for (size_t i = 0; i < bytes; ++i) {
    const auto b = static_cast<uint8_t>(raw[i]);
    zero = zero && b == 0;
    hex[2 * i] = kHexDigits[b >> 4];
    hex[2 * i + 1] = kHexDigits[b & 0xf];
  }
  if (zero) {
    *error = "is all zeros, an invalid id";
    return "";
  }
  return hex;
}

std::string HexIdFromText(std::string_view text, size_t bytes, std::string* error) {
  if (text.size() != 2 * bytes) {
    *error = "is " + std::to_string(text.size()) + " characters, want " +
             std::to_string(2 * bytes) + " hex digits";
    return "";
  }
  std::string hex(text);
  bool zero = true;
  for (char& c : hex) {
    const int v = HexValue(c);
    if (v < 0) {
      *error = "is not hex";
      return "";
    }
    c = kHexDigits[v];
    zero = zero && v == 0;
  }
  if (zero) {
    *error = "is all zeros, an invalid id";
    return "";
  }
  return hex;
}

std::string ParentIdFromBytes(std::string_view raw, std::string* error) {
  if (raw.find_first_not_of('\0') == std::string_view::npos) return "";
  return HexIdFromBytes(raw, 8, error);
}

std::string ParentIdFromText(std::string_view text, std::string* error) {
  if (text.find_first_not_of('0') == std::string_view::npos) return "";
  return HexIdFromText(text, 8, error);
}

bool TimeFromUnixNanos(uint64_t ns, Time* out) {
  if (ns > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  *out = Time{} + std::chrono::duration_cast<Time::duration>(
                      std::chrono::nanoseconds(static_cast<int64_t>(ns)));
  return true;
}

SpanKind SpanKindFromNumber(int64_t kind) {
  return kind >= 1 && kind <= 5 ? static_cast<SpanKind>(kind) : SpanKind::kInternal;
}

SpanStatus SpanStatusFromNumber(int64_t code) {
  return code >= 0 && code <= 2 ? static_cast<SpanStatus>(code) : SpanStatus::kUnset;
}

std::string ValidUtf8String(std::string_view text) {
  if (IsValidUtf8(text)) return std::string(text);
  return SanitizeUtf8(text);
}

Result<AttributeValue> ToAttributeValue(OtlpValue value, DecodeBudget& budget) {
  using Type = OtlpValue::Type;
  switch (value.type) {
    case Type::kString:
      return AttributeValue(std::move(value.text));
    case Type::kBool:
      return AttributeValue(value.bool_value);
    case Type::kInt:
      return AttributeValue(value.int_value);
    case Type::kDouble:
      return AttributeValue(value.double_value);
    case Type::kBytes:
      return AttributeValue(Base64Encode(value.text));
    case Type::kArray:
      if (AllStrings(value.items)) {
        std::vector<std::string> strings;
        strings.reserve(value.items.size());
        for (OtlpValue& item : value.items) strings.push_back(std::move(item.text));
        return AttributeValue(std::move(strings));
      }
      break;
    case Type::kEmpty:
      return AttributeValue(std::string());
    case Type::kKvList:
      break;
  }
  std::string json;
  RenderJson(value, json);
  MEND_RETURN_IF_ERROR(budget.Add(0, json.size()));
  return AttributeValue(std::move(json));
}

size_t TextBytes(const AttributeValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return s->size();
  if (const auto* a = std::get_if<std::vector<std::string>>(&value)) {
    size_t n = 0;
    for (const std::string& item : *a) n += item.size();
    return n;
  }
  return 0;
}

std::vector<Attribute> InheritedAttributes(std::string_view scope_name,
                                           std::string_view scope_version,
                                           const std::vector<Attribute>& scope_attributes,
                                           const std::vector<Attribute>& resource_attributes) {
  std::vector<Attribute> out;
  out.reserve(2 + scope_attributes.size() + resource_attributes.size());
  if (!scope_name.empty()) out.push_back({"otel.scope.name", std::string(scope_name)});
  if (!scope_version.empty()) out.push_back({"otel.scope.version", std::string(scope_version)});
  out.insert(out.end(), scope_attributes.begin(), scope_attributes.end());
  out.insert(out.end(), resource_attributes.begin(), resource_attributes.end());
  return out;
}

Status FinishSpans(const std::vector<Attribute>& inherited, std::vector<SpanData>::iterator first,
                   std::vector<SpanData>::iterator last, DecodeBudget& budget) {
  for (auto span = first; span != last; ++span) {
    span->attributes.reserve(span->attributes.size() + inherited.size());
    for (const Attribute& a : inherited) {
      if (FindAttribute(span->attributes, a.key) != nullptr) continue;
      MEND_RETURN_IF_ERROR(budget.Add(1, a.key.size() + TextBytes(a.value)));
      span->attributes.push_back(a);
    }
    const AttributeValue* run = FindAttribute(span->attributes, "mend.run.id");
    if (run != nullptr) {
      if (const auto* s = std::get_if<std::string>(run)) span->run_id = *s;
    }
  }
  return OkStatus();
}

}  // namespace mend::obs::otlp_internal

namespace mend::obs {

Result<std::vector<SpanData>> DecodeOtlpTraces(std::string_view body, OtlpProtocol protocol,
                                               const OtlpDecodeLimits& limits) {
  if (protocol == OtlpProtocol::kHttpJson) return otlp_internal::DecodeOtlpJson(body, limits);
  return otlp_internal::DecodeOtlpProtobuf(body, limits);
}

}  // namespace mend::obs
