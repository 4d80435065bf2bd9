#pragma once

// What the protobuf and JSON decoders of OTLP trace requests share: the decoded form of an
// AnyValue, the place an error is reported at, the limits' bookkeeping, ids, times and the rules
// that turn a decoded request into SpanData (include/mend/obs/otlp_decode.h).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/base64.h"
#include "mend/base/result.h"
#include "mend/obs/otlp_decode.h"
#include "mend/obs/trace.h"

namespace mend::obs::otlp_internal {

struct OtlpKeyValue;

// An AnyValue as the wire has it, before it becomes an AttributeValue (ToAttributeValue).
struct OtlpValue {
  enum class Type { kEmpty, kString, kBool, kInt, kDouble, kBytes, kArray, kKvList };
  Type type = Type::kEmpty;
  std::string text;  // kString; kBytes (raw bytes)
  int64_t int_value = 0;
  double double_value = 0;
  bool bool_value = false;
  std::vector<OtlpValue> items;       // kArray
  std::vector<OtlpKeyValue> entries;  // kKvList
};

struct OtlpKeyValue {
  std::string key;
  OtlpValue value;
};

// A place in the request, for error messages: a chain of nodes living on the decoder's stack,
// rendered only when an error is reported ("resource_spans[0].scope_spans[1].spans[3].trace_id").
struct OtlpPath {
  const OtlpPath* parent = nullptr;
  std::string_view name;
  int64_t index = -1;  // -1: not an element of a list

  std::string Render() const;
};

// kInvalidArgument "OTLP <format>: <path>: <what>" (no path when `at` is null).
Status DecodeError(std::string_view format, const OtlpPath* at, std::string_view what);

// Counts what a request decodes to against OtlpDecodeLimits. Not thread-safe.
class DecodeBudget {
 public:
  DecodeBudget(const OtlpDecodeLimits& limits, std::string_view format)
      : limits_(limits), format_(format) {}

  Status AddSpan();
  // `values` values and `bytes` bytes of text.
  Status Add(size_t values, size_t bytes);
  int max_depth() const { return limits_.max_depth; }
  std::string_view format() const { return format_; }

 private:
  const OtlpDecodeLimits& limits_;
  std::string_view format_;
  size_t spans_ = 0;
  size_t values_ = 0;
  size_t bytes_ = 0;
};

// Raw id bytes as lowercase hex; "" (with `error` set) unless exactly `bytes` long and not all
// zeros.
std::string HexIdFromBytes(std::string_view raw, size_t bytes, std::string* error);
// Hex text (either case) as lowercase hex; "" (with `error` set) unless exactly 2 * `bytes` hex
// digits, not all zeros.
std::string HexIdFromText(std::string_view text, size_t bytes, std::string* error);
// A parent id: absent, empty and all-zero ids mean "no parent" (""); otherwise as above.
std::string ParentIdFromBytes(std::string_view raw, std::string* error);
std::string ParentIdFromText(std::string_view text, std::string* error);

// Nanoseconds since the Unix epoch as a Time; false when beyond the signed 64-bit range.
bool TimeFromUnixNanos(uint64_t ns, Time* out);

// OTLP's numbers to mend's enums: unknown kinds are INTERNAL, unknown status codes UNSET.
SpanKind SpanKindFromNumber(int64_t kind);
SpanStatus SpanStatusFromNumber(int64_t code);

// `text` unchanged when valid UTF-8, else with U+FFFD for each invalid byte.
std::string ValidUtf8String(std::string_view text);

// Base64 (mend/base/base64.h); decoding takes standard or URL-safe, padded or not, as the
// protobuf JSON mapping does.
using ::mend::Base64Decode;
using ::mend::Base64Encode;

// The attribute value of a decoded AnyValue (the mapping of otlp_decode.h), charging any text it
// renders to `budget`.
Result<AttributeValue> ToAttributeValue(OtlpValue value, DecodeBudget& budget);
// Approximate text bytes of a value, for the budget.
size_t TextBytes(const AttributeValue& value);

// What a ScopeSpans' spans inherit: otel.scope.name/version, the scope's attributes, then the
// resource's.
std::vector<Attribute> InheritedAttributes(std::string_view scope_name,
                                           std::string_view scope_version,
                                           const std::vector<Attribute>& scope_attributes,
                                           const std::vector<Attribute>& resource_attributes);
// Appends to each span of `spans` the inherited attributes whose keys it lacks, then sets its
// run_id from a string `mend.run.id` attribute.
Status FinishSpans(const std::vector<Attribute>& inherited, std::vector<SpanData>::iterator first,
                   std::vector<SpanData>::iterator last, DecodeBudget& budget);

Result<std::vector<SpanData>> DecodeOtlpProtobuf(std::string_view body,
                                                 const OtlpDecodeLimits& limits);
Result<std::vector<SpanData>> DecodeOtlpJson(std::string_view body, const OtlpDecodeLimits& limits);

}  // namespace mend::obs::otlp_internal
