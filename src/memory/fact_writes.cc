#include "memory/fact_writes.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "memory/fact_rows.h"
#include "mend/base/utf8.h"

namespace mend::memory::internal {}  // namespace mend::memory::internal

namespace mend::memory {

Status FactStore::PutEmbedding(const FactVector& vector, const std::string& model_id) {
  MEND_ASSIGN_OR_RETURN(int64_t stored, PutEmbeddings({vector}, model_id));
  if (stored == 0) return NotFoundError("no fact " + vector.id);
  return OkStatus();
}

Result<std::vector<Fact>> FactStore::GetMany(const std::vector<std::string>& ids) {
  std::vector<Fact> out;
  out.reserve(ids.size());
  for (const std::string& id : ids) {
    Result<Fact> fact = Get(id);
    if (fact.status().code() == StatusCode::kNotFound) continue;
    MEND_RETURN_IF_ERROR(fact.status());
    out.push_back(std::move(fact).value());
  }
  return out;
}

}  // namespace mend::memory

namespace mend::memory::internal {

Result<Fact> DecodeStoredFact(StoredFact row) {
  Fact f;
  f.id = std::move(row.id);
  f.content = std::move(row.content);
  f.category = std::move(row.category);
  f.tags = SplitTags(row.tags);
  f.workspace = std::move(row.workspace);
  f.source = std::move(row.source);
  f.confidence = row.confidence;
  f.access_count = row.access_count;
  f.helped = row.helped;
  f.hurt = row.hurt;
  f.superseded_by = std::move(row.superseded_by);
  Result<std::vector<Episode>> episodes = DecodeEpisodes(row.episodes);
  if (!episodes.ok()) {
    return DataLossError("fact " + f.id +
                         ": unreadable episodes: " + std::string(episodes.status().message()));
  }
  f.provenance = std::move(episodes).value();
  Result<AsWritten> as_written = DecodeAsWritten(row.as_written);
  if (!as_written.ok()) {
    return DataLossError("fact " + f.id +
                         ": unreadable as_written: " + std::string(as_written.status().message()));
  }
  f.as_written = std::move(as_written).value();
  f.created_at = StoredTime(row.created_at, f.as_written.created_at);
  f.last_accessed = StoredTime(row.last_accessed, f.as_written.last_accessed);
  return f;
}

Result<PreparedAdd> PrepareAdd(const NewFact& fact) {
  PreparedAdd out;
  out.content = std::string(Trim(fact.content));
  MEND_RETURN_IF_ERROR(ValidateFact(out.content, fact.confidence));
  out.category = ToLowerAscii(Trim(StorableText(fact.category)));
  if (out.category.empty()) out.category = "general";
  out.id = FactIdFor(out.content);
  return out;
}

Fact NewFactRow(const PreparedAdd& prepared, const NewFact& fact, Time now) {
  Fact f;
  f.id = prepared.id;
  f.content = prepared.content;
  f.category = prepared.category;
  f.tags = NormalizeTags(fact.tags);
  f.workspace = StorableText(fact.workspace);
  f.source = StorableText(fact.source);
  f.confidence = fact.confidence;
  f.created_at = f.last_accessed = now;
  if (fact.episode) AddEpisode(f.provenance, *fact.episode);
  return f;
}

Reinforcement PlanReinforcement(const Fact& existing, const NewFact& write) {
  Reinforcement out;
  out.tags = existing.tags;
  for (const std::string& tag : NormalizeTags(write.tags)) {
    if (std::find(out.tags.begin(), out.tags.end(), tag) == out.tags.end()) out.tags.push_back(tag);
  }
  out.episodes = existing.provenance;
  if (write.episode) AddEpisode(out.episodes, *write.episode);
  out.as_written = existing.as_written;
  if (!out.as_written.tags.empty()) {
    for (size_t i = existing.tags.size(); i < out.tags.size(); ++i) {
      out.as_written.tags.push_back(out.tags[i]);
    }
  }
  out.as_written.last_accessed.clear();
  out.tags_changed = out.tags != existing.tags;
  out.text_changed = out.tags_changed || out.episodes.size() != existing.provenance.size() ||
                     (write.episode && out.episodes != existing.provenance);
  return out;
}

ImportSelection SelectImported(const std::vector<Fact>& facts) {
  ImportSelection out;
  out.usable.reserve(facts.size());
  for (size_t i = 0; i < facts.size(); ++i) {
    Status valid = CheckImported(facts[i]);
    if (valid.ok()) {
      out.usable.push_back(&facts[i]);
    } else {
      out.unusable.push_back({i, facts[i].id, std::string(valid.message())});
    }
  }
  return out;
}

std::vector<Fact> DistinctImported(const ImportSelection& selection, int64_t* repeated) {
  std::vector<Fact> rows;
  rows.reserve(selection.usable.size());
  std::unordered_set<std::string_view> ids;
  for (const Fact* in : selection.usable) {
    if (ids.insert(in->id).second) {
      rows.push_back(PrepareImported(*in));
    } else {
      ++*repeated;
    }
  }
  return rows;
}

Status ReadTagPostings(std::vector<TagMatch>& matches, size_t max_postings,
                       const std::function<Status(TagMatch& match)>& read_postings) {
  std::vector<size_t> order;
  for (size_t i = 0; i < matches.size(); ++i) {
    if (matches[i].facts > 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return matches[a].facts < matches[b].facts; });
  size_t read = 0;
  for (size_t i : order) {
    const size_t facts = static_cast<size_t>(matches[i].facts);
    if (read + facts > max_postings) break;
    read += facts;
    MEND_RETURN_IF_ERROR(read_postings(matches[i]));
  }
  return OkStatus();
}

void AppendMissingParts(const std::string& id, int64_t position, std::string_view content,
                        std::string_view tags, const std::vector<Episode>& episodes,
                        const std::function<bool(int part)>& has_part, size_t limit,
                        std::vector<EmbeddingWork>& out) {
  const size_t first = out.size();
  bool left_out = false;
  if (!has_part(0)) {
    if (out.size() < limit) {
      // An imported fact may be longer than any fact mend writes itself (kMaxImportedFactBytes);
      // its vector is taken over the first kMaxFactBytes, so the embedding endpoint is never sent
      // a longer text than before and one long fact cannot fail every batch it is in.
      std::string text = TruncateUtf8Bytes(content, kMaxFactBytes);
      if (!tags.empty()) text += "\n" + std::string(tags);
      out.push_back(EmbeddingWork{id, 0, std::move(text), position, false});
    } else {
      left_out = true;
    }
  }
  for (size_t i = 0; i < episodes.size() && !left_out; ++i) {
    const int part = static_cast<int>(i) + 1;
    if (has_part(part)) continue;
    if (out.size() >= limit) {
      left_out = true;
      break;
    }
    const Episode& e = episodes[i];
    out.push_back(EmbeddingWork{id, part, e.outcome.empty() ? e.task : e.task + "\n" + e.outcome,
                                position, false});
  }
  if (!left_out && out.size() > first) out.back().completes_fact = true;
}

Status CheckVectors(const std::vector<FactVector>& vectors) {
  for (const FactVector& v : vectors) {
    if (v.vector.empty()) {
      return InvalidArgumentError("an embedding needs at least one value (fact " + v.id + ")");
    }
  }
  return OkStatus();
}

bool PartListHas(std::string_view parts, int part) {
  const std::string wanted = std::to_string(part);
  size_t start = 0;
  while (start <= parts.size()) {
    size_t comma = parts.find(',', start);
    if (comma == std::string_view::npos) comma = parts.size();
    if (parts.substr(start, comma - start) == wanted) return true;
    start = comma + 1;
  }
  return false;
}

}  // namespace mend::memory::internal
