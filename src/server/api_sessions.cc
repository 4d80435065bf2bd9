// Sessions (docs/http_api.md, "Sessions"): the conversations of mend proxy (mounted by mend serve
// or run on their own), each one thread of model calls. Their spans share the run id
// "proxy-<conversation id>" (docs/proxy.md, "Traces and metrics"), so observe.db's per-run
// summary is a session's summary and the run's spans are its calls.
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "mend/app/runtime.h"
#include "mend/base/home_layout.h"
#include "mend/base/time_format.h"
#include "mend/obs/span_store.h"
#include "server/api.h"
#include "server/lazy_span_store.h"
#include "server/serve_context.h"

namespace mend::server {
namespace {

using nlohmann::json;

constexpr std::string_view kSessionRunPrefix = "proxy-";
constexpr size_t kMaxSessionIdBytes = 1024;

json OrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json SessionJson(const obs::RunTraceSummary& run) {
  return {{"id", run.run_id.substr(kSessionRunPrefix.size())},
          {"run_id", run.run_id},
          {"agent", OrNull(run.agent)},
          {"first", FormatRfc3339(run.start)},
          {"last", FormatRfc3339(run.end)},
          {"call_count", run.model_turns},
          {"cost_usd", run.cost_usd},
          {"input_tokens", run.input_tokens},
          {"output_tokens", run.output_tokens}};
}

const obs::AttributeValue* Find(const obs::SpanData& span, std::string_view key) {
  for (const obs::Attribute& a : span.attributes) {
    if (a.key == key) return &a.value;
  }
  return nullptr;
}

json AttributeJson(const obs::SpanData& span, std::string_view key) {
  const obs::AttributeValue* value = Find(span, key);
  if (value == nullptr) return nullptr;
  return std::visit([](const auto& v) { return json(v); }, *value);
}

json CallJson(const obs::SpanData& span) {
  json model = AttributeJson(span, "gen_ai.response.model");
  if (model.is_null()) model = AttributeJson(span, "gen_ai.request.model");
  return {{"trace_id", span.context.trace_id},
          {"span_id", span.context.span_id},
          {"name", span.name},
          {"start", FormatRfc3339(span.start)},
          {"duration_ms", std::chrono::duration<double, std::milli>(span.end - span.start).count()},
          {"status", std::string(obs::SpanStatusName(span.status))},
          {"model", std::move(model)},
          {"route", AttributeJson(span, "mend.proxy.route")},
          {"http_status", AttributeJson(span, "http.response.status_code")},
          {"input_tokens", AttributeJson(span, "gen_ai.usage.input_tokens")},
          {"output_tokens", AttributeJson(span, "gen_ai.usage.output_tokens")},
          {"cost_usd", AttributeJson(span, "mend.cost_usd")}};
}

Result<ApiResponse> ListSessions(LazySpanStore& spans, const ApiRequest& req) {
  MEND_ASSIGN_OR_RETURN(
      int64_t limit, req.QueryInt("limit", 50, 1, static_cast<int64_t>(obs::kMaxRunTracePageSize)));
  MEND_ASSIGN_OR_RETURN(obs::SpanStore * store, spans.Get());
  MEND_ASSIGN_OR_RETURN(std::vector<obs::RunTraceSummary> runs,
                        store->ListRunsByPrefix(kSessionRunPrefix, static_cast<size_t>(limit)));
  json sessions = json::array();
  for (const obs::RunTraceSummary& run : runs) sessions.push_back(SessionJson(run));
  return ApiResponse(json{{"sessions", std::move(sessions)}});
}

Result<ApiResponse> ShowSession(LazySpanStore& spans, const ApiRequest& req) {
  const std::string& id = req.params.at(0);
  if (id.size() > kMaxSessionIdBytes) {
    return InvalidArgumentError("id: at most " + std::to_string(kMaxSessionIdBytes) + " bytes");
  }
  const std::string run_id = std::string(kSessionRunPrefix) + id;
  MEND_ASSIGN_OR_RETURN(obs::SpanStore * store, spans.Get());
  Result<obs::RunTraceSummary> summary = store->RunSummary(run_id);
  if (!summary.ok() && summary.status().code() == StatusCode::kNotFound) {
    return NotFoundError("no session " + id + " in observe.db");
  }
  MEND_RETURN_IF_ERROR(summary.status());
  MEND_ASSIGN_OR_RETURN(std::vector<obs::SpanData> run_spans, store->SpansOfRun(run_id));
  json calls = json::array();
  for (const obs::SpanData& span : run_spans) {
    const json operation = AttributeJson(span, "gen_ai.operation.name");
    if (operation == "chat") calls.push_back(CallJson(span));
  }
  json body = SessionJson(*summary);
  body["calls"] = std::move(calls);
  return ApiResponse(std::move(body));
}

}  // namespace

void AddSessionRoutes(ApiRoutes& routes, ServeContext& context) {
  auto spans = std::make_shared<LazySpanStore>(home::ObserveFile(context.runtime().home));
  routes.Get("/api/v1/sessions",
             [spans](const ApiRequest& req) { return ListSessions(*spans, req); });
  routes.Get("/api/v1/sessions/([^/]+)",
             [spans](const ApiRequest& req) { return ShowSession(*spans, req); });
}

}  // namespace mend::server
