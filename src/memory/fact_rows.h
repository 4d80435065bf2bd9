#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/memory/fact.h"

namespace mend::memory::internal {

int64_t ToMillis(Time t);
Time FromMillis(int64_t ms);

// The stored time (ms), to the nanosecond when `written` (facts.as_written) says the same
// millisecond; a text that no longer agrees (last_accessed moved since the import) is cleared.
Time StoredTime(int64_t ms, std::string& written);

std::string JoinTags(const std::vector<std::string>& tags);
std::vector<std::string> SplitTags(const std::string& joined);

// Episodes as stored in facts.episodes, and the text FTS5 indexes for them.
std::string EncodeEpisodes(const std::vector<Episode>& episodes);
Result<std::vector<Episode>> DecodeEpisodes(const std::string& json);
std::string ProvenanceText(const std::vector<Episode>& episodes);

// `s` as both stores can keep it: valid UTF-8 without NUL bytes (an invalid byte or a NUL becomes
// U+FFFD; PostgreSQL's text takes neither). For the fields mend may receive as raw bytes (tags,
// workspace, source, category, episodes); a fact's content is refused instead (ValidateFact).
std::string StorableText(std::string_view s);

// Bounds an episode's fields (UTF-8 safe) to kMaxEpisodeTaskBytes / kMaxEpisodeOutcomeBytes.
Episode BoundEpisode(const Episode& episode);
// Appends `episode` unless an equal task+outcome is there; keeps the newest kMaxEpisodes.
void AddEpisode(std::vector<Episode>& episodes, const Episode& episode);

// Vectors as stored in fact_vectors.vector: little-endian IEEE floats.
std::string EncodeVector(const std::vector<float>& v);
std::vector<float> DecodeVector(const std::string& blob);

// facts.as_written: "" when `as_written` is empty, else a JSON object of its non-empty fields.
std::string EncodeAsWritten(const AsWritten& as_written);
Result<AsWritten> DecodeAsWritten(const std::string& json);

// kInvalidArgument naming why an imported fact is unusable (empty id, or ValidateFact with
// kMaxImportedFactBytes).
Status CheckImported(const Fact& f);
// The row an imported fact becomes: tags normalised for matching, with the tags and times as given
// kept in as_written wherever the columns would lose something (case, duplicates, nanoseconds);
// category "general" when empty; episodes bounded as AddEpisode bounds them.
Fact PrepareImported(const Fact& in);

// kInvalidArgument when `content` is empty after trimming, longer than `max_bytes` or not UTF-8,
// or confidence is outside (0, 1].
Status ValidateFact(const std::string& content, double confidence,
                    size_t max_bytes = kMaxFactBytes);

}  // namespace mend::memory::internal
