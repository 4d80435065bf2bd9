#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/clock.h"

namespace mend::memory {

// One episode that produced or reinforced a fact (DESIGN.md §8): the task text and a bounded
// excerpt of its outcome. Retrieval may use them as extra search keys; the prompt section never
// shows them.
struct Episode {
  std::string task;
  std::string outcome;
  Time at;

  bool operator==(const Episode&) const = default;
};

// A unit of long-term memory. Field names follow chatcli's memory_index.json where they overlap.
struct Fact {
  std::string id;                 // FactIdFor(content) unless imported with an id of its own
  std::string content;            // valid UTF-8, 1..kMaxFactBytes bytes
  std::string category;           // "lesson", "preference", "project", ... (default "general")
  std::vector<std::string> tags;  // lower-case, trimmed, unique, in insertion order
  std::string workspace;          // "" = applies everywhere
  std::string source;             // who wrote it: "user", "reflexion", "import", ...
  double confidence = 1.0;        // (0, 1]
  Time created_at;
  Time last_accessed;
  int64_t access_count = 0;         // writes that reinforced it + runs that received it
  int64_t helped = 0;               // runs that received it and completed
  int64_t hurt = 0;                 // runs that received it and failed
  std::string superseded_by;        // id of the fact that replaces it; "" while active
  std::vector<Episode> provenance;  // oldest first, at most kMaxEpisodes (the newest kept)
};

inline constexpr size_t kMaxFactBytes = 16 * 1024;
inline constexpr size_t kMaxEpisodes = 16;
inline constexpr size_t kMaxEpisodeTaskBytes = 2000;
inline constexpr size_t kMaxEpisodeOutcomeBytes = 1500;

// The id of a fact with this content: the first 12 bytes of SHA-256 of the lower-cased (every
// script, as Go's strings.ToLower: ToLowerUtf8), trimmed content, as 24 lower-case hex digits
// (chatcli's rule, so ids agree between the two tools).
std::string FactIdFor(std::string_view content);

// Lower-cases, trims, drops empty and duplicate tags, keeps order.
std::vector<std::string> NormalizeTags(const std::vector<std::string>& tags);

}  // namespace mend::memory
