// The JSON of lessons and runs linked both ways (fact_runs.h).
#include "server/fact_runs.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "mend/app/memory_view.h"
#include "mend/base/time_format.h"
#include "mend/memory/fact_store.h"

namespace mend::server {
namespace {

using nlohmann::json;

const char* OutcomeName(const std::optional<bool>& completed) {
  if (!completed.has_value()) return "pending";
  return *completed ? "helped" : "hurt";
}

json ScoreJson(const std::optional<double>& score) {
  return score.has_value() ? json(*score) : json(nullptr);
}

bool CameFrom(const memory::Fact& fact, const std::string& run_id) {
  return std::any_of(fact.provenance.begin(), fact.provenance.end(),
                     [&](const memory::Episode& e) { return e.run_id == run_id; });
}

}  // namespace

Result<json> RunMemoryJson(app::Runtime& runtime, const std::string& run_id) {
  memory::FactStore& facts = *runtime.facts;
  MEND_ASSIGN_OR_RETURN(std::vector<memory::Injection> injections, facts.InjectionsOfRun(run_id));
  std::vector<std::string> ids;
  ids.reserve(injections.size());
  for (const memory::Injection& i : injections) ids.push_back(i.fact_id);
  MEND_ASSIGN_OR_RETURN(std::vector<memory::Fact> found, facts.GetMany(ids));
  json given = json::array();
  for (const memory::Injection& i : injections) {
    auto fact = std::find_if(found.begin(), found.end(),
                             [&](const memory::Fact& f) { return f.id == i.fact_id; });
    const bool present = fact != found.end();
    given.push_back({{"fact_id", i.fact_id},
                     {"category", present ? json(fact->category) : json(nullptr)},
                     {"content", present ? json(fact->content) : json(nullptr)},
                     {"score", ScoreJson(i.score)},
                     {"at", FormatRfc3339(i.at)},
                     {"outcome", OutcomeName(i.completed)},
                     {"helped", present ? json(fact->helped) : json(nullptr)},
                     {"hurt", present ? json(fact->hurt) : json(nullptr)}});
  }
  memory::ListOptions recent;
  recent.category = "lesson";
  recent.limit = kLessonsScanned;
  MEND_ASSIGN_OR_RETURN(std::vector<memory::Fact> lessons, facts.List(recent));
  json produced = json::array();
  for (const memory::Fact& lesson : lessons) {
    if (!CameFrom(lesson, run_id)) continue;
    produced.push_back({{"fact_id", lesson.id},
                        {"category", lesson.category},
                        {"content", lesson.content},
                        {"created_at", FormatRfc3339(lesson.created_at)}});
  }
  return json{{"run_id", run_id}, {"given", std::move(given)}, {"lessons", std::move(produced)}};
}

Result<json> FactDetailJson(app::Runtime& runtime, const memory::Fact& fact, size_t limit) {
  MEND_ASSIGN_OR_RETURN(std::vector<memory::Injection> injections,
                        runtime.facts->InjectionsOfFact(fact.id, limit));
  json body = app::FactJson(fact);
  json came_from = json::array();
  for (const memory::Episode& e : fact.provenance) {
    if (e.run_id.empty() ||
        std::find(came_from.begin(), came_from.end(), e.run_id) != came_from.end()) {
      continue;
    }
    came_from.push_back(e.run_id);
  }
  json given_to = json::array();
  for (const memory::Injection& i : injections) {
    given_to.push_back({{"run_id", i.run_id},
                        {"at", FormatRfc3339(i.at)},
                        {"score", ScoreJson(i.score)},
                        {"outcome", OutcomeName(i.completed)}});
  }
  body["came_from"] = std::move(came_from);
  body["given_to"] = std::move(given_to);
  return body;
}

}  // namespace mend::server
