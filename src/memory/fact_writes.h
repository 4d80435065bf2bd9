#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/memory/fact.h"
#include "mend/memory/fact_store.h"

// What every FactStore does the same way, whichever database keeps the facts: the row a write
// becomes, how a duplicate is reinforced, which facts an import leaves out, which parts of a fact
// lack a vector. The stores only read and write rows.

namespace mend::memory::internal {

// A fact's columns as the stores keep them (fact_store_sql.h, pg_fact_store_sql.h).
struct StoredFact {
  std::string id;
  std::string content;
  std::string category;
  std::string tags;  // JoinTags
  std::string workspace;
  std::string source;
  double confidence = 1;
  int64_t created_at = 0;  // ms
  int64_t last_accessed = 0;
  int64_t access_count = 0;
  int64_t helped = 0;
  int64_t hurt = 0;
  std::string superseded_by;  // "" = active (NULL in the table)
  std::string episodes;       // EncodeEpisodes
  std::string as_written;     // EncodeAsWritten
};

// The fact a row holds; kDataLoss naming the fact when its episodes or as_written do not parse.
Result<Fact> DecodeStoredFact(StoredFact row);

// What Add checks and normalises before looking for duplicates.
struct PreparedAdd {
  std::string content;   // trimmed
  std::string category;  // lower-case, trimmed; "general" when empty
  std::string id;        // FactIdFor(content)
};
// kInvalidArgument as ValidateFact.
Result<PreparedAdd> PrepareAdd(const NewFact& fact);

// The row a new write becomes, created and last accessed `now`.
Fact NewFactRow(const PreparedAdd& prepared, const NewFact& fact, Time now);

// What a write that repeats `existing` (same id, or a near duplicate) changes in it: its tags gain
// the new ones, its episodes the new one, the tags as written gain the new ones and the written
// last_accessed is dropped (it moves). Access count and last accessed move too (the store's).
struct Reinforcement {
  std::vector<std::string> tags;
  std::vector<Episode> episodes;
  AsWritten as_written;
  bool text_changed = false;  // tags or episodes changed: the searchable text moved
  bool tags_changed = false;
};
Reinforcement PlanReinforcement(const Fact& existing, const NewFact& write);

// The facts of an import that can be stored, and those left out (UnusableFact), in order.
struct ImportSelection {
  std::vector<const Fact*> usable;
  std::vector<UnusableFact> unusable;
};
ImportSelection SelectImported(const std::vector<Fact>& facts);

// The usable facts of `selection` as they will be stored (PrepareImported), in order. Of facts
// sharing an id the first is kept and the others are counted in `*repeated`: skipped as already
// present, as one insert after another would have them.
std::vector<Fact> DistinctImported(const ImportSelection& selection, int64_t* repeated);

// The tag hint's budget (FactStore::MatchTags): given each key's count in `matches`, reads the
// postings of the keys with facts, rarest first, with `read_postings` (which fills ids and rowids),
// while the facts read stay within `max_postings` in all.
Status ReadTagPostings(std::vector<TagMatch>& matches, size_t max_postings,
                       const std::function<Status(TagMatch& match)>& read_postings);

// Appends to `out`, while it holds fewer than `limit`, the parts of fact `id` (at `position` in
// the store's order) that `has_part` says have no vector yet: part 0 its content (the first
// kMaxFactBytes) with its tags, part i its i-th episode's task and outcome. The last part appended
// is marked `completes_fact` when no missing part was left out.
void AppendMissingParts(const std::string& id, int64_t position, std::string_view content,
                        std::string_view tags, const std::vector<Episode>& episodes,
                        const std::function<bool(int part)>& has_part, size_t limit,
                        std::vector<EmbeddingWork>& out);

// kInvalidArgument when a vector of `vectors` is empty (PutEmbeddings stores none then).
Status CheckVectors(const std::vector<FactVector>& vectors);

// Whether `parts`, a comma-separated list of part numbers (SQL's group_concat or string_agg; empty
// or absent: none), holds `part`.
bool PartListHas(std::string_view parts, int part);

}  // namespace mend::memory::internal
