#include "mend/agent/json_schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/status_matchers.h"

namespace mend::agent {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using nlohmann::json;
using ::testing::HasSubstr;

Status Check(const char* value, const char* schema) {
  return ValidateAgainstSchema(json::parse(value), json::parse(schema));
}

auto Invalid(const std::string& text) {
  return StatusIs(StatusCode::kInvalidArgument, HasSubstr(text));
}

TEST(JsonSchemaTest, TypeMismatchNamesPathAndTypes) {
  const char* schema =
      R"({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]})";
  EXPECT_THAT(Check(R"({"path":"a.txt"})", schema), IsOk());
  EXPECT_THAT(Check(R"({"path":3})", schema), Invalid("$.path: expected string, got number"));
  EXPECT_THAT(Check(R"([])", schema), Invalid("$: expected object, got array"));
}

TEST(JsonSchemaTest, TypeArraysAndInteger) {
  const char* schema = R"({"type":["integer","null"]})";
  EXPECT_THAT(Check("3", schema), IsOk());
  EXPECT_THAT(Check("3.0", schema), IsOk());
  EXPECT_THAT(Check("null", schema), IsOk());
  EXPECT_THAT(Check("3.5", schema), Invalid("$: expected integer or null, got number"));
  EXPECT_THAT(Check("true", R"({"type":"boolean"})"), IsOk());
  EXPECT_THAT(Check("1", R"({"type":"number"})"), IsOk());
}

TEST(JsonSchemaTest, MissingRequiredProperty) {
  EXPECT_THAT(Check("{}", R"({"type":"object","required":["path"]})"),
              Invalid("$: missing required property \"path\""));
}

TEST(JsonSchemaTest, NestedPathsIncludeIndexesAndQuotedNames) {
  const char* schema = R"({"type":"object","properties":{"files":{"type":"array",
      "items":{"type":"object","properties":{"a b":{"type":"string"}}}}}})";
  EXPECT_THAT(Check(R"({"files":[{"a b":"x"},{"a b":1}]})", schema),
              Invalid(R"($.files[1]["a b"]: expected string)"));
}

TEST(JsonSchemaTest, AdditionalProperties) {
  EXPECT_THAT(Check(R"({"x":1})", R"({"type":"object","additionalProperties":false})"),
              Invalid("$: unexpected property \"x\""));
  EXPECT_THAT(Check(R"({"x":1})", R"({"additionalProperties":{"type":"string"}})"),
              Invalid("$.x: expected string"));
  EXPECT_THAT(Check(R"({"x":"s"})", R"({"additionalProperties":{"type":"string"}})"), IsOk());
}

TEST(JsonSchemaTest, EnumAndConst) {
  EXPECT_THAT(Check(R"({"mode":"c"})", R"({"properties":{"mode":{"enum":["a","b"]}}})"),
              Invalid(R"($.mode: must be one of ["a","b"])"));
  EXPECT_THAT(Check(R"("b")", R"({"enum":["a","b"]})"), IsOk());
  EXPECT_THAT(Check("4", R"({"const":5})"), Invalid("$: must equal 5"));
  EXPECT_THAT(Check("5", R"({"const":5})"), IsOk());
}

TEST(JsonSchemaTest, NumericBounds) {
  EXPECT_THAT(Check("0", R"({"minimum":1})"), Invalid("$: must be >= 1, got 0"));
  EXPECT_THAT(Check("1", R"({"minimum":1})"), IsOk());
  EXPECT_THAT(Check("11", R"({"maximum":10})"), Invalid("$: must be <= 10, got 11"));
  EXPECT_THAT(Check("1", R"({"exclusiveMinimum":1})"), Invalid("$: must be > 1"));
  EXPECT_THAT(Check("10", R"({"exclusiveMaximum":10})"), Invalid("$: must be < 10"));
  EXPECT_THAT(Check("10", R"({"maximum":10,"exclusiveMaximum":true})"), Invalid("must be < 10"));
  EXPECT_THAT(Check("9.5", R"({"exclusiveMaximum":10})"), IsOk());
}

TEST(JsonSchemaTest, StringLengthCountsCharacters) {
  EXPECT_THAT(Check(R"("ação")", R"({"maxLength":4})"), IsOk());
  EXPECT_THAT(Check(R"("ab")", R"({"minLength":3})"),
              Invalid("$: must be at least 3 characters long, got 2"));
  EXPECT_THAT(Check(R"("abcde")", R"({"maxLength":4})"), Invalid("must be at most 4"));
}

TEST(JsonSchemaTest, ArrayLength) {
  EXPECT_THAT(Check("[]", R"({"minItems":1})"), Invalid("$: must have at least 1 items, got 0"));
  EXPECT_THAT(Check("[1,2,3]", R"({"maxItems":2})"), Invalid("must have at most 2 items"));
  EXPECT_THAT(Check(R"([1,"x"])", R"({"items":[{"type":"integer"},{"type":"string"}]})"), IsOk());
  EXPECT_THAT(Check(R"([1,2])", R"({"items":[{"type":"integer"},{"type":"string"}]})"),
              Invalid("$[1]: expected string"));
}

TEST(JsonSchemaTest, Pattern) {
  EXPECT_THAT(Check(R"("abc123")", R"({"pattern":"[0-9]+$"})"), IsOk());
  EXPECT_THAT(Check(R"("abc")", R"({"pattern":"^[0-9]+$"})"),
              Invalid("$: does not match the pattern"));
  // Long strings are checked too, in time linear in their length, whatever the pattern.
  const std::string long_value = "\"" + std::string(100000, 'a') + "\"";
  EXPECT_THAT(Check(long_value.c_str(), R"({"pattern":"^(a|b)*$"})"), IsOk());
  EXPECT_THAT(Check(long_value.c_str(), R"({"pattern":"^(a*)*b$"})"),
              Invalid("$: does not match the pattern"));
  // The tool_args_fuzz input that ran for more than 25 s when patterns were backtracked
  // (std::regex took `a**...*` for nested repeats); ECMAScript and RE2 both refuse `a**`.
  const std::string fuzz_schema = R"({"type":"string","pattern":"^a(a)" + std::string(85, '*') +
                                  R"(|b)*z+[-8446740073283798308](-[a-typez]+)*$","oexLangth":10})";
  EXPECT_THAT(Check(R"("abaskmaxLqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqan")", fuzz_schema.c_str()),
              Invalid("bad repetition operator"));
  EXPECT_THAT(Check(R"("abaskmaxLqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqan")",
                    R"({"type":"string","pattern":"^a(a*|b)*z+[-84](-[a-typez]+)*$"})"),
              Invalid("does not match the pattern"));
  EXPECT_THAT(Check(R"("aaaa")", R"({"pattern":"(a)\\1"})"),
              Invalid("backreferences and lookaround are not supported"));
}

// Compiled patterns are kept and the cache is emptied when full: every pattern still gives its
// own answer, before, across and after the emptying.
TEST(JsonSchemaTest, ManyDistinctPatternsEachGiveTheirOwnAnswer) {
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 600; ++i) {
      const std::string schema = R"({"pattern":"^p)" + std::to_string(i) + R"($"})";
      const std::string good = "\"p" + std::to_string(i) + "\"";
      const std::string bad = "\"p" + std::to_string(i + 1) + "\"";
      EXPECT_THAT(Check(good.c_str(), schema.c_str()), IsOk()) << i;
      EXPECT_THAT(Check(bad.c_str(), schema.c_str()), Invalid("does not match")) << i;
    }
  }
}

TEST(JsonSchemaTest, Combinators) {
  const char* any = R"({"anyOf":[{"type":"string"},{"type":"integer"}]})";
  EXPECT_THAT(Check("1", any), IsOk());
  EXPECT_THAT(Check("true", any), Invalid("matches none of the anyOf alternatives"));
  const char* one = R"({"oneOf":[{"type":"integer"},{"minimum":0}]})";
  EXPECT_THAT(Check("-1", one), IsOk());
  EXPECT_THAT(Check("1", one), Invalid("matches 2 of the oneOf alternatives"));
  EXPECT_THAT(Check("-1.5", one), Invalid("matches none of the oneOf"));
  EXPECT_THAT(Check("5", R"({"allOf":[{"minimum":0},{"maximum":3}]})"), Invalid("must be <= 3"));
}

TEST(JsonSchemaTest, BooleanSchemasAndUnknownKeywords) {
  EXPECT_THAT(Check("1", "true"), IsOk());
  EXPECT_THAT(Check("1", "false"), Invalid("no value is allowed"));
  EXPECT_THAT(Check("1", R"({"description":"x","title":"t","default":2,"$schema":"s",
                             "format":"uri","x-custom":[1]})"),
              IsOk());
}

TEST(JsonSchemaTest, ValidateJsonSchemaRejectsMalformedSchemas) {
  EXPECT_THAT(ValidateJsonSchema(json::parse(R"({"type":"object"})")), IsOk());
  EXPECT_THAT(ValidateJsonSchema(json::parse(R"({"properties":{"p":{"type":"strng"}}})")),
              Invalid("schema.properties.p.type: unknown type \"strng\""));
  EXPECT_THAT(ValidateJsonSchema(json::parse(R"({"required":"path"})")),
              Invalid("schema.required"));
  EXPECT_THAT(ValidateJsonSchema(json::parse(R"({"minLength":-1})")),
              Invalid("schema.minLength: must be a non-negative integer"));
  EXPECT_THAT(ValidateJsonSchema(json::parse(R"({"pattern":"("})")), Invalid("invalid pattern"));
  EXPECT_THAT(ValidateJsonSchema(json::parse(R"({"anyOf":[]})")), Invalid("schema.anyOf"));
  EXPECT_THAT(ValidateJsonSchema(json::parse(R"({"$ref":"#/x"})")), Invalid("not supported"));
  EXPECT_THAT(ValidateJsonSchema(json::parse("3")), Invalid("object or a boolean"));
  EXPECT_THAT(ValidateAgainstSchema(json::parse("1"), json::parse(R"({"type":7})")),
              Invalid("invalid schema"));
}

}  // namespace
}  // namespace mend::agent
