#pragma once

// The editor model's output protocol (docs/improve.md has the full rules and an example). A reply
// is zero or more file blocks and at most one rationale block, each tag on a line of its own, with
// nothing but blank lines between blocks:
//
//   <file path="skills/triage.md">
//   ...the complete new text of the file...
//   </file>
//   <rationale>
//   ...why...
//   </rationale>
//
// Only instructions.md and skills/<name>.md may change (docs/improve.md: never tools, permissions
// or limits). A block for any other path is refused and recorded, never applied.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/result.h"

namespace mend::improve {

/// Why an edit was refused; decide on this, never on the message.
enum class EditRefusal {
  kAbsolutePath,      ///< "/etc/passwd", "C:/x"
  kParentReference,   ///< a ".." component: "../x.md", "skills/../agent.toml"
  kNonCanonicalPath,  ///< a "." or empty component ("./x", "skills//x.md"), a backslash, or bytes
                      ///< that are not UTF-8
  kProtectedPath,     ///< agent.toml, tools/..., or any path outside the editable set
  kNestedDirectory,   ///< skills/a/b.md
  kWrongExtension,    ///< skills/x.txt
  kInvalidSkillName,  ///< skills/Bad Name.md (names match [a-z0-9][a-z0-9_-]{0,63})
  kInvalidContent,    ///< the new text is not valid UTF-8
  kTooLarge,          ///< the new text is over kMaxEditBytes (the agent folder's own limit)
};

/// "absolute_path", "parent_reference", ... (stable names for the audit log).
std::string_view EditRefusalName(EditRefusal refusal);

/// The largest file an edit may write: the agent folder loader's limit for instructions and skills.
inline constexpr std::size_t kMaxEditBytes = 256 * 1024;

/// New text for one editable file. `path` is relative to the agent folder.
struct FileEdit {
  std::string path;     ///< e.g. "skills/triage.md"
  std::string content;  ///< the complete new file; every line ends with '\n'

  /// Field by field.
  friend bool operator==(const FileEdit&, const FileEdit&) = default;
};

/// A block the parser would not turn into an edit.
struct RefusedEdit {
  std::string path;     ///< as the reply wrote it, invalid UTF-8 replaced with U+FFFD
  EditRefusal refusal;  ///< why
  std::string reason;   ///< a human-readable sentence naming the path
};

/// A parsed editor reply.
struct EditorReply {
  std::vector<FileEdit> edits;  ///< in reply order; only editable paths with acceptable content
  std::string rationale;        ///< empty when the reply gave none
  std::vector<RefusedEdit> refused;  ///< blocks not turned into edits
};

/// Why an editor may not write `path`, or std::nullopt when it may: only "instructions.md" and
/// "skills/<name>.md" are writable. Purely lexical (a case-sensitive match); thread-safe.
std::optional<EditRefusal> RefusalForPath(std::string_view path);

/// Parses an editor reply. `\r\n` line ends are accepted and become '\n'. kInvalidArgument (the
/// message names the 1-based line) for: a reply with no block at all (empty or prose only), text
/// outside blocks, an unclosed block, a closing tag without its opening, a malformed tag, a nested
/// tag, a file block without a path or with only white space, two blocks for one path (refused or
/// not), two rationales.
/// Refusals (see EditRefusal) are not errors: they land in `refused`. Pure and thread-safe.
Result<EditorReply> ParseEditorReply(std::string_view text);

}  // namespace mend::improve
