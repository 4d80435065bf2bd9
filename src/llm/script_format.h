#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mend/base/result.h"
#include "mend/llm/scripted_provider.h"

namespace mend::llm {

// The scripted provider's JSON script format (docs/scripted_provider_format.md), read and written
// in one place so that a recorded cassette always parses back to the steps it was made from.

// The position of the conversation a request continues: how many assistant messages it holds. The
// scripted provider answers by it and the recorder aligns a cassette with it.
size_t ConversationTurn(const CompletionRequest& request);

// Parses a script: an array of steps or {"steps": [...]}. kInvalidArgument naming the 0-based step
// and the problem for a malformed one. Does not throw.
Result<std::vector<ScriptedStep>> ParseScript(std::string_view json_text);

// Serialises `steps` as {"steps": [...]}, one step per line, in the form ParseScript reads back
// to equal steps: an answer always has "text", "tool_calls" (arguments as their verbatim JSON
// text), "input_tokens" and "output_tokens"; an error has "code", "message" and, when the status
// has them, "retry_after_ms", "detail_code" and "class". A code the format has no name for is
// written as "internal" with the status's class, so a replay classifies it the same way.
std::string SerializeScript(const std::vector<ScriptedStep>& steps);

}  // namespace mend::llm
