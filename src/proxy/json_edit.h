#pragma once

// Byte-exact edits of a request body: the proxy changes one system prompt and leaves every other
// byte of the client's JSON (key order, number spelling, escapes, unknown fields, vendor
// extensions) as the client sent it.

#include <string>
#include <string_view>

#include "mend/base/result.h"
#include "proxy/api_shape.h"

namespace mend::proxy {

// `body` with `text` added at the end of its system prompt:
//   kChatCompletions  the first message whose role is "system" or "developer": string content
//                     becomes content + "\n\n" + text (just text when it was ""); array content
//                     gets {"type":"text","text":text} appended; without such a message,
//                     {"role":"system","content":text} is inserted as the first message.
//   kMessages         the top-level "system": a string as above; an array of blocks gets
//                     {"type":"text","text":text} appended; absent or null: "system":text.
//   kResponses        the top-level "instructions": a string as above; absent or null: set.
// `text` is JSON-escaped where it is inserted. Every byte outside the edited value is kept.
// kInvalidArgument (a clear message naming the field) when `body` is not valid UTF-8 or not one
// JSON object, or `messages` / `system` / `instructions` / the content has a type the API does
// not allow.
Result<std::string> AppendToSystemPrompt(std::string_view body, ApiShape shape,
                                         std::string_view text);

// The byte range [begin, end) of the value of top-level key `key` in the JSON object `body`, or
// kNotFound. kInvalidArgument when `body` is not one well-formed JSON object.
struct ByteRange {
  size_t begin = 0;
  size_t end = 0;
};
Result<ByteRange> FindTopLevelValue(std::string_view body, std::string_view key);

}  // namespace mend::proxy
