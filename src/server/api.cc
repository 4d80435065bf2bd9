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

Result<ApiRequest> ToApiRequest(const httplib::Request& req, const std::string& body_text) {
  ApiRequest request;
  request.method = req.method;
  request.path = req.path;
  for (size_t i = 1; i < req.matches.size(); ++i) request.params.push_back(req.matches[i].str());
  for (const auto& [key, value] : req.params) request.query.emplace(key, value);
  if (!body_text.empty()) {
    Result<nlohmann::json> body = ParseJson(body_text);
    if (!body.ok()) {
      return InvalidArgumentError("the request body is not JSON: " +
                                  std::string(body.status().message()));
    }
    if (!body->is_object()) return InvalidArgumentError("the request body must be a JSON object");
    request.body = *std::move(body);
  }
  return request;
}

namespace {

void Handle(const ApiHandler& handler, const httplib::Request& req, const std::string& body,
            httplib::Response& res) {
  Result<ApiRequest> request = ToApiRequest(req, body);
  if (!request.ok()) return WriteError(res, request.status());
  Result<ApiResponse> response = handler(*request);
  if (!response.ok()) return WriteError(res, response.status());
  WriteJson(res, response->body, response->status);
}

httplib::Server::Handler Wrap(ApiHandler handler) {
  return [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    Handle(handler, req, req.body, res);
  };
}

httplib::Server::HandlerWithContentReader WrapWithBody(ApiHandler handler, size_t max_bytes) {
  return
      [handler = std::move(handler), max_bytes](const httplib::Request& req, httplib::Response& res,
                                                const httplib::ContentReader& reader) {
        std::string body;
        if (Status read = ReadBoundedBody(reader, max_bytes, body); !read.ok()) {
          res.set_header("Connection", "close");
          return WriteJson(res, ErrorBody(read),
                           read.code() == StatusCode::kResourceExhausted ? 413 : 400);
        }
        Handle(handler, req, body, res);
      };
}

}  // namespace

void ApiRoutes::Get(const std::string& pattern, ApiHandler handler) {
  http_.Get(pattern, Wrap(std::move(handler)));
}
void ApiRoutes::Post(const std::string& pattern, ApiHandler handler) {
  http_.Post(pattern, WrapWithBody(std::move(handler), max_body_bytes_));
}
void ApiRoutes::Delete(const std::string& pattern, ApiHandler handler) {
  http_.Delete(pattern, WrapWithBody(std::move(handler), max_body_bytes_));
}

Status ReadBoundedBody(const httplib::ContentReader& reader, size_t max_bytes, std::string& out) {
  bool too_large = false;
  const bool read = reader([&](const char* data, size_t length) {
    if (out.size() + length > max_bytes) {
      too_large = true;
      return false;
    }
    out.append(data, length);
    return true;
  });
  if (too_large) {
    return ResourceExhaustedError("the request body is too large (the limit is " +
                                  std::to_string(max_bytes) + " bytes)");
  }
  if (!read) return InvalidArgumentError("the request body could not be read");
  return OkStatus();
}

}  // namespace mend::server
