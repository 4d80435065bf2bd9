#include "bench/lessonrecall_data.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "mend/base/json.h"
#include "mend/base/utf8.h"

namespace mend::lessonrecall {
namespace {

// The outcome excerpt a reflexion job carries (docs/reflexion.md: outcome cut to 800).
constexpr size_t kOutcomeBytes = 800;

Result<std::vector<nlohmann::json>> ReadJsonl(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError("cannot open " + path);
  std::vector<nlohmann::json> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (Trim(line).empty()) continue;
    Result<nlohmann::json> doc = ParseJson(line);
    if (!doc.ok()) return doc.status().Annotate(path + ":" + std::to_string(n));
    out.push_back(std::move(*doc));
  }
  return out;
}

Result<std::vector<std::string>> Strings(const nlohmann::json& obj, std::string_view key) {
  MEND_ASSIGN_OR_RETURN(const nlohmann::json* array, GetArray(obj, key));
  std::vector<std::string> out;
  for (const nlohmann::json& v : *array) {
    if (!v.is_string()) return InvalidArgumentError(std::string(key) + ": not a string");
    out.push_back(v.get<std::string>());
  }
  return out;
}

Result<SourceFact> ParseLesson(const nlohmann::json& obj) {
  SourceFact f;
  MEND_ASSIGN_OR_RETURN(f.id, GetString(obj, "class_id"));
  MEND_ASSIGN_OR_RETURN(f.category, GetString(obj, "category"));
  MEND_ASSIGN_OR_RETURN(f.content, GetString(obj, "content"));
  MEND_ASSIGN_OR_RETURN(f.tags, Strings(obj, "tags"));
  MEND_ASSIGN_OR_RETURN(const nlohmann::json* episodes, GetArray(obj, "episodes"));
  for (const nlohmann::json& e : *episodes) {
    SourceEpisode episode;
    MEND_ASSIGN_OR_RETURN(episode.task, GetString(e, "task"));
    MEND_ASSIGN_OR_RETURN(episode.error_output, GetString(e, "error_output"));
    f.episodes.push_back(std::move(episode));
  }
  return f;
}

Result<SourceFact> ParseDistractor(const nlohmann::json& obj) {
  SourceFact f;
  MEND_ASSIGN_OR_RETURN(f.id, GetString(obj, "id"));
  MEND_ASSIGN_OR_RETURN(f.category, GetString(obj, "category"));
  MEND_ASSIGN_OR_RETURN(f.content, GetString(obj, "content"));
  MEND_ASSIGN_OR_RETURN(f.tags, Strings(obj, "tags"));
  return f;
}

Result<Query> ParseQuery(const nlohmann::json& obj) {
  Query q;
  MEND_ASSIGN_OR_RETURN(q.id, GetString(obj, "query_id"));
  MEND_ASSIGN_OR_RETURN(q.kind, GetString(obj, "kind"));
  MEND_ASSIGN_OR_RETURN(q.text, GetString(obj, "text"));
  MEND_ASSIGN_OR_RETURN(q.relevant, Strings(obj, "relevant_class_ids"));
  return q;
}

template <typename T, typename Parse>
Result<std::vector<T>> LoadFile(const std::string& path, Parse parse) {
  MEND_ASSIGN_OR_RETURN(std::vector<nlohmann::json> rows, ReadJsonl(path));
  std::vector<T> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    Result<T> item = parse(rows[i]);
    if (!item.ok()) return item.status().Annotate(path + " record " + std::to_string(i + 1));
    out.push_back(std::move(*item));
  }
  return out;
}

// The value of the content's "TRIGGER: <t>" line, lower-cased ("" when there is none).
std::string TriggerOf(const std::string& content) {
  std::istringstream lines(content);
  std::string line;
  std::string trigger;
  while (std::getline(lines, line)) {
    if (line.rfind("TRIGGER:", 0) == 0) trigger = ToLowerAscii(Trim(line.substr(8)));
  }
  return trigger;
}

std::vector<std::string> MendTags(const SourceFact& f) {
  std::vector<std::string> tags = f.tags;
  if (f.category == "lesson") {
    const std::string trigger = TriggerOf(f.content);
    tags.push_back("reflexion");
    tags.push_back("trigger:" + (trigger.empty() ? std::string("error") : trigger));
    if (trigger == "manual") tags.push_back("user-supplied");
  }
  return memory::NormalizeTags(tags);
}

memory::Fact ToFact(const SourceFact& f, LoadMode mode, Time now) {
  memory::Fact fact;
  fact.id = f.id;
  fact.content = f.content;
  fact.category = f.category;
  fact.tags = MendTags(f);
  const bool manual = TriggerOf(f.content) == "manual";
  fact.source = f.category != "lesson" ? "user" : (manual ? "user" : "reflexion");
  fact.created_at = now;
  fact.last_accessed = now;
  if (mode == LoadMode::kWithProvenance) {
    for (const SourceEpisode& e : f.episodes) {
      fact.provenance.push_back(
          {e.task, TruncateUtf8Bytes("ERROR: " + e.error_output, kOutcomeBytes), now});
    }
  }
  return fact;
}

}  // namespace

Result<Split> LoadSplit(const std::string& dir) {
  Split split;
  MEND_ASSIGN_OR_RETURN(split.lessons, LoadFile<SourceFact>(dir + "/lessons.jsonl", ParseLesson));
  MEND_ASSIGN_OR_RETURN(split.distractors,
                        LoadFile<SourceFact>(dir + "/distractors.jsonl", ParseDistractor));
  MEND_ASSIGN_OR_RETURN(split.queries, LoadFile<Query>(dir + "/queries.jsonl", ParseQuery));
  for (const SourceFact& l : split.lessons) split.lesson_fact_ids.insert(l.id);
  for (const SourceFact& d : split.distractors) {
    if (d.category == "lesson") split.lesson_fact_ids.insert(d.id);
  }
  return split;
}

std::vector<memory::Fact> ToFacts(const Split& split, LoadMode mode, Time now) {
  std::vector<memory::Fact> facts;
  for (const SourceFact& f : split.lessons) facts.push_back(ToFact(f, mode, now));
  for (const SourceFact& f : split.distractors) facts.push_back(ToFact(f, mode, now));
  return facts;
}

std::vector<IndexedDoc> BaselineDocs(const Split& split) {
  std::vector<IndexedDoc> docs;
  for (const SourceFact& f : split.lessons) docs.push_back({f.id, f.content, f.tags});
  for (const SourceFact& f : split.distractors) docs.push_back({f.id, f.content, f.tags});
  return docs;
}

std::vector<IndexedDoc> MendTagDocs(const Split& split) {
  std::vector<IndexedDoc> docs;
  for (const SourceFact& f : split.lessons) docs.push_back({f.id, f.content, MendTags(f)});
  for (const SourceFact& f : split.distractors) docs.push_back({f.id, f.content, MendTags(f)});
  return docs;
}

}  // namespace mend::lessonrecall
