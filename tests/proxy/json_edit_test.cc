#include "proxy/json_edit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/status_matchers.h"

namespace mend::proxy {
namespace {

using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

TEST(AppendToSystemPromptTest, ChatSystemStringGetsTheTextAfterABlankLine) {
  const std::string body =
      R"({"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]})";
  EXPECT_THAT(
      AppendToSystemPrompt(body, ApiShape::kChatCompletions, "## Long-term Memory\n- x"),
      IsOkAndHolds(std::string(
          R"({"model":"m","messages":[{"role":"system","content":"Be brief.\n\n## Long-term Memory\n- x"},{"role":"user","content":"hi"}]})")));
}

TEST(AppendToSystemPromptTest, EveryOtherByteIsKeptAsTheClientSentIt) {
  // Odd spacing, escapes, number spellings, unknown and vendor fields, key order.
  const std::string body =
      "{ \"zeta\" : 1.50e+2 ,\n\t\"messages\" : [ {\"content\":\"S\\u00e9\\n\", "
      "\"role\":\"developer\","
      "\"x-vendor\":{\"a\":[true,null]}} , {\"role\":\"user\",\"content\":\"q\"} ],"
      "\"response_format\":{\"type\":\"json_schema\"}, \"tools\":[] }";
  Result<std::string> edited = AppendToSystemPrompt(body, ApiShape::kChatCompletions, "M");
  ASSERT_TRUE(edited.ok()) << edited.status().ToString();
  const std::string before_content = "{ \"zeta\" : 1.50e+2 ,\n\t\"messages\" : [ {\"content\":";
  const std::string after_content =
      ", \"role\":\"developer\",\"x-vendor\":{\"a\":[true,null]}} , {\"role\":\"user\","
      "\"content\":\"q\"} ],\"response_format\":{\"type\":\"json_schema\"}, \"tools\":[] }";
  EXPECT_EQ(*edited, before_content + "\"Sé\\n\\n\\nM\"" + after_content);
}

TEST(AppendToSystemPromptTest, ChatWithoutSystemMessageGetsOneFirst) {
  EXPECT_THAT(
      AppendToSystemPrompt(R"({"messages":[{"role":"user","content":"hi"}]})",
                           ApiShape::kChatCompletions, "M"),
      IsOkAndHolds(std::string(
          R"({"messages":[{"role":"system","content":"M"},{"role":"user","content":"hi"}]})")));
  EXPECT_THAT(AppendToSystemPrompt(R"({"messages":[ ]})", ApiShape::kChatCompletions, "M"),
              IsOkAndHolds(std::string(R"({"messages":[{"role":"system","content":"M"} ]})")));
}

TEST(AppendToSystemPromptTest, ChatArrayContentGetsATextPart) {
  EXPECT_THAT(
      AppendToSystemPrompt(
          R"({"messages":[{"role":"system","content":[{"type":"text","text":"a"}]}]})",
          ApiShape::kChatCompletions, "M"),
      IsOkAndHolds(std::string(
          R"({"messages":[{"role":"system","content":[{"type":"text","text":"a"},{"type":"text","text":"M"}]}]})")));
  EXPECT_THAT(AppendToSystemPrompt(R"({"messages":[{"role":"system","content":[]}]})",
                                   ApiShape::kChatCompletions, "M"),
              IsOkAndHolds(std::string(
                  R"({"messages":[{"role":"system","content":[{"type":"text","text":"M"}]}]})")));
}

TEST(AppendToSystemPromptTest, ChatEmptyOrNullOrMissingContentBecomesTheText) {
  EXPECT_THAT(AppendToSystemPrompt(R"({"messages":[{"role":"system","content":""}]})",
                                   ApiShape::kChatCompletions, "M"),
              IsOkAndHolds(std::string(R"({"messages":[{"role":"system","content":"M"}]})")));
  EXPECT_THAT(AppendToSystemPrompt(R"({"messages":[{"role":"system","content":null}]})",
                                   ApiShape::kChatCompletions, "M"),
              IsOkAndHolds(std::string(R"({"messages":[{"role":"system","content":"M"}]})")));
  EXPECT_THAT(
      AppendToSystemPrompt(R"({"messages":[{"role":"system"}]})", ApiShape::kChatCompletions, "M"),
      IsOkAndHolds(std::string(R"({"messages":[{"content":"M","role":"system"}]})")));
}

TEST(AppendToSystemPromptTest, OnlyTheFirstSystemMessageIsEdited) {
  EXPECT_THAT(
      AppendToSystemPrompt(
          R"({"messages":[{"role":"user","content":"u"},{"role":"system","content":"a"},{"role":"system","content":"b"}]})",
          ApiShape::kChatCompletions, "M"),
      IsOkAndHolds(std::string(
          R"({"messages":[{"role":"user","content":"u"},{"role":"system","content":"a\n\nM"},{"role":"system","content":"b"}]})")));
}

TEST(AppendToSystemPromptTest, MessagesSystemStringBlocksOrAbsent) {
  EXPECT_THAT(AppendToSystemPrompt(R"({"system":"S","messages":[]})", ApiShape::kMessages, "M"),
              IsOkAndHolds(std::string(R"({"system":"S\n\nM","messages":[]})")));
  EXPECT_THAT(
      AppendToSystemPrompt(
          R"({"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral"}}],"messages":[]})",
          ApiShape::kMessages, "M"),
      IsOkAndHolds(std::string(
          R"({"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral"}},{"type":"text","text":"M"}],"messages":[]})")));
  EXPECT_THAT(AppendToSystemPrompt(R"({"model":"c","messages":[]})", ApiShape::kMessages, "M"),
              IsOkAndHolds(std::string(R"({"system":"M","model":"c","messages":[]})")));
  EXPECT_THAT(AppendToSystemPrompt(R"({})", ApiShape::kMessages, "M"),
              IsOkAndHolds(std::string(R"({"system":"M"})")));
}

TEST(AppendToSystemPromptTest, ResponsesInstructions) {
  EXPECT_THAT(
      AppendToSystemPrompt(R"({"instructions":"I","input":"x"})", ApiShape::kResponses, "M"),
      IsOkAndHolds(std::string(R"({"instructions":"I\n\nM","input":"x"})")));
  EXPECT_THAT(
      AppendToSystemPrompt(R"({"input":"x","instructions":null})", ApiShape::kResponses, "M"),
      IsOkAndHolds(std::string(R"({"input":"x","instructions":"M"})")));
}

TEST(AppendToSystemPromptTest, TheTextIsEscaped) {
  Result<std::string> edited =
      AppendToSystemPrompt(R"({"system":"S"})", ApiShape::kMessages, "quote \" slash \\ tab \t");
  ASSERT_TRUE(edited.ok());
  EXPECT_EQ(nlohmann::json::parse(*edited)["system"], "S\n\nquote \" slash \\ tab \t");
}

TEST(AppendToSystemPromptTest, DuplicateKeysEditTheLastAsAParserKeepsIt) {
  EXPECT_THAT(AppendToSystemPrompt(R"({"system":"a","system":"b"})", ApiShape::kMessages, "M"),
              IsOkAndHolds(std::string(R"({"system":"a","system":"b\n\nM"})")));
}

TEST(AppendToSystemPromptTest, BadBodiesAreClearErrors) {
  EXPECT_THAT(AppendToSystemPrompt("[1]", ApiShape::kMessages, "M"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("not a JSON object")));
  EXPECT_THAT(AppendToSystemPrompt(R"({"system":"a")", ApiShape::kMessages, "M"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("not valid JSON")));
  EXPECT_THAT(AppendToSystemPrompt(R"({"a":1} x)", ApiShape::kMessages, "M"),
              StatusIs(StatusCode::kInvalidArgument));
  for (const char* bad : {R"({"system":nulm})", R"({"a":tru,"system":"s"})", R"({"a":01})",
                          R"({"a":1.})", R"({"a":-})", R"({"a":1e})", R"({"a":+1})"}) {
    EXPECT_THAT(AppendToSystemPrompt(bad, ApiShape::kMessages, "M"),
                StatusIs(StatusCode::kInvalidArgument, HasSubstr("not valid JSON")))
        << bad;
  }
  EXPECT_TRUE(AppendToSystemPrompt(R"({"a":[-0.5e+3,0,true,false,null],"system":null})",
                                   ApiShape::kMessages, "M")
                  .ok());
  EXPECT_THAT(AppendToSystemPrompt("{\"system\":\"Be \x9d\"}", ApiShape::kMessages, "M"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("UTF-8")));
  EXPECT_THAT(AppendToSystemPrompt(R"({"system":7})", ApiShape::kMessages, "M"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("'system' must be a string")));
  EXPECT_THAT(AppendToSystemPrompt(R"({"messages":{}})", ApiShape::kChatCompletions, "M"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("'messages' must be an array")));
  EXPECT_THAT(AppendToSystemPrompt(std::string(100000, '[') + std::string(100000, ']'),
                                   ApiShape::kMessages, "M"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("nests deeper")));
}

TEST(FindTopLevelValueTest, FindsTheValueBytes) {
  const std::string body = R"( {"a" : [1, {"b":2}] , "stream":true} )";
  Result<ByteRange> range = FindTopLevelValue(body, "stream");
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(body.substr(range->begin, range->end - range->begin), "true");
  range = FindTopLevelValue(body, "a");
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(body.substr(range->begin, range->end - range->begin), R"([1, {"b":2}])");
  EXPECT_THAT(FindTopLevelValue(body, "b"), StatusIs(StatusCode::kNotFound));
}

}  // namespace
}  // namespace mend::proxy
