// DecodeOtlpTraces on well-formed requests: round trips through mend's own encoders, and the
// receiver mapping (docs/observe.md, "OTLP receiver") on hand-built requests.

#include "mend/obs/otlp_decode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "mend/obs/otlp_encode.h"
#include "obs/proto_writer.h"
#include "tests/obs/otlp_sample.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::IsOk;
using testing::AtNanos;
using ::testing::ElementsAre;

// What a span of `resource` comes back as: its own attributes, then the inherited ones it lacks.
SpanData WithInherited(SpanData span, const OtlpResource& resource) {
  std::vector<Attribute> inherited = {{"otel.scope.name", resource.scope_name}};
  if (!resource.scope_version.empty()) {
    inherited.push_back({"otel.scope.version", resource.scope_version});
  }
  inherited.insert(inherited.end(), resource.attributes.begin(), resource.attributes.end());
  for (const Attribute& a : inherited) {
    if (FindAttribute(span.attributes, a.key) == nullptr) span.attributes.push_back(a);
  }
  return span;
}

std::vector<SpanData> Expected(const std::vector<SpanData>& spans, const OtlpResource& resource) {
  std::vector<SpanData> out;
  for (const SpanData& s : spans) out.push_back(WithInherited(s, resource));
  return out;
}

TEST(OtlpDecodeTest, ProtobufRoundTripsTheEncoder) {
  const OtlpResource resource = testing::SampleResource();
  const std::vector<SpanData> spans = testing::SampleSpans();
  Result<std::vector<SpanData>> decoded =
      DecodeOtlpTraces(EncodeOtlpProtobuf(resource, spans), OtlpProtocol::kHttpProtobuf);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(*decoded, Expected(spans, resource));
  EXPECT_EQ((*decoded)[0].run_id, "r-1");
  EXPECT_EQ((*decoded)[1].context.flags, 0);
}

TEST(OtlpDecodeTest, JsonRoundTripsTheEncoder) {
  const OtlpResource resource = testing::SampleResource();
  const std::vector<SpanData> spans = testing::SampleSpans();
  Result<std::vector<SpanData>> decoded =
      DecodeOtlpTraces(EncodeOtlpJson(resource, spans), OtlpProtocol::kHttpJson);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(*decoded, Expected(spans, resource));
}

TEST(OtlpDecodeTest, NonFiniteDoublesRoundTripInBothEncodings) {
  SpanData span = testing::SampleSpans()[0];
  span.attributes = {{"nan", std::numeric_limits<double>::quiet_NaN()},
                     {"inf", std::numeric_limits<double>::infinity()},
                     {"ninf", -std::numeric_limits<double>::infinity()}};
  OtlpResource resource;
  for (OtlpProtocol p : {OtlpProtocol::kHttpProtobuf, OtlpProtocol::kHttpJson}) {
    const std::string body = p == OtlpProtocol::kHttpJson ? EncodeOtlpJson(resource, {span})
                                                          : EncodeOtlpProtobuf(resource, {span});
    Result<std::vector<SpanData>> decoded = DecodeOtlpTraces(body, p);
    ASSERT_THAT(decoded, IsOk());
    const auto& attrs = (*decoded)[0].attributes;
    EXPECT_TRUE(std::isnan(std::get<double>(attrs[0].value)));
    EXPECT_EQ(std::get<double>(attrs[1].value), std::numeric_limits<double>::infinity());
    EXPECT_EQ(std::get<double>(attrs[2].value), -std::numeric_limits<double>::infinity());
  }
}

TEST(OtlpDecodeTest, EmptyRequestsHoldNoSpans) {
  EXPECT_THAT(DecodeOtlpTraces("", OtlpProtocol::kHttpProtobuf), IsOk());
  EXPECT_TRUE(DecodeOtlpTraces("", OtlpProtocol::kHttpProtobuf)->empty());
  EXPECT_TRUE(DecodeOtlpTraces("{}", OtlpProtocol::kHttpJson)->empty());
  EXPECT_TRUE(DecodeOtlpTraces(R"({"resourceSpans":[]})", OtlpProtocol::kHttpJson)->empty());
  EXPECT_TRUE(DecodeOtlpTraces(R"({"resourceSpans":null})", OtlpProtocol::kHttpJson)->empty());
}

// Protobuf test requests, built field by field.
class RequestBuilder {
 public:
  // A span with the given ids (raw bytes) and name, plus `extra` bytes appended inside it.
  static std::string Span(std::string_view trace, std::string_view span, std::string_view name,
                          std::string_view extra = "") {
    ProtoWriter w;
    w.Bytes(1, trace);
    w.Bytes(2, span);
    w.Bytes(5, name);
    std::string out = w.Take();
    return out + std::string(extra);
  }
  static std::string StringAttr(uint32_t field, std::string_view key, std::string_view value) {
    ProtoWriter any;
    any.Bytes(1, value);
    ProtoWriter kv;
    kv.Bytes(1, key);
    kv.Bytes(2, any.Take());
    ProtoWriter w;
    w.Bytes(field, kv.Take());
    return w.Take();
  }
  // ResourceSpans with `resource_fields` inside its Resource, one ScopeSpans of `spans`; the
  // resource goes after the spans when `resource_last`.
  static std::string ResourceSpans(std::string_view resource_fields,
                                   const std::vector<std::string>& spans, bool resource_last) {
    ProtoWriter scope_spans;
    for (const std::string& s : spans) scope_spans.Bytes(2, s);
    ProtoWriter rs;
    if (!resource_last) rs.Bytes(1, resource_fields);
    rs.Bytes(2, scope_spans.Take());
    if (resource_last) rs.Bytes(1, resource_fields);
    ProtoWriter request;
    request.Bytes(1, rs.Take());
    return request.Take();
  }
};

const std::string kTrace = "0123456789abcdef";  // 16 bytes
const std::string kSpanA = "spanid-a";          // 8 bytes
const std::string kSpanB = "spanid-b";

TEST(OtlpDecodeTest, ResourceAttributesReachEverySpanWhateverTheFieldOrder) {
  const std::string resource = RequestBuilder::StringAttr(1, "service.name", "planner") +
                               RequestBuilder::StringAttr(1, "k", "from-resource");
  const std::string span_a = RequestBuilder::Span(kTrace, kSpanA, "a");
  const std::string span_b =
      RequestBuilder::Span(kTrace, kSpanB, "b", RequestBuilder::StringAttr(9, "k", "own"));
  const std::string body =
      RequestBuilder::ResourceSpans(resource, {span_a, span_b}, /*resource_last=*/true) +
      RequestBuilder::ResourceSpans(RequestBuilder::StringAttr(1, "service.name", "coder"),
                                    {span_a}, /*resource_last=*/false);
  Result<std::vector<SpanData>> decoded = DecodeOtlpTraces(body, OtlpProtocol::kHttpProtobuf);
  ASSERT_THAT(decoded, IsOk());
  ASSERT_EQ(decoded->size(), 3u);
  EXPECT_THAT((*decoded)[0].attributes,
              ElementsAre(Attribute{"service.name", std::string("planner")},
                          Attribute{"k", std::string("from-resource")}));
  // The span's own attribute wins over the resource's.
  EXPECT_THAT((*decoded)[1].attributes,
              ElementsAre(Attribute{"k", std::string("own")},
                          Attribute{"service.name", std::string("planner")}));
  EXPECT_THAT((*decoded)[2].attributes,
              ElementsAre(Attribute{"service.name", std::string("coder")}));
  EXPECT_EQ((*decoded)[0].context.trace_id, "30313233343536373839616263646566");
  EXPECT_EQ((*decoded)[0].context.span_id, "7370616e69642d61");
  EXPECT_EQ((*decoded)[0].parent_span_id, "");
}

TEST(OtlpDecodeTest, UnknownFieldsOfEveryWireTypeAreSkipped) {
  ProtoWriter unknown;
  unknown.Varint(100, 7);
  unknown.Fixed64(101, 8);
  unknown.Fixed32(102, 9);
  unknown.Bytes(103, "junk");
  std::string extra = unknown.Take();
  // group 104 { varint 1 = 1 }, and a deprecated field 3 (trace_state) with text
  extra += std::string("\xc3\x06\x08\x01\xc4\x06", 6);
  extra += std::string("\x1a\x05state", 7);
  const std::string body = RequestBuilder::ResourceSpans(
      extra, {RequestBuilder::Span(kTrace, kSpanA, "a", extra)}, false);
  Result<std::vector<SpanData>> decoded = DecodeOtlpTraces(body, OtlpProtocol::kHttpProtobuf);
  ASSERT_THAT(decoded, IsOk());
  ASSERT_EQ(decoded->size(), 1u);
  EXPECT_EQ((*decoded)[0].name, "a");
  EXPECT_TRUE((*decoded)[0].attributes.empty());
}

TEST(OtlpDecodeTest, AllZeroParentIsARootAndUnknownEnumsFallBack) {
  ProtoWriter extra;
  extra.Bytes(4, std::string(8, '\0'));  // parent_span_id
  extra.Varint(6, 0);                    // kind UNSPECIFIED
  ProtoWriter status;
  status.Varint(3, 7);  // unknown status code
  extra.Bytes(15, status.Take());
  const std::string body = RequestBuilder::ResourceSpans(
      "", {RequestBuilder::Span(kTrace, kSpanA, "a", extra.Take())}, false);
  Result<std::vector<SpanData>> decoded = DecodeOtlpTraces(body, OtlpProtocol::kHttpProtobuf);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ((*decoded)[0].parent_span_id, "");
  EXPECT_EQ((*decoded)[0].kind, SpanKind::kInternal);
  EXPECT_EQ((*decoded)[0].status, SpanStatus::kUnset);
}

TEST(OtlpDecodeTest, InvalidUtf8IsReplaced) {
  const std::string body =
      RequestBuilder::ResourceSpans("", {RequestBuilder::Span(kTrace, kSpanA, "bad\xff")}, false);
  Result<std::vector<SpanData>> decoded = DecodeOtlpTraces(body, OtlpProtocol::kHttpProtobuf);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ((*decoded)[0].name, "bad\xef\xbf\xbd");
}

// A JSON request of one span with `attributes` (a JSON array) and resource attributes `resource`.
std::string JsonRequest(std::string_view attributes, std::string_view resource = "[]",
                        std::string_view span_extra = "") {
  return R"({"resourceSpans":[{"resource":{"attributes":)" + std::string(resource) +
         R"(},"scopeSpans":[{"scope":{"name":"sdk","version":"1.2"},"spans":[{)"
         R"("traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B174",)"
         R"("name":"op","kind":"SPAN_KIND_CLIENT","startTimeUnixNano":1000,)"
         R"("endTimeUnixNano":"2000","attributes":)" +
         std::string(attributes) + std::string(span_extra) + "}]}]}]}";
}

TEST(OtlpDecodeTest, JsonAcceptsTheVariantsTheSpecAllows) {
  const std::string body = JsonRequest(
      R"([{"key":"i1","value":{"intValue":42}},{"key":"i2","value":{"intValue":"-7"}},)"
      R"({"key":"i3","value":{"intValue":1e3}},{"key":"d1","value":{"doubleValue":"NaN"}},)"
      R"({"key":"d2","value":{"doubleValue":2}},{"key":"d3","value":{"doubleValue":"1.5"}},)"
      R"({"key":"b","value":{"boolValue":true}},{"key":"s","value":{"stringValue":"x"}},)"
      R"({"key":"unknown","value":{"futureValue":1}},{"key":"nullvalue","value":null}])",
      "[]", R"(,"status":{"code":"STATUS_CODE_ERROR","message":"m"},"flags":257,"extra":{})");
  Result<std::vector<SpanData>> decoded = DecodeOtlpTraces(body, OtlpProtocol::kHttpJson);
  ASSERT_THAT(decoded, IsOk());
  const SpanData& s = (*decoded)[0];
  EXPECT_EQ(s.context.trace_id, "5b8efff798038103d269b633813fc60c");
  EXPECT_EQ(s.context.span_id, "eee19b7ec3c1b174");
  EXPECT_EQ(s.context.flags, 1);
  EXPECT_EQ(s.kind, SpanKind::kClient);
  EXPECT_EQ(s.start, AtNanos(1000));
  EXPECT_EQ(s.end, AtNanos(2000));
  EXPECT_EQ(s.status, SpanStatus::kError);
  EXPECT_EQ(s.status_message, "m");
  ASSERT_EQ(s.attributes.size(), 12u);
  EXPECT_EQ(s.attributes[0].value, AttributeValue(int64_t{42}));
  EXPECT_EQ(s.attributes[1].value, AttributeValue(int64_t{-7}));
  EXPECT_EQ(s.attributes[2].value, AttributeValue(int64_t{1000}));
  EXPECT_TRUE(std::isnan(std::get<double>(s.attributes[3].value)));
  EXPECT_EQ(s.attributes[4].value, AttributeValue(2.0));
  EXPECT_EQ(s.attributes[5].value, AttributeValue(1.5));
  EXPECT_EQ(s.attributes[6].value, AttributeValue(true));
  EXPECT_EQ(s.attributes[7].value, AttributeValue(std::string("x")));
  EXPECT_EQ(s.attributes[8].value, AttributeValue(std::string()));  // an empty AnyValue
  EXPECT_EQ(s.attributes[9].value, AttributeValue(std::string()));
  EXPECT_EQ(s.attributes[10], (Attribute{"otel.scope.name", std::string("sdk")}));
  EXPECT_EQ(s.attributes[11], (Attribute{"otel.scope.version", std::string("1.2")}));
}

TEST(OtlpDecodeTest, ComplexValuesBecomeJsonText) {
  const std::string body = JsonRequest(
      R"([{"key":"ints","value":{"arrayValue":{"values":[{"intValue":"1"},{"intValue":2}]}}},)"
      R"({"key":"mixed","value":{"arrayValue":{"values":[{"stringValue":"a\"b"},{"boolValue":false},{}]}}},)"
      R"({"key":"strings","value":{"arrayValue":{"values":[{"stringValue":"a"}]}}},)"
      R"({"key":"empty","value":{"arrayValue":{}}},)"
      R"({"key":"map","value":{"kvlistValue":{"values":[{"key":"n","value":{"doubleValue":0.5}},)"
      R"({"key":"inner","value":{"kvlistValue":{"values":[{"key":"b","value":{"bytesValue":"AAE="}}]}}}]}}},)"
      R"({"key":"raw","value":{"bytesValue":"3q2-7w"}}])");
  Result<std::vector<SpanData>> decoded = DecodeOtlpTraces(body, OtlpProtocol::kHttpJson);
  ASSERT_THAT(decoded, IsOk());
  const auto& a = (*decoded)[0].attributes;
  EXPECT_EQ(a[0].value, AttributeValue(std::string("[1,2]")));
  EXPECT_EQ(a[1].value, AttributeValue(std::string(R"(["a\"b",false,null])")));
  EXPECT_EQ(a[2].value, AttributeValue(std::vector<std::string>{"a"}));
  EXPECT_EQ(a[3].value, AttributeValue(std::vector<std::string>{}));
  EXPECT_EQ(a[4].value, AttributeValue(std::string(R"({"n":0.5,"inner":{"b":"AAE="}})")));
  EXPECT_EQ(a[5].value, AttributeValue(std::string("3q2+7w==")));  // URL-safe in, standard out
}

TEST(OtlpDecodeTest, ComplexValuesDecodeAlikeFromProtobuf) {
  ProtoWriter one, two, array, any, kv;
  one.Int64(3, 1);
  two.Int64(3, 2);
  array.Bytes(1, one.Take());
  array.Bytes(1, two.Take());
  any.Bytes(5, array.Take());
  kv.Bytes(1, "ints");
  kv.Bytes(2, any.Take());
  ProtoWriter attr;
  attr.Bytes(9, kv.Take());
  const std::string body = RequestBuilder::ResourceSpans(
      "", {RequestBuilder::Span(kTrace, kSpanA, "a", attr.Take())}, false);
  Result<std::vector<SpanData>> decoded = DecodeOtlpTraces(body, OtlpProtocol::kHttpProtobuf);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_THAT((*decoded)[0].attributes, ElementsAre(Attribute{"ints", std::string("[1,2]")}));
}

TEST(OtlpDecodeTest, MendRunIdAttributeSetsTheRunId) {
  const std::string own = JsonRequest(R"([{"key":"mend.run.id","value":{"stringValue":"r-7"}}])");
  EXPECT_EQ(DecodeOtlpTraces(own, OtlpProtocol::kHttpJson).value()[0].run_id, "r-7");
  const std::string inherited =
      JsonRequest("[]", R"([{"key":"mend.run.id","value":{"stringValue":"r-8"}}])");
  EXPECT_EQ(DecodeOtlpTraces(inherited, OtlpProtocol::kHttpJson).value()[0].run_id, "r-8");
  const std::string not_a_string =
      JsonRequest(R"([{"key":"mend.run.id","value":{"intValue":"3"}}])");
  EXPECT_EQ(DecodeOtlpTraces(not_a_string, OtlpProtocol::kHttpJson).value()[0].run_id, "");
}

TEST(OtlpDecodeTest, JsonParentEventsAndLinks) {
  const std::string body = JsonRequest(
      "[]", "[]",
      R"(,"parentSpanId":"00f067aa0ba902b7","events":[{"timeUnixNano":"5","name":"e",)"
      R"("attributes":[{"key":"x","value":{"intValue":"1"}}]}],"links":[{)"
      R"("traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"53995c3f42cd8ad8","flags":1}])");
  Result<std::vector<SpanData>> decoded = DecodeOtlpTraces(body, OtlpProtocol::kHttpJson);
  ASSERT_THAT(decoded, IsOk());
  const SpanData& s = (*decoded)[0];
  EXPECT_EQ(s.parent_span_id, "00f067aa0ba902b7");
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0], (SpanEvent{"e", AtNanos(5), {{"x", int64_t{1}}}}));
  ASSERT_EQ(s.links.size(), 1u);
  EXPECT_EQ(s.links[0].context,
            (SpanContext{"4bf92f3577b34da6a3ce929d0e0e4736", "53995c3f42cd8ad8", 1}));
}

}  // namespace
}  // namespace mend::obs
