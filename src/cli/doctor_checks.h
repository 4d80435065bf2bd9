#pragma once

// The checks of `mend doctor` (docs/cli.md, "mend doctor"). Each looks at one part of a home or an
// agent folder, changes nothing there (no file is created, no lock taken, no record removed), and
// appends what it found, with what to do about it, to a list. None prints a secret: of a key they
// say only whether it is there and where it comes from.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mend/agent/agent_spec.h"
#include "mend/base/config.h"
#include "mend/base/env.h"
#include "mend/base/file_system.h"

namespace mend::cli {

enum class CheckStatus { kOk, kWarn, kFail };

// One line of the report.
struct DoctorCheck {
  std::string name;  // "config", "home", "runs schema", "endpoint", ...
  CheckStatus status = CheckStatus::kOk;
  std::string detail;  // what was found, one line
  std::string fix;     // what to do; empty for kOk
};

using DoctorChecks = std::vector<DoctorCheck>;

// "ok", "warn" or "fail".
std::string_view CheckStatusName(CheckStatus status);

// config.toml: present or not, and private (a file others may read is a warning: it may hold keys).
// The configuration itself has loaded; a configuration that does not load is reported by the
// caller.
void CheckConfigFile(const Config& config, DoctorChecks& out);

// The home directory: it exists, this user may write it, and only this user has access.
void CheckHome(const Config& config, DoctorChecks& out);

// The schema version of every store the configuration uses (app::ConfiguredSchemaStores, the probes
// of `mend migrate`), read without creating or migrating anything. `env.fs` is used.
void CheckSchemas(const Config& config, const Env& env, DoctorChecks& out);

// The WAL lesson queue at reflexion.queue.base_dir: pending records, dead letters and records that
// fail their checks, read one file at a time. The owner lock is not touched, so a running
// `mend serve` keeps its workers; nothing is removed.
void CheckLessonQueue(const Config& config, FileSystem& fs, DoctorChecks& out);

enum class Network { kProbe, kOffline };

// The provider: a model (the configuration's, else `agent_model`), a key where one is needed, and,
// with Network::kProbe, a GET of the provider's model list bounded by `timeout` (llm::ProbeModels).
// For the scripted provider: its script file, read through `fs`.
void CheckProvider(const Config& config, FileSystem& fs, const std::string& agent_model,
                   Network network, std::chrono::milliseconds timeout, DoctorChecks& out);

// The agent folder at `dir` (as given; made absolute here): it loads and validates, its
// instructions are not empty, and the programs its enabled command tools, command checks and MCP
// servers start exist, found as a run finds them (bare names in `env`'s PATH). The spec when it
// loaded.
std::optional<agent::AgentSpec> CheckAgentFolder(FileSystem& fs, const std::string& dir,
                                                 const std::map<std::string, std::string>& env,
                                                 DoctorChecks& out);

}  // namespace mend::cli
