#include "mend/improve/editor_protocol.h"

#include <optional>
#include <set>
#include <string>
#include <utility>

#include "mend/base/utf8.h"

namespace mend::improve {
namespace {

constexpr std::string_view kInstructions = "instructions.md";
constexpr std::string_view kFileOpenPrefix = "<file path=\"";
constexpr std::string_view kFileOpenSuffix = "\">";
constexpr std::string_view kFileClose = "</file>";
constexpr std::string_view kRationaleOpen = "<rationale>";
constexpr std::string_view kRationaleClose = "</rationale>";

// The same rule as the agent folder's names (docs/agent_folder.md), so an accepted skill file is
// one the loader would also accept by name.
bool IsValidSkillName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (i > 0 && (c == '_' || c == '-'));
    if (!ok) return false;
  }
  return true;
}

std::vector<std::string_view> SplitComponents(std::string_view path) {
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t slash = path.find('/');
    parts.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) return parts;
    path.remove_prefix(slash + 1);
  }
}

std::string ReasonFor(EditRefusal refusal, std::string_view path) {
  const std::string quoted = "\"" + std::string(path) + "\"";
  switch (refusal) {
    case EditRefusal::kAbsolutePath:
      return quoted + " is absolute; only instructions.md and skills/<name>.md may change";
    case EditRefusal::kParentReference:
      return quoted + " leaves the agent folder (..)";
    case EditRefusal::kNonCanonicalPath:
      return quoted + " is not a canonical relative path";
    case EditRefusal::kProtectedPath:
      return quoted + " is not editable; only instructions.md and skills/<name>.md may change";
    case EditRefusal::kNestedDirectory:
      return quoted + " is in a folder below skills/; skills are skills/<name>.md";
    case EditRefusal::kWrongExtension:
      return quoted + " is not a .md file; skills are skills/<name>.md";
    case EditRefusal::kInvalidSkillName:
      return quoted + " has an invalid skill name (names match [a-z0-9][a-z0-9_-]{0,63})";
    case EditRefusal::kInvalidContent:
      return "the new text of " + quoted + " is not valid UTF-8";
    case EditRefusal::kTooLarge:
      return "the new text of " + quoted + " is over 256 KiB";
  }
  return quoted;
}

Status LineError(std::size_t line, std::string_view message) {
  return InvalidArgumentError("editor reply line " + std::to_string(line) + ": " +
                              std::string(message));
}

enum class TagKind { kNone, kFileOpen, kFileClose, kRationaleOpen, kRationaleClose, kMalformed };

struct Tag {
  TagKind kind = TagKind::kNone;
  std::string_view path;  // for kFileOpen
};

// Classifies one trimmed line. Anything that starts like one of our tags but is not exactly one is
// malformed, so a near miss (single quotes, an extra attribute) is reported instead of being taken
// as text.
Tag ClassifyLine(std::string_view line) {
  if (line == kFileClose) return {TagKind::kFileClose};
  if (line == kRationaleOpen) return {TagKind::kRationaleOpen};
  if (line == kRationaleClose) return {TagKind::kRationaleClose};
  if (line.starts_with(kFileOpenPrefix) && line.ends_with(kFileOpenSuffix) &&
      line.size() >= kFileOpenPrefix.size() + kFileOpenSuffix.size()) {
    const std::string_view path = line.substr(
        kFileOpenPrefix.size(), line.size() - kFileOpenPrefix.size() - kFileOpenSuffix.size());
    if (!path.empty() && path.find('"') == std::string_view::npos) {
      return {TagKind::kFileOpen, path};
    }
    return {TagKind::kMalformed};
  }
  // A tag name followed by something else ("<filename>") is ordinary text.
  for (std::string_view prefix : {"<file", "</file", "<rationale", "</rationale"}) {
    if (!line.starts_with(prefix)) continue;
    const std::string_view rest = line.substr(prefix.size());
    if (rest.empty() || rest.front() == ' ' || rest.front() == '\t' || rest.front() == '>' ||
        rest.front() == '/') {
      return {TagKind::kMalformed};
    }
  }
  return {TagKind::kNone};
}

}  // namespace

std::string_view EditRefusalName(EditRefusal refusal) {
  switch (refusal) {
    case EditRefusal::kAbsolutePath:
      return "absolute_path";
    case EditRefusal::kParentReference:
      return "parent_reference";
    case EditRefusal::kNonCanonicalPath:
      return "non_canonical_path";
    case EditRefusal::kProtectedPath:
      return "protected_path";
    case EditRefusal::kNestedDirectory:
      return "nested_directory";
    case EditRefusal::kWrongExtension:
      return "wrong_extension";
    case EditRefusal::kInvalidSkillName:
      return "invalid_skill_name";
    case EditRefusal::kInvalidContent:
      return "invalid_content";
    case EditRefusal::kTooLarge:
      return "too_large";
  }
  return "unknown";
}

std::optional<EditRefusal> RefusalForPath(std::string_view path) {
  const bool drive = path.size() >= 2 && path[1] == ':';
  // Bytes that are not UTF-8 are refused before any other rule: the path is reported sanitized,
  // and a rule read from the raw bytes (a drive letter, a "..") would not match what is shown.
  if (path.empty() || !IsValidUtf8(path)) return EditRefusal::kNonCanonicalPath;
  if (path.front() == '/' || path.front() == '\\' || drive) return EditRefusal::kAbsolutePath;
  const std::vector<std::string_view> parts = SplitComponents(path);
  for (std::string_view part : parts) {
    if (part == "..") return EditRefusal::kParentReference;
  }
  if (path.find('\\') != std::string_view::npos) return EditRefusal::kNonCanonicalPath;
  for (std::string_view part : parts) {
    if (part.empty() || part == ".") return EditRefusal::kNonCanonicalPath;
  }
  if (path == kInstructions) return std::nullopt;
  if (parts.front() != "skills") return EditRefusal::kProtectedPath;
  if (parts.size() > 2) return EditRefusal::kNestedDirectory;
  if (parts.size() < 2) return EditRefusal::kProtectedPath;
  std::string_view file = parts[1];
  if (!file.ends_with(".md")) return EditRefusal::kWrongExtension;
  file.remove_suffix(3);
  if (!IsValidSkillName(file)) return EditRefusal::kInvalidSkillName;
  return std::nullopt;
}

namespace {

// A line-at-a-time state machine over the reply: outside any block, inside a file block, or inside
// the rationale.
class ReplyParser {
 public:
  Status Line(std::size_t number, std::string_view line) {
    const Tag tag = ClassifyLine(Trim(line));
    if (tag.kind == TagKind::kMalformed) return LineError(number, "malformed tag");
    switch (state_) {
      case State::kOutside:
        return Outside(number, line, tag);
      case State::kFile:
        if (tag.kind == TagKind::kFileClose) return CloseFile(number);
        break;
      case State::kRationale:
        if (tag.kind == TagKind::kRationaleClose) return CloseRationale(number);
        break;
    }
    if (tag.kind != TagKind::kNone) {
      return LineError(number, "a tag inside the block opened on line " +
                                   std::to_string(open_line_) + " (is a closing tag missing?)");
    }
    body_.append(line);
    body_ += '\n';
    return OkStatus();
  }

  Result<EditorReply> Finish(std::size_t last_line) {
    if (state_ != State::kOutside) {
      return LineError(
          last_line, std::string("the ") + (state_ == State::kFile ? "<file>" : "<rationale>") +
                         " block opened on line " + std::to_string(open_line_) + " is not closed");
    }
    if (blocks_ == 0) {
      return InvalidArgumentError("editor reply holds no <file> or <rationale> block");
    }
    return std::move(reply_);
  }

 private:
  enum class State { kOutside, kFile, kRationale };

  Status Outside(std::size_t number, std::string_view line, const Tag& tag) {
    switch (tag.kind) {
      case TagKind::kNone:
        if (Trim(line).empty()) return OkStatus();
        return LineError(number, "text outside a block");
      case TagKind::kFileOpen:
        if (!paths_.insert(std::string(tag.path)).second) {
          return LineError(number, "a second block for \"" + SanitizeUtf8(tag.path) + "\"");
        }
        path_ = std::string(tag.path);
        return Open(State::kFile, number);
      case TagKind::kRationaleOpen:
        if (has_rationale_) return LineError(number, "a second <rationale> block");
        has_rationale_ = true;
        return Open(State::kRationale, number);
      default:
        return LineError(number, "a closing tag without its opening tag");
    }
  }

  Status Open(State state, std::size_t number) {
    state_ = state;
    open_line_ = number;
    body_.clear();
    ++blocks_;
    return OkStatus();
  }

  Status CloseFile(std::size_t number) {
    state_ = State::kOutside;
    if (Trim(body_).empty()) return LineError(number, "the <file> block is empty");
    std::optional<EditRefusal> refusal = RefusalForPath(path_);
    if (!refusal.has_value() && !IsValidUtf8(body_)) refusal = EditRefusal::kInvalidContent;
    if (!refusal.has_value() && body_.size() > kMaxEditBytes) refusal = EditRefusal::kTooLarge;
    if (refusal.has_value()) {
      const std::string path = SanitizeUtf8(path_);
      reply_.refused.push_back({path, *refusal, ReasonFor(*refusal, path)});
    } else {
      reply_.edits.push_back({path_, std::move(body_)});
    }
    body_.clear();
    return OkStatus();
  }

  Status CloseRationale(std::size_t) {
    state_ = State::kOutside;
    reply_.rationale = std::string(Trim(body_));
    body_.clear();
    return OkStatus();
  }

  State state_ = State::kOutside;
  std::size_t open_line_ = 0;
  std::size_t blocks_ = 0;
  bool has_rationale_ = false;
  std::string path_;
  std::string body_;
  std::set<std::string, std::less<>> paths_;
  EditorReply reply_;
};

}  // namespace

Result<EditorReply> ParseEditorReply(std::string_view text) {
  ReplyParser parser;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    MEND_RETURN_IF_ERROR(parser.Line(number, line));
  }
  return parser.Finish(number);
}

}  // namespace mend::improve
