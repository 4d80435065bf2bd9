#include "memory/fact_rows.h"

#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "mend/base/json.h"
#include "mend/base/time_format.h"
#include "mend/base/utf8.h"

namespace mend::memory::internal {

int64_t ToMillis(Time t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

Time FromMillis(int64_t ms) {
  return Time(std::chrono::duration_cast<Time::duration>(std::chrono::milliseconds(ms)));
}

namespace {

// The RFC 3339 text that keeps `t` whole: `written` when it says `t`, else `t` formatted when
// milliseconds would lose part of it, else "".
std::string TimeText(const std::string& written, Time t) {
  if (!written.empty()) {
    Result<Time> w = ParseRfc3339(written);
    if (w.ok() && *w == t) return written;
  }
  return FromMillis(ToMillis(t)) == t ? "" : FormatRfc3339(t);
}

}  // namespace

Time StoredTime(int64_t ms, std::string& written) {
  if (!written.empty()) {
    Result<Time> t = ParseRfc3339(written);
    if (t.ok() && ToMillis(*t) == ms) return *t;
    written.clear();
  }
  return FromMillis(ms);
}

std::string JoinTags(const std::vector<std::string>& tags) {
  std::string out;
  for (const std::string& tag : tags) {
    if (!out.empty()) out += ' ';
    out += tag;
  }
  return out;
}

std::vector<std::string> SplitTags(const std::string& joined) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < joined.size()) {
    size_t end = joined.find(' ', start);
    if (end == std::string::npos) end = joined.size();
    if (end > start) out.push_back(joined.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string EncodeEpisodes(const std::vector<Episode>& episodes) {
  nlohmann::json array = nlohmann::json::array();
  for (const Episode& e : episodes) {
    nlohmann::json item = {{"task", e.task}, {"outcome", e.outcome}, {"at", ToMillis(e.at)}};
    // Only when known, so episodes written before runs were recorded read the same.
    if (!e.run_id.empty()) item["run_id"] = e.run_id;
    array.push_back(std::move(item));
  }
  return DumpJson(array);
}

Result<std::vector<Episode>> DecodeEpisodes(const std::string& json) {
  MEND_ASSIGN_OR_RETURN(nlohmann::json array, ParseJson(json));
  if (!array.is_array()) return DataLossError("facts.episodes is not a JSON array");
  std::vector<Episode> out;
  for (const nlohmann::json& item : array) {
    Episode e;
    MEND_ASSIGN_OR_RETURN(e.task, GetString(item, "task"));
    MEND_ASSIGN_OR_RETURN(e.outcome, GetString(item, "outcome"));
    MEND_ASSIGN_OR_RETURN(int64_t at, GetInt64(item, "at"));
    e.at = FromMillis(at);
    if (item.contains("run_id")) {
      MEND_ASSIGN_OR_RETURN(e.run_id, GetString(item, "run_id"));
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string ProvenanceText(const std::vector<Episode>& episodes) {
  std::string out;
  for (const Episode& e : episodes) {
    if (!out.empty()) out += '\n';
    out += e.task;
    if (!e.outcome.empty()) out += '\n' + e.outcome;
  }
  return out;
}

std::string StorableText(std::string_view s) { return SanitizeUtf8WithoutNul(s); }

Episode BoundEpisode(const Episode& episode) {
  Episode out;
  out.task = TruncateUtf8Bytes(StorableText(Trim(episode.task)), kMaxEpisodeTaskBytes);
  out.outcome = TruncateUtf8Bytes(StorableText(Trim(episode.outcome)), kMaxEpisodeOutcomeBytes);
  out.at = episode.at;
  out.run_id = StorableText(episode.run_id);
  return out;
}

void AddEpisode(std::vector<Episode>& episodes, const Episode& episode) {
  Episode bounded = BoundEpisode(episode);
  if (bounded.task.empty() && bounded.outcome.empty()) return;
  for (const Episode& e : episodes) {
    if (e.task == bounded.task && e.outcome == bounded.outcome) return;
  }
  episodes.push_back(std::move(bounded));
  if (episodes.size() > kMaxEpisodes) {
    episodes.erase(episodes.begin(), episodes.end() - static_cast<std::ptrdiff_t>(kMaxEpisodes));
  }
}

std::string EncodeVector(const std::vector<float>& v) {
  std::string out(v.size() * sizeof(float), '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t bits = std::bit_cast<uint32_t>(v[i]);
    for (int b = 0; b < 4; ++b) out[i * 4 + b] = static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  return out;
}

std::vector<float> DecodeVector(const std::string& blob) {
  std::vector<float> out(blob.size() / sizeof(float));
  for (size_t i = 0; i < out.size(); ++i) {
    uint32_t bits = 0;
    for (int b = 0; b < 4; ++b) {
      bits |= static_cast<uint32_t>(static_cast<unsigned char>(blob[i * 4 + b])) << (8 * b);
    }
    out[i] = std::bit_cast<float>(bits);
  }
  return out;
}

std::string EncodeAsWritten(const AsWritten& as_written) {
  if (as_written.empty()) return "";
  nlohmann::json out = nlohmann::json::object();
  if (!as_written.tags.empty()) out["tags"] = as_written.tags;
  if (!as_written.provenance.empty()) out["provenance"] = as_written.provenance;
  if (!as_written.created_at.empty()) out["created_at"] = as_written.created_at;
  if (!as_written.last_accessed.empty()) out["last_accessed"] = as_written.last_accessed;
  return DumpJson(out);
}

Result<AsWritten> DecodeAsWritten(const std::string& json) {
  AsWritten out;
  if (json.empty()) return out;
  MEND_ASSIGN_OR_RETURN(nlohmann::json obj, ParseJson(json));
  if (!obj.is_object()) return DataLossError("facts.as_written is not a JSON object");
  MEND_ASSIGN_OR_RETURN(std::optional<const nlohmann::json*> tags, GetOptionalArray(obj, "tags"));
  if (tags.has_value()) {
    for (const nlohmann::json& tag : **tags) {
      if (!tag.is_string()) return DataLossError("facts.as_written.tags holds a non-string");
      out.tags.push_back(tag.get<std::string>());
    }
  }
  MEND_ASSIGN_OR_RETURN(std::optional<std::string> provenance,
                        GetOptionalString(obj, "provenance"));
  MEND_ASSIGN_OR_RETURN(std::optional<std::string> created, GetOptionalString(obj, "created_at"));
  MEND_ASSIGN_OR_RETURN(std::optional<std::string> accessed,
                        GetOptionalString(obj, "last_accessed"));
  out.provenance = provenance.value_or("");
  out.created_at = created.value_or("");
  out.last_accessed = accessed.value_or("");
  return out;
}

Status ValidateFact(const std::string& content, double confidence, size_t max_bytes) {
  if (Trim(content).empty()) return InvalidArgumentError("a fact needs some content");
  if (content.size() > max_bytes) {
    return InvalidArgumentError("a fact holds at most " + std::to_string(max_bytes) +
                                " bytes; this one has " + std::to_string(content.size()));
  }
  if (!IsValidUtf8(content)) return InvalidArgumentError("a fact must be valid UTF-8");
  if (content.find('\0') != std::string::npos) {
    return InvalidArgumentError("a fact cannot contain a NUL byte");
  }
  if (!(confidence > 0 && confidence <= 1)) {
    return InvalidArgumentError("confidence must be in (0, 1], got " + std::to_string(confidence));
  }
  return OkStatus();
}

Status CheckImported(const Fact& f) {
  if (Trim(f.id).empty()) return InvalidArgumentError("empty id");
  return ValidateFact(f.content, f.confidence, kMaxImportedFactBytes);
}

Fact PrepareImported(const Fact& in) {
  Fact f = in;
  f.tags = NormalizeTags(in.tags);
  f.category = StorableText(in.category);
  f.workspace = StorableText(in.workspace);
  f.source = StorableText(in.source);
  if (f.as_written.tags.empty() || NormalizeTags(f.as_written.tags) != f.tags) {
    f.as_written.tags = in.tags;
  }
  if (f.as_written.tags == f.tags) f.as_written.tags.clear();
  f.as_written.created_at = TimeText(in.as_written.created_at, in.created_at);
  f.as_written.last_accessed = TimeText(in.as_written.last_accessed, in.last_accessed);
  if (Trim(f.category).empty()) f.category = "general";
  std::vector<Episode> episodes;
  for (const Episode& e : in.provenance) AddEpisode(episodes, e);
  f.provenance = std::move(episodes);
  return f;
}

}  // namespace mend::memory::internal
