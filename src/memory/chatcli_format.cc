#include "mend/memory/chatcli_format.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "mend/base/json.h"
#include "mend/base/time_format.h"
#include "mend/base/utf8.h"

namespace mend::memory {
namespace {

// Insertion-ordered objects keep chatcli's field order (the order of its Go struct) on export.
using OrderedJson = nlohmann::ordered_json;

// chatcli has a single free-text provenance field; mend keeps the episodes themselves in its own
// "episodes" field and writes a short summary here for people reading the file.
std::string ProvenanceSummary(const Fact& fact) {
  if (fact.provenance.empty()) return "";
  const size_t n = fact.provenance.size();
  const std::string source = fact.source.empty() ? "memory" : fact.source;
  return source + ": " + std::to_string(n) + (n == 1 ? " episode" : " episodes");
}

// The time as the imported file wrote it (nanoseconds, offset) while it still says `t`.
std::string TimeText(const std::string& written, Time t) {
  if (!written.empty()) {
    Result<Time> w = ParseRfc3339(written);
    if (w.ok() && *w == t) return written;
  }
  return FormatRfc3339(t);
}

// The tags as the imported file wrote them (case, duplicates) while they still name `tags`.
const std::vector<std::string>& TagsToWrite(const Fact& fact) {
  const std::vector<std::string>& written = fact.as_written.tags;
  if (!written.empty() && NormalizeTags(written) == fact.tags) return written;
  return fact.tags;
}

OrderedJson FactToJson(const Fact& fact) {
  OrderedJson out;
  out["id"] = fact.id;
  out["content"] = fact.content;
  out["category"] = fact.category;
  if (const std::vector<std::string>& tags = TagsToWrite(fact); !tags.empty()) out["tags"] = tags;
  out["created_at"] = TimeText(fact.as_written.created_at, fact.created_at);
  out["last_accessed"] = TimeText(fact.as_written.last_accessed, fact.last_accessed);
  out["access_count"] = fact.access_count;
  out["score"] = 0;
  if (!fact.source.empty()) out["source"] = fact.source;
  if (!fact.workspace.empty()) out["source_project"] = fact.workspace;
  if (fact.confidence != 0) out["confidence"] = fact.confidence;
  std::string provenance = fact.as_written.provenance;
  if (provenance.empty()) provenance = ProvenanceSummary(fact);
  if (!provenance.empty()) out["provenance"] = provenance;
  out["workspace"] = fact.workspace;
  out["helped"] = fact.helped;
  out["hurt"] = fact.hurt;
  out["superseded_by"] = fact.superseded_by;
  OrderedJson episodes = OrderedJson::array();
  for (const Episode& e : fact.provenance) {
    OrderedJson ep;
    ep["task"] = e.task;
    ep["outcome"] = e.outcome;
    ep["at"] = FormatRfc3339(e.at);
    episodes.push_back(std::move(ep));
  }
  out["episodes"] = std::move(episodes);
  return out;
}

// The code unit of the JSON escape `\uXXXX` at `at`, or -1 when there is none.
int EscapedUnit(std::string_view text, size_t at) {
  if (at + 6 > text.size() || text[at] != '\\' || text[at + 1] != 'u') return -1;
  int unit = 0;
  for (size_t i = at + 2; i < at + 6; ++i) {
    const char c = text[i];
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (digit < 0) return -1;
    unit = unit * 16 + digit;
  }
  return unit;
}

// Go's encoding/json reads an escaped surrogate that is not half of a pair as U+FFFD, so chatcli
// holds such a fact repaired; mend's JSON parser refuses the whole document instead. The escapes
// are rewritten as Go reads them; every other escape, `\\` included, is copied as it is.
std::string RepairSurrogateEscapes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '\\') {
      out += text[i++];
      continue;
    }
    const int unit = EscapedUnit(text, i);
    size_t keep = unit < 0 ? 2 : 6;
    bool lone = unit >= 0xDC00 && unit <= 0xDFFF;
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      const int low = EscapedUnit(text, i + 6);
      lone = !(low >= 0xDC00 && low <= 0xDFFF);
      if (!lone) keep = 12;
    }
    out += lone ? std::string_view("\\ufffd") : text.substr(i, keep);
    i += keep;
  }
  return out;
}

// A fact that is well formed but cannot be kept: why, for the import's report.
struct Problem {
  std::string reason;  // "" while the fact is usable

  void Note(std::string why) {
    if (reason.empty()) reason = std::move(why);
  }
};

// An optional RFC 3339 member: its text as written ("" when absent or null) and its time
// (`fallback` when absent, null or unreadable; unreadable is a problem of the fact).
Result<Time> OptionalTime(const nlohmann::json& obj, std::string_view key, Time fallback,
                          std::string& written, Problem& problem) {
  MEND_ASSIGN_OR_RETURN(std::optional<std::string> text, GetOptionalString(obj, key));
  written = text.value_or("");
  if (!text.has_value()) return fallback;
  Result<Time> t = ParseRfc3339(*text);
  if (t.ok()) return t;
  problem.Note(std::string(key) + ": " + std::string(t.status().message()));
  return fallback;
}

Result<std::string> StringOr(const nlohmann::json& obj, std::string_view key,
                             std::string fallback) {
  MEND_ASSIGN_OR_RETURN(std::optional<std::string> value, GetOptionalString(obj, key));
  return value.has_value() ? std::move(*value) : std::move(fallback);
}

Result<int64_t> Int64Or(const nlohmann::json& obj, std::string_view key, int64_t fallback) {
  MEND_ASSIGN_OR_RETURN(std::optional<int64_t> value, GetOptionalInt64(obj, key));
  return value.value_or(fallback);
}

void CheckContent(const std::string& content, Problem& problem) {
  if (Trim(content).empty()) return problem.Note("content is empty");
  if (content.size() > kMaxImportedFactBytes) {
    return problem.Note("content is " + std::to_string(content.size()) +
                        " bytes, more than the limit of " + std::to_string(kMaxImportedFactBytes));
  }
  if (!IsValidUtf8(content)) problem.Note("content is not valid UTF-8");
}

// The tags as written; the fact's own tags are these normalised.
Result<std::vector<std::string>> ParseTags(const nlohmann::json& obj) {
  MEND_ASSIGN_OR_RETURN(std::optional<const nlohmann::json*> tags, GetOptionalArray(obj, "tags"));
  std::vector<std::string> out;
  if (!tags.has_value()) return out;
  for (size_t i = 0; i < (*tags)->size(); ++i) {
    const nlohmann::json& tag = (**tags)[i];
    if (!tag.is_string()) {
      return InvalidArgumentError("tags[" + std::to_string(i) + "] is not a string");
    }
    out.push_back(tag.get<std::string>());
  }
  return out;
}

// Confidence 0 (or absent) means "not set" in chatcli's files.
Result<double> ParseConfidence(const nlohmann::json& obj, Problem& problem) {
  MEND_ASSIGN_OR_RETURN(std::optional<double> value, GetOptionalDouble(obj, "confidence"));
  if (!value.has_value() || *value == 0) return 1.0;
  if (!(*value > 0 && *value <= 1)) {
    problem.Note("confidence " + std::to_string(*value) + " is outside (0, 1]");
    return 1.0;
  }
  return *value;
}

Result<Episode> ParseEpisode(const nlohmann::json& item, Time fallback, Problem& problem) {
  if (!item.is_object()) return InvalidArgumentError("is not an object");
  Episode e;
  MEND_ASSIGN_OR_RETURN(e.task, StringOr(item, "task", ""));
  MEND_ASSIGN_OR_RETURN(e.outcome, StringOr(item, "outcome", ""));
  std::string written;
  MEND_ASSIGN_OR_RETURN(e.at, OptionalTime(item, "at", fallback, written, problem));
  return e;
}

// A missing episode time falls back to the fact's creation time.
Result<std::vector<Episode>> ParseEpisodes(const nlohmann::json& obj, Time fallback,
                                           Problem& problem) {
  MEND_ASSIGN_OR_RETURN(std::optional<const nlohmann::json*> episodes,
                        GetOptionalArray(obj, "episodes"));
  std::vector<Episode> out;
  if (!episodes.has_value()) return out;
  for (size_t i = 0; i < (*episodes)->size(); ++i) {
    Problem of_episode;
    Result<Episode> e = ParseEpisode((**episodes)[i], fallback, of_episode);
    if (!e.ok()) return e.status().Annotate("episodes[" + std::to_string(i) + "]");
    if (!of_episode.reason.empty()) {
      problem.Note("episodes[" + std::to_string(i) + "]: " + of_episode.reason);
    }
    out.push_back(std::move(*e));
  }
  // The newest episodes are the ones a fact keeps (fact.h).
  if (out.size() > kMaxEpisodes) out.erase(out.begin(), out.end() - kMaxEpisodes);
  return out;
}

// Fields of the wrong JSON type make the element no fact (an error); values that a fact cannot
// hold make it unusable (`problem`).
Result<Fact> ParseFact(const nlohmann::json& obj, Time now, Problem& problem) {
  if (!obj.is_object()) return InvalidArgumentError("is not an object");
  Fact fact;
  MEND_ASSIGN_OR_RETURN(fact.content, GetString(obj, "content"));
  CheckContent(fact.content, problem);
  MEND_ASSIGN_OR_RETURN(fact.id, StringOr(obj, "id", ""));
  if (fact.id.empty() && problem.reason.empty()) fact.id = FactIdFor(fact.content);
  MEND_ASSIGN_OR_RETURN(fact.category, StringOr(obj, "category", ""));
  if (fact.category.empty()) fact.category = "general";
  MEND_ASSIGN_OR_RETURN(fact.as_written.tags, ParseTags(obj));
  fact.tags = NormalizeTags(fact.as_written.tags);
  if (fact.as_written.tags == fact.tags) fact.as_written.tags.clear();
  MEND_ASSIGN_OR_RETURN(fact.created_at,
                        OptionalTime(obj, "created_at", now, fact.as_written.created_at, problem));
  MEND_ASSIGN_OR_RETURN(fact.last_accessed, OptionalTime(obj, "last_accessed", now,
                                                         fact.as_written.last_accessed, problem));
  MEND_ASSIGN_OR_RETURN(fact.access_count, Int64Or(obj, "access_count", 0));
  MEND_RETURN_IF_ERROR(GetOptionalDouble(obj, "score"));  // checked for its type, not kept
  MEND_ASSIGN_OR_RETURN(fact.source, StringOr(obj, "source", ""));
  // An empty source says no more than a missing one, and the export leaves it out.
  if (fact.source.empty()) fact.source = "import";
  MEND_ASSIGN_OR_RETURN(std::string project, StringOr(obj, "source_project", ""));
  MEND_ASSIGN_OR_RETURN(fact.workspace, StringOr(obj, "workspace", project));
  MEND_ASSIGN_OR_RETURN(fact.confidence, ParseConfidence(obj, problem));
  MEND_ASSIGN_OR_RETURN(fact.as_written.provenance, StringOr(obj, "provenance", ""));
  MEND_ASSIGN_OR_RETURN(fact.helped, Int64Or(obj, "helped", 0));
  MEND_ASSIGN_OR_RETURN(fact.hurt, Int64Or(obj, "hurt", 0));
  MEND_ASSIGN_OR_RETURN(fact.superseded_by, StringOr(obj, "superseded_by", ""));
  MEND_ASSIGN_OR_RETURN(fact.provenance, ParseEpisodes(obj, fact.created_at, problem));
  // mend's own summary of the episodes is not chatcli's word: it is written afresh on export.
  if (fact.as_written.provenance == ProvenanceSummary(fact)) fact.as_written.provenance.clear();
  return fact;
}

}  // namespace

std::string ExportChatcliJson(const std::vector<Fact>& facts) {
  OrderedJson out = OrderedJson::array();
  for (const Fact& fact : facts) out.push_back(FactToJson(fact));
  try {
    return out.dump(2, ' ', /*ensure_ascii=*/false, OrderedJson::error_handler_t::replace) + "\n";
  } catch (const OrderedJson::exception&) {
    // The replace handler rules out the only throwing case (invalid UTF-8); kept for the
    // no-throw promise should a later version add another.
    return "[]\n";
  }
}

Result<ChatcliImport> ParseChatcliJson(std::string_view text, Time now) {
  // Go's encoding/json reads each invalid byte as U+FFFD, so chatcli holds these facts repaired;
  // so does mend.
  MEND_ASSIGN_OR_RETURN(
      nlohmann::json doc,
      ParseJson(RepairSurrogateEscapes(IsValidUtf8(text) ? text : SanitizeUtf8(text))));
  if (!doc.is_array()) {
    return InvalidArgumentError(
        "not a memory export: expected a JSON array of facts, found a JSON " +
        std::string(doc.type_name()));
  }
  ChatcliImport out;
  out.facts.reserve(doc.size());
  for (size_t i = 0; i < doc.size(); ++i) {
    Problem problem;
    Result<Fact> fact = ParseFact(doc[i], now, problem);
    if (!fact.ok()) return fact.status().Annotate("fact " + std::to_string(i));
    if (!problem.reason.empty()) {
      out.unusable.push_back({i, fact->id, std::move(problem.reason)});
      continue;
    }
    out.facts.push_back(std::move(*fact));
    out.indices.push_back(i);
  }
  return out;
}

}  // namespace mend::memory
