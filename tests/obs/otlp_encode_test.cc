#include "mend/obs/otlp_encode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/obs/otlp_sample.h"
#include "tests/obs/proto_reader.h"

namespace mend::obs {
namespace {

using testing::AtNanos;
using testing::Fields;
using testing::ParseProto;
using testing::ProtoMessage;
using testing::Sub;

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out += static_cast<char>(b);
  return out;
}

// One span, no resource attributes, no scope version: every byte computed by hand from the field
// numbers of trace.proto and common.proto.
TEST(OtlpProtobufTest, SmallSpanMatchesHandEncodedBytes) {
  OtlpResource resource;
  resource.scope_name = "m";
  SpanData span;
  span.context = {"0102030405060708090a0b0c0d0e0f10", "1112131415161718", 1};
  span.name = "n";
  span.kind = SpanKind::kClient;
  span.start = AtNanos(1);
  span.end = AtNanos(300);
  span.attributes = {{"k", int64_t{-1}}};
  span.status = SpanStatus::kError;

  std::string spanbytes = Bytes({0x0a, 16});  // trace_id (1, bytes)
  for (int i = 1; i <= 16; ++i) spanbytes += static_cast<char>(i);
  spanbytes += Bytes({0x12, 8, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18});  // span_id (2)
  spanbytes += Bytes({0x2a, 1, 'n'});                                             // name (5)
  spanbytes += Bytes({0x30, 3});                                                  // kind (6) CLIENT
  spanbytes += Bytes({0x39, 1, 0, 0, 0, 0, 0, 0, 0});        // start (7, fixed64)
  spanbytes += Bytes({0x41, 0x2c, 0x01, 0, 0, 0, 0, 0, 0});  // end (8) = 300
  // attributes (9): KeyValue{key "k", value AnyValue{int_value (3) = -1 as a 10-byte varint}}
  spanbytes += Bytes({0x4a, 16, 0x0a, 1, 'k', 0x12, 11, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                      0xff, 0xff, 0xff, 0x01});
  spanbytes += Bytes({0x7a, 2, 0x18, 2});        // status (15): code (3) = ERROR
  spanbytes += Bytes({0x85, 0x01, 1, 0, 0, 0});  // flags (16, fixed32)
  ASSERT_EQ(spanbytes.size(), 79u);
  std::string scope_spans = Bytes({0x0a, 3, 0x0a, 1, 'm'}) + Bytes({0x12, 79}) + spanbytes;
  std::string resource_spans = Bytes({0x0a, 0}) + Bytes({0x12, 86}) + scope_spans;
  std::string expected = Bytes({0x0a, 90}) + resource_spans;

  EXPECT_EQ(EncodeOtlpProtobuf(resource, {span}), expected);
}

TEST(OtlpProtobufTest, LongMessagesGetMultiByteLengths) {
  SpanData span;
  span.context = {"0102030405060708090a0b0c0d0e0f10", "1112131415161718", 1};
  span.name = std::string(300, 'x');
  const std::string bytes = EncodeOtlpProtobuf(OtlpResource{}, {span});
  std::optional<ProtoMessage> request = ParseProto(bytes);
  ASSERT_TRUE(request.has_value());
  ProtoMessage decoded = Sub(Sub(Sub(*request, 1), 2), 2);
  EXPECT_EQ(decoded.find(5)->second.bytes, span.name);
}

TEST(OtlpProtobufTest, DecodesBackToEverySampleField) {
  const std::vector<SpanData> spans = testing::SampleSpans();
  std::optional<ProtoMessage> request =
      ParseProto(EncodeOtlpProtobuf(testing::SampleResource(), spans));
  ASSERT_TRUE(request.has_value());
  ASSERT_EQ(Fields(*request, 1).size(), 1u);
  const ProtoMessage resource_spans = Sub(*request, 1);
  const std::vector<testing::ProtoField> resource_attrs = Fields(Sub(resource_spans, 1), 1);
  ASSERT_EQ(resource_attrs.size(), 3u);
  EXPECT_EQ(ParseProto(resource_attrs[0].bytes)->find(1)->second.bytes, "service.name");
  const ProtoMessage scope_spans = Sub(resource_spans, 2);
  EXPECT_EQ(Sub(scope_spans, 1).find(1)->second.bytes, "mend");
  EXPECT_EQ(Sub(scope_spans, 1).find(2)->second.bytes, "0.9.0");
  const std::vector<testing::ProtoField> encoded = Fields(scope_spans, 2);
  ASSERT_EQ(encoded.size(), spans.size());

  const ProtoMessage root = *ParseProto(encoded[0].bytes);
  EXPECT_EQ(root.count(4), 0u);  // no parent
  EXPECT_EQ(root.find(7)->second.number, 1'700'000'000'123'456'789u);
  EXPECT_EQ(root.find(7)->second.wire_type, 1u);
  const std::vector<testing::ProtoField> attrs = Fields(root, 9);
  ASSERT_EQ(attrs.size(), spans[0].attributes.size());
  const ProtoMessage big = Sub(*ParseProto(attrs[2].bytes), 2);
  EXPECT_EQ(big.find(3)->second.number, 9'007'199'254'740'993u);
  const ProtoMessage cost = Sub(*ParseProto(attrs[4].bytes), 2);
  EXPECT_EQ(testing::AsDouble(cost.find(4)->second.number), 0.0125);
  const ProtoMessage hook = Sub(*ParseProto(attrs[5].bytes), 2);
  ASSERT_EQ(hook.count(2), 1u);  // false is written: presence matters in a oneof
  EXPECT_EQ(hook.find(2)->second.number, 0u);
  const ProtoMessage empty = Sub(*ParseProto(attrs[7].bytes), 2);
  ASSERT_EQ(empty.count(1), 1u);
  EXPECT_EQ(empty.find(1)->second.bytes, "");
  const ProtoMessage reasons = Sub(Sub(*ParseProto(attrs[9].bytes), 2), 5);
  const std::vector<testing::ProtoField> values = Fields(reasons, 1);
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(ParseProto(values[1].bytes)->find(1)->second.bytes, "length");
  EXPECT_EQ(Sub(root, 15).find(3)->second.number, 1u);  // OK

  const ProtoMessage child = *ParseProto(encoded[1].bytes);
  EXPECT_EQ(child.find(4)->second.bytes, ParseProto(encoded[0].bytes)->find(2)->second.bytes);
  EXPECT_EQ(child.find(16)->second.number, 0u);
  EXPECT_EQ(Sub(child, 15).find(2)->second.bytes, "denied by hook");
  EXPECT_EQ(Sub(child, 15).find(3)->second.number, 2u);
  const std::vector<testing::ProtoField> events = Fields(child, 11);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(ParseProto(events[0].bytes)->find(1)->second.number, 1'700'000'000'600'000'000u);
  EXPECT_EQ(Fields(*ParseProto(events[0].bytes), 3).size(), 2u);
  const ProtoMessage link = *ParseProto(Fields(child, 13)[0].bytes);
  EXPECT_EQ(link.find(1)->second.bytes.size(), 16u);
  EXPECT_EQ(static_cast<uint8_t>(link.find(2)->second.bytes[0]), 0x53);
  EXPECT_EQ(link.find(6)->second.number, 1u);
  EXPECT_EQ(ParseProto(encoded[4].bytes)->find(6)->second.number, 5u);  // CONSUMER
}

TEST(OtlpProtobufTest, InvalidUtf8IsReplacedAndBadIdsLeftOut) {
  SpanData span;
  span.context = {"not-hex", "1112131415161718", 1};
  span.name = "bad \xff byte";
  std::optional<ProtoMessage> request = ParseProto(EncodeOtlpProtobuf(OtlpResource{}, {span}));
  ASSERT_TRUE(request.has_value());
  const ProtoMessage decoded = Sub(Sub(Sub(*request, 1), 2), 2);
  EXPECT_EQ(decoded.count(1), 0u);
  EXPECT_EQ(decoded.find(5)->second.bytes, "bad \xef\xbf\xbd byte");
}

TEST(OtlpJsonTest, FollowsTheOtlpJsonMapping) {
  const std::vector<SpanData> spans = testing::SampleSpans();
  const nlohmann::json request =
      nlohmann::json::parse(EncodeOtlpJson(testing::SampleResource(), spans));
  const nlohmann::json& rs = request["resourceSpans"][0];
  EXPECT_EQ(rs["resource"]["attributes"][0]["key"], "service.name");
  EXPECT_EQ(rs["resource"]["attributes"][0]["value"]["stringValue"], "mend");
  EXPECT_EQ(rs["scopeSpans"][0]["scope"]["name"], "mend");
  const nlohmann::json& out = rs["scopeSpans"][0]["spans"];
  ASSERT_EQ(out.size(), spans.size());
  const nlohmann::json& root = out[0];
  EXPECT_EQ(root["traceId"], "0af7651916cd43dd8448eb211c80319c");
  EXPECT_EQ(root["spanId"], "b7ad6b7169203331");
  EXPECT_FALSE(root.contains("parentSpanId"));
  EXPECT_EQ(root["kind"], 1);
  EXPECT_EQ(root["flags"], 1);
  EXPECT_EQ(root["startTimeUnixNano"], "1700000000123456789");
  EXPECT_EQ(root["status"], nlohmann::json({{"code", 1}}));
  const nlohmann::json& a = root["attributes"];
  EXPECT_EQ(a[1]["value"], nlohmann::json({{"intValue", "3"}}));
  EXPECT_EQ(a[2]["value"]["intValue"], "9007199254740993");
  EXPECT_EQ(a[3]["value"]["intValue"], "-42");
  EXPECT_EQ(a[4]["value"]["doubleValue"].get<double>(), 0.0125);
  EXPECT_EQ(a[5]["value"], nlohmann::json({{"boolValue", false}}));
  EXPECT_EQ(a[8]["value"]["stringValue"], "h\xc3\xa9llo \"q\"\n\ttab\\");
  EXPECT_EQ(a[9]["value"]["arrayValue"]["values"][1]["stringValue"], "length");
  const nlohmann::json& child = out[1];
  EXPECT_EQ(child["parentSpanId"], "b7ad6b7169203331");
  EXPECT_EQ(child["status"]["message"], "denied by hook");
  EXPECT_EQ(child["status"]["code"], 2);
  EXPECT_EQ(child["events"][0]["timeUnixNano"], "1700000000600000000");
  EXPECT_EQ(child["events"][0]["attributes"][1]["value"]["stringValue"], "rm -rf");
  EXPECT_EQ(child["links"][0]["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(child["links"][0]["attributes"][0]["key"], "mend.fork.parent_run_id");
  EXPECT_EQ(out[2]["attributes"][0]["value"]["doubleValue"].get<double>(), -1.5e-300);
}

TEST(OtlpJsonTest, NonFiniteDoublesAndControlCharactersStayValidJson) {
  SpanData span;
  span.context = {"0102030405060708090a0b0c0d0e0f10", "1112131415161718", 1};
  span.name = std::string("a\x01z\xff", 4);
  span.attributes = {{"nan", std::nan("")},
                     {"inf", std::numeric_limits<double>::infinity()},
                     {"ninf", -std::numeric_limits<double>::infinity()}};
  const nlohmann::json request = nlohmann::json::parse(EncodeOtlpJson(OtlpResource{}, {span}));
  const nlohmann::json& s = request["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
  EXPECT_EQ(s["name"], "a\x01z\xef\xbf\xbd");
  EXPECT_EQ(s["attributes"][0]["value"]["doubleValue"], "NaN");
  EXPECT_EQ(s["attributes"][1]["value"]["doubleValue"], "Infinity");
  EXPECT_EQ(s["attributes"][2]["value"]["doubleValue"], "-Infinity");
}

}  // namespace
}  // namespace mend::obs
