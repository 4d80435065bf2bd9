// Tool-call arguments and JSON Schema checking (src/agent/tool_registry.cc, json_schema*.cc): the
// model writes the arguments; agent folders and command tools write the schemas.
//
// Input: without a NUL byte, the arguments of a call, given to ToolRegistry::Invoke for every
// built-in tool's schema and for one schema that uses every supported keyword (the tools only
// record that they ran: nothing touches the file system). With a NUL byte, "schema\0value": the
// schema goes through ValidateJsonSchema and the value is checked against it. Invariants: nothing
// throws (both functions promise that), a tool runs only with arguments its schema accepts, and
// every result is valid UTF-8.
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz/fuzz_util.h"
#include "mend/agent/builtin_tools.h"
#include "mend/agent/json_schema.h"
#include "mend/agent/tool_registry.h"
#include "mend/base/json.h"
#include "mend/base/utf8.h"

namespace mend::agent {
namespace {

constexpr std::string_view kEveryKeyword = R"({
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[a-z0-9_./-]+$"},
    "mode": {"enum": ["read", "write", 3, null]},
    "count": {"type": "integer", "minimum": 0, "exclusiveMaximum": 100},
    "ratio": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1},
    "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 4},
    "pair": {"type": "array", "items": [{"type": "string"}, {"type": "boolean"}]},
    "exact": {"const": {"a": [1, 2]}},
    "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    "one": {"oneOf": [{"type": "number"}, {"type": "integer"}]},
    "all": {"allOf": [{"type": "string"}, {"minLength": 2}]},
    "nested": {"type": "object", "additionalProperties": {"type": "boolean"}},
    "anything": true
  },
  "required": ["path"],
  "additionalProperties": false
})";

// A tool that only records that it ran, with the schema it was given.
class RecordingTool final : public Tool {
 public:
  RecordingTool(std::string name, std::string parameters) {
    spec_.name = std::move(name);
    spec_.parameters = std::move(parameters);
  }
  const ToolSpec& spec() const override { return spec_; }
  Result<ToolResult> Execute(std::string_view arguments_json, const ToolContext&) override {
    ran = true;
    arguments = std::string(arguments_json);
    return ToolResult::Ok("ran");
  }
  bool ran = false;
  std::string arguments;

 private:
  ToolSpec spec_;
};

struct Registry {
  ToolRegistry registry;
  std::vector<RecordingTool*> tools;
  std::vector<nlohmann::json> schemas;

  Registry() {
    Add("every_keyword", std::string(kEveryKeyword));
    for (const std::string& name : BuiltinToolNames()) {
      Result<std::unique_ptr<Tool>> builtin = MakeBuiltinTool(name);
      FUZZ_CHECK(builtin.ok(), builtin.status().ToString());
      Add(name, (*builtin)->spec().parameters);
    }
  }
  void Add(const std::string& name, const std::string& parameters) {
    auto tool = std::make_unique<RecordingTool>(name, parameters);
    tools.push_back(tool.get());
    Status s = registry.Register(std::move(tool));
    FUZZ_CHECK(s.ok(), s.ToString());
    schemas.push_back(*ParseJson(parameters));
  }
};

void InvokeEveryTool(std::string_view arguments) {
  static Registry* const r = new Registry();
  ToolContext ctx;
  ctx.workspace = "/nonexistent-workspace";
  ctx.max_output_bytes = 1024;
  for (size_t i = 0; i < r->tools.size(); ++i) {
    RecordingTool& tool = *r->tools[i];
    tool.ran = false;
    ToolResult result = r->registry.Invoke(tool.spec().name, arguments, ctx);
    FUZZ_CHECK(IsValidUtf8(result.content), "a result is not valid UTF-8");
    FUZZ_CHECK(tool.ran == !result.is_error, "a tool ran on refused arguments, or the reverse");
    if (tool.ran) {
      Result<nlohmann::json> args = ParseJson(tool.arguments);
      FUZZ_CHECK(args.ok(), "a tool ran with arguments that are not JSON");
      FUZZ_CHECK(ValidateAgainstSchema(*args, r->schemas[i]).ok(),
                 "a tool ran with arguments its schema refuses");
    }
  }
}

void CheckSchemaAndValue(std::string_view schema_text, std::string_view value_text) {
  Result<nlohmann::json> schema = ParseJson(schema_text);
  if (!schema.ok()) return;
  Result<nlohmann::json> value = ParseJson(value_text);
  const Status usable = ValidateJsonSchema(*schema);
  if (!value.ok()) return;
  const Status checked = ValidateAgainstSchema(*value, *schema);
  if (!usable.ok()) {
    FUZZ_CHECK(!checked.ok(), "an unusable schema accepted a value");
  }
  FUZZ_CHECK(checked.ok() || checked.code() == StatusCode::kInvalidArgument, checked.ToString());
}

}  // namespace
}  // namespace mend::agent

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = mend::fuzz::AsText(data, size);
  if (input.find('\0') == std::string_view::npos) {
    mend::agent::InvokeEveryTool(input);
  } else {
    std::vector<std::string_view> parts = mend::fuzz::SplitParts(input, 2);
    mend::agent::CheckSchemaAndValue(parts[0], parts[1]);
  }
  return 0;
}
