#pragma once

#include <string>
#include <string_view>

namespace mend::reflexion::internal {

// One <name>...</name> block of a model reply. The model's markup is matched without regard to
// ASCII case; the content is the reply's own bytes between the first opening tag and the first
// closing tag after it (so a nested block of the same name ends at the inner closing tag).
struct TagBlock {
  bool found = false;   // the opening tag is present
  bool closed = false;  // ... and a closing tag follows it
  std::string_view content;
};

// Finds block `name` in `text`. `lowered` is ToLowerAscii(text) (same length), computed once by
// the caller so several lookups in a large reply stay linear. Views into `text`.
TagBlock FindTagBlock(std::string_view text, std::string_view lowered, std::string_view name);

// The content of a closed block as one line: invalid UTF-8 replaced, white space collapsed, cut to
// `max_chars` code points. "" for a block that is absent or unclosed.
std::string OneLine(const TagBlock& block, size_t max_chars);

// The content of a closed block with invalid UTF-8 replaced and outer white space trimmed (line
// breaks inside are kept: revised answers are multi-line). "" when absent or unclosed.
std::string Multiline(const TagBlock& block);

// The first `max_chars` code points of `text` on one line, for error messages; bounded work even
// for a huge reply.
std::string ReplyExcerpt(std::string_view text, size_t max_chars = 80);

}  // namespace mend::reflexion::internal
