#pragma once

// The proxy service's parts (service.cc: routes, checks, conversations; forward.cc: the upstream
// call, retries, the outage breaker and the stream relay; no_progress.cc: the answer that stops a
// loop).

#include <httplib.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mend/llm/outage_breaker.h"
#include "mend/obs/metrics.h"
#include "mend/obs/trace.h"
#include "mend/proxy/proxy.h"
#include "proxy/api_shape.h"
#include "proxy/conversation.h"
#include "proxy/errors.h"
#include "proxy/sse.h"
#include "proxy/upstream.h"

namespace mend::proxy {

// The mend_proxy_* metrics (docs/proxy.md); every member is null-safe through the helpers.
struct ProxyMetrics {
  obs::CounterFamily* requests = nullptr;  // {route, status}
  obs::Counter* retries = nullptr;
  obs::Histogram* upstream_seconds = nullptr;  // to the upstream's first byte of the reply
  obs::Histogram* added_seconds = nullptr;     // the proxy's own time before the upstream call
  obs::Gauge* open_streams = nullptr;
  obs::Counter* lessons_enqueued = nullptr;
  obs::Counter* client_aborts = nullptr;
  obs::Counter* breaker_rejections = nullptr;
};

// Who the client is: the memory scope of its conversations.
struct ClientScope {
  std::string workspace;
};

struct RelayState;

// The status a stream whose client went away is counted and traced with (nginx's convention).
inline constexpr int kClientClosedStatus = 499;

// What a request's conversation gives its model call.
struct ConversationTurn {
  ProgressView progress;
  std::string section;                          // the memory section ("" without memory)
  std::vector<lessonq::LessonRequest> lessons;  // due now
};

// What one model call carries from the checks to the upstream call.
struct ModelCall {
  ApiShape shape = ApiShape::kChatCompletions;
  std::string route;  // "/v1/chat/completions", ...
  std::string body;   // what goes upstream
  bool stream = false;
  std::string model;
  std::string conversation_id;
  std::string workspace;
  std::string agent;
  std::chrono::steady_clock::time_point received;
};

class ProxyServiceImpl final : public ProxyService {
 public:
  ProxyServiceImpl(ProxyOptions options, ProxyDeps deps, FailureRules rules,
                   std::unique_ptr<ConversationStore> store);
  ~ProxyServiceImpl() override;

  void Mount(httplib::Server& server) override;
  Status Sweep() override;
  void StartSweeper() override;
  void StopSweeper() override;
  const ProxyOptions& options() const override { return options_; }

 private:
  ErrorStyle StyleFor(ApiShape shape) const;
  ErrorStyle RouteStyle() const;
  void Reply(httplib::Response& res, const std::string& route, int status, ErrorStyle style,
             std::string_view message, std::string_view code = "");
  void Count(const std::string& route, int status);
  // The client's scope, or nullopt after answering 401.
  std::optional<ClientScope> Authorize(const httplib::Request& req, httplib::Response& res,
                                       const std::string& route, ErrorStyle style);

  void HandleModelCall(ApiShape shape, const httplib::Request& req, httplib::Response& res);
  // The body as JSON: kResourceExhausted over proxy.max_body, kInvalidArgument for one that is
  // not UTF-8, not JSON or not an object.
  Result<nlohmann::json> CheckBody(const std::string& body) const;
  // Loads (or starts) the call's conversation, records what its history shows, recalls the
  // memory section on its first request and takes the lessons due; saves it when it changed.
  ConversationTurn UpdateConversation(const ModelCall& call, const RequestView& view,
                                      const std::string& task, bool memory_on);
  void HandlePassThrough(const httplib::Request& req, httplib::Response& res);
  void HandleUnknown(const httplib::Request& req, httplib::Response& res);

  // Conversations: one lock per stripe, so requests of one conversation are serialised.
  std::mutex& StripeFor(const std::string& id);
  // Fills each lesson's provider, scope and trace, then enqueues it.
  void EnqueueLessons(std::vector<lessonq::LessonRequest> lessons, const std::string& workspace,
                      const std::string& traceparent);
  void AfterReply(const std::string& conversation_id, const ReplySummary& summary,
                  const std::string& traceparent);

  // forward.cc
  // The upstream request for `route` with `body`, the client's headers filtered and the
  // upstream's key (or the client's own) set.
  UpstreamRequest BuildUpstreamRequest(const httplib::Request& req, const std::string& method,
                                       const std::string& route, std::string body,
                                       const std::string& traceparent) const;
  // Sends with retries before the first byte; honours and feeds the outage breaker. A returned
  // call has its headers in; its status may be any. kUnavailable with a retry-after when the
  // breaker is open.
  Result<std::unique_ptr<UpstreamCall>> Send(const UpstreamRequest& request);
  void Forward(const httplib::Request& req, httplib::Response& res, ModelCall call);
  void PassUpstreamHeaders(const UpstreamCall& call, httplib::Response& res) const;
  // relay.cc
  void RelayStream(httplib::Response& res, ModelCall call, std::unique_ptr<UpstreamCall> upstream,
                   obs::Span span);
  // Relays until the upstream's reply ends (true) or the client is gone (false).
  bool PumpRelay(RelayState& state, httplib::DataSink& sink);
  void EndRelay(RelayState& state, httplib::DataSink& sink, const Status& read);
  // Once per stream: metrics, the span, the request count, the lessons of a complete reply.
  void FinishRelay(RelayState& state, bool client_gone);
  void FinishSpan(obs::Span& span, const ModelCall& call, const ReplySummary& summary, int status);

  // no_progress.cc
  void ReplyNoProgress(httplib::Response& res, const ModelCall& call, const std::string& message,
                       bool include_usage);

  ProxyOptions options_;
  ProxyDeps deps_;
  FailureRules rules_;
  std::unique_ptr<ConversationStore> store_;
  UpstreamPool pool_;
  ProxyMetrics metrics_;
  std::array<std::mutex, 64> stripes_;

  std::mutex breaker_mu_;
  llm::OutageBreaker breaker_;  // guarded by breaker_mu_
  bool probing_ = false;        // guarded by breaker_mu_

  std::mutex sweeper_mu_;
  std::condition_variable sweeper_cv_;
  bool sweeper_stop_ = false;  // guarded by sweeper_mu_
  std::thread sweeper_;
};

// Where a client's `route` (/v1/...) goes: the OpenAI upstream's base URL (as its SDK takes it,
// usually ending in /v1) + the route after /v1; the Anthropic upstream's host (a trailing /v1
// dropped) + the whole route.
std::string UpstreamUrl(UpstreamKind kind, std::string_view upstream, std::string_view route);

}  // namespace mend::proxy
