#include "tests/support/fake_llm_server.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/support/fake_llm_connections.h"
#include "tests/support/fake_llm_render.h"
#include "tests/support/fake_llm_routes.h"

namespace mend::testing {
namespace {

using fake_llm::Endpoint;
using fake_llm::RenderContext;
using Json = nlohmann::json;

constexpr char kJson[] = "application/json";
constexpr char kNonUtf8Marker[] = "@@MEND_NON_UTF8@@";

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// httplib adds the peer's address to the request headers; they were not sent by the client.
bool IsPseudoHeader(const std::string& name) {
  return name == "REMOTE_ADDR" || name == "REMOTE_PORT" || name == "LOCAL_ADDR" ||
         name == "LOCAL_PORT";
}

std::vector<std::string> EmbeddingInputs(const Json& input) {
  std::vector<std::string> inputs;
  if (input.is_string()) inputs.push_back(input.get<std::string>());
  if (input.is_array()) {
    for (const Json& item : input) {
      inputs.push_back(item.is_string() ? item.get<std::string>() : item.dump());
    }
  }
  return inputs;
}

// The raw bytes of a response whose body stops halfway although Content-Length promises all.
std::string TruncatedResponse(int status, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(fake_llm::ReasonPhrase(status)) +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body.substr(0, body.size() / 2);
}

// One streamed answer in flight. Only the thread serving its connection touches it.
struct StreamState {
  std::vector<std::string> events;
  int64_t pause_before = -1;        // index of the event before which the stream pauses; < 0: never
  int64_t pause_again_before = -1;  // a second such index, after pause_before; < 0: never
  size_t cut_before = std::numeric_limits<size_t>::max();  // index where stream_cut drops it
  size_t written = 0;                                      // events written successfully
  bool ended = false;    // ended on purpose (stream_cut, or released by stopping the server)
  bool settled = false;  // accounted for; every copy of an httplib::Response calls the releaser
};

// httplib's listen backlog is fixed at 5 when the library is built; a burst of concurrent clients
// would then see dropped SYNs and one-second retransmits. Listening again on the bound socket
// raises the backlog.
class Server : public httplib::Server {
 public:
  void RaiseBacklog() { ::listen(svr_sock_, 512); }
};

}  // namespace

std::string RecordedRequest::Header(const std::string& name) const {
  std::string wanted = Lower(name);
  for (const auto& [key, value] : headers) {
    if (Lower(key) == wanted) return value;
  }
  return "";
}

class FakeLlmServer::Impl {
 public:
  Impl() { default_.text = "ok"; }
  ~Impl() { Stop(); }

  Status Listen(const FakeLlmServerOptions& options);
  void Stop();

  int port() const { return port_; }
  void Enqueue(FakeResponse r) {
    std::lock_guard<std::mutex> lock(mu_);
    script_.push_back(std::move(r));
  }
  void SetDefault(FakeResponse r) {
    std::lock_guard<std::mutex> lock(mu_);
    default_ = std::move(r);
  }
  void AddRoute(FakeRoute route) {
    std::lock_guard<std::mutex> lock(mu_);
    routes_.Add(std::move(route));
  }
  void ClearRoutes() {
    std::lock_guard<std::mutex> lock(mu_);
    routes_.Clear();
  }
  int64_t RouteHits(std::string_view name) const {
    std::lock_guard<std::mutex> lock(mu_);
    return routes_.Hits(name);
  }
  void RequireApiKey(std::string key) {
    std::lock_guard<std::mutex> lock(mu_);
    api_key_ = std::move(key);
  }
  void SetRequestObserver(RequestObserver observer) {
    std::lock_guard<std::mutex> lock(mu_);
    observer_ = std::move(observer);
  }
  std::vector<RecordedRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  void ClearRequests() {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.clear();
  }
  int connection_count() const { return connections_.count(); }

  void ResumeStreams() {
    std::lock_guard<std::mutex> lock(mu_);
    ++resume_generation_;
    paused_ = 0;
    streams_cv_.notify_all();
  }
  size_t paused_streams() const {
    std::lock_guard<std::mutex> lock(mu_);
    return paused_;
  }
  size_t aborted_streams() const {
    std::lock_guard<std::mutex> lock(mu_);
    return aborted_;
  }
  bool WaitForPausedStreams(size_t n, std::chrono::milliseconds timeout) const {
    std::unique_lock<std::mutex> lock(mu_);
    return streams_cv_.wait_for(lock, timeout, [&] { return paused_ >= n; });
  }
  bool WaitForAbortedStreams(size_t n, std::chrono::milliseconds timeout) const {
    std::unique_lock<std::mutex> lock(mu_);
    return streams_cv_.wait_for(lock, timeout, [&] { return aborted_ >= n; });
  }

 private:
  void Handle(Endpoint endpoint, const httplib::Request& req, httplib::Response& res);
  void Record(const httplib::Request& req);
  bool Authorized(const httplib::Request& req) const;
  FakeResponse Next(const Json& request);
  void Wait(std::chrono::milliseconds latency);
  void Respond(Endpoint endpoint, const Json& request, const FakeResponse& r,
               httplib::Response& res);
  void RespondFault(Endpoint endpoint, const Json& request, const FakeResponse& r,
                    const RenderContext& context, bool streaming, httplib::Response& res);
  void RespondStream(Endpoint endpoint, const Json& request, const FakeResponse& r,
                     const RenderContext& context, bool cut, httplib::Response& res);
  bool WriteStream(StreamState& stream, httplib::DataSink& sink);
  bool PauseStream();
  void SettleStream(StreamState& stream);

  Server server_;
  fake_llm::Connections connections_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> listen_returned_{false};
  std::atomic<int64_t> sequence_{0};

  mutable std::mutex mu_;
  std::condition_variable stopping_cv_;
  bool stopping_ = false;
  // Paused and aborted streams; notified whenever paused_, aborted_, resume_generation_ or
  // stopping_ change.
  mutable std::condition_variable streams_cv_;
  uint64_t resume_generation_ = 0;  // ResumeStreams calls so far
  size_t paused_ = 0;               // streams paused in the current generation
  size_t aborted_ = 0;
  fake_llm::Routes routes_;
  std::deque<FakeResponse> script_;
  FakeResponse default_;
  std::string api_key_;
  std::vector<RecordedRequest> requests_;
  RequestObserver observer_;
};

Status FakeLlmServer::Impl::Listen(const FakeLlmServerOptions& options) {
  size_t threads = static_cast<size_t>(std::max(1, options.worker_threads));
  server_.new_task_queue = [this, threads] { return connections_.NewTaskQueue(threads); };
  server_.set_keep_alive_max_count(1000000);
  server_.set_tcp_nodelay(true);
  // httplib's default also sets SO_REUSEPORT, which would let a second server share a fixed port.
  server_.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  auto route = [this](Endpoint endpoint) {
    return [this, endpoint](const httplib::Request& req, httplib::Response& res) {
      Handle(endpoint, req, res);
    };
  };
  server_.Post("/v1/chat/completions", route(Endpoint::kChatCompletions));
  server_.Post("/v1/responses", route(Endpoint::kResponses));
  server_.Post("/v1/messages", route(Endpoint::kMessages));
  server_.Post("/v1/embeddings", route(Endpoint::kEmbeddings));
  server_.Get("/v1/models", route(Endpoint::kModels));
  server_.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.status != 404 || !res.body.empty()) return;
    FakeResponse r;
    r.error_message = "no such endpoint";
    res.set_content(fake_llm::RenderError(Endpoint::kChatCompletions, 404, r), kJson);
  });
  if (options.port == 0) {
    port_ = server_.bind_to_any_port("127.0.0.1");
  } else {
    port_ = server_.bind_to_port("127.0.0.1", options.port) ? options.port : -1;
  }
  if (port_ <= 0) return UnavailableError("fake LLM server: cannot bind 127.0.0.1");
  server_.RaiseBacklog();
  thread_ = std::thread([this] {
    server_.listen_after_bind();
    listen_returned_ = true;
  });
  // The socket already queues connections; waiting for the accept loop only guarantees that
  // stop() finds it running.
  while (!server_.is_running() && !listen_returned_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!server_.is_running()) return UnavailableError("fake LLM server: accept loop failed");
  return OkStatus();
}

void FakeLlmServer::Impl::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    paused_ = 0;
  }
  stopping_cv_.notify_all();
  streams_cv_.notify_all();
  server_.stop();
  connections_.CloseAll();
  if (thread_.joinable()) thread_.join();
}

void FakeLlmServer::Impl::Handle(Endpoint endpoint, const httplib::Request& req,
                                 httplib::Response& res) {
  connections_.Attach(req.local_port, req.remote_port);
  Record(req);
  FakeResponse r;
  r.error_message = "Incorrect API key provided.";
  if (!Authorized(req)) {
    res.status = 401;
    res.set_content(fake_llm::RenderError(endpoint, 401, r), kJson);
    return;
  }
  if (endpoint == Endpoint::kModels) {
    res.set_content(fake_llm::RenderModels(), kJson);
    return;
  }
  Json request = Json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (!request.is_object()) {
    r.error_message = "We could not parse the JSON body of your request.";
    res.status = 400;
    res.set_content(fake_llm::RenderError(endpoint, 400, r), kJson);
    return;
  }
  r = Next(request);
  Wait(r.latency);
  Respond(endpoint, request, r, res);
}

void FakeLlmServer::Impl::Record(const httplib::Request& req) {
  RecordedRequest recorded;
  recorded.method = req.method;
  recorded.path = req.path;
  recorded.body = req.body;
  recorded.connection_id = fake_llm::Connections::CurrentId();
  for (const auto& [name, value] : req.headers) {
    if (!IsPseudoHeader(name)) recorded.headers.emplace_back(name, value);
  }
  RequestObserver observer;
  {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(recorded);
    observer = observer_;
  }
  if (observer) observer(recorded);
}

bool FakeLlmServer::Impl::Authorized(const httplib::Request& req) const {
  std::string key;
  {
    std::lock_guard<std::mutex> lock(mu_);
    key = api_key_;
  }
  if (key.empty()) return true;
  return req.get_header_value("Authorization") == "Bearer " + key ||
         req.get_header_value("x-api-key") == key;
}

FakeResponse FakeLlmServer::Impl::Next(const Json& request) {
  bool routed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    routed = !routes_.empty();
  }
  // The texts are decoded outside the lock: large requests must not serialise the others.
  std::vector<std::string> texts;
  if (routed) texts = fake_llm::RequestTexts(request);
  std::lock_guard<std::mutex> lock(mu_);
  if (routed) {
    if (std::optional<FakeResponse> answer = routes_.Answer(texts, default_)) return *answer;
  }
  if (script_.empty()) return default_;
  FakeResponse r = std::move(script_.front());
  script_.pop_front();
  return r;
}

// A simulated slow model; stopping the server cuts the wait short.
void FakeLlmServer::Impl::Wait(std::chrono::milliseconds latency) {
  if (latency <= std::chrono::milliseconds(0)) return;
  std::unique_lock<std::mutex> lock(mu_);
  stopping_cv_.wait_for(lock, latency, [this] { return stopping_; });
}

void FakeLlmServer::Impl::Respond(Endpoint endpoint, const Json& request, const FakeResponse& r,
                                  httplib::Response& res) {
  RenderContext context;
  context.sequence = ++sequence_;
  const Json* model = request.contains("model") ? &request["model"] : nullptr;
  context.model = model != nullptr && model->is_string() ? model->get<std::string>() : "fake-model";
  if (endpoint == Endpoint::kEmbeddings) {
    context.inputs = EmbeddingInputs(request.contains("input") ? request["input"] : Json());
    context.base64 = request.value("encoding_format", Json()) == "base64";
  }
  if (endpoint == Endpoint::kResponses) context.request = request;
  const Json* stream = request.contains("stream") ? &request["stream"] : nullptr;
  const bool streaming = stream != nullptr && stream->is_boolean() && stream->get<bool>() &&
                         endpoint != Endpoint::kEmbeddings;
  if (r.retry_after_seconds) {
    res.set_header("Retry-After", std::to_string(*r.retry_after_seconds));
  }
  res.status = r.status;
  if (r.fault != FakeResponse::Fault::kNone) {
    return RespondFault(endpoint, request, r, context, streaming, res);
  }
  if (!r.raw_body.empty()) return res.set_content(r.raw_body, kJson);
  if (r.status >= 400) return res.set_content(fake_llm::RenderError(endpoint, r.status, r), kJson);
  if (streaming) return RespondStream(endpoint, request, r, context, /*cut=*/false, res);
  res.set_content(fake_llm::RenderSuccess(endpoint, r, context), kJson);
}

void FakeLlmServer::Impl::RespondFault(Endpoint endpoint, const Json& request,
                                       const FakeResponse& r, const RenderContext& context,
                                       bool streaming, httplib::Response& res) {
  switch (r.fault) {
    case FakeResponse::Fault::kNone:
      break;
    case FakeResponse::Fault::kMalformedJson:
      return res.set_content(R"({"id": "chatcmpl-broken", "choices": [{"index": 0, "mess)", kJson);
    case FakeResponse::Fault::kStreamCut:
      if (streaming) return RespondStream(endpoint, request, r, context, /*cut=*/true, res);
      [[fallthrough]];
    case FakeResponse::Fault::kTruncatedBody:
      return connections_.SendAndDrop(
          TruncatedResponse(r.status, fake_llm::RenderSuccess(endpoint, r, context)));
    case FakeResponse::Fault::kHtmlErrorPage:
      res.status = r.status >= 400 ? r.status : 502;
      return res.set_content(fake_llm::RenderHtmlErrorPage(res.status), "text/html");
    case FakeResponse::Fault::kDropConnection:
      return connections_.Drop();
    case FakeResponse::Fault::kEmptyBody:
      return res.set_content("", kJson);
    case FakeResponse::Fault::kNonUtf8: {
      FakeResponse marked = r;
      marked.text += kNonUtf8Marker;
      std::string body = fake_llm::RenderSuccess(endpoint, marked, context);
      size_t at = body.find(kNonUtf8Marker);
      if (at != std::string::npos) body.replace(at, sizeof(kNonUtf8Marker) - 1, "caf\xC3 \xFF\xFE");
      return res.set_content(body, kJson);
    }
    case FakeResponse::Fault::kOversizedBody: {
      FakeResponse padded = r;
      size_t base = fake_llm::RenderSuccess(endpoint, padded, context).size();
      if (r.oversize_bytes > base) padded.text.append(r.oversize_bytes - base, 'x');
      return res.set_content(fake_llm::RenderSuccess(endpoint, padded, context), kJson);
    }
  }
}

void FakeLlmServer::Impl::RespondStream(Endpoint endpoint, const Json& request,
                                        const FakeResponse& r, const RenderContext& context,
                                        bool cut, httplib::Response& res) {
  const Json* options = request.contains("stream_options") ? &request["stream_options"] : nullptr;
  bool include_usage = options != nullptr && options->is_object() &&
                       options->value("include_usage", Json(false)) == Json(true);
  auto stream = std::make_shared<StreamState>();
  stream->events = fake_llm::RenderStream(endpoint, r, context, include_usage);
  stream->pause_before = r.pause_after_events;
  if (r.pause_again_after_events > r.pause_after_events) {
    stream->pause_again_before = r.pause_again_after_events;
  }
  if (cut) stream->cut_before = std::max<size_t>(1, stream->events.size() / 2);
  res.set_header("Cache-Control", "no-cache");
  // httplib runs both on the thread serving this connection: the provider once, after the headers
  // are sent; the releaser when the response is destroyed, after the provider has returned.
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, stream](size_t, httplib::DataSink& sink) { return WriteStream(*stream, sink); },
      [this, stream](bool) { SettleStream(*stream); });
}

// Writes the events in one call, pausing and cutting where scripted. False ends the response
// without the chunked terminator, and httplib then closes the connection.
bool FakeLlmServer::Impl::WriteStream(StreamState& stream, httplib::DataSink& sink) {
  const std::vector<std::string>& events = stream.events;
  for (size_t i = stream.written; i <= events.size(); ++i) {
    const bool pause =
        (stream.pause_before >= 0 && i == static_cast<size_t>(stream.pause_before)) ||
        (stream.pause_again_before >= 0 && i == static_cast<size_t>(stream.pause_again_before));
    if (pause && !PauseStream()) {
      stream.ended = true;
      return false;
    }
    if (i == stream.cut_before) {
      stream.ended = true;
      connections_.Drop();
      return false;
    }
    if (i == events.size()) break;
    if (!sink.write(events[i].data(), events[i].size())) return false;
    stream.written = i + 1;
  }
  sink.done();
  return true;
}

// Waits for the next ResumeStreams; false when the server stops first.
bool FakeLlmServer::Impl::PauseStream() {
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) return false;
  const uint64_t generation = resume_generation_;
  ++paused_;
  streams_cv_.notify_all();
  streams_cv_.wait(lock, [&] { return stopping_ || resume_generation_ != generation; });
  return !stopping_;
}

// Counts the stream as aborted when it neither wrote its last event nor ended on purpose. This
// also covers a connection httplib found unwritable before asking for the first event.
void FakeLlmServer::Impl::SettleStream(StreamState& stream) {
  if (stream.settled) return;
  stream.settled = true;
  if (stream.ended || stream.written == stream.events.size()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  ++aborted_;
  streams_cv_.notify_all();
}

FakeLlmServer::FakeLlmServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FakeLlmServer::~FakeLlmServer() = default;

Result<std::unique_ptr<FakeLlmServer>> FakeLlmServer::Start() {
  return Start(FakeLlmServerOptions{});
}

Result<std::unique_ptr<FakeLlmServer>> FakeLlmServer::Start(const FakeLlmServerOptions& options) {
  auto impl = std::make_unique<Impl>();
  MEND_RETURN_IF_ERROR(impl->Listen(options));
  return std::unique_ptr<FakeLlmServer>(new FakeLlmServer(std::move(impl)));
}

int FakeLlmServer::port() const { return impl_->port(); }
std::string FakeLlmServer::base_url() const {
  return "http://127.0.0.1:" + std::to_string(impl_->port());
}
void FakeLlmServer::Enqueue(FakeResponse response) { impl_->Enqueue(std::move(response)); }
void FakeLlmServer::SetDefault(FakeResponse response) { impl_->SetDefault(std::move(response)); }
void FakeLlmServer::AddRoute(FakeRoute route) { impl_->AddRoute(std::move(route)); }
void FakeLlmServer::ClearRoutes() { impl_->ClearRoutes(); }
int64_t FakeLlmServer::RouteHits(std::string_view name) const { return impl_->RouteHits(name); }
void FakeLlmServer::RequireApiKey(std::string key) { impl_->RequireApiKey(std::move(key)); }
void FakeLlmServer::SetRequestObserver(RequestObserver observer) {
  impl_->SetRequestObserver(std::move(observer));
}
std::vector<RecordedRequest> FakeLlmServer::requests() const { return impl_->requests(); }
size_t FakeLlmServer::request_count() const { return impl_->requests().size(); }
int FakeLlmServer::connection_count() const { return impl_->connection_count(); }
void FakeLlmServer::ClearRequests() { impl_->ClearRequests(); }
void FakeLlmServer::ResumeStreams() { impl_->ResumeStreams(); }
size_t FakeLlmServer::paused_streams() const { return impl_->paused_streams(); }
bool FakeLlmServer::WaitForPausedStreams(size_t n, std::chrono::milliseconds timeout) const {
  return impl_->WaitForPausedStreams(n, timeout);
}
size_t FakeLlmServer::aborted_streams() const { return impl_->aborted_streams(); }
bool FakeLlmServer::WaitForAbortedStreams(size_t n, std::chrono::milliseconds timeout) const {
  return impl_->WaitForAbortedStreams(n, timeout);
}

}  // namespace mend::testing
