// OTLP/JSON encoding: the protobuf JSON mapping with OTLP's deviations (hex ids, integer enums).

#include <charconv>
#include <cmath>
#include <type_traits>

#include "mend/obs/otlp_encode.h"
#include "obs/otlp_encode_util.h"

namespace mend::obs {
namespace {

using otlp_internal::HexToBytes;
using otlp_internal::UnixNanos;

class JsonEncoder {
 public:
  std::string Request(const OtlpResource& resource, const std::vector<SpanData>& spans) {
    out_ += "{\"resourceSpans\":[{\"resource\":{\"attributes\":";
    Attributes(resource.attributes);
    out_ += "},\"scopeSpans\":[{\"scope\":{\"name\":";
    String(resource.scope_name);
    if (!resource.scope_version.empty()) {
      out_ += ",\"version\":";
      String(resource.scope_version);
    }
    out_ += "},\"spans\":[";
    for (size_t i = 0; i < spans.size(); ++i) {
      if (i > 0) out_ += ',';
      Span(spans[i]);
    }
    out_ += "]}]}]}";
    return std::move(out_);
  }

 private:
  void Span(const SpanData& span) {
    out_ += '{';
    Id("traceId", span.context.trace_id, 16);
    Id("spanId", span.context.span_id, 8);
    Id("parentSpanId", span.parent_span_id, 8);
    out_ += "\"flags\":";
    out_ += std::to_string(span.context.flags);
    out_ += ",\"name\":";
    String(span.name);
    out_ += ",\"kind\":";
    out_ += std::to_string(static_cast<int>(span.kind));
    Nanos(",\"startTimeUnixNano\":", span.start);
    Nanos(",\"endTimeUnixNano\":", span.end);
    out_ += ",\"attributes\":";
    Attributes(span.attributes);
    out_ += ",\"events\":[";
    for (size_t i = 0; i < span.events.size(); ++i) {
      const SpanEvent& e = span.events[i];
      out_ += i > 0 ? ",{" : "{";
      Nanos("\"timeUnixNano\":", e.time);
      out_ += ",\"name\":";
      String(e.name);
      out_ += ",\"attributes\":";
      Attributes(e.attributes);
      out_ += '}';
    }
    out_ += "],\"links\":[";
    for (size_t i = 0; i < span.links.size(); ++i) {
      const SpanLink& l = span.links[i];
      out_ += i > 0 ? ",{" : "{";
      Id("traceId", l.context.trace_id, 16);
      Id("spanId", l.context.span_id, 8);
      out_ += "\"flags\":";
      out_ += std::to_string(l.context.flags);
      out_ += ",\"attributes\":";
      Attributes(l.attributes);
      out_ += '}';
    }
    out_ += ']';
    if (span.status != SpanStatus::kUnset || !span.status_message.empty()) {
      out_ += ",\"status\":{";
      if (!span.status_message.empty()) {
        out_ += "\"message\":";
        String(span.status_message);
        if (span.status != SpanStatus::kUnset) out_ += ',';
      }
      if (span.status != SpanStatus::kUnset) {
        out_ += "\"code\":";
        out_ += std::to_string(static_cast<int>(span.status));
      }
      out_ += '}';
    }
    out_ += '}';
  }

  // `"name":"<hex>",` — only for a well-formed id, like the protobuf encoding.
  void Id(std::string_view name, std::string_view hex, size_t bytes) {
    if (!HexToBytes(hex, bytes)) return;
    out_ += '"';
    out_ += name;
    out_ += "\":\"";
    out_ += hex;
    out_ += "\",";
  }

  void Nanos(std::string_view prefix, Time t) {
    out_ += prefix;
    out_ += '"';
    out_ += std::to_string(UnixNanos(t));
    out_ += '"';
  }

  void Attributes(const std::vector<Attribute>& attributes) {
    out_ += '[';
    for (size_t i = 0; i < attributes.size(); ++i) {
      out_ += i > 0 ? ",{\"key\":" : "{\"key\":";
      String(attributes[i].key);
      out_ += ",\"value\":";
      Value(attributes[i].value);
      out_ += '}';
    }
    out_ += ']';
  }

  void Value(const AttributeValue& value) {
    std::visit(
        [this](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            out_ += "{\"stringValue\":";
            String(v);
          } else if constexpr (std::is_same_v<T, int64_t>) {
            out_ += "{\"intValue\":\"";
            out_ += std::to_string(v);
            out_ += '"';
          } else if constexpr (std::is_same_v<T, double>) {
            out_ += "{\"doubleValue\":";
            Double(v);
          } else if constexpr (std::is_same_v<T, bool>) {
            out_ += v ? "{\"boolValue\":true" : "{\"boolValue\":false";
          } else {
            out_ += "{\"arrayValue\":{\"values\":[";
            for (size_t i = 0; i < v.size(); ++i) {
              out_ += i > 0 ? ",{\"stringValue\":" : "{\"stringValue\":";
              String(v[i]);
              out_ += '}';
            }
            out_ += "]}";
          }
        },
        value);
    out_ += '}';
  }

  // The shortest text that reads back as the same double; the protobuf JSON mapping spells the
  // non-finite values as strings.
  void Double(double v) {
    if (std::isnan(v)) {
      out_ += "\"NaN\"";
    } else if (std::isinf(v)) {
      out_ += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    } else {
      char buf[32];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
      out_.append(buf, ec == std::errc() ? end : buf);
    }
  }

  void String(std::string_view raw) {
    static constexpr char kHex[] = "0123456789abcdef";
    const std::string_view text = otlp_internal::ValidUtf8(raw, scratch_);
    out_ += '"';
    for (char c : text) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += c;
      } else if (u < 0x20) {
        switch (c) {
          case '\n':
            out_ += "\\n";
            break;
          case '\r':
            out_ += "\\r";
            break;
          case '\t':
            out_ += "\\t";
            break;
          default:
            out_ += "\\u00";
            out_ += kHex[u >> 4];
            out_ += kHex[u & 0xf];
        }
      } else {
        out_ += c;
      }
    }
    out_ += '"';
  }

  std::string out_;
  std::string scratch_;
};

}  // namespace

std::string EncodeOtlpJson(const OtlpResource& resource, const std::vector<SpanData>& spans) {
  return JsonEncoder().Request(resource, spans);
}

}  // namespace mend::obs
