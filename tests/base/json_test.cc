#include "mend/base/json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "mend/base/utf8.h"
#include "tests/support/status_matchers.h"

namespace mend {
namespace {

using ::mend::testing::StatusIs;
using nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(ParseJsonTest, ParsesADocument) {
  const Result<json> r = ParseJson(R"( {"v":1,"job":{"ID":"abc","Attempts":2}} )");
  MEND_ASSERT_OK(r);
  EXPECT_EQ((*r)["v"], 1);
  EXPECT_EQ((*r)["job"]["ID"], "abc");
}

TEST(ParseJsonTest, MalformedTextIsInvalidArgumentWithPosition) {
  EXPECT_THAT(ParseJson(R"({"a":1,})"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("byte")));
  EXPECT_THAT(ParseJson(R"({"a": tru})"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseJson("{} {}"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseJson(""), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseJson("// comment\n{}"), StatusIs(StatusCode::kInvalidArgument));
}

TEST(ParseJsonTest, TruncatedTextIsInvalidArgument) {
  const std::string full = R"({"job":{"Task":"ação 🙂","Tags":["a","b"],"N":12.5}})";
  MEND_ASSERT_OK(ParseJson(full));
  for (std::size_t n = 0; n < full.size(); ++n) {
    EXPECT_THAT(ParseJson(full.substr(0, n)), StatusIs(StatusCode::kInvalidArgument)) << n;
  }
}

TEST(ParseJsonTest, HtmlErrorPageIsInvalidArgument) {
  EXPECT_THAT(ParseJson("<html><body><h1>502 Bad Gateway</h1></body></html>"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("byte 1:")));
}

TEST(ParseJsonTest, InvalidUtf8InStringIsInvalidArgument) {
  EXPECT_THAT(ParseJson("{\"a\":\"\xFF\"}"), StatusIs(StatusCode::kInvalidArgument));
}

// Found by fuzz/tool_args_fuzz: the error quoted the invalid bytes it read last as they were.
TEST(ParseJsonTest, ErrorMessageIsValidUtf8ForInvalidBytesOutsideStrings) {
  for (const char* text : {"\x85\xdd\x8f\x9bth", "{\"a\":\"\xFF\"}", "[1, \xC3]"}) {
    Result<json> parsed = ParseJson(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_TRUE(IsValidUtf8(parsed.status().message())) << parsed.status().message();
  }
}

TEST(ParseJsonTest, NumberOverflowIsInvalidArgument) {
  EXPECT_THAT(ParseJson("1e999"), StatusIs(StatusCode::kInvalidArgument));
}

TEST(ParseJsonTest, DeepNestingIsRejected) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_THAT(ParseJson(deep), StatusIs(StatusCode::kInvalidArgument, HasSubstr("nesting")));
  const std::string limit = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  MEND_EXPECT_OK(ParseJson(limit));
  const std::string over =
      std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  EXPECT_THAT(ParseJson(over), StatusIs(StatusCode::kInvalidArgument,
                                        HasSubstr("byte " + std::to_string(kMaxJsonDepth + 1))));
}

TEST(ParseJsonTest, BracketsInsideStringsDoNotCountAsNesting) {
  const std::string s = "{\"a\":\"" + std::string(1000, '[') + "\\\"{{\"}";
  const Result<json> r = ParseJson(s);
  MEND_ASSERT_OK(r);
  EXPECT_EQ((*r)["a"].get<std::string>().size(), 1003u);
}

TEST(DumpJsonTest, CompactAndIndented) {
  const json j = {{"a", 1}, {"b", {true, nullptr}}};
  EXPECT_EQ(DumpJson(j), R"({"a":1,"b":[true,null]})");
  EXPECT_EQ(DumpJson(j, 2), "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ]\n}");
}

TEST(DumpJsonTest, InvalidUtf8DoesNotThrowAndYieldsValidJson) {
  const json j = {{"text", std::string("ok \xFF\xC3 end")}};
  std::string out;
  EXPECT_NO_THROW(out = DumpJson(j));
  EXPECT_TRUE(IsValidUtf8(out));
  EXPECT_THAT(out, HasSubstr("\uFFFD"));
  MEND_EXPECT_OK(ParseJson(out));
}

TEST(DumpJsonTest, KeepsNonAsciiAsUtf8) { EXPECT_EQ(DumpJson(json("ação")), "\"ação\""); }

class JsonGetterTest : public ::testing::Test {
 protected:
  json obj_ = json::parse(R"({"s":"x","i":-7,"u":18446744073709551615,"f":1.5,"whole":2.0,
      "b":true,"o":{"k":1},"a":[1,2],"n":null})");
};

TEST_F(JsonGetterTest, ReadsEachType) {
  EXPECT_EQ(GetString(obj_, "s").value(), "x");
  EXPECT_EQ(GetInt64(obj_, "i").value(), -7);
  EXPECT_EQ(GetDouble(obj_, "f").value(), 1.5);
  EXPECT_EQ(GetDouble(obj_, "i").value(), -7.0);
  EXPECT_TRUE(GetBool(obj_, "b").value());
  EXPECT_EQ((*GetObject(obj_, "o").value())["k"], 1);
  EXPECT_EQ(GetArray(obj_, "a").value()->size(), 2u);
}

TEST_F(JsonGetterTest, WrongTypeNamesKeyAndExpectedType) {
  EXPECT_THAT(GetString(obj_, "i"),
              StatusIs(StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("\"i\""), HasSubstr("string"), HasSubstr("number"))));
  EXPECT_THAT(GetInt64(obj_, "f"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("\"f\"")));
  EXPECT_THAT(GetInt64(obj_, "whole"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(GetInt64(obj_, "u"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("int64")));
  EXPECT_THAT(GetBool(obj_, "s"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("boolean")));
  EXPECT_THAT(GetObject(obj_, "a"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("object")));
  EXPECT_THAT(GetArray(obj_, "o"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("array")));
  EXPECT_THAT(GetString(obj_, "n"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("null")));
}

TEST_F(JsonGetterTest, MissingKeyIsNamed) {
  EXPECT_THAT(GetString(obj_, "Task"), StatusIs(StatusCode::kInvalidArgument,
                                                AllOf(HasSubstr("missing"), HasSubstr("Task"))));
}

TEST_F(JsonGetterTest, NonObjectIsRejected) {
  EXPECT_THAT(GetString(json::array(), "s"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("object")));
  EXPECT_THAT(GetOptionalString(json(3), "s"), StatusIs(StatusCode::kInvalidArgument));
}

TEST_F(JsonGetterTest, OptionalMissingOrNullIsNullopt) {
  const Result<std::optional<std::string>> missing = GetOptionalString(obj_, "nope");
  MEND_ASSERT_OK(missing);
  EXPECT_FALSE(missing->has_value());
  const Result<std::optional<std::int64_t>> null = GetOptionalInt64(obj_, "n");
  MEND_ASSERT_OK(null);
  EXPECT_FALSE(null->has_value());
  EXPECT_FALSE(GetOptionalObject(obj_, "zz").value().has_value());
}

TEST_F(JsonGetterTest, OptionalPresentReturnsValue) {
  EXPECT_EQ(GetOptionalString(obj_, "s").value(), "x");
  EXPECT_EQ(GetOptionalInt64(obj_, "i").value(), -7);
  EXPECT_EQ(GetOptionalDouble(obj_, "f").value(), 1.5);
  EXPECT_EQ(GetOptionalBool(obj_, "b").value(), true);
  EXPECT_EQ(GetOptionalArray(obj_, "a").value().value()->size(), 2u);
}

TEST_F(JsonGetterTest, OptionalWrongTypeIsStillAnError) {
  EXPECT_THAT(GetOptionalString(obj_, "b"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("\"b\"")));
  EXPECT_THAT(GetOptionalBool(obj_, "s"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(GetOptionalDouble(obj_, "s"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(GetOptionalObject(obj_, "a"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(GetOptionalArray(obj_, "o"), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace mend
