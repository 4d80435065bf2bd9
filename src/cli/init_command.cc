// `mend init [DIR] [--template fixer|research|empty] [--force]`: writes a working agent folder
// (docs/agent_folder.md) from one of the templates the binary holds (init_templates.h). It needs
// no home and no model: the folder it writes takes its model from the home's configuration.
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/init_templates.h"
#include "mend/base/json.h"

namespace mend::cli {
namespace {

struct InitArgs {
  std::string dir = ".";
  std::string template_name = "fixer";
  bool force = false;
};

std::string TemplateChoices() {
  std::string choices;
  const std::vector<AgentTemplate>& templates = AgentTemplates();
  for (size_t i = 0; i < templates.size(); ++i) {
    if (i > 0) choices += i + 1 == templates.size() ? " or " : ", ";
    choices += templates[i].name;
  }
  return choices;
}

// docs/agent_folder.md, "Names": [a-z0-9][a-z0-9_-]{0,63}.
bool IsAgentName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '_' && c != '-'))) return false;
  }
  return true;
}

// The folder's own name when it is a valid agent name, so runs of folders made from one template
// are told apart in `mend runs`; the template's name otherwise ("My Agent", "/").
std::string AgentNameFor(const std::string& dir, std::string_view template_name) {
  const std::string base = BaseName(dir);
  return IsAgentName(base) ? base : std::string(template_name);
}

// `word` as a shell reads it back: bare when it holds only safe characters, else single-quoted.
std::string ShellWord(const std::string& word) {
  bool safe = !word.empty();
  for (char c : word) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!plain && std::string_view("_-./+,:@%=").find(c) == std::string_view::npos) safe = false;
  }
  if (safe) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Every file is looked at before any is written, so a refusal leaves the folder as it was.
Status CheckBeforeWriting(CliContext& ctx, const InitArgs& args, const AgentTemplate& t,
                          const std::string& dir) {
  std::vector<std::string> existing;
  for (const TemplateFile& file : t.files) {
    // A file where a folder of the template goes (skills, tools) would stop the writing halfway.
    const std::string parent = DirName(file.path);
    if (Result<FileInfo> info = ctx.fs.Stat(JoinPath(dir, parent));
        parent != "." && info.ok() && !info->is_directory) {
      return FailedPreconditionError(JoinPath(args.dir, parent) + " exists and is not a folder");
    }
    if (ctx.fs.Exists(JoinPath(dir, file.path))) existing.push_back(JoinPath(args.dir, file.path));
  }
  if (existing.empty() || args.force) return OkStatus();
  std::string message = existing.front() + " already exists";
  if (existing.size() > 1) {
    message += " (and " + std::to_string(existing.size() - 1) + " more of the template's files)";
  }
  return AlreadyExistsError(message +
                            "; mend init does not overwrite files, --force replaces them");
}

Status WriteTemplateFile(CliContext& ctx, const TemplateFile& file, const std::string& path,
                         const std::string& agent_name) {
  MEND_RETURN_IF_ERROR(ctx.fs.CreateDirs(DirName(path)));
  MEND_RETURN_IF_ERROR(WriteFileAtomically(ctx.fs, path, RenderTemplateFile(file, agent_name)));
  if (file.mode != TemplateFileMode::kExecutable) return OkStatus();
  // The FileSystem seam creates every file 0600 and has no call for modes; a tool script must also
  // be executable by its owner, who is the only one who may read it.
  if (::chmod(path.c_str(), 0700) != 0) return ErrnoToStatus(errno, "chmod " + path);
  return OkStatus();
}

void Report(CliContext& ctx, const InitArgs& args, const AgentTemplate& t, const std::string& dir,
            const std::string& agent_name) {
  if (ctx.json) {
    nlohmann::json files = nlohmann::json::array();
    for (const TemplateFile& file : t.files) files.push_back(std::string(file.path));
    ctx.out << DumpJson({{"dir", dir}, {"template", std::string(t.name)}, {"files", files}})
            << "\n";
    return;
  }
  ctx.out << "wrote the " << t.name << " agent \"" << agent_name << "\" in " << args.dir << ":\n";
  for (const TemplateFile& file : t.files) ctx.out << "  " << file.path << "\n";
  ctx.out << "It runs on the model of the home's configuration (MEND_PROVIDER, MEND_MODEL, "
             "MEND_BASE_URL and MEND_API_KEY, or config.toml); `mend doctor "
          << ShellWord(args.dir) << "` checks both.\n";
  ctx.out << "next: mend run " << ShellWord(args.dir) << " \"" << t.example_task << "\"\n";
}

Status Init(CliContext& ctx, const InitArgs& args) {
  const AgentTemplate* t = FindAgentTemplate(args.template_name);
  if (t == nullptr) {
    return UsageError("unknown template \"" + args.template_name + "\"; choose " +
                      TemplateChoices());
  }
  if (args.dir.empty()) return UsageError("DIR is empty; omit it for the current directory");
  const std::string dir = AbsoluteAgentDir(args.dir);
  if (Result<FileInfo> info = ctx.fs.Stat(dir); info.ok() && !info->is_directory) {
    return FailedPreconditionError(args.dir + " exists and is not a folder");
  }
  MEND_RETURN_IF_ERROR(CheckBeforeWriting(ctx, args, *t, dir));
  const std::string agent_name = AgentNameFor(dir, t->name);
  for (const TemplateFile& file : t->files) {
    MEND_RETURN_IF_ERROR(WriteTemplateFile(ctx, file, JoinPath(dir, file.path), agent_name));
  }
  Report(ctx, args, *t, dir, agent_name);
  return OkStatus();
}

}  // namespace

void AddInitCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<InitArgs>();
  CLI::App* init = app.add_subcommand("init", "write a new agent folder from a template");
  init->group("Commands");
  init->add_option("DIR", args->dir, "the agent folder to write (default: the current directory)");
  init->add_option("--template", args->template_name,
                   "what the agent is for: " + TemplateChoices() + " (default: fixer)");
  init->add_flag("--force", args->force, "replace the template's files where they exist");
  init->footer(
      "Writes agent.toml, instructions.md, a skill, a command tool and its script, and an output "
      "check: a folder that runs as written, on the model the home's configuration names. "
      "Existing files are not replaced without --force; then nothing is written. "
      "docs/agent_folder.md describes the folder.");
  init->callback([&ctx, args] { ctx.action = [&ctx, args] { return Init(ctx, *args); }; });
}

}  // namespace mend::cli
