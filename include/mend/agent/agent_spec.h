#pragma once

// AgentSpec, a loaded and validated agent folder (docs/agent_folder.md): agent.toml with its tools,
// limits, checks, shadow and MCP tables, instructions.md, skills and command tools; and
// LoadAgentFolder, which reads one.

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mend/agent/tool.h"
#include "mend/base/file_system.h"
#include "mend/base/result.h"

namespace mend::agent {

/// agent.toml's [limits]: when a run stops as failed.
struct AgentLimits {
  int max_steps = 50;                  ///< model turns
  double max_cost_usd = 1.0;           ///< spend of one run
  std::chrono::seconds max_wall{600};  ///< wall time of one attempt
};

/// One skills/*.md file: a skill the system prompt offers.
struct SkillSpec {
  std::string name;         ///< from the front matter
  std::string description;  ///< from the front matter
  std::string body;         ///< the Markdown after the front matter
  std::string path;         ///< relative to the agent folder
};

/// An external command tool from tools/*.toml: arguments as JSON on stdin, result on stdout,
/// non-zero exit = tool error.
struct CommandToolSpec {
  ToolSpec spec;                     ///< name, description, parameters and flags from the file
  std::vector<std::string> command;  ///< argv; run in the workspace
  std::optional<std::chrono::milliseconds> timeout;  ///< unset: the step loop's default
  std::string path;                                  ///< relative to the agent folder
};

/// Per-tool settings from agent.toml (`[tool_options]` tables, one per tool name), for the step
/// loop to apply to the ToolContext of every call of that tool. Unset fields keep the loop's
/// defaults.
struct ToolOptions {
  std::optional<std::chrono::milliseconds> timeout;  ///< timeout_seconds
  std::optional<size_t> max_output_bytes;            ///< max_output_bytes
};

/// One [[checks]] table of agent.toml: a predicate over the output of a tool and what to do when it
/// fails. The agent module only loads and validates it; app turns it into heal's OutputCheck
/// (docs/heal.md), a post-tool hook.
struct CheckSpec {
  /// What the check tests.
  enum class Kind {
    kRegex,       ///< `pattern` must be found in the output (or, with must_match false, must not)
    kJsonSchema,  ///< the output must parse as JSON and satisfy `schema`
    kMaxBytes,    ///< the output must be at most `max_bytes` bytes
    kCommand,     ///< `command` gets the output on stdin and must exit 0 within its timeout
  };
  /// What a failing check does to the result.
  enum class Action {
    kHint,     ///< append `message` to the result
    kReplace,  ///< replace the result with an error result holding `message`
  };
  std::string tool;               ///< a tool of AgentSpec::tools, or "*" for every tool
  Kind kind = Kind::kRegex;       ///< what the check tests
  Action action = Action::kHint;  ///< what a failure does
  std::string pattern;            ///< kRegex: an ECMAScript pattern that compiles
  bool must_match = true;         ///< kRegex: false makes a match the failure
  std::string schema;    ///< kJsonSchema: compact JSON text of a usable schema (json_schema.h)
  size_t max_bytes = 0;  ///< kMaxBytes: positive
  std::vector<std::string> command;                  ///< kCommand: argv, non-empty
  std::optional<std::chrono::milliseconds> timeout;  ///< kCommand; unset: the hook's default
  std::string message;  ///< the hint or replacement text; empty: a description of the failure
};

/// agent.toml's [shadow] table: what still runs when shadow mode is on (configuration heal.shadow,
/// `mend run --shadow`). Every other tool call gets a simulated result instead of running.
struct ShadowSpec {
  /// Enabled tool names, in the file's order. Without `read_only` in agent.toml: the enabled tools
  /// that declare themselves read-only (ToolSpec::read_only, and read_only = true in tools/*.toml),
  /// except ask_human, in the order of AgentSpec::tools.
  std::vector<std::string> read_only;
};

/// agent.toml's [canary] table (docs/improve.md, "Canary"): how a run of a canaried agent is
/// judged besides its status and checks.
struct CanarySpec {
  /// argv of the command that judges a finished run (improve's check protocol, without case
  /// arguments); empty: none.
  std::vector<std::string> check;
  std::chrono::milliseconds timeout{30'000};  ///< how long the command may run
};

/// agent.toml's [improve] table (docs/improve.md, "Starting an attempt from the server"): what an
/// improve attempt of the folder checks and on which cases, so a request that only names the
/// folder (POST /api/v1/improve, `mend improve AGENT_DIR` without --check/--cases) can run one.
struct ImproveSpec {
  /// argv of the check command as written (improve's check protocol; a case's check_args are
  /// appended). ${AGENT_DIR} is the folder and a relative program holding a '/' is taken relative
  /// to it when the attempt runs (agent::ExpandCommand); ${WORKSPACE} is refused (the check runs
  /// in the run's workspace). Empty: none.
  std::vector<std::string> check;
  /// The cases file (JSONL, improve/cases.h) as written: a relative path inside the folder, without
  /// `..`. Empty: none.
  std::string cases;
  std::chrono::milliseconds timeout{60'000};  ///< how long one check may run
};

/// One [[mcp_servers]] table of agent.toml (docs/mcp.md): an MCP server whose tools the agent gets
/// as `<name>__<tool>`. The agent module only loads and validates it; app starts the server and
/// hands its tools to the agent (AgentOptions::extra_tools).
struct McpServerSpec {
  std::string name;  ///< kNameRule without "__"
  /// stdio: the program and its arguments (`command` + `args`); empty for Streamable HTTP.
  std::vector<std::string> command;
  /// `env` and `headers` as written: a value may hold ${VAR}, expanded from mend's environment
  /// when the server starts and never stored.
  std::map<std::string, std::string> env;
  std::string cwd;  ///< joined to the agent folder when relative; empty: the run's workspace
  std::string url;  ///< Streamable HTTP (http or https); empty for stdio
  std::map<std::string, std::string> headers;     ///< sent with every HTTP request
  std::optional<std::vector<std::string>> tools;  ///< the server's tools offered; unset: all
  std::vector<std::string> read_only;             ///< the server's tool names that run in shadow
  bool trust_annotations = false;                 ///< readOnlyHint true also makes a tool read-only
  std::vector<std::string> requires_approval;     ///< the server's tool names
  /// requires_approval = "destructive": destructiveHint not false
  bool approve_destructive = false;
  std::chrono::milliseconds timeout{60'000};  ///< per call
  size_t max_result_bytes = 32 * 1024;        ///< what the model sees of one result
  int line = 0;                               ///< where the table starts in agent.toml
};

/// A loaded, validated agent folder (docs/agent_folder.md):
/// ```
///   agent.toml        name, model, tools, [limits], [tool_options.<name>], [[checks]], [shadow],
///                     [[mcp_servers]], [canary], [improve]
///   instructions.md   the system prompt
///   skills/*.md       front matter (name, description) + body
///   tools/*.toml      external command tools
/// ```
struct AgentSpec {
  std::string dir;                 ///< the folder it was loaded from
  std::string name;                ///< agent.toml `name`
  std::string description;         ///< agent.toml `description`
  std::string model;               ///< empty: the configured model
  std::string instructions;        ///< the text of instructions.md
  std::vector<std::string> tools;  ///< built-in and external tool names enabled, in order
  AgentLimits limits;              ///< [limits]
  std::vector<SkillSpec> skills;   ///< skills/*.md, in path order
  std::vector<CommandToolSpec> command_tools;  ///< every tool defined in tools/*.toml, by file name
  std::map<std::string, ToolOptions> tool_options;  ///< keyed by tool name; only enabled tools
  /// agent.toml's `workspace` joined to `dir` when relative (so it is absolute when `dir` is);
  /// empty when not set: the caller runs in the current directory.
  std::string workspace;
  std::vector<CheckSpec> checks;           ///< in the file's order
  ShadowSpec shadow;                       ///< [shadow]
  std::vector<McpServerSpec> mcp_servers;  ///< in the file's order
  CanarySpec canary;                       ///< [canary]
  ImproveSpec improve;                     ///< [improve]
  /// Lowercase hex SHA-256 of agent.toml's bytes (run fingerprints, run_origin.h).
  std::string agent_toml_sha256;
};

/// The detail code of every LoadAgentFolder error about the folder's contents: the user must fix
/// the folder (the CLI exits 2 for it, like for invalid configuration).
inline constexpr std::string_view kAgentFolderInvalidDetail = "MEND_AGENT_FOLDER_INVALID";

/// Loads and validates an agent folder through `fs` (the format is docs/agent_folder.md). Errors
/// are kInvalidArgument (kNotFound for a missing folder, agent.toml or instructions.md) with
/// detail code kAgentFolderInvalidDetail, whose message names the file, the line when known, and
/// what is wrong:
/// "agents/x/agent.toml:4: limits.max_steps must be an integer between 1 and 10000, got -3".
/// Failures to read an existing file keep the filesystem's code and no detail code. Thread-safe if
/// `fs` is.
Result<AgentSpec> LoadAgentFolder(FileSystem& fs, const std::string& dir);

}  // namespace mend::agent
