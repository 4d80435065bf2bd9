// The editor's request for one candidate (improve.h, BuildEditorMessages; docs/improve.md "The
// improve loop"): the role and reply protocol, the parent's files and its failing training runs,
// every text a run or a check produced inside untrusted-data blocks.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "improve/untrusted.h"
#include "mend/base/json.h"
#include "mend/improve/improve.h"

namespace mend::improve {
namespace {

constexpr std::string_view kEditorRole =
    "You improve the instructions of an AI agent. The agent's behaviour is defined by the file "
    "instructions.md (its system prompt) and optional skill files skills/<name>.md (front matter "
    "with name and description, then Markdown). You may change only those files; tools, "
    "agent.toml, limits and permissions are not yours to change and any attempt is refused.\n"
    "\n"
    "You are shown runs of the agent that failed a check. Find what in the instructions made the "
    "agent fail and write a corrected version. Keep what works; change as little as fixes the "
    "failures; do not mention the specific test cases.\n"
    "\n"
    "Answer only with file blocks and one rationale block, each tag on a line of its own:\n"
    "<file path=\"instructions.md\">\n"
    "the complete new text of the file\n"
    "</file>\n"
    "<rationale>\n"
    "one or two sentences: what failed and why the change fixes it\n"
    "</rationale>\n"
    "A file block holds the whole new file, not a diff. Leave out files you do not change. "
    "Nothing may stand outside the blocks.\n";

// Bounds of the escaped check texts in an editor request (CheckVerdict::message is at most 2 KiB
// before escaping, its error a few hundred bytes).
constexpr std::size_t kMaxCheckErrorBlockBytes = 1024;
constexpr std::size_t kMaxCheckMessageBlockBytes = 4096;

// A member's string value, or `fallback` when it is absent or not a string (never throws).
std::string StringMember(const nlohmann::json& object, const char* key, std::string fallback = "") {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

// A transcript (CaseRun::transcript, a JSON array) as text for the editor: every message's text
// inside an untrusted block (tool results and the model's own words may both echo hostile data),
// bounded to `max_bytes` in all by shrinking every block evenly.
std::string RenderTranscript(const std::string& transcript_json, std::size_t max_bytes) {
  std::string out;
  Result<nlohmann::json> parsed = ParseJson(transcript_json);
  if (!parsed.ok() || !parsed->is_array()) {
    return UntrustedBlock("transcript", transcript_json, max_bytes);
  }
  const std::size_t entries = std::max<std::size_t>(parsed->size(), 1);
  const std::size_t per_block = std::max<std::size_t>(max_bytes / entries, 256);
  for (const nlohmann::json& message : *parsed) {
    if (!message.is_object()) continue;
    const std::string role = StringMember(message, "role", "message");
    if (role == "system") continue;  // the instructions are shown once, as the file
    std::string text = StringMember(message, "content");
    auto calls = message.find("tool_calls");
    if (calls != message.end() && calls->is_array()) {
      for (const nlohmann::json& call : *calls) {
        if (!call.is_object()) continue;
        auto arguments = call.find("arguments");
        std::string argument_text;
        if (arguments != call.end()) {
          argument_text =
              arguments->is_string() ? arguments->get<std::string>() : DumpJson(*arguments);
        }
        text += "\n[calls " + StringMember(call, "name", "?") + " with " + argument_text + "]";
      }
    }
    std::string source = role;
    if (role == "tool") source = "tool:" + StringMember(message, "name", "?");
    const std::string decision = StringMember(message, "hook_decision");
    if (!decision.empty()) source += " (" + decision + " by a hook)";
    out += UntrustedBlock(source, text, per_block);
  }
  return out;
}

}  // namespace

std::vector<llm::Message> BuildEditorMessages(const AgentText& text,
                                              const std::vector<EditorRunView>& failing,
                                              const std::map<std::string, std::string>& reports,
                                              std::size_t max_transcript_bytes, int n, int of) {
  std::string system(kEditorRole);
  system += "\n";
  system += kUntrustedNotice;
  system += "\n";

  std::string user = "Candidate " + std::to_string(n) + " of " + std::to_string(of) + ".";
  if (of > 1) user += " Each candidate should try a different fix.";
  user += "\n\n## Current files\n\n<file path=\"instructions.md\">\n" + text.instructions;
  if (!text.instructions.empty() && text.instructions.back() != '\n') user += "\n";
  user += "</file>\n";
  for (const auto& [path, content] : text.skills) {
    user += "<file path=\"" + path + "\">\n" + content;
    if (!content.empty() && content.back() != '\n') user += "\n";
    user += "</file>\n";
  }
  user += "\n## Failing runs\n";
  if (failing.empty()) user += "\n(none: every training case passed)\n";
  for (const EditorRunView& view : failing) {
    user += "\n### Case " + view.c->id + " (passed " + std::to_string(view.passes) + " of " +
            std::to_string(view.runs) + " runs)\n\nTask:\n";
    user += UntrustedBlock("task", view.c->task, 4096);
    if (view.run != nullptr) {
      user += "Run status: " + view.run->status + "\n";
      if (!view.run->error.empty()) user += UntrustedBlock("run error", view.run->error, 1024);
      if (!view.run->output.empty())
        user += "Final answer:\n" + UntrustedBlock("answer", view.run->output, 2048);
      // Everything a check printed may echo the run, so its error (which quotes the check's
      // stderr) and its message are data, like tool output.
      const CheckVerdict& check = view.run->check;
      user += "Check verdict: " + std::string(check.pass ? "pass" : "fail") + "\n";
      if (!check.error.empty()) {
        user += "Why the run counts as failed:\n" +
                UntrustedBlock("check:error", check.error, kMaxCheckErrorBlockBytes);
      }
      if (!check.message.empty()) {
        user += "What the check said:\n" +
                UntrustedBlock("check:message", check.message, kMaxCheckMessageBlockBytes);
      }
      user += "Transcript:\n" + RenderTranscript(view.run->transcript, max_transcript_bytes);
    }
    auto report = reports.find(view.c->id);
    if (report != reports.end()) {
      user += "What the original failed run showed:\n" + report->second;
      if (!report->second.empty() && report->second.back() != '\n') user += "\n";
    }
  }
  std::vector<llm::Message> messages;
  messages.push_back(llm::Message::System(std::move(system)));
  messages.push_back(llm::Message::User(std::move(user)));
  return messages;
}

}  // namespace mend::improve
