#pragma once

// Fact, the unit of long-term memory (docs/memory.md), with its episodes, its size limits and
// FactIdFor, the content address mend shares with chatcli. Plain values and pure functions.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/clock.h"

namespace mend::memory {

/// One episode that produced or reinforced a fact (docs/memory.md): the task text and a bounded
/// excerpt of its outcome. Retrieval may use them as extra search keys; the prompt section never
/// shows them.
struct Episode {
  std::string task;     ///< the task text
  std::string outcome;  ///< an excerpt of how it ended
  Time at;              ///< when
  /// The mend run it came from (a lesson's failed run); "" when not known. mend's own: exports to
  /// chatcli's format leave it out.
  std::string run_id;

  /// Field by field.
  bool operator==(const Episode&) const = default;
};

/// What a chatcli file (or an importer) wrote where mend keeps a normalised or coarser form, so an
/// export gives it back as it was written. Matching and search never read it.
struct AsWritten {
  /// the tags as written (case, spaces, duplicates); empty = `tags`
  std::vector<std::string> tags;
  /// chatcli's provenance ("user", "extraction", "correction", ...)
  std::string provenance;
  std::string created_at;     ///< RFC 3339 as written (nanoseconds, offset); "" = none
  std::string last_accessed;  ///< idem; the store drops it once last_accessed moves

  /// Nothing was kept as written.
  bool empty() const {
    return tags.empty() && provenance.empty() && created_at.empty() && last_accessed.empty();
  }
  /// Field by field.
  bool operator==(const AsWritten&) const = default;
};

/// A unit of long-term memory. Field names follow chatcli's memory_index.json where they overlap.
struct Fact {
  std::string id;                   ///< FactIdFor(content) unless imported with an id of its own
  std::string content;              ///< valid UTF-8, 1..kMaxFactBytes bytes (kMaxImportedFactBytes)
  std::string category;             ///< "lesson", "preference", "project", ... (default "general")
  std::vector<std::string> tags;    ///< lower-case, trimmed, unique, in insertion order
  std::string workspace;            ///< "" = applies everywhere
  std::string source;               ///< who wrote it: "user", "reflexion", "import", ...
  double confidence = 1.0;          ///< (0, 1]
  Time created_at;                  ///< when it was first stored
  Time last_accessed;               ///< when a run last received it
  int64_t access_count = 0;         ///< writes that reinforced it + runs that received it
  int64_t helped = 0;               ///< runs that received it and completed
  int64_t hurt = 0;                 ///< runs that received it and failed
  std::string superseded_by;        ///< id of the fact that replaces it; "" while active
  std::vector<Episode> provenance;  ///< oldest first, at most kMaxEpisodes (the newest kept)
  AsWritten as_written;             ///< for exports only
};

/// A fact an import left out, and why; the other facts of the import were kept.
struct UnusableFact {
  size_t index = 0;    ///< its position in the file (or in the vector given to FactStore::Import)
  std::string id;      ///< as given; may be empty
  std::string reason;  ///< why it was left out

  /// Field by field.
  bool operator==(const UnusableFact&) const = default;
};

/// The longest content FactStore::Add accepts.
inline constexpr size_t kMaxFactBytes = 16 * 1024;
/// What an imported fact may hold: chatcli sets no limit, and a fact is kept whole up to about
/// 32k tokens, the context of the smallest models mend serves; a longer text could never be
/// given to a model whole. The prompt section still leaves out a fact longer than its budget.
inline constexpr size_t kMaxImportedFactBytes = 128 * 1024;
inline constexpr size_t kMaxEpisodes = 16;               ///< episodes kept per fact, the newest
inline constexpr size_t kMaxEpisodeTaskBytes = 2000;     ///< an episode's task is cut to this
inline constexpr size_t kMaxEpisodeOutcomeBytes = 1500;  ///< an episode's outcome is cut to this

/// The id of a fact with this content: the first 12 bytes of SHA-256 of the lower-cased (every
/// script, as Go's strings.ToLower: ToLowerUtf8), trimmed content, as 24 lower-case hex digits
/// (chatcli's rule, so ids agree between the two tools).
std::string FactIdFor(std::string_view content);

/// Lower-cases, trims, drops empty and duplicate tags, keeps order.
std::vector<std::string> NormalizeTags(const std::vector<std::string>& tags);

}  // namespace mend::memory
