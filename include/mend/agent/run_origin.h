#pragma once

// What a run records about where it runs and with what (docs/runs.md): RunModel (provider and
// model, never a key), the AgentFingerprint of its folder, and RunOrigin in its metadata, so that
// every later command and process continues it the same way.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/agent/agent_spec.h"
#include "mend/base/result.h"
#include "mend/llm/types.h"

namespace mend::agent {

/// The model a run talks to. Recorded when the run starts (never an API key) so that resume,
/// approve, answer, fork and recovery continue with it from any process (docs/runs.md).
struct RunModel {
  std::string provider;     ///< "openai" | "anthropic" | "scripted"
  std::string base_url;     ///< "" = the provider's public default
  std::string model;        ///< "" = whatever the provider is configured with
  std::string script_file;  ///< scripted: the absolute path of the script; "" otherwise

  /// Nothing recorded (a run from before models were recorded).
  bool empty() const { return provider.empty() && base_url.empty() && model.empty(); }
  /// Field by field.
  bool operator==(const RunModel&) const = default;
};

/// "openai gpt-4o-mini at http://host:port" style text for messages and tables.
std::string DescribeRunModel(const RunModel& model);

/// What an agent folder was made of when a run started: lowercase hex SHA-256 digests.
struct AgentFingerprint {
  std::string agent_toml;    ///< the bytes of agent.toml
  std::string instructions;  ///< instructions.md as loaded
  std::string skills;        ///< every skill's path, front matter and body, in load order
  /// Each tool offered to the model: its name, description and parameter schema.
  std::map<std::string, std::string> tools;

  /// Nothing recorded (a run from before fingerprints were recorded).
  bool empty() const { return agent_toml.empty() && instructions.empty() && tools.empty(); }
  /// Field by field.
  bool operator==(const AgentFingerprint&) const = default;
};

/// The fingerprint of `spec` offering `tools` (the definitions the model sees).
AgentFingerprint FingerprintAgent(const AgentSpec& spec,
                                  const std::vector<llm::ToolDefinition>& tools);

/// The fingerprint of `spec` with the tools it enables itself (built-ins and command tools).
/// kInvalidArgument as RunTools::Build for a tool that does not register.
Result<AgentFingerprint> FingerprintAgentFolder(const AgentSpec& spec);

/// How an agent differs from the fingerprint a run recorded.
struct AgentChanges {
  bool agent_toml = false;                 ///< agent.toml changed
  bool instructions = false;               ///< instructions.md changed
  bool skills = false;                     ///< a skill was added, removed or changed
  std::vector<std::string> tools_removed;  ///< recorded, now gone
  std::vector<std::string> tools_changed;  ///< recorded, now with another definition
  std::vector<std::string> tools_added;    ///< new since the run started

  /// Whether anything changed.
  bool any() const;
  /// "instructions, skills, tool read_file changed" style text; "" when nothing changed.
  std::string Describe() const;
};

/// Compares the recorded fingerprint with the current one. An empty `recorded` (a run from before
/// fingerprints were recorded) compares as unchanged.
AgentChanges CompareFingerprints(const AgentFingerprint& recorded, const AgentFingerprint& current);

/// One change of a run's model made by a command flag on resume, approve, answer or recovery.
struct ModelChange {
  RunModel from;   ///< the model before the change
  RunModel to;     ///< the model after it
  std::string at;  ///< RFC 3339 UTC
};

/// Where a run runs and with what, as the agent layer records it in the run's metadata JSON
/// (RunRecord::metadata, docs/runs.md) next to "kind" and "flags".
struct RunOrigin {
  std::string kind;       ///< "send" | "session"; "" when not recorded
  std::string workspace;  ///< the resolved absolute workspace; "" for runs from before it was kept
  RunModel model;         ///< the model the run continues with (after any change)
  std::vector<ModelChange> model_changes;  ///< oldest first
  AgentFingerprint fingerprint;            ///< of the agent when the run started
  bool shadow = false;                     ///< started in shadow mode: resumes stay in it
  /// The canary arm the run took (docs/improve.md, "Canary"): "baseline", or the id of the
  /// proposal whose files it runs with; "" when its agent had no canary when it started. Kept for
  /// the run's life: a resume of a proposal's run takes the proposal's files while the canary
  /// runs.
  std::string arm;
  /// The proposal whose canary the run is part of (either arm); "" when none.
  std::string canary;
  /// The bytes of the stored system prompt that came from the instructions and skills (the rest
  /// came from pre-run hooks), so a resume can put changed instructions in their place.
  std::optional<size_t> prompt_prefix_bytes;
  /// The run's trace (docs/observe.md): every attempt adds spans to it; "" before the run's first
  /// traced attempt. The root span is the first attempt's; forks keep both, so a fork's attempts
  /// join the trace and link to that span.
  std::string trace_id;
  std::string trace_root_span_id;  ///< see trace_id
};

/// Reads the origin from `metadata` (a JSON object; "" or "{}" give an empty origin). Unknown keys
/// are ignored. kDataLoss naming `run_id` for text that is not a JSON object or a known key with a
/// value of the wrong type.
Result<RunOrigin> ParseRunOrigin(std::string_view metadata, std::string_view run_id);

/// `metadata` (a JSON object, or "") with the origin's keys set to `origin`; other keys are kept.
/// kDataLoss as ParseRunOrigin when `metadata` is not an object.
Result<std::string> WriteRunOrigin(std::string_view metadata, const RunOrigin& origin,
                                   std::string_view run_id);

}  // namespace mend::agent
