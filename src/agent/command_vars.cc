#include "mend/agent/command_vars.h"

#include <array>

#include "mend/base/edit_distance.h"

namespace mend::agent {
namespace {

constexpr std::array<std::string_view, 2> kNames = {"AGENT_DIR", "WORKSPACE"};

std::string Closest(std::string_view name) {
  std::string_view best;
  size_t best_distance = 3;
  for (std::string_view known : kNames) {
    const size_t d = EditDistance(name, known);
    if (d < best_distance) best = known, best_distance = d;
  }
  return best.empty() ? "" : " (did you mean ${" + std::string(best) + "}?)";
}

}  // namespace

Status CheckCommandVariables(std::string_view arg) {
  for (size_t at = arg.find("${"); at != std::string_view::npos; at = arg.find("${", at + 2)) {
    const size_t end = arg.find('}', at + 2);
    if (end == std::string_view::npos) {
      return InvalidArgumentError("unterminated ${ in \"" + std::string(arg) +
                                  "\"; commands may use ${AGENT_DIR} and ${WORKSPACE}");
    }
    const std::string_view name = arg.substr(at + 2, end - at - 2);
    bool known = false;
    for (std::string_view k : kNames) known = known || name == k;
    if (!known) {
      return InvalidArgumentError("unknown variable ${" + std::string(name) + "}" + Closest(name) +
                                  "; commands may use ${AGENT_DIR} and ${WORKSPACE}");
    }
  }
  return OkStatus();
}

std::vector<std::string> ExpandCommand(const std::vector<std::string>& argv,
                                       std::string_view agent_dir, std::string_view workspace) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (const std::string& arg : argv) {
    std::string expanded;
    size_t from = 0;
    for (size_t at = arg.find("${"); at != std::string::npos; at = arg.find("${", from)) {
      const size_t end = arg.find('}', at + 2);
      if (end == std::string::npos) break;
      const std::string_view name = std::string_view(arg).substr(at + 2, end - at - 2);
      expanded.append(arg, from, at - from);
      if (name == "AGENT_DIR") {
        expanded.append(agent_dir);
      } else if (name == "WORKSPACE") {
        expanded.append(workspace);
      } else {
        expanded.append(arg, at, end + 1 - at);
      }
      from = end + 1;
    }
    expanded.append(arg, from, std::string::npos);
    out.push_back(std::move(expanded));
  }
  if (!out.empty() && !agent_dir.empty()) {
    std::string& program = out[0];
    if (program.find('/') != std::string::npos && program.front() != '/') {
      program = std::string(agent_dir) + "/" + program;
    }
  }
  return out;
}

}  // namespace mend::agent
