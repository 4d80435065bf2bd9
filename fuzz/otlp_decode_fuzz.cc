// The OTLP receiver's request decoding (src/obs/otlp_decode_*.cc, DecodeOtlpTraces): bodies POSTed
// to /v1/traces by any OpenTelemetry SDK, or by anyone who can reach the port. The first byte
// picks protobuf or JSON; the rest is the body. Invariants: errors are kInvalidArgument; the spans
// respect the limits, have valid ids, valid UTF-8 strings and, when re-encoded by mend's own OTLP
// exporter (both encodings), decode to the same spans.
#include <cmath>
#include <string>
#include <variant>

#include "fuzz/fuzz_util.h"
#include "mend/base/utf8.h"
#include "mend/obs/otlp_decode.h"
#include "mend/obs/otlp_encode.h"

namespace mend::obs {
namespace {

bool IsHex(const std::string& id, size_t digits) {
  if (id.size() != digits) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return id != std::string(digits, '0');
}

// NaN never equals itself, so spans holding one are compared by everything else.
bool HasNan(const std::vector<Attribute>& attributes) {
  for (const Attribute& a : attributes) {
    if (const double* d = std::get_if<double>(&a.value); d != nullptr && std::isnan(*d)) {
      return true;
    }
  }
  return false;
}

bool HasNan(const SpanData& span) {
  if (HasNan(span.attributes)) return true;
  for (const SpanEvent& e : span.events) {
    if (HasNan(e.attributes)) return true;
  }
  for (const SpanLink& l : span.links) {
    if (HasNan(l.attributes)) return true;
  }
  return false;
}

void CheckStrings(const std::vector<Attribute>& attributes) {
  for (const Attribute& a : attributes) {
    FUZZ_CHECK(IsValidUtf8(a.key), "an attribute key is not valid UTF-8");
    if (const std::string* s = std::get_if<std::string>(&a.value); s != nullptr) {
      FUZZ_CHECK(IsValidUtf8(*s), "an attribute value is not valid UTF-8");
    }
  }
}

void CheckSpan(const SpanData& span) {
  FUZZ_CHECK(IsHex(span.context.trace_id, 32), "trace id " + span.context.trace_id);
  FUZZ_CHECK(IsHex(span.context.span_id, 16), "span id " + span.context.span_id);
  FUZZ_CHECK(span.parent_span_id.empty() || IsHex(span.parent_span_id, 16), "parent id");
  FUZZ_CHECK(IsValidUtf8(span.name) && IsValidUtf8(span.status_message), "span strings");
  CheckStrings(span.attributes);
  for (const SpanEvent& e : span.events) CheckStrings(e.attributes);
  for (const SpanLink& l : span.links) CheckStrings(l.attributes);
}

void CheckReencoded(const std::vector<SpanData>& spans, const std::string& body,
                    OtlpProtocol protocol) {
  Result<std::vector<SpanData>> again = DecodeOtlpTraces(body, protocol);
  FUZZ_CHECK(again.ok(), "mend's own export does not decode: " + again.status().ToString());
  FUZZ_CHECK(again->size() == spans.size(), "the export lost spans");
  for (size_t i = 0; i < spans.size(); ++i) {
    if (HasNan(spans[i])) continue;
    FUZZ_CHECK((*again)[i] == spans[i], "span " + std::to_string(i) + " changed on re-encoding");
  }
}

}  // namespace
}  // namespace mend::obs

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mend::obs;
  if (size == 0) return 0;
  const OtlpProtocol protocol =
      (data[0] & 1) != 0 ? OtlpProtocol::kHttpJson : OtlpProtocol::kHttpProtobuf;
  const std::string_view body = mend::fuzz::AsText(data + 1, size - 1);
  OtlpDecodeLimits limits;
  // Small limits so that the fuzzer reaches them with small inputs.
  if ((data[0] & 2) != 0)
    limits = {.max_spans = 4, .max_values = 16, .max_string_bytes = 256, .max_depth = 3};
  mend::Result<std::vector<SpanData>> spans = DecodeOtlpTraces(body, protocol, limits);
  if (!spans.ok()) {
    FUZZ_CHECK(spans.status().code() == mend::StatusCode::kInvalidArgument,
               spans.status().ToString());
    return 0;
  }
  FUZZ_CHECK(spans->size() <= limits.max_spans, "more spans than the limit");
  for (const SpanData& span : *spans) CheckSpan(span);
  // The scope and resource the decoder copied onto the spans are already in their attributes;
  // re-encode with none, so nothing is added twice.
  OtlpResource none;
  none.scope_name.clear();
  CheckReencoded(*spans, EncodeOtlpProtobuf(none, *spans), OtlpProtocol::kHttpProtobuf);
  CheckReencoded(*spans, EncodeOtlpJson(none, *spans), OtlpProtocol::kHttpJson);
  return 0;
}
