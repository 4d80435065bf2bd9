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

OrderedJson FactToJson(const Fact& fact) {
  OrderedJson out;
  out["id"] = fact.id;
  out["content"] = fact.content;
  out["category"] = fact.category;
  if (!fact.tags.empty()) out["tags"] = fact.tags;
  out["created_at"] = FormatRfc3339(fact.created_at);
  out["last_accessed"] = FormatRfc3339(fact.last_accessed);
  out["access_count"] = fact.access_count;
  out["score"] = 0;
  if (!fact.source.empty()) out["source"] = fact.source;
  if (!fact.workspace.empty()) out["source_project"] = fact.workspace;
  if (fact.confidence != 0) out["confidence"] = fact.confidence;
  if (std::string summary = ProvenanceSummary(fact); !summary.empty()) {
    out["provenance"] = summary;
  }
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

// An optional RFC 3339 member; `fallback` when it is absent or null.
Result<Time> OptionalTime(const nlohmann::json& obj, std::string_view key, Time fallback) {
  MEND_ASSIGN_OR_RETURN(std::optional<std::string> text, GetOptionalString(obj, key));
  if (!text.has_value()) return fallback;
  Result<Time> t = ParseRfc3339(*text);
  if (!t.ok()) return t.status().Annotate(std::string(key));
  return t;
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

Status CheckContent(const std::string& content) {
  if (Trim(content).empty()) return InvalidArgumentError("content is empty");
  if (content.size() > kMaxFactBytes) {
    return InvalidArgumentError("content is " + std::to_string(content.size()) +
                                " bytes, more than the limit of " + std::to_string(kMaxFactBytes));
  }
  if (!IsValidUtf8(content)) return InvalidArgumentError("content is not valid UTF-8");
  return OkStatus();
}

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
  return NormalizeTags(out);
}

// Confidence 0 (or absent) means "not set" in chatcli's files.
Result<double> ParseConfidence(const nlohmann::json& obj) {
  MEND_ASSIGN_OR_RETURN(std::optional<double> value, GetOptionalDouble(obj, "confidence"));
  if (!value.has_value() || *value == 0) return 1.0;
  if (!(*value > 0 && *value <= 1)) {
    return InvalidArgumentError("confidence " + std::to_string(*value) + " is outside (0, 1]");
  }
  return *value;
}

Result<Episode> ParseEpisode(const nlohmann::json& item, Time fallback) {
  if (!item.is_object()) return InvalidArgumentError("is not an object");
  Episode e;
  MEND_ASSIGN_OR_RETURN(e.task, StringOr(item, "task", ""));
  MEND_ASSIGN_OR_RETURN(e.outcome, StringOr(item, "outcome", ""));
  MEND_ASSIGN_OR_RETURN(e.at, OptionalTime(item, "at", fallback));
  return e;
}

// A missing episode time falls back to the fact's creation time.
Result<std::vector<Episode>> ParseEpisodes(const nlohmann::json& obj, Time fallback) {
  MEND_ASSIGN_OR_RETURN(std::optional<const nlohmann::json*> episodes,
                        GetOptionalArray(obj, "episodes"));
  std::vector<Episode> out;
  if (!episodes.has_value()) return out;
  for (size_t i = 0; i < (*episodes)->size(); ++i) {
    Result<Episode> e = ParseEpisode((**episodes)[i], fallback);
    if (!e.ok()) return e.status().Annotate("episodes[" + std::to_string(i) + "]");
    out.push_back(std::move(*e));
  }
  // The newest episodes are the ones a fact keeps (fact.h).
  if (out.size() > kMaxEpisodes) out.erase(out.begin(), out.end() - kMaxEpisodes);
  return out;
}

Result<Fact> ParseFact(const nlohmann::json& obj, Time now) {
  if (!obj.is_object()) return InvalidArgumentError("is not an object");
  Fact fact;
  MEND_ASSIGN_OR_RETURN(fact.content, GetString(obj, "content"));
  MEND_RETURN_IF_ERROR(CheckContent(fact.content));
  MEND_ASSIGN_OR_RETURN(fact.id, StringOr(obj, "id", ""));
  if (fact.id.empty()) fact.id = FactIdFor(fact.content);
  MEND_ASSIGN_OR_RETURN(fact.category, StringOr(obj, "category", ""));
  if (fact.category.empty()) fact.category = "general";
  MEND_ASSIGN_OR_RETURN(fact.tags, ParseTags(obj));
  MEND_ASSIGN_OR_RETURN(fact.created_at, OptionalTime(obj, "created_at", now));
  MEND_ASSIGN_OR_RETURN(fact.last_accessed, OptionalTime(obj, "last_accessed", now));
  MEND_ASSIGN_OR_RETURN(fact.access_count, Int64Or(obj, "access_count", 0));
  MEND_RETURN_IF_ERROR(GetOptionalDouble(obj, "score"));  // checked for its type, not kept
  MEND_ASSIGN_OR_RETURN(fact.source, StringOr(obj, "source", "import"));
  MEND_ASSIGN_OR_RETURN(std::string project, StringOr(obj, "source_project", ""));
  MEND_ASSIGN_OR_RETURN(fact.workspace, StringOr(obj, "workspace", project));
  MEND_ASSIGN_OR_RETURN(fact.confidence, ParseConfidence(obj));
  MEND_RETURN_IF_ERROR(GetOptionalString(obj, "provenance"));  // a summary; episodes hold it
  MEND_ASSIGN_OR_RETURN(fact.helped, Int64Or(obj, "helped", 0));
  MEND_ASSIGN_OR_RETURN(fact.hurt, Int64Or(obj, "hurt", 0));
  MEND_ASSIGN_OR_RETURN(fact.superseded_by, StringOr(obj, "superseded_by", ""));
  MEND_ASSIGN_OR_RETURN(fact.provenance, ParseEpisodes(obj, fact.created_at));
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

Result<std::vector<Fact>> ParseChatcliJson(std::string_view text, Time now) {
  MEND_ASSIGN_OR_RETURN(nlohmann::json doc, ParseJson(text));
  if (!doc.is_array()) {
    return InvalidArgumentError(
        "not a memory export: expected a JSON array of facts, found a JSON " +
        std::string(doc.type_name()));
  }
  std::vector<Fact> facts;
  facts.reserve(doc.size());
  for (size_t i = 0; i < doc.size(); ++i) {
    Result<Fact> fact = ParseFact(doc[i], now);
    if (!fact.ok()) return fact.status().Annotate("fact " + std::to_string(i));
    facts.push_back(std::move(*fact));
  }
  return facts;
}

}  // namespace mend::memory
