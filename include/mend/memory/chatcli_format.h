#pragma once

// Long-term memory in chatcli's memory_index.json format (docs/memory.md): ExportChatcliJson and
// ParseChatcliJson, which reports the facts it cannot keep instead of failing the import.

#include <string>
#include <string_view>
#include <vector>

#include "mend/base/result.h"
#include "mend/memory/fact.h"

namespace mend::memory {

// chatcli's memory_index.json: a JSON array of facts with the fields id, content, category, tags,
// created_at, last_accessed (RFC 3339), access_count, score, source, source_project, confidence
// and provenance (a string). mend writes those fields plus its own (workspace, helped, hurt,
// superseded_by, episodes), which chatcli ignores; it reads either. docs/memory.md.

/// The export text (pretty-printed, stable field order, facts in the given order). What a fact
/// keeps in `as_written` is written back as it was (tags with their case and duplicates, chatcli's
/// provenance string, times with their nanoseconds and offset) while it still agrees with the fact.
std::string ExportChatcliJson(const std::vector<Fact>& facts);

/// A parsed export: the usable facts in file order (`indices[i]`: the position of facts[i] in the
/// file) and the facts left out, with their position and why.
struct ChatcliImport {
  std::vector<Fact> facts;             ///< the usable facts, in file order
  std::vector<size_t> indices;         ///< their positions in the file
  std::vector<UnusableFact> unusable;  ///< the facts left out, and why
};

/// Parses an export. A missing id is computed with FactIdFor; missing times default to `now`; a
/// missing or empty category is "general", a missing or empty source "import"; confidence 0 means
/// unset (1.0); mend's "workspace" wins over chatcli's "source_project"; "episodes" become the
/// provenance; tags are normalised, and the tags, the provenance string and the times as written go
/// to `as_written`; unknown fields are ignored; invalid UTF-8 bytes are read as U+FFFD, as Go reads
/// them.
/// The file is all or nothing when it is malformed: text that is not a JSON array, an element that
/// is not an object, a known field of the wrong JSON type or a missing content fail the whole parse
/// with kInvalidArgument naming the element and field ("fact 3: tags[1] is not a string"). A fact
/// whose values cannot be kept (content empty or over kMaxImportedFactBytes, an unreadable time, a
/// confidence outside (0, 1]) is left out and listed in `unusable`.
Result<ChatcliImport> ParseChatcliJson(std::string_view text, Time now);

}  // namespace mend::memory
