#include "mend/agent/tool_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>

#include "mend/base/utf8.h"
#include "tests/agent/tool_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::agent {
namespace {

using ::mend::testing::StatusIs;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A tool whose behaviour the test supplies; it records the arguments it was called with.
class FakeTool : public Tool {
 public:
  using Body = std::function<Result<ToolResult>(std::string_view)>;
  FakeTool(std::string name, Body body, std::string parameters = R"({"type":"object",
      "properties":{"path":{"type":"string"}},"required":["path"]})")
      : body_(std::move(body)) {
    spec_.name = std::move(name);
    spec_.description = "a fake";
    spec_.parameters = std::move(parameters);
  }
  const ToolSpec& spec() const override { return spec_; }
  Result<ToolResult> Execute(std::string_view args, const ToolContext&) override {
    ++calls;
    return body_(args);
  }
  int calls = 0;

 private:
  ToolSpec spec_;
  Body body_;
};

FakeTool::Body Returning(std::string content) {
  return [content](std::string_view) { return Result<ToolResult>(ToolResult::Ok(content)); };
}

class ToolRegistryTest : public ::testing::Test {
 protected:
  FakeTool* Add(std::string name, FakeTool::Body body) {
    auto tool = std::make_unique<FakeTool>(std::move(name), std::move(body));
    FakeTool* raw = tool.get();
    MEND_EXPECT_OK(registry_.Register(std::move(tool)));
    return raw;
  }
  ToolResult Invoke(const std::string& name, const std::string& args) {
    return registry_.Invoke(name, args, ctx_);
  }

  ToolRegistry registry_;
  ToolContext ctx_;
};

TEST_F(ToolRegistryTest, InvokesAValidCall) {
  FakeTool* tool = Add("echo", [](std::string_view args) {
    return Result<ToolResult>(ToolResult::Ok(std::string(args)));
  });
  const ToolResult r = Invoke("echo", R"({"path":"a"})");
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.content, R"({"path":"a"})");
  EXPECT_EQ(tool->calls, 1);
}

TEST_F(ToolRegistryTest, RegisterRejectsDuplicatesAndBadSchemas) {
  Add("a", Returning("x"));
  EXPECT_THAT(registry_.Register(std::make_unique<FakeTool>("a", Returning("y"))),
              StatusIs(StatusCode::kAlreadyExists));
  EXPECT_THAT(registry_.Register(std::make_unique<FakeTool>("b", Returning("y"), "{nope")),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("tool b parameters")));
  EXPECT_THAT(
      registry_.Register(std::make_unique<FakeTool>("c", Returning("y"), R"({"type":"strang"})")),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("unknown type")));
  EXPECT_THAT(registry_.Register(std::make_unique<FakeTool>("d", Returning("y"), R"({})")),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("\"type\": \"object\"")));
  EXPECT_THAT(registry_.Register(std::make_unique<FakeTool>("bad name", Returning("y"))),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(registry_.Register(nullptr), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(registry_.Names(), std::vector<std::string>{"a"});
}

TEST_F(ToolRegistryTest, SpecsAndFind) {
  Add("first", Returning("x"));
  Add("second", Returning("x"));
  const std::vector<llm::ToolDefinition> defs = registry_.Specs();
  ASSERT_EQ(defs.size(), 2u);
  EXPECT_EQ(defs[0].name, "first");
  EXPECT_EQ(defs[1].description, "a fake");
  EXPECT_THAT(defs[1].parameters, HasSubstr("\"required\""));
  EXPECT_NE(registry_.Find("second"), nullptr);
  EXPECT_EQ(registry_.Find("third"), nullptr);
}

TEST_F(ToolRegistryTest, UnknownToolListsTheAvailableOnes) {
  Add("read_file", Returning("x"));
  Add("grep", Returning("x"));
  const ToolResult r = Invoke("rm_rf", "{}");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.content, "unknown tool \"rm_rf\"; available: read_file, grep");
}

TEST_F(ToolRegistryTest, MalformedJsonQuotesABoundedSanitizedPrefix) {
  FakeTool* tool = Add("t", Returning("x"));
  const std::string args = "{\"path\": \"\xff\xfe" + std::string(5000, 'z');
  const ToolResult r = Invoke("t", args);
  EXPECT_TRUE(r.is_error);
  EXPECT_THAT(r.content, StartsWith("invalid JSON arguments for tool t: "));
  EXPECT_THAT(r.content, HasSubstr("arguments began: \"{\\\"path\\\": \\\"\xEF\xBF\xBD"));
  EXPECT_LT(r.content.size(), 600u);
  EXPECT_EQ(tool->calls, 0);
}

// Found by fuzz/tool_args_fuzz (crash-12e05e3e...): invalid UTF-8 before any JSON value reached
// the result through the parser's message, breaking "every result is valid UTF-8".
TEST_F(ToolRegistryTest, MalformedJsonWithInvalidUtf8GivesAValidUtf8Result) {
  FakeTool* tool = Add("t", Returning("x"));
  const ToolResult r = Invoke("t", "\x85\xdd\x8f\x9bth\": \"a.txt\"}");
  EXPECT_TRUE(r.is_error);
  EXPECT_THAT(r.content, StartsWith("invalid JSON arguments for tool t: "));
  EXPECT_TRUE(IsValidUtf8(r.content)) << r.content;
  EXPECT_EQ(tool->calls, 0);
}

TEST_F(ToolRegistryTest, SchemaMismatchIsAnErrorResult) {
  FakeTool* tool = Add("t", Returning("x"));
  ToolResult r = Invoke("t", R"({"path":42})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.content, "invalid arguments for tool t: $.path: expected string, got number");
  r = Invoke("t", "[1]");
  EXPECT_THAT(r.content, HasSubstr("expected object, got array"));
  EXPECT_EQ(tool->calls, 0);
}

TEST_F(ToolRegistryTest, EmptyArgumentsCountAsAnEmptyObject) {
  auto tool = std::make_unique<FakeTool>("noargs", Returning("done"), R"({"type":"object"})");
  MEND_ASSERT_OK(registry_.Register(std::move(tool)));
  const ToolResult r = Invoke("noargs", "  ");
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.content, "done");
}

TEST_F(ToolRegistryTest, FailingAndThrowingToolsBecomeErrorResults) {
  Add("fails", [](std::string_view) { return Result<ToolResult>(InternalError("disk on fire")); });
  Add("throws", [](std::string_view) -> Result<ToolResult> { throw std::runtime_error("boom"); });
  ToolResult r = Invoke("fails", R"({"path":"a"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.content, "tool fails failed: INTERNAL: disk on fire");
  r = Invoke("throws", R"({"path":"a"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.content, "tool throws failed: unexpected exception: boom");
}

TEST_F(ToolRegistryTest, HugeOutputIsCutAtACharacterBoundary) {
  std::string big;
  while (big.size() < 100000) big += "é";  // two bytes each
  Add("big", Returning(big));
  ctx_.max_output_bytes = 1001;
  const ToolResult r = Invoke("big", R"({"path":"a"})");
  EXPECT_FALSE(r.is_error);
  EXPECT_THAT(r.content, StartsWith(big.substr(0, 1000) + "\n"));
  EXPECT_THAT(r.content, EndsWith("[output truncated: 1000 of 100000 bytes shown]"));
}

TEST_F(ToolRegistryTest, NonUtf8OutputIsSanitized) {
  Add("bin", Returning("ok\xff\xc3("));
  const ToolResult r = Invoke("bin", R"({"path":"a"})");
  EXPECT_EQ(r.content, "ok\xEF\xBF\xBD\xEF\xBF\xBD(");
}

}  // namespace
}  // namespace mend::agent
