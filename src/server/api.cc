// The JSON API's plumbing (api.h): requests, errors and route registration over cpp-httplib.
#include "server/api.h"

#include <httplib.h>

#include <charconv>
#include <utility>

#include "mend/base/json.h"

namespace mend::server {

std::optional<std::string> ApiRequest::Query(std::string_view name) const {
  auto it = query.find(std::string(name));
  if (it == query.end()) return std::nullopt;
  return it->second;
}

Result<int64_t> ApiRequest::QueryInt(std::string_view name, int64_t fallback, int64_t min,
                                     int64_t max) const {
  std::optional<std::string> text = Query(name);
  if (!text.has_value()) return fallback;
  int64_t value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || value < min || value > max) {
    return InvalidArgumentError(std::string(name) + " must be an integer from " +
                                std::to_string(min) + " to " + std::to_string(max) + ", not \"" +
                                *text + "\"");
  }
  return value;
}

Result<std::string> ApiRequest::OptionalBodyString(std::string_view name) const {
  if (!body.is_object()) return std::string();
  auto it = body.find(std::string(name));
  if (it == body.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return InvalidArgumentError("field \"" + std::string(name) + "\" must be a string");
  }
  return it->get<std::string>();
}

Result<std::string> ApiRequest::BodyString(std::string_view name) const {
  MEND_ASSIGN_OR_RETURN(std::string value, OptionalBodyString(name));
  if (value.empty()) {
    return InvalidArgumentError("field \"" + std::string(name) + "\" is required");
  }
  return value;
}

int HttpStatusOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kAborted:
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kCancelled:
      return 499;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kUnknown:
    case StatusCode::kInternal:
    case StatusCode::kDataLoss:
      return 500;
  }
  return 500;
}

nlohmann::json ErrorBody(const Status& status) {
  return {{"error",
           {{"code", std::string(StatusCodeName(status.code()))},
            {"message", std::string(status.message())}}}};
}

void WriteJson(httplib::Response& res, const nlohmann::json& body, int status) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(DumpJson(body) + "\n", "application/json");
}

void WriteError(httplib::Response& res, const Status& status) {
  WriteJson(res, ErrorBody(status), HttpStatusOf(status));
}

namespace {

Result<ApiRequest> ToApiRequest(const httplib::Request& req) {
  ApiRequest request;
  request.method = req.method;
  request.path = req.path;
  for (size_t i = 1; i < req.matches.size(); ++i) request.params.push_back(req.matches[i].str());
  for (const auto& [key, value] : req.params) request.query.emplace(key, value);
  if (!req.body.empty()) {
    Result<nlohmann::json> body = ParseJson(req.body);
    if (!body.ok()) {
      return InvalidArgumentError("the request body is not JSON: " +
                                  std::string(body.status().message()));
    }
    if (!body->is_object()) return InvalidArgumentError("the request body must be a JSON object");
    request.body = *std::move(body);
  }
  return request;
}

httplib::Server::Handler Wrap(ApiHandler handler) {
  return [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    Result<ApiRequest> request = ToApiRequest(req);
    if (!request.ok()) return WriteError(res, request.status());
    Result<ApiResponse> response = handler(*request);
    if (!response.ok()) return WriteError(res, response.status());
    WriteJson(res, response->body, response->status);
  };
}

}  // namespace

void ApiRoutes::Get(const std::string& pattern, ApiHandler handler) {
  http_.Get(pattern, Wrap(std::move(handler)));
}
void ApiRoutes::Post(const std::string& pattern, ApiHandler handler) {
  http_.Post(pattern, Wrap(std::move(handler)));
}
void ApiRoutes::Delete(const std::string& pattern, ApiHandler handler) {
  http_.Delete(pattern, Wrap(std::move(handler)));
}

}  // namespace mend::server
