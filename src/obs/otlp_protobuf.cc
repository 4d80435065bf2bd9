// OTLP protobuf encoding. Field numbers follow opentelemetry-proto (collector/trace/v1,
// trace/v1, resource/v1, common/v1); docs/observe.md lists the ones used here.

#include <type_traits>

#include "mend/obs/otlp_encode.h"
#include "obs/otlp_encode_util.h"
#include "obs/proto_writer.h"

namespace mend::obs {
namespace {

using otlp_internal::HexToBytes;
using otlp_internal::UnixNanos;

// AnyValue
constexpr uint32_t kAnyString = 1, kAnyBool = 2, kAnyInt = 3, kAnyDouble = 4, kAnyArray = 5;
constexpr uint32_t kArrayValues = 1;                      // ArrayValue
constexpr uint32_t kKeyValueKey = 1, kKeyValueValue = 2;  // KeyValue
// ExportTraceServiceRequest, ResourceSpans, Resource, ScopeSpans, InstrumentationScope
constexpr uint32_t kRequestResourceSpans = 1;
constexpr uint32_t kResourceSpansResource = 1, kResourceSpansScopeSpans = 2;
constexpr uint32_t kResourceAttributes = 1;
constexpr uint32_t kScopeSpansScope = 1, kScopeSpansSpans = 2;
constexpr uint32_t kScopeName = 1, kScopeVersion = 2;
// Span
constexpr uint32_t kSpanTraceId = 1, kSpanSpanId = 2, kSpanParentSpanId = 4, kSpanName = 5,
                   kSpanKind = 6, kSpanStart = 7, kSpanEnd = 8, kSpanAttributes = 9,
                   kSpanEvents = 11, kSpanLinks = 13, kSpanStatus = 15, kSpanFlags = 16;
constexpr uint32_t kEventTime = 1, kEventName = 2, kEventAttributes = 3;  // Span.Event
constexpr uint32_t kLinkTraceId = 1, kLinkSpanId = 2, kLinkAttributes = 4, kLinkFlags = 6;
constexpr uint32_t kStatusMessage = 2, kStatusCode = 3;  // Status

class Encoder {
 public:
  // A string field; proto3 strings must be UTF-8. `always` writes an empty string too (needed
  // inside a oneof, where presence carries meaning).
  void String(uint32_t field, std::string_view text, bool always = false) {
    if (text.empty() && !always) return;
    w_.Bytes(field, otlp_internal::ValidUtf8(text, scratch_));
  }

  void Id(uint32_t field, std::string_view hex, size_t bytes) {
    if (std::optional<std::string> raw = HexToBytes(hex, bytes)) w_.Bytes(field, *raw);
  }

  void Value(const AttributeValue& value) {
    std::visit(
        [this](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            String(kAnyString, v, true);
          } else if constexpr (std::is_same_v<T, int64_t>) {
            w_.Int64(kAnyInt, v);
          } else if constexpr (std::is_same_v<T, double>) {
            w_.Double(kAnyDouble, v);
          } else if constexpr (std::is_same_v<T, bool>) {
            w_.Varint(kAnyBool, v ? 1 : 0);
          } else {
            const size_t array = w_.Begin(kAnyArray);
            for (const std::string& item : v) {
              const size_t any = w_.Begin(kArrayValues);
              String(kAnyString, item, true);
              w_.End(any);
            }
            w_.End(array);
          }
        },
        value);
  }

  void Attributes(uint32_t field, const std::vector<Attribute>& attributes) {
    for (const Attribute& a : attributes) {
      const size_t kv = w_.Begin(field);
      String(kKeyValueKey, a.key);
      const size_t any = w_.Begin(kKeyValueValue);
      Value(a.value);
      w_.End(any);
      w_.End(kv);
    }
  }

  void Span(const SpanData& span) {
    const size_t start = w_.Begin(kScopeSpansSpans);
    Id(kSpanTraceId, span.context.trace_id, 16);
    Id(kSpanSpanId, span.context.span_id, 8);
    Id(kSpanParentSpanId, span.parent_span_id, 8);
    String(kSpanName, span.name);
    w_.Int64(kSpanKind, static_cast<int>(span.kind));
    w_.Fixed64(kSpanStart, UnixNanos(span.start));
    w_.Fixed64(kSpanEnd, UnixNanos(span.end));
    Attributes(kSpanAttributes, span.attributes);
    for (const SpanEvent& e : span.events) {
      const size_t event = w_.Begin(kSpanEvents);
      w_.Fixed64(kEventTime, UnixNanos(e.time));
      String(kEventName, e.name);
      Attributes(kEventAttributes, e.attributes);
      w_.End(event);
    }
    for (const SpanLink& l : span.links) {
      const size_t link = w_.Begin(kSpanLinks);
      Id(kLinkTraceId, l.context.trace_id, 16);
      Id(kLinkSpanId, l.context.span_id, 8);
      Attributes(kLinkAttributes, l.attributes);
      w_.Fixed32(kLinkFlags, l.context.flags);
      w_.End(link);
    }
    if (span.status != SpanStatus::kUnset || !span.status_message.empty()) {
      const size_t status = w_.Begin(kSpanStatus);
      String(kStatusMessage, span.status_message);
      if (span.status != SpanStatus::kUnset) w_.Int64(kStatusCode, static_cast<int>(span.status));
      w_.End(status);
    }
    w_.Fixed32(kSpanFlags, span.context.flags);
    w_.End(start);
  }

  std::string Request(const OtlpResource& resource, const std::vector<SpanData>& spans) {
    const size_t resource_spans = w_.Begin(kRequestResourceSpans);
    const size_t res = w_.Begin(kResourceSpansResource);
    Attributes(kResourceAttributes, resource.attributes);
    w_.End(res);
    const size_t scope_spans = w_.Begin(kResourceSpansScopeSpans);
    const size_t scope = w_.Begin(kScopeSpansScope);
    String(kScopeName, resource.scope_name);
    String(kScopeVersion, resource.scope_version);
    w_.End(scope);
    for (const SpanData& span : spans) Span(span);
    w_.End(scope_spans);
    w_.End(resource_spans);
    return w_.Take();
  }

 private:
  ProtoWriter w_;
  std::string scratch_;
};

}  // namespace

std::string EncodeOtlpProtobuf(const OtlpResource& resource, const std::vector<SpanData>& spans) {
  return Encoder().Request(resource, spans);
}

}  // namespace mend::obs
