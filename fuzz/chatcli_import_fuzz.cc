// chatcli's memory_index.json import (src/memory/chatcli_format.cc, ParseChatcliJson): the file
// comes from another tool, or from a person's editor. Invariants: every fact kept holds the
// promises of Fact (valid UTF-8 content within kMaxImportedFactBytes, confidence in (0, 1],
// lower-case unique tags), kept and left-out facts account for distinct positions, and exporting
// the facts then importing the export gives the same facts back.
#include <algorithm>
#include <cmath>
#include <string>

#include "fuzz/fuzz_util.h"
#include "mend/base/utf8.h"
#include "mend/memory/chatcli_format.h"

namespace mend::memory {
namespace {

void CheckFact(const Fact& f) {
  FUZZ_CHECK(!f.content.empty() && f.content.size() <= kMaxImportedFactBytes, "content size");
  FUZZ_CHECK(IsValidUtf8(f.content), "content is not valid UTF-8");
  FUZZ_CHECK(!f.id.empty(), "an empty id");
  FUZZ_CHECK(f.confidence > 0 && f.confidence <= 1, "confidence " + std::to_string(f.confidence));
  for (size_t i = 0; i < f.tags.size(); ++i) {
    FUZZ_CHECK(!f.tags[i].empty(), "an empty tag");
    for (size_t j = 0; j < i; ++j) FUZZ_CHECK(f.tags[j] != f.tags[i], "a duplicate tag");
  }
}

bool SameFact(const Fact& a, const Fact& b) {
  return a.id == b.id && a.content == b.content && a.category == b.category && a.tags == b.tags &&
         a.workspace == b.workspace && a.source == b.source && a.confidence == b.confidence &&
         a.created_at == b.created_at && a.last_accessed == b.last_accessed &&
         a.access_count == b.access_count && a.helped == b.helped && a.hurt == b.hurt &&
         a.superseded_by == b.superseded_by && a.provenance == b.provenance;
}

}  // namespace
}  // namespace mend::memory

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mend::memory;
  const std::string_view input = mend::fuzz::AsText(data, size);
  const mend::Time now{std::chrono::seconds(1'700'000'000)};

  mend::Result<ChatcliImport> parsed = ParseChatcliJson(input, now);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == mend::StatusCode::kInvalidArgument,
               parsed.status().ToString());
    return 0;
  }
  FUZZ_CHECK(parsed->facts.size() == parsed->indices.size(), "one index per fact");
  std::vector<size_t> positions = parsed->indices;
  for (const UnusableFact& u : parsed->unusable) positions.push_back(u.index);
  std::sort(positions.begin(), positions.end());
  FUZZ_CHECK(std::adjacent_find(positions.begin(), positions.end()) == positions.end(),
             "a position is both kept and left out, or kept twice");
  for (const Fact& f : parsed->facts) CheckFact(f);

  const std::string exported = ExportChatcliJson(parsed->facts);
  FUZZ_CHECK(mend::IsValidUtf8(exported), "the export is not valid UTF-8");
  mend::Result<ChatcliImport> again = ParseChatcliJson(exported, now);
  FUZZ_CHECK(again.ok(), "the export does not import: " + again.status().ToString());
  FUZZ_CHECK(again->unusable.empty(),
             "the export has unusable facts: " + again->unusable[0].reason);
  FUZZ_CHECK(again->facts.size() == parsed->facts.size(), "the export lost facts");
  for (size_t i = 0; i < again->facts.size(); ++i) {
    FUZZ_CHECK(SameFact(again->facts[i], parsed->facts[i]),
               "fact " + std::to_string(i) + " changed on export and import");
  }
  FUZZ_CHECK(ExportChatcliJson(again->facts) == exported, "the export is not stable");
  return 0;
}
