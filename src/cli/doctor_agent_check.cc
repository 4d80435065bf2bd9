// `mend doctor AGENT_DIR`: the agent folder as `mend run` would load it, and the programs it would
// start. Programs are looked up, never run: an MCP server is not started here (`mend mcp list`
// does that), and no command tool or check is called.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/doctor_checks.h"
#include "mend/agent/command_vars.h"

namespace mend::cli {
namespace {

void Add(DoctorChecks& out, std::string name, CheckStatus status, std::string detail,
         std::string fix = "") {
  out.push_back({std::move(name), status, std::move(detail), std::move(fix)});
}

std::string Count(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Why `program` cannot be started, or "" when it can: a path is used as it is, a bare name is
// looked up in `path_var` as execvp would.
std::string WhyNotStartable(const std::string& program, const std::string& path_var) {
  if (program.find('/') != std::string::npos) {
    struct stat st;
    if (::stat(program.c_str(), &st) != 0) return program + " does not exist";
    if (!IsExecutableFile(program)) return program + " is not an executable file";
    return "";
  }
  size_t from = 0;
  while (from <= path_var.size()) {
    size_t end = path_var.find(':', from);
    if (end == std::string::npos) end = path_var.size();
    const std::string dir = end == from ? "." : path_var.substr(from, end - from);
    if (IsExecutableFile(JoinPath(dir, program))) return "";
    from = end + 1;
  }
  return program + " is not in PATH";
}

// One program a run may start, and where the folder names it.
struct Program {
  std::string where;  // "tools/run_checks.toml", "agent.toml checks[0]", ...
  std::string path;
};

std::vector<Program> ProgramsOf(const agent::AgentSpec& spec, const std::string& workspace) {
  std::vector<Program> programs;
  for (const agent::CommandToolSpec& tool : spec.command_tools) {
    const bool enabled =
        std::find(spec.tools.begin(), spec.tools.end(), tool.spec.name) != spec.tools.end();
    if (!enabled || tool.command.empty()) continue;
    programs.push_back(
        {tool.path, agent::ExpandCommand(tool.command, spec.dir, workspace).front()});
  }
  for (size_t i = 0; i < spec.checks.size(); ++i) {
    const agent::CheckSpec& check = spec.checks[i];
    if (check.kind != agent::CheckSpec::Kind::kCommand || check.command.empty()) continue;
    programs.push_back({"agent.toml checks[" + std::to_string(i) + "]",
                        agent::ExpandCommand(check.command, spec.dir, workspace).front()});
  }
  for (const agent::McpServerSpec& server : spec.mcp_servers) {
    if (server.command.empty()) continue;  // reached over HTTP
    // A relative path is found from the server's working directory when it starts.
    const std::string& program = server.command.front();
    if (program.find('/') != std::string::npos && program.front() != '/') continue;
    programs.push_back(
        {"agent.toml:" + std::to_string(server.line) + " (MCP server " + server.name + ")",
         program});
  }
  return programs;
}

void CheckPrograms(const agent::AgentSpec& spec, const std::map<std::string, std::string>& env,
                   DoctorChecks& out) {
  const std::string workspace = spec.workspace.empty() ? AbsoluteAgentDir(".") : spec.workspace;
  const auto path = env.find("PATH");
  const std::string path_var = path == env.end() ? "/usr/bin:/bin" : path->second;
  const std::vector<Program> programs = ProgramsOf(spec, workspace);
  for (const Program& program : programs) {
    const std::string why = WhyNotStartable(program.path, path_var);
    if (why.empty()) continue;
    Add(out, "agent programs", CheckStatus::kFail, program.where + ": " + why,
        "install it, make it executable (chmod u+x), or run it through an interpreter "
        "(command = [\"/bin/sh\", \"${AGENT_DIR}/...\"])");
    return;
  }
  Add(out, "agent programs", CheckStatus::kOk,
      programs.empty() ? "none to start"
                       : Count(programs.size(), "program", "programs") + " found");
}

}  // namespace

std::optional<agent::AgentSpec> CheckAgentFolder(FileSystem& fs, const std::string& dir,
                                                 const std::map<std::string, std::string>& env,
                                                 DoctorChecks& out) {
  Result<agent::AgentSpec> spec = agent::LoadAgentFolder(fs, AbsoluteAgentDir(dir));
  if (!spec.ok()) {
    Add(out, "agent", CheckStatus::kFail, std::string(spec.status().message()),
        "correct what the message names (docs/agent_folder.md); `mend run` refuses the folder "
        "until then");
    return std::nullopt;
  }
  Add(out, "agent", CheckStatus::kOk,
      dir + ": " + spec->name + ", " + Count(spec->tools.size(), "tool", "tools") + ", " +
          Count(spec->checks.size(), "check", "checks") + ", " +
          Count(spec->skills.size(), "skill", "skills") + ", " +
          Count(spec->mcp_servers.size(), "MCP server", "MCP servers"));
  const bool blank = std::all_of(spec->instructions.begin(), spec->instructions.end(),
                                 [](unsigned char c) { return std::isspace(c) != 0; });
  if (blank) {
    Add(out, "instructions", CheckStatus::kWarn, "instructions.md is empty",
        "write the agent's system prompt in " + JoinPath(dir, "instructions.md"));
  } else {
    Add(out, "instructions", CheckStatus::kOk,
        Count(spec->instructions.size(), "byte", "bytes") + " in instructions.md");
  }
  CheckPrograms(*spec, env, out);
  return std::move(spec).value();
}

}  // namespace mend::cli
