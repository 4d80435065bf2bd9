// OTLP/JSON trace requests to SpanData: the protobuf JSON mapping with OTLP's rules
// (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): lowerCamelCase member
// names, trace and span ids as hex, enums as integers (their names are accepted too), 64-bit
// integers as decimal strings or numbers. Unknown members are ignored; a null member counts as
// absent. base's ParseJson bounds the document's nesting, so walking it cannot exhaust the stack.

#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "mend/base/json.h"
#include "obs/otlp_decode_common.h"

namespace mend::obs::otlp_internal {
namespace {

using nlohmann::json;

constexpr std::string_view kFormat = "JSON";

constexpr std::string_view kKindNames[] = {"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL",
                                           "SPAN_KIND_SERVER",      "SPAN_KIND_CLIENT",
                                           "SPAN_KIND_PRODUCER",    "SPAN_KIND_CONSUMER"};
constexpr std::string_view kStatusNames[] = {"STATUS_CODE_UNSET", "STATUS_CODE_OK",
                                             "STATUS_CODE_ERROR"};

std::string_view TypeName(const json& v) {
  if (v.is_string()) return "a string";
  if (v.is_number()) return "a number";
  if (v.is_boolean()) return "a boolean";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

Status TypeError(const OtlpPath& at, const json& v, std::string_view want) {
  return DecodeError(kFormat, &at,
                     "expected " + std::string(want) + ", got " + std::string(TypeName(v)));
}

// The member `key` of `obj`, or nullptr when absent or null.
const json* Member(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

// Exactly the digits of an integer of type T (and a leading '-' for a signed T).
template <typename T>
bool ParseDecimal(std::string_view text, T* out) {
  if (text.empty() || text.front() == '+') return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// A number that is an integer in [lo, hi]; nlohmann keeps integers exactly, and an integral
// float (1e3) is accepted as the protobuf JSON mapping does.
template <typename T>
bool IntegerOf(const json& v, T* out) {
  constexpr T lo = std::numeric_limits<T>::min();
  constexpr T hi = std::numeric_limits<T>::max();
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) return false;
    *out = static_cast<T>(u);
    return true;
  }
  if (v.is_number_integer()) {
    const auto i = v.get<int64_t>();
    if (i < 0 ? i < static_cast<int64_t>(lo) : static_cast<uint64_t>(i) > uint64_t{hi}) {
      return false;
    }
    *out = static_cast<T>(i);
    return true;
  }
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  // 2^63 and 2^64 are exact as doubles; hi itself is not, hence the strict bound.
  const double limit = static_cast<double>(hi) + 1.0;
  if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(lo) || d >= limit) {
    return false;
  }
  *out = static_cast<T>(d);
  return true;
}

template <typename T>
Result<T> IntegerMember(const json& v, const OtlpPath& at) {
  T out{};
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (ParseDecimal(s, &out)) return out;
    return DecodeError(kFormat, &at, "\"" + s + "\" is not a decimal integer in range");
  }
  if (IntegerOf(v, &out)) return out;
  if (v.is_number()) return DecodeError(kFormat, &at, v.dump() + " is not an integer in range");
  return TypeError(at, v, "an integer (a number or a decimal string)");
}

Result<double> DoubleMember(const json& v, const OtlpPath& at) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return TypeError(at, v, "a number");
  const std::string& s = v.get_ref<const std::string&>();
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s == "Infinity") return std::numeric_limits<double>::infinity();
  if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  double d = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec != std::errc() || end != s.data() + s.size()) {
    return DecodeError(kFormat, &at, "\"" + s + "\" is not a number");
  }
  return d;
}

// An enum: its number, or its name among `names` (index = number).
template <size_t N>
Result<int64_t> EnumMember(const json& v, const OtlpPath& at, const std::string_view (&names)[N]) {
  if (!v.is_string()) return IntegerMember<int64_t>(v, at);
  const std::string& s = v.get_ref<const std::string&>();
  for (size_t i = 0; i < N; ++i) {
    if (s == names[i]) return static_cast<int64_t>(i);
  }
  return DecodeError(kFormat, &at, "unknown enum value \"" + s + "\"");
}

class JsonDecoder {
 public:
  explicit JsonDecoder(const OtlpDecodeLimits& limits) : budget_(limits, kFormat) {}

  Result<std::vector<SpanData>> Request(std::string_view body) {
    Result<json> doc = ParseJson(body);
    if (!doc.ok()) return DecodeError(kFormat, nullptr, doc.status().message());
    const OtlpPath at{nullptr, "resourceSpans"};
    if (!doc->is_object()) return TypeError(OtlpPath{nullptr, "request"}, *doc, "an object");
    MEND_ASSIGN_OR_RETURN(const json* list, List(*doc, "resourceSpans", at));
    for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
      MEND_RETURN_IF_ERROR(ResourceSpans((*list)[i], {nullptr, "resourceSpans", Index(i)}));
    }
    return std::move(spans_);
  }

 private:
  static int64_t Index(size_t i) { return static_cast<int64_t>(i); }

  // The array member `key` of `obj` (nullptr when absent); `at` names the member.
  static Result<const json*> List(const json& obj, const char* key, const OtlpPath& at) {
    const json* v = Member(obj, key);
    if (v != nullptr && !v->is_array()) return TypeError(at, *v, "an array");
    return v;
  }

  // The object member `key` of `obj` (nullptr when absent).
  static Result<const json*> Object(const json& obj, const char* key, const OtlpPath& parent) {
    const json* v = Member(obj, key);
    if (v != nullptr && !v->is_object()) return TypeError({&parent, key}, *v, "an object");
    return v;
  }

  // The string member `key` of `obj` ("" when absent).
  static Result<std::string> String(const json& obj, const char* key, const OtlpPath& parent) {
    const json* v = Member(obj, key);
    if (v == nullptr) return std::string();
    if (!v->is_string()) return TypeError({&parent, key}, *v, "a string");
    return ValidUtf8String(v->get_ref<const std::string&>());
  }

  static Result<Time> Nanos(const json& obj, const char* key, const OtlpPath& parent) {
    const json* v = Member(obj, key);
    if (v == nullptr) return Time{};
    const OtlpPath at{&parent, key};
    MEND_ASSIGN_OR_RETURN(uint64_t ns, IntegerMember<uint64_t>(*v, at));
    Time t;
    if (!TimeFromUnixNanos(ns, &t)) return DecodeError(kFormat, &at, "time out of range");
    return t;
  }

  static Result<uint8_t> Flags(const json& obj, const OtlpPath& parent) {
    const json* v = Member(obj, "flags");
    if (v == nullptr) return uint8_t{0};
    MEND_ASSIGN_OR_RETURN(uint32_t flags, IntegerMember<uint32_t>(*v, {&parent, "flags"}));
    return static_cast<uint8_t>(flags & 0xff);
  }

  static Result<std::string> Id(const json& obj, const char* key, size_t bytes,
                                const OtlpPath& parent) {
    const OtlpPath at{&parent, key};
    MEND_ASSIGN_OR_RETURN(std::string text, String(obj, key, parent));
    if (text.empty()) return DecodeError(kFormat, &at, "missing");
    std::string error;
    std::string hex = HexIdFromText(text, bytes, &error);
    if (hex.empty()) return DecodeError(kFormat, &at, error);
    return hex;
  }

  Status ResourceSpans(const json& rs, const OtlpPath& at) {
    if (!rs.is_object()) return TypeError(at, rs, "an object");
    std::vector<Attribute> resource;
    const OtlpPath resource_at{&at, "resource"};
    MEND_ASSIGN_OR_RETURN(const json* res, Object(rs, "resource", at));
    if (res != nullptr) MEND_RETURN_IF_ERROR(Attributes(*res, resource_at, resource));
    MEND_ASSIGN_OR_RETURN(const json* list, List(rs, "scopeSpans", {&at, "scopeSpans"}));
    for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
      MEND_RETURN_IF_ERROR(ScopeSpans((*list)[i], {&at, "scopeSpans", Index(i)}, resource));
    }
    return OkStatus();
  }

  Status ScopeSpans(const json& ss, const OtlpPath& at, const std::vector<Attribute>& resource) {
    if (!ss.is_object()) return TypeError(at, ss, "an object");
    std::string name, version;
    std::vector<Attribute> attributes;
    MEND_ASSIGN_OR_RETURN(const json* scope, Object(ss, "scope", at));
    if (scope != nullptr) {
      const OtlpPath scope_at{&at, "scope"};
      MEND_ASSIGN_OR_RETURN(name, String(*scope, "name", scope_at));
      MEND_ASSIGN_OR_RETURN(version, String(*scope, "version", scope_at));
      MEND_RETURN_IF_ERROR(Attributes(*scope, scope_at, attributes));
    }
    const size_t first = spans_.size();
    MEND_ASSIGN_OR_RETURN(const json* list, List(ss, "spans", {&at, "spans"}));
    for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
      MEND_RETURN_IF_ERROR(Span((*list)[i], {&at, "spans", Index(i)}));
    }
    return FinishSpans(InheritedAttributes(name, version, attributes, resource),
                       spans_.begin() + static_cast<ptrdiff_t>(first), spans_.end(), budget_);
  }

  Status Span(const json& s, const OtlpPath& at) {
    if (!s.is_object()) return TypeError(at, s, "an object");
    MEND_RETURN_IF_ERROR(budget_.AddSpan());
    SpanData span;
    MEND_ASSIGN_OR_RETURN(span.context.trace_id, Id(s, "traceId", 16, at));
    MEND_ASSIGN_OR_RETURN(span.context.span_id, Id(s, "spanId", 8, at));
    MEND_ASSIGN_OR_RETURN(std::string parent, String(s, "parentSpanId", at));
    std::string error;
    span.parent_span_id = ParentIdFromText(parent, &error);
    if (!error.empty()) return DecodeError(kFormat, &at, "parentSpanId " + error);
    MEND_ASSIGN_OR_RETURN(span.context.flags, Flags(s, at));
    MEND_ASSIGN_OR_RETURN(span.name, String(s, "name", at));
    if (const json* kind = Member(s, "kind")) {
      MEND_ASSIGN_OR_RETURN(int64_t k, EnumMember(*kind, {&at, "kind"}, kKindNames));
      span.kind = SpanKindFromNumber(k);
    }
    MEND_ASSIGN_OR_RETURN(span.start, Nanos(s, "startTimeUnixNano", at));
    MEND_ASSIGN_OR_RETURN(span.end, Nanos(s, "endTimeUnixNano", at));
    MEND_RETURN_IF_ERROR(Attributes(s, at, span.attributes));
    MEND_RETURN_IF_ERROR(Events(s, at, span.events));
    MEND_RETURN_IF_ERROR(Links(s, at, span.links));
    MEND_RETURN_IF_ERROR(SpanStatusMember(s, at, span));
    spans_.push_back(std::move(span));
    return OkStatus();
  }

  Status SpanStatusMember(const json& s, const OtlpPath& parent, SpanData& span) {
    MEND_ASSIGN_OR_RETURN(const json* status, Object(s, "status", parent));
    if (status == nullptr) return OkStatus();
    const OtlpPath at{&parent, "status"};
    MEND_ASSIGN_OR_RETURN(span.status_message, String(*status, "message", at));
    if (const json* code = Member(*status, "code")) {
      MEND_ASSIGN_OR_RETURN(int64_t c, EnumMember(*code, {&at, "code"}, kStatusNames));
      span.status = SpanStatusFromNumber(c);
    }
    return OkStatus();
  }

  Status Events(const json& s, const OtlpPath& parent, std::vector<SpanEvent>& out) {
    MEND_ASSIGN_OR_RETURN(const json* list, List(s, "events", {&parent, "events"}));
    for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
      const OtlpPath at{&parent, "events", Index(i)};
      const json& e = (*list)[i];
      if (!e.is_object()) return TypeError(at, e, "an object");
      MEND_RETURN_IF_ERROR(budget_.Add(1, 0));
      SpanEvent& event = out.emplace_back();
      MEND_ASSIGN_OR_RETURN(event.time, Nanos(e, "timeUnixNano", at));
      MEND_ASSIGN_OR_RETURN(event.name, String(e, "name", at));
      MEND_RETURN_IF_ERROR(Attributes(e, at, event.attributes));
    }
    return OkStatus();
  }

  Status Links(const json& s, const OtlpPath& parent, std::vector<SpanLink>& out) {
    MEND_ASSIGN_OR_RETURN(const json* list, List(s, "links", {&parent, "links"}));
    for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
      const OtlpPath at{&parent, "links", Index(i)};
      const json& l = (*list)[i];
      if (!l.is_object()) return TypeError(at, l, "an object");
      MEND_RETURN_IF_ERROR(budget_.Add(1, 0));
      SpanLink& link = out.emplace_back();
      MEND_ASSIGN_OR_RETURN(link.context.trace_id, Id(l, "traceId", 16, at));
      MEND_ASSIGN_OR_RETURN(link.context.span_id, Id(l, "spanId", 8, at));
      MEND_ASSIGN_OR_RETURN(link.context.flags, Flags(l, at));
      MEND_RETURN_IF_ERROR(Attributes(l, at, link.attributes));
    }
    return OkStatus();
  }

  // The `attributes` member of `obj`, appended to `out`.
  Status Attributes(const json& obj, const OtlpPath& parent, std::vector<Attribute>& out) {
    MEND_ASSIGN_OR_RETURN(const json* list, List(obj, "attributes", {&parent, "attributes"}));
    for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
      const OtlpPath at{&parent, "attributes", Index(i)};
      OtlpKeyValue kv;
      MEND_RETURN_IF_ERROR(KeyValue((*list)[i], at, 0, kv));
      MEND_ASSIGN_OR_RETURN(AttributeValue value, ToAttributeValue(std::move(kv.value), budget_));
      MEND_RETURN_IF_ERROR(budget_.Add(1, kv.key.size() + TextBytes(value)));
      out.push_back({std::move(kv.key), std::move(value)});
    }
    return OkStatus();
  }

  Status KeyValue(const json& kv, const OtlpPath& at, int depth, OtlpKeyValue& out) {
    if (!kv.is_object()) return TypeError(at, kv, "an object");
    MEND_ASSIGN_OR_RETURN(out.key, String(kv, "key", at));
    MEND_ASSIGN_OR_RETURN(const json* value, Object(kv, "value", at));
    if (value == nullptr) return OkStatus();
    return AnyValue(*value, {&at, "value"}, depth, out.value);
  }

  Status AnyValue(const json& v, const OtlpPath& at, int depth, OtlpValue& out) {
    using Type = OtlpValue::Type;
    if (const json* s = Member(v, "stringValue")) {
      if (!s->is_string()) return TypeError({&at, "stringValue"}, *s, "a string");
      out.type = Type::kString;
      out.text = ValidUtf8String(s->get_ref<const std::string&>());
    } else if (const json* b = Member(v, "boolValue")) {
      if (!b->is_boolean()) return TypeError({&at, "boolValue"}, *b, "a boolean");
      out.type = Type::kBool;
      out.bool_value = b->get<bool>();
    } else if (const json* i = Member(v, "intValue")) {
      out.type = Type::kInt;
      MEND_ASSIGN_OR_RETURN(out.int_value, IntegerMember<int64_t>(*i, {&at, "intValue"}));
    } else if (const json* d = Member(v, "doubleValue")) {
      out.type = Type::kDouble;
      MEND_ASSIGN_OR_RETURN(out.double_value, DoubleMember(*d, {&at, "doubleValue"}));
    } else if (const json* bytes = Member(v, "bytesValue")) {
      const OtlpPath field{&at, "bytesValue"};
      if (!bytes->is_string()) return TypeError(field, *bytes, "a base64 string");
      out.type = Type::kBytes;
      if (!Base64Decode(bytes->get_ref<const std::string&>(), &out.text)) {
        return DecodeError(kFormat, &field, "not base64");
      }
    } else if (const json* array = Member(v, "arrayValue")) {
      return ListValue(*array, {&at, "arrayValue"}, depth + 1, Type::kArray, out);
    } else if (const json* kvlist = Member(v, "kvlistValue")) {
      return ListValue(*kvlist, {&at, "kvlistValue"}, depth + 1, Type::kKvList, out);
    }
    return OkStatus();
  }

  // An arrayValue or kvlistValue ({"values": [...]}), `depth` levels below the attribute.
  Status ListValue(const json& v, const OtlpPath& at, int depth, OtlpValue::Type type,
                   OtlpValue& out) {
    if (!v.is_object()) return TypeError(at, v, "an object");
    if (depth > budget_.max_depth()) {
      return DecodeError(kFormat, &at,
                         "values nested deeper than " + std::to_string(budget_.max_depth()));
    }
    out.type = type;
    MEND_ASSIGN_OR_RETURN(const json* list, List(v, "values", {&at, "values"}));
    for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
      const OtlpPath element{&at, "values", Index(i)};
      MEND_RETURN_IF_ERROR(budget_.Add(1, 0));
      if (type == OtlpValue::Type::kKvList) {
        OtlpKeyValue& kv = out.entries.emplace_back();
        MEND_RETURN_IF_ERROR(KeyValue((*list)[i], element, depth, kv));
        MEND_RETURN_IF_ERROR(budget_.Add(0, kv.key.size()));
        continue;
      }
      const json& item = (*list)[i];
      if (!item.is_object()) return TypeError(element, item, "an object");
      MEND_RETURN_IF_ERROR(AnyValue(item, element, depth, out.items.emplace_back()));
    }
    return OkStatus();
  }

  DecodeBudget budget_;
  std::vector<SpanData> spans_;
};

}  // namespace

Result<std::vector<SpanData>> DecodeOtlpJson(std::string_view body,
                                             const OtlpDecodeLimits& limits) {
  return JsonDecoder(limits).Request(body);
}

}  // namespace mend::obs::otlp_internal
