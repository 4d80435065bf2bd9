// Byte-exact edits of a request body (json_edit.h). A small scanner finds the byte range of each
// value it needs; only the one edited value changes, so a client's key order, number spelling,
// escapes and unknown fields reach the upstream exactly as it sent them.
#include "proxy/json_edit.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "mend/base/json.h"
#include "mend/base/utf8.h"

namespace mend::proxy {
namespace {

constexpr int kMaxDepth = kMaxJsonDepth;

bool IsWs(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t SkipWs(std::string_view s, size_t i) {
  while (i < s.size() && IsWs(s[i])) ++i;
  return i;
}

Status Malformed(size_t at) {
  return InvalidArgumentError("request body is not valid JSON (at byte " + std::to_string(at + 1) +
                              ")");
}

// The end of the string token that starts at s[i] == '"'.
Result<size_t> SkipString(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') return i + 1;
    if (c == '\\') {
      ++i;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      return Malformed(i);
    }
  }
  return Malformed(s.size());
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The end of the number at s[i] (RFC 8259: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?).
Result<size_t> SkipNumber(std::string_view s, size_t i) {
  const size_t start = i;
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (i < s.size() && IsDigit(s[i])) {
    while (i < s.size() && IsDigit(s[i])) ++i;
  } else {
    return Malformed(start);
  }
  if (i < s.size() && s[i] == '.') {
    if (++i >= s.size() || !IsDigit(s[i])) return Malformed(i);
    while (i < s.size() && IsDigit(s[i])) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (i >= s.size() || !IsDigit(s[i])) return Malformed(i);
    while (i < s.size() && IsDigit(s[i])) ++i;
  }
  return i;
}

// The end of `true`, `false` or `null` at s[i].
Result<size_t> SkipLiteral(std::string_view s, size_t i) {
  for (std::string_view word : {"true", "false", "null"}) {
    if (s.substr(i, word.size()) == word) return i + word.size();
  }
  return Malformed(i);
}

// The end of the value that starts at s[i] (no leading white space). Containers are walked with an
// explicit stack of their kinds, so hostile nesting costs no call stack. Numbers and literals are
// checked against JSON's grammar; strings for their extent (escapes are decoded, and so checked,
// only in the values the edit reads).
Result<size_t> SkipValue(std::string_view s, size_t i) {
  std::vector<char> open;  // '{' or '['
  bool expect_key = false;
  while (true) {
    i = SkipWs(s, i);
    if (i >= s.size()) return Malformed(i);
    if (expect_key) {
      if (s[i] != '"') return Malformed(i);
      MEND_ASSIGN_OR_RETURN(i, SkipString(s, i));
      i = SkipWs(s, i);
      if (i >= s.size() || s[i] != ':') return Malformed(i);
      i = SkipWs(s, i + 1);
      expect_key = false;
      if (i >= s.size()) return Malformed(i);
    }
    const char c = s[i];
    if (c == '{' || c == '[') {
      if (static_cast<int>(open.size()) >= kMaxDepth) {
        return InvalidArgumentError("request body nests deeper than " + std::to_string(kMaxDepth) +
                                    " levels");
      }
      open.push_back(c);
      i = SkipWs(s, i + 1);
      if (i < s.size() && s[i] == (c == '{' ? '}' : ']')) {
        open.pop_back();
        ++i;
      } else {
        expect_key = c == '{';
        continue;
      }
    } else if (c == '"') {
      MEND_ASSIGN_OR_RETURN(i, SkipString(s, i));
    } else if (c == '-' || IsDigit(c)) {
      MEND_ASSIGN_OR_RETURN(i, SkipNumber(s, i));
    } else if (c == 't' || c == 'f' || c == 'n') {
      MEND_ASSIGN_OR_RETURN(i, SkipLiteral(s, i));
    } else {
      return Malformed(i);
    }
    // After a value: close containers or move to the next element.
    while (true) {
      if (open.empty()) return i;
      i = SkipWs(s, i);
      if (i >= s.size()) return Malformed(i);
      const char close = open.back() == '{' ? '}' : ']';
      if (s[i] == ',') {
        expect_key = open.back() == '{';
        ++i;
        break;
      }
      if (s[i] != close) return Malformed(i);
      open.pop_back();
      ++i;
    }
  }
}

// The decoded text of the string token s[range).
Result<std::string> DecodeString(std::string_view token) {
  if (token.find('\\') == std::string_view::npos) {
    return std::string(token.substr(1, token.size() - 2));
  }
  MEND_ASSIGN_OR_RETURN(nlohmann::json value, ParseJson(token));
  if (!value.is_string()) return InvalidArgumentError("expected a JSON string");
  return value.get<std::string>();
}

// One member of an object: the byte ranges of its key token and of its value.
struct Member {
  std::string key;
  ByteRange value;
};

// The members of the object at s[begin, end), in order.
Result<std::vector<Member>> Members(std::string_view s, ByteRange object) {
  std::vector<Member> members;
  size_t i = SkipWs(s, object.begin);
  if (i >= object.end || s[i] != '{') return InvalidArgumentError("expected a JSON object");
  i = SkipWs(s, i + 1);
  if (i < object.end && s[i] == '}') return members;
  while (i < object.end) {
    if (s[i] != '"') return Malformed(i);
    MEND_ASSIGN_OR_RETURN(size_t key_end, SkipString(s, i));
    Member member;
    MEND_ASSIGN_OR_RETURN(member.key, DecodeString(s.substr(i, key_end - i)));
    i = SkipWs(s, key_end);
    if (i >= object.end || s[i] != ':') return Malformed(i);
    member.value.begin = SkipWs(s, i + 1);
    MEND_ASSIGN_OR_RETURN(member.value.end, SkipValue(s, member.value.begin));
    members.push_back(std::move(member));
    i = SkipWs(s, member.value.end);
    if (i < object.end && s[i] == '}') return members;
    if (i >= object.end || s[i] != ',') return Malformed(i);
    i = SkipWs(s, i + 1);
  }
  return Malformed(i);
}

// The value of the last member named `key` (as a JSON parser keeps the last of duplicates).
std::optional<ByteRange> FindMember(const std::vector<Member>& members, std::string_view key) {
  std::optional<ByteRange> found;
  for (const Member& m : members) {
    if (m.key == key) found = m.value;
  }
  return found;
}

// The elements of the array at `array`.
Result<std::vector<ByteRange>> Elements(std::string_view s, ByteRange array) {
  std::vector<ByteRange> elements;
  size_t i = SkipWs(s, array.begin);
  if (i >= array.end || s[i] != '[') return InvalidArgumentError("expected a JSON array");
  i = SkipWs(s, i + 1);
  if (i < array.end && s[i] == ']') return elements;
  while (i < array.end) {
    ByteRange element{i, 0};
    MEND_ASSIGN_OR_RETURN(element.end, SkipValue(s, i));
    elements.push_back(element);
    i = SkipWs(s, element.end);
    if (i < array.end && s[i] == ']') return elements;
    if (i >= array.end || s[i] != ',') return Malformed(i);
    i = SkipWs(s, i + 1);
  }
  return Malformed(i);
}

std::string Quote(std::string_view text) { return DumpJson(nlohmann::json(std::string(text))); }

std::string TextBlock(std::string_view text) {
  return R"({"type":"text","text":)" + Quote(text) + "}";
}

char FirstChar(std::string_view s, ByteRange r) { return r.begin < r.end ? s[r.begin] : '\0'; }

// One replacement of bytes [begin, end) by `with`.
struct Splice {
  size_t begin = 0;
  size_t end = 0;
  std::string with;
};

std::string Apply(std::string_view body, const Splice& splice) {
  std::string out;
  out.reserve(body.size() + splice.with.size());
  out.append(body.substr(0, splice.begin));
  out.append(splice.with);
  out.append(body.substr(splice.end));
  return out;
}

// Appends `text` to the prompt value at `value`: a string gets "\n\n" + text, an array of text
// blocks / parts gets one more block, null becomes the string. `field` names it in errors.
Result<Splice> AppendToValue(std::string_view s, ByteRange value, std::string_view text,
                             std::string_view field) {
  const char first = FirstChar(s, value);
  if (first == '"') {
    MEND_ASSIGN_OR_RETURN(std::string old,
                          DecodeString(s.substr(value.begin, value.end - value.begin)));
    return Splice{value.begin, value.end,
                  Quote(old.empty() ? std::string(text) : old + "\n\n" + std::string(text))};
  }
  if (first == 'n') return Splice{value.begin, value.end, Quote(text)};
  if (first == '[') {
    MEND_ASSIGN_OR_RETURN(std::vector<ByteRange> items, Elements(s, value));
    // Before the closing bracket, after the last element (or right after '[').
    const size_t close = value.end - 1;
    if (items.empty()) return Splice{value.begin + 1, close, TextBlock(text)};
    return Splice{items.back().end, items.back().end, "," + TextBlock(text)};
  }
  return InvalidArgumentError(std::string(field) + " must be a string or an array of blocks");
}

// A member `"key":value` inserted first in the object at `object`.
Splice InsertFirstMember(std::string_view s, ByteRange object, std::string_view key,
                         const std::string& value, bool object_empty) {
  const size_t after_brace = SkipWs(s, object.begin) + 1;
  std::string member = Quote(key) + ":" + value;
  if (!object_empty) member += ",";
  return Splice{after_brace, after_brace, std::move(member)};
}

Result<Splice> EditChat(std::string_view s, ByteRange root, const std::vector<Member>& top,
                        std::string_view text) {
  std::optional<ByteRange> messages = FindMember(top, "messages");
  if (!messages.has_value() || FirstChar(s, *messages) != '[') {
    return InvalidArgumentError("'messages' must be an array");
  }
  MEND_ASSIGN_OR_RETURN(std::vector<ByteRange> items, Elements(s, *messages));
  for (const ByteRange& item : items) {
    if (FirstChar(s, item) != '{') continue;
    MEND_ASSIGN_OR_RETURN(std::vector<Member> fields, Members(s, item));
    std::optional<ByteRange> role = FindMember(fields, "role");
    if (!role.has_value() || FirstChar(s, *role) != '"') continue;
    MEND_ASSIGN_OR_RETURN(std::string name,
                          DecodeString(s.substr(role->begin, role->end - role->begin)));
    if (name != "system" && name != "developer") continue;
    std::optional<ByteRange> content = FindMember(fields, "content");
    if (!content.has_value()) return InsertFirstMember(s, item, "content", Quote(text), false);
    return AppendToValue(s, *content, text, "a system message's 'content'");
  }
  (void)root;
  std::string message = R"({"role":"system","content":)" + Quote(text) + "}";
  const size_t after_bracket = SkipWs(s, messages->begin) + 1;
  if (!items.empty()) message += ",";
  return Splice{after_bracket, after_bracket, std::move(message)};
}

Result<Splice> EditTopLevel(std::string_view s, ByteRange root, const std::vector<Member>& top,
                            std::string_view key, std::string_view text) {
  std::optional<ByteRange> value = FindMember(top, key);
  if (!value.has_value()) return InsertFirstMember(s, root, key, Quote(text), top.empty());
  return AppendToValue(s, *value, text, "'" + std::string(key) + "'");
}

}  // namespace

Result<ByteRange> FindTopLevelValue(std::string_view body, std::string_view key) {
  ByteRange root{SkipWs(body, 0), 0};
  MEND_ASSIGN_OR_RETURN(root.end, SkipValue(body, root.begin));
  if (SkipWs(body, root.end) != body.size()) return Malformed(SkipWs(body, root.end));
  if (FirstChar(body, root) != '{')
    return InvalidArgumentError("request body is not a JSON object");
  MEND_ASSIGN_OR_RETURN(std::vector<Member> members, Members(body, root));
  std::optional<ByteRange> found = FindMember(members, key);
  if (!found.has_value()) return NotFoundError("no top-level '" + std::string(key) + "'");
  return *found;
}

Result<std::string> AppendToSystemPrompt(std::string_view body, ApiShape shape,
                                         std::string_view text) {
  // The edit rewrites one string in its canonical form; invalid bytes elsewhere must not become
  // valid on the way (JSON is UTF-8).
  if (!IsValidUtf8(body)) return InvalidArgumentError("request body is not valid UTF-8");
  ByteRange root{SkipWs(body, 0), 0};
  MEND_ASSIGN_OR_RETURN(root.end, SkipValue(body, root.begin));
  if (SkipWs(body, root.end) != body.size()) return Malformed(SkipWs(body, root.end));
  if (FirstChar(body, root) != '{')
    return InvalidArgumentError("request body is not a JSON object");
  MEND_ASSIGN_OR_RETURN(std::vector<Member> top, Members(body, root));
  Result<Splice> splice = InvalidArgumentError("unknown API");
  switch (shape) {
    case ApiShape::kChatCompletions:
      splice = EditChat(body, root, top, text);
      break;
    case ApiShape::kMessages:
      splice = EditTopLevel(body, root, top, "system", text);
      break;
    case ApiShape::kResponses:
      splice = EditTopLevel(body, root, top, "instructions", text);
      break;
  }
  if (!splice.ok()) return splice.status();
  return Apply(body, *splice);
}

}  // namespace mend::proxy
