// Routes of traces (docs/http_api.md, "Traces"): the traces in observe.db, mend's own runs and
// what other programs sent, one trace's spans, and the OTLP/HTTP receiver at /v1/traces.
#include <httplib.h>

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "mend/app/runtime.h"
#include "mend/base/home_layout.h"
#include "mend/base/json.h"
#include "mend/base/time_format.h"
#include "mend/obs/otlp_decode.h"
#include "mend/obs/span_store.h"
#include "server/api.h"
#include "server/otlp_receiver.h"
#include "server/serve_context.h"

namespace mend::server {
namespace {

// observe.db, opened on first use: the file may not exist before the first run ends. Opened
// read-write, so an older file is migrated (its trace list appears) and received spans can be
// written. Thread-safe.
class Spans {
 public:
  explicit Spans(std::string path) : path_(std::move(path)) {}

  Result<obs::SpanStore*> Get() {
    std::lock_guard<std::mutex> lock(mu_);
    if (store_ == nullptr) {
      MEND_ASSIGN_OR_RETURN(store_, obs::SpanStore::Open(path_));
    }
    return store_.get();
  }

 private:
  const std::string path_;
  std::mutex mu_;
  std::unique_ptr<obs::SpanStore> store_;
};

nlohmann::json ValueJson(const obs::AttributeValue& value) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, value);
}

nlohmann::json AttributesJson(const std::vector<obs::Attribute>& attributes) {
  nlohmann::json out = nlohmann::json::object();
  for (const obs::Attribute& a : attributes) out[a.key] = ValueJson(a.value);
  return out;
}

nlohmann::json SpanJson(const obs::SpanData& span) {
  nlohmann::json events = nlohmann::json::array();
  for (const obs::SpanEvent& e : span.events) {
    events.push_back({{"name", e.name},
                      {"time", FormatRfc3339(e.time)},
                      {"attributes", AttributesJson(e.attributes)}});
  }
  nlohmann::json links = nlohmann::json::array();
  for (const obs::SpanLink& l : span.links) {
    links.push_back({{"trace_id", l.context.trace_id},
                     {"span_id", l.context.span_id},
                     {"attributes", AttributesJson(l.attributes)}});
  }
  return {{"trace_id", span.context.trace_id},
          {"span_id", span.context.span_id},
          {"parent_span_id", span.parent_span_id.empty() ? nlohmann::json(nullptr)
                                                         : nlohmann::json(span.parent_span_id)},
          {"name", span.name},
          {"kind", std::string(obs::SpanKindName(span.kind))},
          {"start", FormatRfc3339(span.start)},
          {"end", FormatRfc3339(span.end)},
          {"duration_ms", std::chrono::duration<double, std::milli>(span.end - span.start).count()},
          {"status", std::string(obs::SpanStatusName(span.status))},
          {"status_message", span.status_message},
          {"run_id", span.run_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(span.run_id)},
          {"attributes", AttributesJson(span.attributes)},
          {"events", std::move(events)},
          {"links", std::move(links)}};
}

nlohmann::json SummaryJson(const obs::TraceSummary& t) {
  auto or_null = [](const std::string& s) {
    return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
  };
  return {{"trace_id", t.trace_id},
          {"name", t.root_name},
          {"root_span_id", t.root_span_id},
          {"has_root", t.has_root},
          {"service", or_null(t.service_name)},
          {"run_id", or_null(t.run_id)},
          {"start", FormatRfc3339(t.start)},
          {"end", FormatRfc3339(t.end)},
          {"duration_ms", std::chrono::duration<double, std::milli>(t.end - t.start).count()},
          {"spans", t.span_count},
          {"errors", t.error_count}};
}

Result<nlohmann::json> TraceJson(obs::SpanStore& store, const std::string& trace_id) {
  MEND_ASSIGN_OR_RETURN(std::vector<obs::SpanData> spans, store.SpansOfTrace(trace_id));
  if (spans.empty()) return NotFoundError("no trace " + trace_id + " in observe.db");
  nlohmann::json list = nlohmann::json::array();
  for (const obs::SpanData& span : spans) list.push_back(SpanJson(span));
  return nlohmann::json{{"trace_id", trace_id}, {"spans", std::move(list)}};
}

// A filter's text, "" when absent; a value longer than any name or message worth matching is
// refused rather than sent to the database.
Result<std::string> TextFilter(const ApiRequest& req, std::string_view name) {
  constexpr size_t kMaxFilterBytes = 1024;
  std::string value = req.Query(name).value_or("");
  if (value.size() > kMaxFilterBytes) {
    return InvalidArgumentError(std::string(name) + ": at most " + std::to_string(kMaxFilterBytes) +
                                " bytes");
  }
  return value;
}

Result<std::optional<Time>> TimeFilter(const ApiRequest& req, std::string_view name) {
  std::optional<std::string> text = req.Query(name);
  if (!text || text->empty()) return std::optional<Time>();
  Result<Time> parsed = ParseRfc3339(*text);
  if (!parsed.ok()) {
    return InvalidArgumentError(std::string(name) + ": \"" + *text +
                                "\" is not an RFC 3339 time (such as 2025-01-31T09:00:00Z)");
  }
  return std::optional<Time>(*parsed);
}

// The filters of GET /api/v1/traces (docs/http_api.md, "Traces").
Status ParseTraceFilters(const ApiRequest& req, obs::TraceQuery& query) {
  MEND_ASSIGN_OR_RETURN(query.agent, TextFilter(req, "agent"));
  MEND_ASSIGN_OR_RETURN(query.service, TextFilter(req, "service"));
  MEND_ASSIGN_OR_RETURN(query.model, TextFilter(req, "model"));
  MEND_ASSIGN_OR_RETURN(query.error_text, TextFilter(req, "error_text"));
  const std::string status = req.Query("status").value_or("");
  if (status == "ok") {
    query.outcome = obs::TraceOutcome::kOk;
  } else if (status == "error") {
    query.outcome = obs::TraceOutcome::kError;
  } else if (!status.empty()) {
    return InvalidArgumentError("status: \"" + status + "\" is neither ok nor error");
  }
  MEND_ASSIGN_OR_RETURN(query.from, TimeFilter(req, "from"));
  MEND_ASSIGN_OR_RETURN(query.to, TimeFilter(req, "to"));
  if (query.from && query.to && *query.from >= *query.to) {
    return InvalidArgumentError("from: must be before to");
  }
  return OkStatus();
}

Result<ApiResponse> ListTraces(Spans& spans, const ApiRequest& req) {
  MEND_ASSIGN_OR_RETURN(int64_t limit,
                        req.QueryInt("limit", 20, 1, static_cast<int64_t>(obs::kMaxTracePageSize)));
  obs::TraceQuery query;
  query.limit = static_cast<size_t>(limit);
  MEND_RETURN_IF_ERROR(ParseTraceFilters(req, query));
  if (std::optional<std::string> cursor = req.Query("cursor"); cursor && !cursor->empty()) {
    Result<obs::TraceCursor> parsed = obs::ParseTraceCursor(*cursor);
    if (!parsed.ok())
      return InvalidArgumentError("cursor: " + std::string(parsed.status().message()));
    query.before = *std::move(parsed);
  }
  MEND_ASSIGN_OR_RETURN(obs::SpanStore * store, spans.Get());
  MEND_ASSIGN_OR_RETURN(obs::TracePage page, store->ListTraces(query));
  nlohmann::json traces = nlohmann::json::array();
  for (const obs::TraceSummary& t : page.traces) traces.push_back(SummaryJson(t));
  return ApiResponse(
      {{"traces", std::move(traces)},
       {"total", page.total},
       {"more", page.more},
       {"next", page.next ? nlohmann::json(obs::FormatTraceCursor(*page.next)) : nullptr}});
}

bool IsTraceId(const std::string& id) { return obs::IsSpanIdHex(id, 32); }

// POST /v1/traces: OTLP/HTTP's answer is an ExportTraceServiceResponse in the request's
// encoding; an empty one means every span was accepted.
void Receive(Spans& spans, const httplib::Request& req, httplib::Response& res,
             const httplib::ContentReader& reader) {
  Result<obs::OtlpProtocol> protocol = OtlpProtocolOf(req.get_header_value("Content-Type"));
  if (!protocol.ok()) {
    res.set_header("Connection", "close");
    return WriteJson(res, ErrorBody(protocol.status()), 415);
  }
  std::string raw;
  if (Status read = ReadBoundedBody(reader, kMaxOtlpBodyBytes, raw); !read.ok()) {
    res.set_header("Connection", "close");
    return WriteJson(res, ErrorBody(read),
                     read.code() == StatusCode::kResourceExhausted ? 413 : 400);
  }
  Result<std::vector<obs::SpanData>> decoded = obs::DecodeOtlpTraces(raw, *protocol);
  if (!decoded.ok()) return WriteError(res, decoded.status());
  Result<obs::SpanStore*> store = spans.Get();
  if (!store.ok()) return WriteError(res, store.status());
  if (Status written = (*store)->Write(*decoded); !written.ok()) return WriteError(res, written);
  res.status = 200;
  if (*protocol == obs::OtlpProtocol::kHttpJson) {
    res.set_content("{}", "application/json");
  } else {
    res.set_content("", "application/x-protobuf");
  }
}

}  // namespace

void AddTraceRoutes(ApiRoutes& routes, ServeContext& context) {
  auto spans = std::make_shared<Spans>(home::ObserveFile(context.runtime().home));
  routes.Get(R"(/api/v1/traces)",
             [spans](const ApiRequest& req) { return ListTraces(*spans, req); });
  routes.Get(R"(/api/v1/traces/([^/]+))", [spans](const ApiRequest& req) -> Result<ApiResponse> {
    const std::string& id = req.params[0];
    if (!IsTraceId(id)) return InvalidArgumentError("a trace id is 32 lowercase hex digits");
    MEND_ASSIGN_OR_RETURN(obs::SpanStore * store, spans->Get());
    MEND_ASSIGN_OR_RETURN(nlohmann::json trace, TraceJson(*store, id));
    return ApiResponse(std::move(trace));
  });
  routes.Get(R"(/api/v1/runs/([^/]+)/trace)",
             [spans](const ApiRequest& req) -> Result<ApiResponse> {
               MEND_ASSIGN_OR_RETURN(obs::SpanStore * store, spans->Get());
               Result<std::string> trace_id = store->TraceIdOfRun(req.params[0]);
               if (!trace_id.ok() && trace_id.status().code() == StatusCode::kNotFound) {
                 return NotFoundError("no trace of run " + req.params[0] + " in observe.db");
               }
               MEND_RETURN_IF_ERROR(trace_id.status());
               MEND_ASSIGN_OR_RETURN(nlohmann::json trace, TraceJson(*store, *trace_id));
               trace["run_id"] = req.params[0];
               return ApiResponse(std::move(trace));
             });
  routes.http().Post("/v1/traces", [spans](const httplib::Request& req, httplib::Response& res,
                                           const httplib::ContentReader& reader) {
    Receive(*spans, req, res, reader);
  });
}

}  // namespace mend::server
