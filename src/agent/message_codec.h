#pragma once

#include <string>
#include <string_view>

#include "mend/base/result.h"
#include "mend/llm/types.h"

namespace mend::agent {

// The checkpoint encoding of one conversation message (docs/runs.md): a JSON object with "role"
// ("system" | "user" | "assistant" | "tool") and, when not empty, "content", "tool_calls"
// ([{"id","name","arguments"}]), "tool_call_id", "name" and "is_error". Never fails: text that is
// not valid UTF-8 is stored with U+FFFD replacements.
std::string EncodeMessage(const llm::Message& message);

// The inverse of EncodeMessage. kDataLoss naming `run_id` and what is wrong for text that is not
// such an object (a corrupt row affects only its run).
Result<llm::Message> DecodeMessage(std::string_view text, std::string_view run_id);

}  // namespace mend::agent
