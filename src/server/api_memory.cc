// Routes of long-term memory: search, recall, list, add, show, delete (docs/http_api.md,
// "Memory"). Each mirrors a `mend memory` subcommand and answers its JSON shape
// (app/memory_view.h).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mend/app/memory_view.h"
#include "mend/app/runtime.h"
#include "mend/memory/fact.h"
#include "server/api.h"
#include "server/fact_runs.h"
#include "server/serve_context.h"

namespace mend::server {
namespace {

constexpr int64_t kDefaultSearchResults = 10;
constexpr int64_t kMaxSearchResults = 1000;
constexpr int64_t kDefaultPageSize = 20;
constexpr int64_t kDefaultGivenTo = 50;
constexpr int64_t kMaxGivenTo = 1000;

Result<std::string> RequiredQuery(const ApiRequest& req, std::string_view name) {
  std::optional<std::string> value = req.Query(name);
  if (!value.has_value() || value->empty()) {
    return InvalidArgumentError("query parameter \"" + std::string(name) + "\" is required");
  }
  return *value;
}

Result<bool> QueryBool(const ApiRequest& req, std::string_view name) {
  std::optional<std::string> value = req.Query(name);
  if (!value.has_value() || *value == "false" || *value == "0") return false;
  if (*value == "true" || *value == "1") return true;
  return InvalidArgumentError(std::string(name) + " must be true or false, not \"" + *value + "\"");
}

// A workspace names a directory of the server's host the way runs record it: absolute and
// normal, without a trailing slash. "" stays "" (the caller decides what that means).
Result<std::string> NormalWorkspace(std::string_view name, const std::string& dir) {
  if (dir.empty()) return std::string();
  if (dir.front() != '/') {
    return InvalidArgumentError(std::string(name) + " must be an absolute directory, not \"" + dir +
                                "\"");
  }
  std::string path = std::filesystem::path(dir).lexically_normal().string();
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

Result<std::vector<std::string>> BodyTags(const ApiRequest& req) {
  if (!req.body.is_object()) return std::vector<std::string>{};
  auto it = req.body.find("tags");
  if (it == req.body.end() || it->is_null()) return std::vector<std::string>{};
  std::vector<std::string> tags;
  if (it->is_array()) {
    for (const nlohmann::json& tag : *it) {
      if (!tag.is_string()) break;
      tags.push_back(tag.get<std::string>());
    }
    if (tags.size() == it->size()) return memory::NormalizeTags(tags);
  }
  return InvalidArgumentError("field \"tags\" must be an array of strings");
}

Result<ApiResponse> Search(app::Runtime& runtime, const ApiRequest& req) {
  MEND_ASSIGN_OR_RETURN(std::string query, RequiredQuery(req, "q"));
  MEND_ASSIGN_OR_RETURN(int64_t k, req.QueryInt("k", kDefaultSearchResults, 1, kMaxSearchResults));
  MEND_ASSIGN_OR_RETURN(std::vector<memory::ScoredFact> hits,
                        runtime.retriever->Search(query, static_cast<size_t>(k)));
  return ApiResponse(app::SearchResultsJson(hits));
}

Result<ApiResponse> Recall(app::Runtime& runtime, const ApiRequest& req) {
  MEND_ASSIGN_OR_RETURN(std::string task, RequiredQuery(req, "task"));
  MEND_ASSIGN_OR_RETURN(std::string workspace,
                        NormalWorkspace("workspace", req.Query("workspace").value_or("")));
  MEND_ASSIGN_OR_RETURN(app::RecallAnswer answer, app::ExplainRecall(runtime, task, workspace));
  return ApiResponse(app::RecallAnswerJson(answer));
}

Result<ApiResponse> List(app::Runtime& runtime, const ApiRequest& req) {
  MEND_ASSIGN_OR_RETURN(int64_t limit, req.QueryInt("limit", kDefaultPageSize, 1,
                                                    static_cast<int64_t>(app::kMaxFactPageSize)));
  memory::ListOptions filter;
  MEND_ASSIGN_OR_RETURN(filter.include_superseded, QueryBool(req, "all"));
  filter.category = req.Query("category").value_or("");
  MEND_ASSIGN_OR_RETURN(app::FactPage page,
                        app::ListFactPage(*runtime.facts, filter, static_cast<size_t>(limit),
                                          req.Query("cursor").value_or("")));
  return ApiResponse(app::FactPageJson(page));
}

Result<ApiResponse> Add(app::Runtime& runtime, const ApiRequest& req) {
  memory::NewFact fact;
  MEND_ASSIGN_OR_RETURN(fact.content, req.BodyString("text"));
  MEND_ASSIGN_OR_RETURN(fact.category, req.OptionalBodyString("category"));
  if (fact.category.empty()) fact.category = "general";
  MEND_ASSIGN_OR_RETURN(fact.tags, BodyTags(req));
  MEND_ASSIGN_OR_RETURN(std::string workspace, req.OptionalBodyString("workspace"));
  MEND_ASSIGN_OR_RETURN(fact.workspace, NormalWorkspace("field \"workspace\"", workspace));
  fact.source = "user";
  MEND_ASSIGN_OR_RETURN(memory::AddResult added, runtime.facts->Add(fact));
  // The fact gets its vectors from the background backfill, woken now rather than after its idle
  // pause: an HTTP write does not wait on the embeddings endpoint.
  if (runtime.backfill != nullptr) runtime.backfill->Notify();
  // Only a new fact is a new resource; the same text again reinforces (or merges into) one.
  const int status = added.kind == memory::AddResult::Kind::kAdded ? 201 : 200;
  return ApiResponse(nlohmann::json{{"fact_id", added.id},
                                    {"result", std::string(memory::AddResultKindName(added.kind))}},
                     status);
}

// GET /api/v1/memory/{id}: the fact, the runs it came from and the runs it was given to.
Result<ApiResponse> Show(app::Runtime& runtime, const ApiRequest& req) {
  MEND_ASSIGN_OR_RETURN(int64_t limit,
                        req.QueryInt("given_limit", kDefaultGivenTo, 1, kMaxGivenTo));
  MEND_ASSIGN_OR_RETURN(memory::Fact fact, runtime.facts->Get(req.params[0]));
  MEND_ASSIGN_OR_RETURN(nlohmann::json body,
                        FactDetailJson(runtime, fact, static_cast<size_t>(limit)));
  return ApiResponse(std::move(body));
}

// GET /api/v1/runs/{id}/memory: what the run was given from memory and the lessons it produced.
Result<ApiResponse> RunMemory(app::Runtime& runtime, const ApiRequest& req) {
  const std::string& run_id = req.params[0];
  Result<store::RunRecord> run = runtime.store->GetRun(run_id);
  if (!run.ok() && run.status().code() == StatusCode::kNotFound) {
    return NotFoundError("no run named " + run_id);
  }
  MEND_RETURN_IF_ERROR(run.status());
  MEND_ASSIGN_OR_RETURN(nlohmann::json body, RunMemoryJson(runtime, run_id));
  return ApiResponse(std::move(body));
}

}  // namespace

void AddMemoryRoutes(ApiRoutes& routes, ServeContext& context) {
  app::Runtime& runtime = context.runtime();
  // The fixed paths first: routes are tried in order, and a fact id is any path segment.
  routes.Get("/api/v1/memory/search",
             [&runtime](const ApiRequest& req) { return Search(runtime, req); });
  routes.Get("/api/v1/memory/recall",
             [&runtime](const ApiRequest& req) { return Recall(runtime, req); });
  routes.Get("/api/v1/memory", [&runtime](const ApiRequest& req) { return List(runtime, req); });
  routes.Post("/api/v1/memory", [&runtime](const ApiRequest& req) { return Add(runtime, req); });
  routes.Get("/api/v1/memory/([^/]+)",
             [&runtime](const ApiRequest& req) { return Show(runtime, req); });
  routes.Get("/api/v1/runs/([^/]+)/memory",
             [&runtime](const ApiRequest& req) { return RunMemory(runtime, req); });
  routes.Delete("/api/v1/memory/([^/]+)", [&runtime](const ApiRequest& req) -> Result<ApiResponse> {
    MEND_RETURN_IF_ERROR(runtime.facts->Remove(req.params[0]));
    return ApiResponse(nlohmann::json{{"id", req.params[0]}, {"removed", true}});
  });
}

}  // namespace mend::server
