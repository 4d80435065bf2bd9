#pragma once

#include <string>
#include <string_view>

#include "mend/base/result.h"
#include "mend/llm/types.h"

namespace mend::agent {

// What a checkpoint keeps about a message beyond what the model sees.
struct MessageMeta {
  bool replaced_by_hook = false;  // a tool message whose content a post-tool hook replaced
  // A tool message no tool produced because a pre-tool hook decided instead: "denied" (the hook
  // denied the call), "supplied" (it gave the result, e.g. shadow mode), "stopped" (it stopped the
  // run); "" when the tool ran or a person answered.
  std::string hook_decision;
};

// The checkpoint encoding of one conversation message (docs/runs.md): a JSON object with "role"
// ("system" | "user" | "assistant" | "tool") and, when not empty, "content", "tool_calls"
// ([{"id","name","arguments"}]), "tool_call_id", "name", "is_error", "replaced_by_hook" and
// "hook_decision". Never
// fails: text that is not valid UTF-8 is stored with U+FFFD replacements.
std::string EncodeMessage(const llm::Message& message, const MessageMeta& meta = {});

// The inverse of EncodeMessage; `meta`, when not null, receives the message's MessageMeta (absent
// fields, as in rows written before they existed, decode as false). kDataLoss naming `run_id` and
// what is wrong for text that is not such an object (a corrupt row affects only its run).
Result<llm::Message> DecodeMessage(std::string_view text, std::string_view run_id,
                                   MessageMeta* meta = nullptr);

}  // namespace mend::agent
