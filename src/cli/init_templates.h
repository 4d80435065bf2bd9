#pragma once

// The agent folders `mend init` writes (docs/cli.md, "mend init"), kept in the binary so there are
// no data files to install. Each template is a complete folder of docs/agent_folder.md that loads
// as written and runs on the model the home's configuration names.

#include <string>
#include <string_view>
#include <vector>

namespace mend::cli {

// How a file of a template is written: private like everything mend writes (0600), or a program
// of the folder its owner may run (0700).
enum class TemplateFileMode { kPrivate, kExecutable };

// One file of a template: its path inside the agent folder and its text, with placeholders that
// RenderTemplateFile fills in.
struct TemplateFile {
  std::string_view path;
  std::string_view text;
  TemplateFileMode mode = TemplateFileMode::kPrivate;
};

struct AgentTemplate {
  std::string_view name;          // "fixer", "research", "empty"
  std::string_view example_task;  // for the `mend run DIR "..."` printed after writing
  std::vector<TemplateFile> files;
};

// Every template, the default (fixer) first. Static data; thread-safe.
const std::vector<AgentTemplate>& AgentTemplates();

// The template called `name`, or nullptr when there is none.
const AgentTemplate* FindAgentTemplate(std::string_view name);

// The text of `file` as written into a folder: `{name}` replaced by `agent_name` (a valid agent
// name, docs/agent_folder.md) and an agent.toml's `{model}` line by the comment on where the model
// comes from. Pure.
std::string RenderTemplateFile(const TemplateFile& file, std::string_view agent_name);

}  // namespace mend::cli
