// agent.toml and skill front matter (src/agent/agent_folder*.cc): agent folders are written by
// people and, through `mend improve`, partly by a model. Input: "agent.toml\0skill\0tool toml",
// laid out in a MemoryFileSystem as an agent folder (agent.toml, skills/fuzz.md, tools/fuzz.toml)
// and loaded with LoadAgentFolder; the skill text also goes straight to ParseSkill, since the
// folder stops at a broken agent.toml. Invariants: errors are kInvalidArgument (or kNotFound),
// never an exception; a loaded spec has a name, limits within their documented bounds, and
// tools that are built-in or defined in tools/.
#include <string>

#include "agent/agent_folder_internal.h"
#include "fuzz/fuzz_util.h"
#include "mend/agent/agent_spec.h"
#include "mend/agent/builtin_tools.h"
#include "mend/base/file_system.h"
#include "mend/base/memory_file_system.h"

namespace mend::agent {
namespace {

void CheckError(const Status& s) {
  FUZZ_CHECK(s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kNotFound,
             s.ToString());
}

void CheckLoaded(const AgentSpec& spec) {
  FUZZ_CHECK(!spec.name.empty(), "a spec without a name");
  for (const std::string& tool : spec.tools) {
    bool defined = IsBuiltinTool(tool);
    for (const CommandToolSpec& c : spec.command_tools) defined = defined || c.spec.name == tool;
    FUZZ_CHECK(defined, "tool " + tool + " is neither built-in nor defined");
  }
  for (const SkillSpec& skill : spec.skills) FUZZ_CHECK(!skill.name.empty(), "an unnamed skill");
}

}  // namespace
}  // namespace mend::agent

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mend;
  std::vector<std::string_view> parts = fuzz::SplitParts(fuzz::AsText(data, size), 3);

  Result<agent::folder_internal::ParsedSkill> skill =
      agent::folder_internal::ParseSkill(parts[1], "skills/fuzz.md", "/agent/skills/fuzz.md");
  if (!skill.ok()) agent::CheckError(skill.status());

  MemoryFileSystem fs;
  FUZZ_CHECK(fs.CreateDirs("/agent/skills").ok() && fs.CreateDirs("/agent/tools").ok() &&
                 fs.CreateDirs("/agent/workspace").ok(),
             "dirs");
  FUZZ_CHECK(WriteFileAtomically(fs, "/agent/agent.toml", parts[0]).ok(), "agent.toml");
  FUZZ_CHECK(WriteFileAtomically(fs, "/agent/instructions.md", "Fix it.\n").ok(), "instructions");
  FUZZ_CHECK(WriteFileAtomically(fs, "/agent/skills/fuzz.md", parts[1]).ok(), "skill");
  if (!parts[2].empty()) {
    FUZZ_CHECK(WriteFileAtomically(fs, "/agent/tools/fuzz.toml", parts[2]).ok(), "tool");
  }
  Result<agent::AgentSpec> spec = agent::LoadAgentFolder(fs, "/agent");
  if (spec.ok()) {
    agent::CheckLoaded(*spec);
  } else {
    agent::CheckError(spec.status());
  }
  return 0;
}
