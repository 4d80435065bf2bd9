#pragma once

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

// The export text (pretty-printed, stable field order, facts in the given order).
std::string ExportChatcliJson(const std::vector<Fact>& facts);

// Parses an export. Every fact must have a non-empty content; a missing id is computed with
// FactIdFor; missing times default to `now`; a missing category is "general", a missing source
// "import"; confidence 0 means unset (1.0); mend's "workspace" wins over chatcli's
// "source_project"; "episodes" become the provenance; unknown fields are ignored. Any problem
// fails the whole parse with kInvalidArgument naming the element index and field ("fact 3:
// content is empty"); text that is not a JSON array of objects is kInvalidArgument too.
Result<std::vector<Fact>> ParseChatcliJson(std::string_view text, Time now);

}  // namespace mend::memory
