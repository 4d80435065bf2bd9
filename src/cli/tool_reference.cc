// docs/tools.md, made from the built-in tools' own specs (tool_reference.h), and the hidden
// `mend tool-reference` that prints it.
#include "cli/tool_reference.h"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "cli/command.h"
#include "mend/agent/builtin_tools.h"

namespace mend::cli {
namespace {

// Ordered, so a schema's properties are listed in the order its author wrote them.
using json = nlohmann::ordered_json;

constexpr char kIntro[] =
    "# Built-in tools\n"
    "\n"
    "<!-- Generated from the tools' own specs by `mend tool-reference > docs/tools.md`; do not\n"
    "edit by hand. tests/cli/tool_reference_test.cc fails when this page and the specs differ. "
    "-->\n"
    "\n"
    "The tools mend has built in, as the model is offered them: each one's description and the\n"
    "JSON Schema of its arguments. An agent enables them in `tools` of agent.toml\n"
    "([agent_folder.md](agent_folder.md)), and `[tool_options.<tool>]` sets a call's timeout and\n"
    "output cap. Before a tool runs, its arguments are checked against the schema; a call that\n"
    "does not satisfy it does not run and gets an error result naming the problem\n"
    "(`invalid arguments for tool read_file: $.offset: ...`), which goes back to the model like\n"
    "any tool error. Paths are relative to the run's workspace: absolute paths, `..` escapes and\n"
    "symlinks leading out of it are refused with an error result ([security.md](security.md)).\n"
    "Under `mend run --shadow` only the tools of the agent's `[shadow]` list run: by default the\n"
    "read-only ones but `ask_human`.\n";

std::string Code(const std::string& text) { return "`" + text + "`"; }

std::string YesNo(bool b) { return b ? "yes" : "no"; }

std::string TypeOf(const json& property) {
  if (!property.contains("type")) return "any";
  const json& type = property["type"];
  if (type.is_string()) return type.get<std::string>();
  std::string names;
  for (const json& t : type) names += (names.empty() ? "" : " or ") + t.get<std::string>();
  return names;
}

// The keywords of a property's schema beyond its type and description, in words.
std::string Rules(const json& property) {
  std::vector<std::string> rules;
  for (const auto& [key, value] : property.items()) {
    if (key == "type" || key == "description") continue;
    if (key == "minimum") {
      rules.push_back("at least " + value.dump());
    } else if (key == "maximum") {
      rules.push_back("at most " + value.dump());
    } else if (key == "minLength") {
      rules.push_back(value.dump() == "1" ? "not empty"
                                          : "at least " + value.dump() + " characters");
    } else if (key == "maxLength") {
      rules.push_back("at most " + value.dump() + " characters");
    } else if (key == "enum") {
      std::string choices;
      for (const json& v : value) choices += (choices.empty() ? "" : ", ") + Code(v.dump());
      rules.push_back("one of " + choices);
    } else if (key == "default") {
      rules.push_back("default " + Code(value.dump()));
    } else {
      rules.push_back(Code(key) + " " + Code(value.dump()));
    }
  }
  std::string text;
  for (const std::string& r : rules) text += (text.empty() ? "" : "; ") + r;
  return text;
}

std::set<std::string> Required(const json& schema) {
  std::set<std::string> names;
  if (schema.contains("required")) {
    for (const json& name : schema["required"]) names.insert(name.get<std::string>());
  }
  return names;
}

// "`path`, `offset`?, `limit`?": the arguments, optional ones marked.
std::string ArgumentList(const json& schema) {
  const std::set<std::string> required = Required(schema);
  std::string list;
  for (const auto& [name, property] : schema["properties"].items()) {
    list += (list.empty() ? "" : ", ") + Code(name) + (required.contains(name) ? "" : "?");
  }
  return list.empty() ? "none" : list;
}

void Section(const agent::ToolSpec& spec, const json& schema, std::string& out) {
  out += "\n## `" + spec.name + "`\n\n" + spec.description + "\n\n";
  out += "Read-only: " + YesNo(spec.read_only) +
         ". A person approves each call: " + YesNo(spec.requires_approval) + ".\n\n";
  const std::set<std::string> required = Required(schema);
  if (schema["properties"].empty()) {
    out += "No arguments.\n";
  } else {
    out += "| argument | type | required | rules | meaning |\n|---|---|---|---|---|\n";
    for (const auto& [name, property] : schema["properties"].items()) {
      out += "| " + Code(name) + " | " + TypeOf(property) + " | " + YesNo(required.contains(name)) +
             " | " + Rules(property) + " | " + property.value("description", "") + " |\n";
    }
  }
  if (schema.value("additionalProperties", true) == false) {
    out += "\nAny other argument is refused.\n";
  }
  out += "\n```json\n" + schema.dump(2) + "\n```\n";
}

}  // namespace

Result<std::string> ToolReferenceMarkdown() {
  std::vector<std::unique_ptr<agent::Tool>> tools;
  std::vector<json> schemas;
  for (const std::string& name : agent::BuiltinToolNames()) {
    MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Tool> tool, agent::MakeBuiltinTool(name));
    json schema = json::parse(tool->spec().parameters, nullptr, /*allow_exceptions=*/false);
    if (!schema.is_object() || !schema.contains("properties") ||
        !schema["properties"].is_object()) {
      return InternalError("the schema of built-in tool " + name + " is not an object schema");
    }
    schemas.push_back(std::move(schema));
    tools.push_back(std::move(tool));
  }
  std::string out = kIntro;
  out += "\n| tool | read-only | a person approves each call | arguments |\n|---|---|---|---|\n";
  for (size_t i = 0; i < tools.size(); ++i) {
    const agent::ToolSpec& spec = tools[i]->spec();
    out += "| [" + Code(spec.name) + "](#" + spec.name + ") | " + YesNo(spec.read_only) + " | " +
           YesNo(spec.requires_approval) + " | " + ArgumentList(schemas[i]) + " |\n";
  }
  out += "\n`?` marks an optional argument.\n";
  for (size_t i = 0; i < tools.size(); ++i) Section(tools[i]->spec(), schemas[i], out);
  return out;
}

void AddToolReferenceCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* command =
      app.add_subcommand("tool-reference", "print docs/tools.md from the built-in tools' specs");
  command->group("");  // for maintainers: not listed in --help
  command->callback([&ctx] {
    ctx.action = [&ctx]() -> Status {
      MEND_ASSIGN_OR_RETURN(std::string page, ToolReferenceMarkdown());
      ctx.out << page;
      return OkStatus();
    };
  });
}

}  // namespace mend::cli
