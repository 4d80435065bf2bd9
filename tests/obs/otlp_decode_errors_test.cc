// DecodeOtlpTraces on malformed and hostile requests: a clear kInvalidArgument, never a crash.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mend/base/random.h"
#include "mend/obs/otlp_decode.h"
#include "mend/obs/otlp_encode.h"
#include "obs/proto_writer.h"
#include "tests/obs/otlp_sample.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

constexpr auto kProto = OtlpProtocol::kHttpProtobuf;
constexpr auto kJson = OtlpProtocol::kHttpJson;

// One ResourceSpans holding one ScopeSpans holding `span` (the Span message's bytes).
std::string WrapSpan(std::string_view span) {
  ProtoWriter scope;
  scope.Bytes(2, span);
  ProtoWriter rs;
  rs.Bytes(2, scope.Take());
  ProtoWriter request;
  request.Bytes(1, rs.Take());
  return request.Take();
}

std::string SpanWithIds(std::string_view trace, std::string_view span) {
  ProtoWriter w;
  w.Bytes(1, trace);
  w.Bytes(2, span);
  return w.Take();
}

TEST(OtlpDecodeErrorsTest, ProtobufIdsMustHaveTheirLength) {
  EXPECT_THAT(DecodeOtlpTraces(WrapSpan(SpanWithIds("short", "8bytes!!")), kProto),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("resource_spans[0].scope_spans[0].spans[0].trace_id: is 5 "
                                 "bytes, want 16")));
  EXPECT_THAT(DecodeOtlpTraces(WrapSpan(SpanWithIds("0123456789abcdef", "7bytes!")), kProto),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("span_id: is 7 bytes, want 8")));
  EXPECT_THAT(DecodeOtlpTraces(WrapSpan(SpanWithIds("", "8bytes!!")), kProto),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("trace_id: missing")));
  EXPECT_THAT(
      DecodeOtlpTraces(WrapSpan(SpanWithIds("0123456789abcdef", std::string(8, '\0'))), kProto),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("span_id: is all zeros")));
  ProtoWriter parent;
  parent.Bytes(4, "abc");
  EXPECT_THAT(
      DecodeOtlpTraces(WrapSpan(SpanWithIds("0123456789abcdef", "8bytes!!") + parent.Take()),
                       kProto),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("parent_span_id: is 3 bytes, want 8")));
}

TEST(OtlpDecodeErrorsTest, ProtobufWrongWireTypeOfAKnownField) {
  ProtoWriter w;
  w.Varint(5, 1);  // name as a varint
  EXPECT_THAT(
      DecodeOtlpTraces(WrapSpan(SpanWithIds("0123456789abcdef", "8bytes!!") + w.Take()), kProto),
      StatusIs(StatusCode::kInvalidArgument,
               HasSubstr("spans[0]: field 5 at byte 34 has wire type varint, want "
                         "length-delimited")));
}

TEST(OtlpDecodeErrorsTest, ProtobufTimeBeyondSignedNanoseconds) {
  ProtoWriter w;
  w.Fixed64(7, ~uint64_t{0});
  EXPECT_THAT(
      DecodeOtlpTraces(WrapSpan(SpanWithIds("0123456789abcdef", "8bytes!!") + w.Take()), kProto),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("start_time_unix_nano: time out of range")));
}

TEST(OtlpDecodeErrorsTest, JsonWrongTypesNameTheMember) {
  const auto decode = [](std::string_view span) {
    return DecodeOtlpTraces(
        R"({"resourceSpans":[{"scopeSpans":[{"spans":[{)" + std::string(span) + "}]}]}]}", kJson);
  };
  constexpr char kIds[] =
      R"("traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174")";
  EXPECT_THAT(decode(std::string(kIds) + R"(,"name":5)"),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("OTLP JSON: resourceSpans[0].scopeSpans[0].spans[0].name: "
                                 "expected a string, got a number")));
  EXPECT_THAT(decode(R"("traceId":"5b8e","spanId":"eee19b7ec3c1b174")"),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("traceId: is 4 characters, want 32 hex digits")));
  EXPECT_THAT(decode(R"("traceId":"zz8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174")"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("traceId: is not hex")));
  EXPECT_THAT(decode(std::string(kIds) + R"(,"startTimeUnixNano":"12x")"),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("startTimeUnixNano: \"12x\" is not a decimal integer")));
  EXPECT_THAT(decode(std::string(kIds) + R"(,"startTimeUnixNano":-1)"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("-1 is not an integer in range")));
  EXPECT_THAT(decode(std::string(kIds) + R"(,"kind":"SPAN_KIND_BOGUS")"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("unknown enum value")));
  EXPECT_THAT(decode(std::string(kIds) + R"(,"attributes":{})"),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("attributes: expected an array, got an object")));
  EXPECT_THAT(
      decode(std::string(kIds) + R"(,"attributes":[{"key":"k","value":{"intValue":true}}])"),
      StatusIs(StatusCode::kInvalidArgument,
               HasSubstr("attributes[0].value.intValue: expected an integer")));
  EXPECT_THAT(
      decode(std::string(kIds) + R"(,"attributes":[{"key":"k","value":{"boolValue":"yes"}}])"),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("boolValue: expected a boolean")));
  EXPECT_THAT(
      decode(std::string(kIds) + R"(,"attributes":[{"key":"k","value":{"bytesValue":"%%"}}])"),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("bytesValue: not base64")));
  EXPECT_THAT(decode(std::string(kIds) +
                     R"(,"attributes":[{"key":"k","value":{"intValue":"9223372036854775808"}}])"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("not a decimal integer in range")));
  EXPECT_THAT(decode(std::string(kIds) + R"(,"events":[5])"),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("events[0]: expected an object, got a number")));
}

TEST(OtlpDecodeErrorsTest, MalformedJsonIsInvalidArgument) {
  EXPECT_THAT(DecodeOtlpTraces(R"({"resourceSpans":[)", kJson),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("OTLP JSON: malformed JSON")));
  EXPECT_THAT(DecodeOtlpTraces("[]", kJson),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("request: expected an object, got an array")));
  EXPECT_THAT(DecodeOtlpTraces(R"({"resourceSpans":{}})", kJson),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("expected an array")));
}

// An attribute whose value is an array nested `depth` times, built in linear time.
std::string NestedJson(int depth) {
  std::string value;
  value.reserve(static_cast<size_t>(depth) * 28 + 100);
  for (int i = 0; i < depth; ++i) value += R"({"arrayValue":{"values":[)";
  value += R"({"intValue":"1"})";
  for (int i = 0; i < depth; ++i) value += "]}}";
  return R"({"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":)" + value + "}]}}]}";
}

void AppendVarint(uint64_t v, std::string& out) {
  for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7f) | 0x80);
  out += static_cast<char>(v);
}

// The same in protobuf: AnyValue{array_value (5): ArrayValue{values (1): AnyValue{...}}}, each
// level's length computed from the inside out, so that building stays linear.
std::string NestedProto(int depth) {
  const std::string leaf("\x18\x01", 2);  // AnyValue{int_value (3) = 1}
  std::vector<size_t> any_size(static_cast<size_t>(depth) + 1), array_size(any_size.size());
  any_size[0] = leaf.size();
  for (size_t k = 1; k < any_size.size(); ++k) {
    array_size[k] = 1 + ProtoWriter::VarintSize(any_size[k - 1]) + any_size[k - 1];
    any_size[k] = 1 + ProtoWriter::VarintSize(array_size[k]) + array_size[k];
  }
  std::string value;
  for (size_t k = any_size.size() - 1; k > 0; --k) {
    value += '\x2a';  // AnyValue.array_value
    AppendVarint(array_size[k], value);
    value += '\x0a';  // ArrayValue.values
    AppendVarint(any_size[k - 1], value);
  }
  value += leaf;
  ProtoWriter kv;
  kv.Bytes(1, "k");
  kv.Bytes(2, value);
  ProtoWriter resource;
  resource.Bytes(1, kv.Take());
  ProtoWriter rs;
  rs.Bytes(1, resource.Take());
  ProtoWriter request;
  request.Bytes(1, rs.Take());
  return request.Take();
}

TEST(OtlpDecodeErrorsTest, NestingBeyondTheLimitIsRejected) {
  OtlpDecodeLimits limits;
  limits.max_depth = 4;
  EXPECT_THAT(DecodeOtlpTraces(NestedJson(4), kJson, limits), IsOk());
  EXPECT_THAT(DecodeOtlpTraces(NestedProto(4), kProto, limits), IsOk());
  EXPECT_THAT(DecodeOtlpTraces(NestedJson(5), kJson, limits),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("nested deeper than 4")));
  EXPECT_THAT(DecodeOtlpTraces(NestedProto(5), kProto, limits),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("nested deeper than 4")));
  // The default limit holds against nesting far deeper than any stack could take.
  EXPECT_THAT(DecodeOtlpTraces(NestedProto(100000), kProto),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("nested deeper than 32")));
  EXPECT_THAT(DecodeOtlpTraces(NestedJson(100000), kJson), StatusIs(StatusCode::kInvalidArgument));
}

TEST(OtlpDecodeErrorsTest, CountLimitsBoundWhatARequestDecodesTo) {
  const std::vector<SpanData> spans = testing::SampleSpans();  // 5 spans
  const OtlpResource resource = testing::SampleResource();
  const std::string body = EncodeOtlpProtobuf(resource, spans);
  OtlpDecodeLimits limits;
  limits.max_spans = 4;
  EXPECT_THAT(DecodeOtlpTraces(body, kProto, limits),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("more than 4 spans")));
  limits = {};
  limits.max_values = 30;
  EXPECT_THAT(DecodeOtlpTraces(EncodeOtlpJson(resource, spans), kJson, limits),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("more than 30 attributes")));
  // Resource attributes are copied onto each span, and the copies count.
  OtlpResource big;
  big.attributes = {{"blob", std::string(1000, 'x')}};
  std::vector<SpanData> many(100, spans[2]);
  for (size_t i = 0; i < many.size(); ++i) many[i].context.span_id[0] = "0123456789abcdef"[i % 16];
  limits = {};
  limits.max_string_bytes = 50'000;
  EXPECT_THAT(DecodeOtlpTraces(EncodeOtlpProtobuf(big, many), kProto, limits),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("more than 50000 bytes")));
}

void ExpectEveryPrefixDecodesOrFails(const std::string& body, OtlpProtocol protocol) {
  for (size_t n = 0; n <= body.size(); ++n) {
    Result<std::vector<SpanData>> r =
        DecodeOtlpTraces(std::string_view(body).substr(0, n), protocol);
    if (!r.ok()) {
      ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument) << n << ": " << r.status();
    }
  }
}

TEST(OtlpDecodeErrorsTest, EveryTruncationOfAValidMessageDecodesOrFails) {
  const OtlpResource resource = testing::SampleResource();
  const std::vector<SpanData> spans = testing::SampleSpans();
  ExpectEveryPrefixDecodesOrFails(EncodeOtlpProtobuf(resource, spans), kProto);
  ExpectEveryPrefixDecodesOrFails(EncodeOtlpJson(resource, spans), kJson);
}

TEST(OtlpDecodeErrorsTest, TruncatedProtobufNamesTheProblem) {
  const std::string body = EncodeOtlpProtobuf(testing::SampleResource(), testing::SampleSpans());
  EXPECT_THAT(DecodeOtlpTraces(body.substr(0, body.size() - 1), kProto),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("runs past the end")));
  EXPECT_THAT(DecodeOtlpTraces(body.substr(0, 2), kProto),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("truncated varint at byte 1")));
}

// Random byte flips of valid messages, seeded: an error or a result, never a crash (the asan
// preset runs this too).
TEST(OtlpDecodeErrorsTest, CorruptedBytesDecodeOrFail) {
  SeededRandom random(42);
  const OtlpResource resource = testing::SampleResource();
  const std::vector<SpanData> spans = testing::SampleSpans();
  for (OtlpProtocol protocol : {kProto, kJson}) {
    const std::string body =
        protocol == kJson ? EncodeOtlpJson(resource, spans) : EncodeOtlpProtobuf(resource, spans);
    for (int i = 0; i < 3000; ++i) {
      std::string corrupt = body;
      const int64_t flips = random.UniformInt(1, 4);
      const auto last = static_cast<int64_t>(corrupt.size()) - 1;
      for (int64_t f = 0; f < flips; ++f) {
        corrupt[random.UniformInt(0, last)] = static_cast<char>(random.UniformInt(0, 255));
      }
      Result<std::vector<SpanData>> r = DecodeOtlpTraces(corrupt, protocol);
      if (!r.ok()) {
        ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status();
      }
    }
  }
}

}  // namespace
}  // namespace mend::obs
