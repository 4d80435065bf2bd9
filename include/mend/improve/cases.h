#pragma once

// Improve cases (docs/improve.md): Case, a task an attempt reruns for every candidate, and the
// parser and loader of cases files (JSONL).

#include <string>
#include <string_view>
#include <vector>

#include "mend/base/file_system.h"
#include "mend/base/result.h"

namespace mend::improve {

/// One task `mend improve` reruns for every candidate (docs/improve.md). The JSONL format is in
/// docs/improve.md.
struct Case {
  /// Unique within its file; matches [A-Za-z0-9][A-Za-z0-9._-]{0,127}. "case-<line>" when the line
  /// gave none.
  std::string id;
  std::string task;  ///< the message sent to the agent; never empty
  /// The fixture folder copied into the run's workspace, resolved against the cases file's folder
  /// (absolute paths are kept). Empty when the case has none.
  std::string workspace;
  std::vector<std::string> check_args;  ///< extra arguments for the check command, in order
  std::vector<std::string> tags;        ///< free-form labels, in order

  /// Field by field.
  friend bool operator==(const Case&, const Case&) = default;
};

/// The longest case id accepted.
inline constexpr std::size_t kMaxCaseIdLength = 128;

/// True for [A-Za-z0-9][A-Za-z0-9._-]{0,127}. Ids become file names in the audit log and keys of
/// its records, so they are limited to characters safe in a path component and cannot start with
/// '.' (no hidden files, no ".."). Pure.
bool IsValidCaseId(std::string_view id);

/// Parses cases JSONL: one JSON object per line; blank lines are skipped; `\r\n` line ends are
/// accepted. `base_dir` is the folder relative workspaces are resolved against ("" leaves them as
/// they are). Every error is kInvalidArgument and its message starts with "line N: " (1-based):
/// malformed JSON, a line that is not an object, an unknown key, a missing or empty task, a member
/// of the wrong type, an invalid or duplicate id (the message names the first line that used it).
/// A text without any case is kInvalidArgument too. Pure and thread-safe.
Result<std::vector<Case>> ParseCasesJsonl(std::string_view text, std::string_view base_dir);

/// Reads `path` through `fs` and parses it with the file's folder as `base_dir`. Errors from the
/// file system keep their code (kNotFound for a missing file); every error names `path`.
Result<std::vector<Case>> LoadCasesFile(FileSystem& fs, const std::string& path);

}  // namespace mend::improve
