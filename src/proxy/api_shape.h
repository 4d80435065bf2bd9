#pragma once

#include <string_view>

namespace mend::proxy {

// Which API a request or reply is in.
enum class ApiShape {
  kChatCompletions,  // OpenAI POST /v1/chat/completions
  kMessages,         // Anthropic POST /v1/messages
  kResponses,        // OpenAI POST /v1/responses
};

std::string_view ApiShapeName(ApiShape shape);  // "chat", "messages", "responses"

}  // namespace mend::proxy
