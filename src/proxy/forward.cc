// The upstream side of a proxied call (docs/proxy.md): the request sent upstream, retries before
// the first byte, the outage breaker, and the answer of a reply that is not streamed (streams:
// relay.cc).
#include <algorithm>
#include <cctype>
#include <utility>

#include "mend/base/retry_after.h"
#include "mend/base/utf8.h"
#include "mend/obs/trace.h"
#include "proxy/service_impl.h"

namespace mend::proxy {
namespace {

constexpr size_t kMaxReplyBytes = 64u << 20;
// A Retry-After longer than this reads as this; the wait is capped at RetryOptions::max_delay.
constexpr std::chrono::hours kLongestRetryAfter(1);

// Client headers that never go upstream: hop-by-hop ones, the ones libcurl sets itself, the
// client's credentials (replaced unless forwarded), mend's own, and the addresses cpp-httplib
// records as headers.
bool KeepClientHeader(const std::string& lower, bool forward_client_key) {
  static const char* const kDropped[] = {
      "host",        "content-length", "connection", "keep-alive",          "transfer-encoding",
      "te",          "trailer",        "upgrade",    "proxy-authorization", "accept-encoding",
      "expect",      "traceparent",    "tracestate", "x-mend-token",        "remote_addr",
      "remote_port", "local_addr",     "local_port"};
  for (const char* dropped : kDropped) {
    if (lower == dropped) return false;
  }
  if (lower.starts_with("x-mend-")) return false;
  if (lower == "authorization" || lower == "x-api-key") return forward_client_key;
  return true;
}

// Reply headers not passed to the client: hop-by-hop ones and the framing cpp-httplib sets.
bool KeepUpstreamHeader(const std::string& lower) {
  return lower != "connection" && lower != "keep-alive" && lower != "transfer-encoding" &&
         lower != "content-length" && lower != "content-type" && lower != "date" &&
         lower != "server";
}

bool IsTransientStatus(int status) {
  return status == 408 || status == 409 || status == 429 || status == 500 || status == 502 ||
         status == 503 || status == 504 || status == 529;
}

bool IsTransientError(const Status& status) {
  return status.code() == StatusCode::kUnavailable ||
         status.code() == StatusCode::kDeadlineExceeded;
}

Duration RetryDelay(const RetryOptions& retry, int attempt) {
  Duration delay = retry.base_delay;
  for (int k = 1; k < attempt && delay < retry.max_delay; ++k) delay *= 2;
  return std::min(delay, retry.max_delay);
}

}  // namespace

std::string UpstreamUrl(UpstreamKind kind, std::string_view upstream, std::string_view route) {
  // The OpenAI SDKs append "/chat/completions" to a base URL that ends in /v1 (or in another
  // version, as some compatible APIs' do); Anthropic's append "/v1/messages" to the bare host.
  const std::string_view rest = route.starts_with("/v1/") ? route.substr(3) : route;
  if (kind == UpstreamKind::kOpenAi) return std::string(upstream) + std::string(rest);
  if (upstream.ends_with("/v1")) upstream.remove_suffix(3);
  return std::string(upstream) + std::string(route);
}

UpstreamRequest ProxyServiceImpl::BuildUpstreamRequest(const httplib::Request& req,
                                                       const std::string& method,
                                                       const std::string& route, std::string body,
                                                       const std::string& traceparent) const {
  UpstreamRequest out;
  out.method = method;
  out.url = UpstreamUrl(options_.upstream_kind, options_.upstream, route);
  if (!req.params.empty() && method == "GET") {
    std::string query;
    for (const auto& [key, value] : req.params) {
      query += query.empty() ? "?" : "&";
      query += httplib::detail::encode_query_param(key) + "=" +
               httplib::detail::encode_query_param(value);
    }
    out.url += query;
  }
  for (const auto& [name, value] : req.headers) {
    if (!KeepClientHeader(ToLowerAscii(name), options_.forward_client_key)) continue;
    out.headers.push_back(name + ": " + value);
  }
  if (!options_.forward_client_key && !options_.upstream_api_key.empty()) {
    if (options_.upstream_kind == UpstreamKind::kAnthropic) {
      out.headers.push_back("x-api-key: " + options_.upstream_api_key);
    } else {
      out.headers.push_back("Authorization: Bearer " + options_.upstream_api_key);
    }
  }
  if (options_.upstream_kind == UpstreamKind::kAnthropic && !req.has_header("anthropic-version")) {
    out.headers.push_back("anthropic-version: 2023-06-01");
  }
  if (!traceparent.empty()) out.headers.push_back("traceparent: " + traceparent);
  out.body = std::move(body);
  return out;
}

Result<std::unique_ptr<UpstreamCall>> ProxyServiceImpl::Send(const UpstreamRequest& request) {
  Clock& clock = *deps_.clock;
  bool probe = false;
  {
    std::lock_guard<std::mutex> lock(breaker_mu_);
    if (breaker_.open()) {
      const Time now = clock.Now();
      if (!breaker_.ProbeDue(now) || probing_) {
        const Time next = breaker_.next_probe_at().value_or(now);
        const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - now);
        if (metrics_.breaker_rejections != nullptr) metrics_.breaker_rejections->Inc();
        return ResourceExhaustedError("upstream unavailable (outage breaker open)",
                                      std::max(wait, std::chrono::milliseconds(1000)));
      }
      probing_ = true;
      probe = true;
    }
  }
  const auto report = [&](bool provider_failure) {
    std::lock_guard<std::mutex> lock(breaker_mu_);
    if (probe) probing_ = false;
    if (provider_failure) {
      breaker_.OnProviderFailure(clock.Now());
    } else {
      breaker_.OnOtherResult();
    }
  };
  // A probe is one attempt: the breaker decides when to try again.
  const int attempts = probe ? 1 : options_.retry.max_attempts;
  for (int attempt = 1;; ++attempt) {
    const auto sent = std::chrono::steady_clock::now();
    MEND_ASSIGN_OR_RETURN(std::unique_ptr<UpstreamCall> call, pool_.Start(request));
    Status headers = call->WaitForHeaders();
    if (metrics_.upstream_seconds != nullptr && headers.ok()) {
      metrics_.upstream_seconds->Observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count());
    }
    const bool transient =
        headers.ok() ? IsTransientStatus(call->status()) : IsTransientError(headers);
    if (!transient) {
      report(false);
      if (!headers.ok()) return headers;
      return call;
    }
    if (attempt >= attempts) {
      report(true);
      if (!headers.ok()) return headers;
      return call;  // the upstream's own error answer goes to the client
    }
    Duration delay = RetryDelay(options_.retry, attempt);
    if (headers.ok()) {
      if (std::optional<Duration> asked =
              ParseRetryAfter(call->Header("Retry-After"), clock.Now(), kLongestRetryAfter)) {
        delay = std::min(std::max(delay, *asked), options_.retry.max_delay);
      }
    }
    call.reset();  // closes this attempt's connection unless its reply was complete
    if (metrics_.retries != nullptr) metrics_.retries->Inc();
    clock.SleepFor(delay);
  }
}

void ProxyServiceImpl::PassUpstreamHeaders(const UpstreamCall& call, httplib::Response& res) const {
  for (const auto& [name, value] : call.headers()) {
    if (KeepUpstreamHeader(ToLowerAscii(name))) res.set_header(name.c_str(), value);
  }
}

void ProxyServiceImpl::FinishSpan(obs::Span& span, const ModelCall& call,
                                  const ReplySummary& summary, int status) {
  if (!span.recording()) return;
  const std::string model = summary.model.empty() ? call.model : summary.model;
  if (!summary.model.empty()) span.SetAttribute("gen_ai.response.model", summary.model);
  if (summary.input_tokens >= 0) {
    span.SetAttribute("gen_ai.usage.input_tokens", summary.input_tokens);
  }
  if (summary.output_tokens >= 0) {
    span.SetAttribute("gen_ai.usage.output_tokens", summary.output_tokens);
  }
  if (deps_.prices != nullptr && summary.input_tokens >= 0 && summary.output_tokens >= 0) {
    llm::Usage usage{summary.input_tokens, summary.output_tokens};
    span.SetAttribute("mend.cost_usd", deps_.prices->CostUsd(model, usage));
  }
  if (!summary.finish_reason.empty()) {
    span.SetAttribute("gen_ai.response.finish_reasons", summary.finish_reason);
  }
  span.SetAttribute("http.response.status_code", static_cast<int64_t>(status));
  if (status >= 400) {
    span.SetError(std::to_string(status), summary.error.empty() ? "upstream error" : summary.error);
  } else if (!summary.error.empty()) {
    span.SetError("stream_error", summary.error);
  }
}

void ProxyServiceImpl::Forward(const httplib::Request& req, httplib::Response& res,
                               ModelCall call) {
  const ErrorStyle style = StyleFor(call.shape);
  obs::Span span;
  std::string traceparent;
  if (deps_.tracer != nullptr) {
    obs::SpanStart start;
    start.kind = obs::SpanKind::kClient;
    start.run_id = "proxy-" + call.conversation_id;
    if (req.has_header("traceparent")) {
      Result<obs::SpanContext> parent = obs::ParseTraceparent(req.get_header_value("traceparent"));
      if (parent.ok()) start.parent = *parent;
    }
    span = deps_.tracer->StartSpan("chat " + call.model, std::move(start));
    span.SetAttribute("gen_ai.operation.name", "chat");
    span.SetAttribute("gen_ai.provider.name",
                      std::string(UpstreamKindName(options_.upstream_kind)));
    span.SetAttribute("gen_ai.request.model", call.model);
    span.SetAttribute("session.id", call.conversation_id);
    span.SetAttribute("mend.proxy.route", call.route);
    if (!call.workspace.empty()) span.SetAttribute("mend.workspace", call.workspace);
    if (!call.agent.empty()) span.SetAttribute("mend.agent", call.agent);
    if (span.recording()) traceparent = obs::FormatTraceparent(span.context());
  }
  if (traceparent.empty() && req.has_header("traceparent")) {
    traceparent = req.get_header_value("traceparent");
  }
  UpstreamRequest request =
      BuildUpstreamRequest(req, "POST", call.route, std::move(call.body), traceparent);
  if (metrics_.added_seconds != nullptr) {
    metrics_.added_seconds->Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - call.received).count());
  }
  Result<std::unique_ptr<UpstreamCall>> sent = Send(request);
  if (!sent.ok()) {
    const Status& error = sent.status();
    int status = 502;
    if (error.code() == StatusCode::kResourceExhausted) {
      status = 503;
      const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                               error.retry_after().value_or(std::chrono::seconds(1)))
                               .count();
      res.set_header("Retry-After", std::to_string(std::max<int64_t>(1, seconds)));
    } else if (error.code() == StatusCode::kDeadlineExceeded) {
      status = 504;
    }
    ReplySummary failed;
    failed.error = error.message();
    FinishSpan(span, call, failed, status);
    Reply(res, call.route, status, style, "upstream: " + std::string(error.message()),
          status == 503 ? "upstream_unavailable" : "upstream_error");
    return;
  }
  std::unique_ptr<UpstreamCall> upstream = *std::move(sent);
  const int status = upstream->status();
  const std::string content_type = upstream->Header("Content-Type");
  if (call.stream && status >= 200 && status < 300 &&
      content_type.find("text/event-stream") != std::string::npos) {
    res.status = status;
    PassUpstreamHeaders(*upstream, res);
    RelayStream(res, std::move(call), std::move(upstream), std::move(span));
    return;
  }
  Result<std::string> body = upstream->ReadAll(kMaxReplyBytes);
  if (!body.ok()) {
    ReplySummary failed;
    failed.error = body.status().message();
    FinishSpan(span, call, failed, 502);
    Reply(res, call.route, 502, style, "upstream: " + std::string(body.status().message()),
          "upstream_error");
    return;
  }
  res.status = status;
  PassUpstreamHeaders(*upstream, res);
  ReplySummary summary;
  if (status >= 200 && status < 300) {
    Result<ReplySummary> parsed = ParseReply(call.shape, *body);
    if (parsed.ok()) summary = *std::move(parsed);
  } else {
    summary.error = body->substr(0, 500);
  }
  FinishSpan(span, call, summary, status);
  res.set_content(*std::move(body), content_type.empty() ? "application/json" : content_type);
  Count(call.route, status);
  if (status >= 200 && status < 300) AfterReply(call.conversation_id, summary, traceparent);
}

void ProxyServiceImpl::HandlePassThrough(const httplib::Request& req, httplib::Response& res) {
  const std::string route = req.path.starts_with("/v1/models") ? "/v1/models" : req.path;
  const ErrorStyle style = RouteStyle();
  std::optional<ClientScope> scope = Authorize(req, res, route, style);
  if (!scope.has_value()) return;
  if (req.body.size() > options_.max_body) {
    res.set_header("Connection", "close");
    Reply(res, route, 413, style, "request body larger than proxy.max_body");
    return;
  }
  UpstreamRequest request = BuildUpstreamRequest(
      req, req.method, req.path, req.body,
      req.has_header("traceparent") ? req.get_header_value("traceparent") : std::string());
  Result<std::unique_ptr<UpstreamCall>> sent = Send(request);
  if (!sent.ok()) {
    const int status = sent.status().code() == StatusCode::kResourceExhausted ? 503 : 502;
    if (status == 503) {
      res.set_header("Retry-After",
                     std::to_string(std::max<int64_t>(
                         1, std::chrono::duration_cast<std::chrono::seconds>(
                                sent.status().retry_after().value_or(std::chrono::seconds(1)))
                                .count())));
    }
    Reply(res, route, status, style, "upstream: " + std::string(sent.status().message()),
          "upstream_error");
    return;
  }
  Result<std::string> body = (*sent)->ReadAll(kMaxReplyBytes);
  if (!body.ok()) {
    Reply(res, route, 502, style, "upstream: " + std::string(body.status().message()),
          "upstream_error");
    return;
  }
  res.status = (*sent)->status();
  PassUpstreamHeaders(**sent, res);
  const std::string content_type = (*sent)->Header("Content-Type");
  res.set_content(*std::move(body), content_type.empty() ? "application/json" : content_type);
  Count(route, res.status);
}

}  // namespace mend::proxy
