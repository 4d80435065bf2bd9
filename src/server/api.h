#pragma once

// The JSON API's plumbing shared by every route group (docs/http_api.md): a request as handlers see
// it, the mapping of a Status to an HTTP status and an error body, and the registration of routes.
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/result.h"

namespace httplib {
class ContentReader;
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace mend::server {

class ServeContext;

// A request of the JSON API, as a handler sees it.
struct ApiRequest {
  std::string method;
  std::string path;
  // The capture groups of the route's pattern, in order (e.g. the run id of /api/v1/runs/([^/]+)).
  std::vector<std::string> params;
  std::multimap<std::string, std::string> query;
  // The parsed body of a POST/PUT/PATCH/DELETE; null when there was none.
  nlohmann::json body;

  // The query parameter `name`, or nullopt.
  std::optional<std::string> Query(std::string_view name) const;
  // The query parameter `name` as an integer in [min, max]; `fallback` when absent;
  // kInvalidArgument naming the parameter otherwise.
  Result<int64_t> QueryInt(std::string_view name, int64_t fallback, int64_t min, int64_t max) const;
  // Body field `name` as a string: kInvalidArgument when required and missing, or not a string.
  Result<std::string> BodyString(std::string_view name) const;
  // The same, "" when absent.
  Result<std::string> OptionalBodyString(std::string_view name) const;
};

// What a handler returns: the JSON body and the HTTP status (200 unless set otherwise).
struct ApiResponse {
  nlohmann::json body;
  int status = 200;
  ApiResponse(nlohmann::json b) : body(std::move(b)) {}  // NOLINT: implicit from a body
  ApiResponse(nlohmann::json b, int s) : body(std::move(b)), status(s) {}
};

using ApiHandler = std::function<Result<ApiResponse>(const ApiRequest&)>;

// The HTTP status for an error Status (400 invalid argument, 404 not found, 409 conflict,
// 429 exhausted, 503 unavailable, ...).
int HttpStatusOf(const Status& status);
// {"error":{"code":"NOT_FOUND","message":"..."}}
nlohmann::json ErrorBody(const Status& status);

// Registers JSON routes on the HTTP server. Patterns are ECMAScript regular expressions matched
// against the whole path; their capture groups become ApiRequest::params. Errors a handler
// returns become ErrorBody with HttpStatusOf; a body that is not JSON (or not an object) is a 400
// before the handler runs.
class ApiRoutes {
 public:
  // Bodies of POST and DELETE requests longer than `max_body_bytes` are refused (413) while they
  // are read, chunked ones included.
  ApiRoutes(httplib::Server& http, size_t max_body_bytes)
      : http_(http), max_body_bytes_(max_body_bytes) {}
  void Get(const std::string& pattern, ApiHandler handler);
  void Post(const std::string& pattern, ApiHandler handler);
  void Delete(const std::string& pattern, ApiHandler handler);
  httplib::Server& http() { return http_; }
  size_t max_body_bytes() const { return max_body_bytes_; }

 private:
  httplib::Server& http_;
  const size_t max_body_bytes_;
};

// Reads a request body through httplib's content reader into `out`, at most `max_bytes`:
// kResourceExhausted when it is longer (reading stops there), kInvalidArgument when the
// connection failed mid-body. cpp-httplib bounds only bodies with a Content-Length; chunked ones
// are read this way.
Status ReadBoundedBody(const httplib::ContentReader& reader, size_t max_bytes, std::string& out);

// The request a handler sees: method, path, the route's capture groups, the query and the body
// (`body_text`, already read and bounded) parsed as JSON. kInvalidArgument (a 400 before the
// handler runs) for a body that is not JSON or not an object; an empty body is a null one.
Result<ApiRequest> ToApiRequest(const httplib::Request& req, const std::string& body_text);

// Writes `status` as the JSON error body of `res`.
void WriteError(httplib::Response& res, const Status& status);
void WriteJson(httplib::Response& res, const nlohmann::json& body, int status = 200);

// The route groups; each lives in its own api_<group>.cc.
void AddRunRoutes(ApiRoutes& routes, ServeContext& context);      // runs, pending
void AddMemoryRoutes(ApiRoutes& routes, ServeContext& context);   // memory
void AddLessonRoutes(ApiRoutes& routes, ServeContext& context);   // lessons
void AddTraceRoutes(ApiRoutes& routes, ServeContext& context);    // traces, /v1/traces
void AddImproveRoutes(ApiRoutes& routes, ServeContext& context);  // improve
// POST /api/v1/improve and GET /api/v1/improve/job (api_improve_jobs.cc); AddImproveRoutes calls
// it before its /api/v1/improve/{id} routes.
void AddImproveJobRoutes(ApiRoutes& routes, ServeContext& context);
void AddMetricsRoutes(ApiRoutes& routes, ServeContext& context);  // /metrics, /api/v1/metrics
void AddUiRoutes(ApiRoutes& routes, ServeContext& context);       // the web UI's static files
void AddEventRoutes(ApiRoutes& routes, ServeContext& context);    // events (server-sent)
void AddSeriesRoutes(ApiRoutes& routes, ServeContext& context);   // metrics over time
void AddAgentRoutes(ApiRoutes& routes, ServeContext& context);    // one agent folder
void AddSessionRoutes(ApiRoutes& routes, ServeContext& context);  // proxy conversations

class EventStreams;
// Whether `req` opens the event stream with a ticket of `streams` (spending it): such a request
// needs no bearer token (api_events.cc).
bool RedeemsEventTicket(const httplib::Request& req, EventStreams& streams);

}  // namespace mend::server
