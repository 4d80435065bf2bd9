#include "reflexion/tag_block.h"

#include "mend/base/utf8.h"

namespace mend::reflexion::internal {

TagBlock FindTagBlock(std::string_view text, std::string_view lowered, std::string_view name) {
  TagBlock block;
  std::string open = "<" + std::string(name) + ">";
  size_t start = lowered.find(open);
  if (start == std::string_view::npos) return block;
  block.found = true;
  start += open.size();
  std::string close = "</" + std::string(name) + ">";
  size_t end = lowered.find(close, start);
  if (end == std::string_view::npos) return block;
  block.closed = true;
  block.content = text.substr(start, end - start);
  return block;
}

std::string OneLine(const TagBlock& block, size_t max_chars) {
  if (!block.closed) return "";
  return TruncateUtf8Chars(CollapseWhitespace(SanitizeUtf8(block.content)), max_chars);
}

std::string Multiline(const TagBlock& block) {
  if (!block.closed) return "";
  return std::string(Trim(SanitizeUtf8(block.content)));
}

std::string ReplyExcerpt(std::string_view text, size_t max_chars) {
  // Four bytes per code point at most, plus slack for white space that collapses away.
  std::string head = TruncateUtf8Bytes(text, max_chars * 8);
  return TruncateUtf8Chars(CollapseWhitespace(SanitizeUtf8(head)), max_chars);
}

}  // namespace mend::reflexion::internal
