#include "mend/agent/tool_registry.h"

#include <exception>
#include <nlohmann/json.hpp>
#include <utility>

#include "agent/tool_output.h"
#include "mend/agent/json_schema.h"
#include "mend/base/json.h"
#include "mend/base/utf8.h"

namespace mend::agent {
namespace {

// How much of a malformed argument text or an unknown tool name is quoted back to the model.
constexpr std::size_t kMaxQuotedArguments = 200;
constexpr std::size_t kMaxQuotedName = 64;
// Tools that capture output cut it to ctx.max_output_bytes themselves and then append short
// notes (an exit code, a truncation note, a stderr excerpt); those are not cut again.
constexpr std::size_t kToolNoteAllowance = 4096;

bool IsValidToolName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

}  // namespace

struct ToolRegistry::Entry {
  std::unique_ptr<Tool> tool;
  nlohmann::json schema;
};

ToolRegistry::ToolRegistry() = default;
ToolRegistry::~ToolRegistry() = default;

Status ToolRegistry::Register(std::unique_ptr<Tool> tool) {
  if (tool == nullptr) return InvalidArgumentError("cannot register a null tool");
  const ToolSpec& spec = tool->spec();
  if (!IsValidToolName(spec.name)) {
    return InvalidArgumentError("invalid tool name " + QuoteExcerpt(spec.name, kMaxQuotedName) +
                                ": use 1 to 64 of [A-Za-z0-9_-]");
  }
  if (Find(spec.name) != nullptr) {
    return AlreadyExistsError("tool \"" + spec.name + "\" is already registered");
  }
  Result<nlohmann::json> schema = ParseJson(spec.parameters);
  if (!schema.ok()) return schema.status().Annotate("tool " + spec.name + " parameters");
  if (!spec.check_arguments) {
    if (!schema->is_object()) {
      return InvalidArgumentError("tool " + spec.name + " parameters: not a JSON object");
    }
    // Shown to the model as it is; the arguments only have to be an object.
    entries_.push_back(Entry{std::move(tool), {{"type", "object"}}});
    return OkStatus();
  }
  if (Status s = ValidateJsonSchema(*schema); !s.ok()) {
    return s.Annotate("tool " + spec.name + " parameters");
  }
  const auto type = schema->find("type");
  if (!schema->is_object() || type == schema->end() || *type != "object") {
    return InvalidArgumentError("tool " + spec.name +
                                " parameters: the schema must have \"type\": \"object\"");
  }
  entries_.push_back(Entry{std::move(tool), *std::move(schema)});
  return OkStatus();
}

Tool* ToolRegistry::Find(std::string_view name) const {
  for (const Entry& e : entries_) {
    if (e.tool->spec().name == name) return e.tool.get();
  }
  return nullptr;
}

std::vector<std::string> ToolRegistry::Names() const {
  std::vector<std::string> names;
  for (const Entry& e : entries_) names.push_back(e.tool->spec().name);
  return names;
}

std::vector<llm::ToolDefinition> ToolRegistry::Specs() const {
  std::vector<llm::ToolDefinition> defs;
  for (const Entry& e : entries_) {
    const ToolSpec& spec = e.tool->spec();
    defs.push_back({spec.name, spec.description, spec.parameters});
  }
  return defs;
}

ToolResult ToolRegistry::Invoke(std::string_view name, std::string_view arguments_json,
                                const ToolContext& ctx) {
  const Entry* entry = nullptr;
  for (const Entry& e : entries_) {
    if (e.tool->spec().name == name) entry = &e;
  }
  if (entry == nullptr) {
    std::string available;
    for (const Entry& e : entries_) {
      available += (available.empty() ? "" : ", ") + e.tool->spec().name;
    }
    return ToolResult::Error("unknown tool " + QuoteExcerpt(name, kMaxQuotedName) +
                             "; available: " + (available.empty() ? "(none)" : available));
  }
  const std::string tool_name(name);
  std::string_view text = arguments_json;
  if (Trim(text).empty()) text = "{}";
  Result<nlohmann::json> args = ParseJson(text);
  if (!args.ok()) {
    return ToolResult::Error("invalid JSON arguments for tool " + tool_name + ": " +
                             std::string(args.status().message()) + "; arguments began: " +
                             QuoteExcerpt(arguments_json, kMaxQuotedArguments));
  }
  if (Status s = ValidateAgainstSchema(*args, entry->schema); !s.ok()) {
    return ToolResult::Error("invalid arguments for tool " + tool_name + ": " +
                             std::string(s.message()));
  }
  ToolResult result;
  try {
    Result<ToolResult> r = entry->tool->Execute(text, ctx);
    result = r.ok() ? *std::move(r)
                    : ToolResult::Error("tool " + tool_name + " failed: " + r.status().ToString());
  } catch (const std::exception& e) {
    result = ToolResult::Error("tool " + tool_name + " failed: unexpected exception: " + e.what());
  } catch (...) {
    result = ToolResult::Error("tool " + tool_name + " failed: unexpected exception");
  }
  result.content = result.content.size() > ctx.max_output_bytes + kToolNoteAllowance
                       ? CapOutput(result.content, ctx.max_output_bytes)
                       : SanitizeUtf8(result.content);
  return result;
}

}  // namespace mend::agent
