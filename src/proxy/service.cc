// The proxy's routes and the checks and conversation bookkeeping of each model call
// (docs/proxy.md). The upstream call itself is in forward.cc.
#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <utility>

#include "mend/base/hash.h"
#include "mend/base/json.h"
#include "mend/base/utf8.h"
#include "mend/obs/trace.h"
#include "proxy/json_edit.h"
#include "proxy/service_impl.h"

namespace mend::proxy {
namespace {

constexpr size_t kSweepBatch = 256;
constexpr auto kSweepInterval = std::chrono::minutes(1);
constexpr auto kRefreshInterval = std::chrono::minutes(1);

std::string HeaderOf(const httplib::Request& req, const char* name) {
  return req.has_header(name) ? req.get_header_value(name) : std::string();
}

// The token a client presented: X-Mend-Token, else a bearer Authorization, else x-api-key.
std::string PresentedToken(const httplib::Request& req, bool forward_client_key) {
  std::string token = HeaderOf(req, "X-Mend-Token");
  if (!token.empty() || forward_client_key) return token;
  const std::string auth = HeaderOf(req, "Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (auth.size() > kBearer.size() && auth.compare(0, kBearer.size(), kBearer) == 0) {
    return auth.substr(kBearer.size());
  }
  return HeaderOf(req, "x-api-key");
}

}  // namespace

Result<UpstreamKind> ParseUpstreamKind(std::string_view text) {
  if (text == "openai") return UpstreamKind::kOpenAi;
  if (text == "anthropic") return UpstreamKind::kAnthropic;
  return InvalidArgumentError("upstream kind \"" + std::string(text) +
                              "\" is not openai or anthropic");
}

std::string_view UpstreamKindName(UpstreamKind kind) {
  return kind == UpstreamKind::kAnthropic ? "anthropic" : "openai";
}

Result<std::unique_ptr<ProxyService>> ProxyService::Create(ProxyOptions options, ProxyDeps deps) {
  if (deps.clock == nullptr) return InvalidArgumentError("the proxy needs a clock");
  if (deps.database_path.empty()) {
    return InvalidArgumentError("the proxy needs a database for its conversations");
  }
  if (!options.upstream.starts_with("http://") && !options.upstream.starts_with("https://")) {
    return InvalidArgumentError("proxy upstream \"" + options.upstream +
                                "\" is not an http:// or https:// URL");
  }
  while (options.upstream.ends_with('/')) options.upstream.pop_back();
  if (options.retry.max_attempts < 1) options.retry.max_attempts = 1;
  MEND_ASSIGN_OR_RETURN(FailureRules rules, FailureRules::Create(options.failure_patterns));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<ConversationStore> store,
                        ConversationStore::Open(deps.database_path));
  return std::unique_ptr<ProxyService>(new ProxyServiceImpl(std::move(options), std::move(deps),
                                                            std::move(rules), std::move(store)));
}

ProxyServiceImpl::ProxyServiceImpl(ProxyOptions options, ProxyDeps deps, FailureRules rules,
                                   std::unique_ptr<ConversationStore> store)
    : options_(std::move(options)),
      deps_(std::move(deps)),
      rules_(std::move(rules)),
      store_(std::move(store)),
      pool_(UpstreamTimeouts{
          std::chrono::duration_cast<std::chrono::milliseconds>(options_.connect_timeout),
          std::chrono::duration_cast<std::chrono::milliseconds>(options_.upstream_idle_timeout)}),
      breaker_(options_.outage_threshold, options_.outage_interval, options_.outage_max_wait) {
  if (obs::MetricsRegistry* m = deps_.metrics) {
    metrics_.requests =
        &m->counter_family("mend_proxy_requests_total",
                           "Requests the proxy answered, by route and status", {"route", "status"});
    metrics_.retries =
        &m->counter("mend_proxy_retries_total",
                    "Upstream requests the proxy sent again after a transient error");
    metrics_.upstream_seconds = &m->histogram("mend_proxy_upstream_seconds",
                                              "Time from sending upstream to the reply's headers");
    metrics_.added_seconds = &m->histogram(
        "mend_proxy_added_seconds", "Time the proxy spent on a request before sending it upstream",
        {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1});
    metrics_.open_streams =
        &m->gauge("mend_proxy_open_streams", "Streamed replies being relayed right now");
    metrics_.lessons_enqueued = &m->counter("mend_proxy_lessons_enqueued_total",
                                            "Lesson jobs enqueued from failed tool calls");
    metrics_.client_aborts = &m->counter("mend_proxy_client_aborts_total",
                                         "Streams whose client went away (upstream cancelled)");
    metrics_.breaker_rejections = &m->counter("mend_proxy_breaker_rejections_total",
                                              "Requests answered 503 while the upstream is out");
  }
}

ProxyServiceImpl::~ProxyServiceImpl() { StopSweeper(); }

ErrorStyle ProxyServiceImpl::StyleFor(ApiShape shape) const {
  return shape == ApiShape::kMessages ? ErrorStyle::kAnthropic : ErrorStyle::kOpenAi;
}

ErrorStyle ProxyServiceImpl::RouteStyle() const {
  return options_.upstream_kind == UpstreamKind::kAnthropic ? ErrorStyle::kAnthropic
                                                            : ErrorStyle::kOpenAi;
}

void ProxyServiceImpl::Count(const std::string& route, int status) {
  if (metrics_.requests != nullptr) {
    metrics_.requests->WithLabels({route, std::to_string(status)}).Inc();
  }
}

void ProxyServiceImpl::Reply(httplib::Response& res, const std::string& route, int status,
                             ErrorStyle style, std::string_view message, std::string_view code) {
  res.status = status;
  res.set_content(ErrorBody(style, status, message, code), "application/json");
  Count(route, status);
}

std::optional<ClientScope> ProxyServiceImpl::Authorize(const httplib::Request& req,
                                                       httplib::Response& res,
                                                       const std::string& route, ErrorStyle style) {
  ClientScope scope;
  scope.workspace = options_.default_workspace;
  if (options_.tokens.empty()) {
    const std::string asked = HeaderOf(req, "X-Mend-Workspace");
    if (!asked.empty()) scope.workspace = asked;
    return scope;
  }
  const std::string presented = PresentedToken(req, options_.forward_client_key);
  for (const ClientToken& token : options_.tokens) {
    if (!presented.empty() && ConstantTimeEquals(presented, token.token)) {
      // A token's scope is its own: a header cannot reach another client's lessons.
      scope.workspace = token.workspace;
      return scope;
    }
  }
  res.set_header("WWW-Authenticate", "Bearer");
  Reply(res, route, 401, style,
        options_.forward_client_key
            ? "missing or wrong proxy token (send it as X-Mend-Token)"
            : "missing or wrong proxy token (send it as a bearer token or X-Mend-Token)",
        "invalid_api_key");
  return std::nullopt;
}

void ProxyServiceImpl::Mount(httplib::Server& server) {
  server.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
    HandleModelCall(ApiShape::kChatCompletions, req, res);
  });
  server.Post("/v1/messages", [this](const httplib::Request& req, httplib::Response& res) {
    HandleModelCall(ApiShape::kMessages, req, res);
  });
  server.Post("/v1/responses", [this](const httplib::Request& req, httplib::Response& res) {
    HandleModelCall(ApiShape::kResponses, req, res);
  });
  const auto pass = [this](const httplib::Request& req, httplib::Response& res) {
    HandlePassThrough(req, res);
  };
  server.Get("/v1/models", pass);
  server.Get(R"(/v1/models/([^/]+))", pass);
  server.Post("/v1/embeddings", pass);
  // `mend serve` has its own /metrics, registered first; this one serves `mend proxy`.
  server.Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
    if (!Authorize(req, res, "/metrics", RouteStyle()).has_value()) return;
    res.set_header("Cache-Control", "no-store");
    res.set_content(deps_.metrics != nullptr ? deps_.metrics->RenderPrometheus() : "",
                    std::string(obs::kPrometheusContentType));
  });
  const auto unknown = [this](const httplib::Request& req, httplib::Response& res) {
    HandleUnknown(req, res);
  };
  server.Get(R"(/v1/.*)", unknown);
  server.Post(R"(/v1/.*)", unknown);
  server.Put(R"(/v1/.*)", unknown);
  server.Patch(R"(/v1/.*)", unknown);
  server.Delete(R"(/v1/.*)", unknown);
}

void ProxyServiceImpl::HandleUnknown(const httplib::Request& req, httplib::Response& res) {
  Reply(res, "other", 404, RouteStyle(),
        "mend proxy serves /v1/chat/completions, /v1/messages, /v1/responses, /v1/models and "
        "/v1/embeddings; not " +
            req.method + " " + req.path,
        "unknown_url");
}

std::mutex& ProxyServiceImpl::StripeFor(const std::string& id) {
  return stripes_[std::hash<std::string>{}(id) % stripes_.size()];
}

void ProxyServiceImpl::HandleModelCall(ApiShape shape, const httplib::Request& req,
                                       httplib::Response& res) {
  ModelCall call;
  call.received = std::chrono::steady_clock::now();
  call.shape = shape;
  call.route = req.path;
  const ErrorStyle style = StyleFor(shape);
  std::optional<ClientScope> scope = Authorize(req, res, call.route, style);
  if (!scope.has_value()) return;
  Result<nlohmann::json> body = CheckBody(req.body);
  if (!body.ok()) {
    if (body.status().code() == StatusCode::kResourceExhausted)
      res.set_header("Connection", "close");
    Reply(res, call.route, body.status().code() == StatusCode::kResourceExhausted ? 413 : 400,
          style, body.status().message());
    return;
  }
  Result<RequestView> view = ReadRequest(shape, *body);
  if (!view.ok()) {
    Reply(res, call.route, 400, style, view.status().message());
    return;
  }
  call.stream = view->stream;
  call.model = view->model;
  call.workspace = scope->workspace;
  call.agent = HeaderOf(req, "X-Mend-Agent");
  const nlohmann::json* stream_options =
      body->contains("stream_options") ? &(*body)["stream_options"] : nullptr;
  const bool include_usage = stream_options != nullptr && stream_options->is_object() &&
                             stream_options->value("include_usage", false) == true;
  const std::string session = HeaderOf(req, "X-Mend-Session");
  call.conversation_id =
      session.empty() ? ConversationIdFor(call.workspace, view->system_text, view->first_user_text)
                      : SessionConversationId(call.workspace, session);
  std::string task = HeaderOf(req, "X-Mend-Task");
  if (task.empty()) task = view->first_user_text;
  const bool memory_on =
      options_.memory && deps_.memory != nullptr && HeaderOf(req, "X-Mend-Memory") != "off";
  ConversationTurn turn = UpdateConversation(call, *view, task, memory_on);
  EnqueueLessons(std::move(turn.lessons), call.workspace, HeaderOf(req, "traceparent"));

  if (options_.stop_after > 0 && turn.progress.repeats >= options_.stop_after) {
    res.set_header("X-Mend-No-Progress", "true");
    ReplyNoProgress(res, call, NoProgressMessage(turn.progress), include_usage);
    Count(call.route, res.status);
    return;
  }
  std::string addition = std::move(turn.section);
  if (options_.hint_after > 0 && turn.progress.repeats >= options_.hint_after) {
    if (!addition.empty()) addition += "\n\n";
    addition += ProgressHint(turn.progress);
  }
  if (addition.empty()) {
    call.body = req.body;
  } else {
    Result<std::string> edited = AppendToSystemPrompt(req.body, shape, addition);
    if (!edited.ok()) {
      Reply(res, call.route, 400, style, edited.status().message());
      return;
    }
    call.body = *std::move(edited);
  }
  Forward(req, res, std::move(call));
}

Result<nlohmann::json> ProxyServiceImpl::CheckBody(const std::string& body) const {
  if (body.size() > options_.max_body) {
    return ResourceExhaustedError("request body larger than proxy.max_body (" +
                                  std::to_string(options_.max_body) + " bytes)");
  }
  if (!IsValidUtf8(body)) return InvalidArgumentError("request body is not valid UTF-8");
  Result<nlohmann::json> parsed = ParseJson(body);
  if (!parsed.ok()) {
    return InvalidArgumentError("request body is not valid JSON: " +
                                std::string(parsed.status().message()));
  }
  if (!parsed->is_object()) return InvalidArgumentError("request body is not a JSON object");
  return parsed;
}

ConversationTurn ProxyServiceImpl::UpdateConversation(const ModelCall& call,
                                                      const RequestView& view,
                                                      const std::string& task, bool memory_on) {
  const Time now = deps_.clock->Now();
  ConversationTurn turn;
  std::lock_guard<std::mutex> lock(StripeFor(call.conversation_id));
  Conversation conversation;
  {
    // A row that cannot be read is started afresh: the conversation loses its past failures,
    // never its request.
    Result<std::optional<Conversation>> loaded = store_->Load(call.conversation_id, now);
    if (loaded.ok() && loaded->has_value()) conversation = std::move(**loaded);
  }
  const bool is_new = conversation.id.empty();
  if (is_new) {
    conversation.id = call.conversation_id;
    conversation.workspace = call.workspace;
    conversation.task = task;
    conversation.created_at = now;
  }
  const Conversation before = conversation;
  // A request without a task (above) has no conversation to learn in: its failures would be
  // lessons about nothing.
  const bool has_task = !Trim(conversation.task).empty();
  if (has_task) turn.progress = ObserveRequest(conversation, view, rules_, now);
  if (memory_on && !conversation.has_section) {
    // Without a task (a Responses continuation that carries only tool outputs) there is nothing
    // to recall for. A recall that fails leaves this request without the section; the next one
    // tries again.
    Result<std::string> recalled = has_task
                                       ? deps_.memory->SectionFor(conversation.task, call.workspace)
                                       : Result<std::string>(std::string());
    if (recalled.ok()) {
      conversation.section = *std::move(recalled);
      conversation.has_section = true;
    }
  }
  if (memory_on && conversation.has_section) turn.section = conversation.section;
  turn.lessons = TakeDueLessons(conversation, now, options_.lesson_after);
  // An unchanged conversation is written again only to keep it from expiring, at most once a
  // minute: most turns of a conversation cost the proxy one read.
  const bool stale = now - conversation.updated_at >= kRefreshInterval;
  if ((is_new || stale || !(conversation == before))) {
    conversation.updated_at = now;
    (void)store_->Save(conversation, options_.conversation_ttl);
  }
  return turn;
}

void ProxyServiceImpl::EnqueueLessons(std::vector<lessonq::LessonRequest> lessons,
                                      const std::string& workspace,
                                      const std::string& traceparent) {
  if (deps_.lessons == nullptr) return;
  for (lessonq::LessonRequest& lesson : lessons) {
    lesson.provider = deps_.lesson_provider;
    lesson.base_url = deps_.lesson_base_url;
    lesson.model = deps_.lesson_model;
    lesson.traceparent = traceparent;
    lesson.workspace = workspace;
    // The queue is durable and fast (one small file); a failure costs this lesson, never the
    // client's request.
    if (deps_.lessons->Enqueue(lesson).ok() && metrics_.lessons_enqueued != nullptr) {
      metrics_.lessons_enqueued->Inc();
    }
  }
}

void ProxyServiceImpl::AfterReply(const std::string& conversation_id, const ReplySummary& summary,
                                  const std::string& traceparent) {
  std::vector<lessonq::LessonRequest> lessons;
  std::string workspace;
  {
    std::lock_guard<std::mutex> lock(StripeFor(conversation_id));
    Result<std::optional<Conversation>> loaded = store_->Load(conversation_id, deps_.clock->Now());
    if (!loaded.ok() || !loaded->has_value()) return;
    Conversation conversation = std::move(**loaded);
    workspace = conversation.workspace;
    ObserveReply(conversation, summary.text, !summary.tool_calls.empty());
    lessons = TakeDueLessons(conversation, deps_.clock->Now(), options_.lesson_after);
    if (lessons.empty()) return;
    (void)store_->Save(conversation, options_.conversation_ttl);
  }
  EnqueueLessons(std::move(lessons), workspace, traceparent);
}

Status ProxyServiceImpl::Sweep() {
  const Time now = deps_.clock->Now();
  MEND_ASSIGN_OR_RETURN(std::vector<Conversation> open,
                        store_->WithOpenFailures(now - options_.lesson_after, kSweepBatch));
  for (const Conversation& found : open) {
    std::vector<lessonq::LessonRequest> lessons;
    {
      std::lock_guard<std::mutex> lock(StripeFor(found.id));
      // Read again under the lock: a request may have changed it since.
      Result<std::optional<Conversation>> loaded = store_->Load(found.id, now);
      if (!loaded.ok() || !loaded->has_value()) continue;
      Conversation conversation = std::move(**loaded);
      lessons = TakeDueLessons(conversation, now, options_.lesson_after);
      if (lessons.empty()) continue;
      MEND_RETURN_IF_ERROR(store_->Save(conversation, options_.conversation_ttl));
    }
    EnqueueLessons(std::move(lessons), found.workspace, "");
  }
  return store_->DeleteExpired(now).status();
}

void ProxyServiceImpl::StartSweeper() {
  std::lock_guard<std::mutex> lock(sweeper_mu_);
  if (sweeper_.joinable()) return;
  sweeper_stop_ = false;
  sweeper_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(sweeper_mu_);
    while (!sweeper_stop_) {
      deps_.clock->WaitUntil(sweeper_cv_, lock, deps_.clock->Now() + kSweepInterval,
                             [this] { return sweeper_stop_; });
      if (sweeper_stop_) break;
      lock.unlock();
      (void)Sweep();
      lock.lock();
    }
  });
}

void ProxyServiceImpl::StopSweeper() {
  std::thread sweeper;
  {
    std::lock_guard<std::mutex> lock(sweeper_mu_);
    sweeper_stop_ = true;
    sweeper = std::move(sweeper_);
  }
  sweeper_cv_.notify_all();
  if (sweeper.joinable()) sweeper.join();
}

}  // namespace mend::proxy
