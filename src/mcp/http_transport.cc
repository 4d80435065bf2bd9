// The Streamable HTTP transport (docs/mcp.md, "Streamable HTTP"), on libcurl.
//
// Every message is one POST on a thread of its own, so that a long tool call does not hold up the
// messages sent after it. Each thread drives its transfer through a curl multi handle, which
// Close can wake at once (curl_multi_wakeup) rather than waiting for a progress callback. Idle
// handles go back to a small pool: a multi handle keeps its connections open, so consecutive
// messages reuse one connection (and TLS session) instead of opening a new one each.

#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "mcp/sse_reader.h"
#include "mend/base/json.h"
#include "mend/base/utf8.h"
#include "mend/mcp/jsonrpc.h"
#include "mend/mcp/transport.h"

namespace mend::mcp {
namespace {

using SteadyClock = std::chrono::steady_clock;
using json = nlohmann::json;

constexpr size_t kErrorBodyBytes = 200;
constexpr size_t kMaxSessionIdBytes = 1024;
constexpr size_t kIdleHandles = 4;
constexpr int kPollMillis = 1000;
constexpr auto kDeleteTimeout = std::chrono::seconds(2);

// CURLOPT_NOSIGNAL makes libcurl send with MSG_NOSIGNAL, but a TLS library may write to a socket
// the server closed on its own. Blocked, a SIGPIPE stays pending on the worker thread that raised
// it and is discarded when that thread ends, instead of killing mend.
void BlockSigpipe() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool IsVisibleAscii(std::string_view s) {
  for (char c : s) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

// A header name as RFC 9110 allows it (a token).
bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum && std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// The media type of a Content-Type value, lowercase and without parameters.
std::string MediaType(std::string_view content_type) {
  return ToLowerAscii(Trim(content_type.substr(0, content_type.find(';'))));
}

std::string UrlPart(CURLU* url, CURLUPart part) {
  char* text = nullptr;
  if (curl_url_get(url, part, &text, 0) != CURLUE_OK || text == nullptr) return "";
  std::string value(text);
  curl_free(text);
  return value;
}

// scheme://host[:port]/path: the URL without userinfo, query or fragment, which may hold secrets.
Result<std::string> PublicUrl(const std::string& url) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> parsed(curl_url(), &curl_url_cleanup);
  if (parsed == nullptr) return ResourceExhaustedError("cannot parse a URL: out of memory");
  if (curl_url_set(parsed.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) {
    return InvalidArgumentError("the MCP server's URL is not a valid absolute URL");
  }
  const std::string scheme = ToLowerAscii(UrlPart(parsed.get(), CURLUPART_SCHEME));
  const std::string host = UrlPart(parsed.get(), CURLUPART_HOST);
  if ((scheme != "http" && scheme != "https") || host.empty()) {
    return InvalidArgumentError("the MCP server's URL must be http:// or https:// with a host");
  }
  const std::string port = UrlPart(parsed.get(), CURLUPART_PORT);
  return scheme + "://" + host + (port.empty() ? "" : ":" + port) +
         UrlPart(parsed.get(), CURLUPART_PATH);
}

Status CheckHeaders(const HttpOptions& options) {
  static constexpr std::string_view kOwn[] = {"accept",
                                              "content-type",
                                              "content-length",
                                              "mcp-session-id",
                                              "mcp-protocol-version",
                                              "last-event-id",
                                              "host",
                                              "expect",
                                              "transfer-encoding",
                                              "connection"};
  for (const auto& [name, value] : options.headers) {
    if (!IsToken(name)) {
      return InvalidArgumentError("an HTTP header name must be a token: \"" +
                                  SanitizeUtf8(TruncateUtf8Bytes(name, 64)) + "\"");
    }
    for (std::string_view own : kOwn) {
      if (ToLowerAscii(name) == own) {
        return InvalidArgumentError("the header " + name + " is the transport's to set");
      }
    }
    if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
      return InvalidArgumentError("the value of header " + name +
                                  " holds a line break or NUL");  // never the value itself
    }
  }
  return OkStatus();
}

// The status for an answer with an HTTP error status; `head` is the start of its body.
Status HttpError(const std::string& what, long status, const std::string& head,
                 bool carried_session) {
  std::string text = what + " answered HTTP " + std::to_string(status);
  const std::string body = SanitizeUtf8(TruncateUtf8Bytes(head, kErrorBodyBytes));
  if (!body.empty()) text += ": " + body;
  if (status == 401 || status == 403) return UnauthenticatedError(text);
  if (status == 404 && carried_session) {
    return UnavailableError(text + " (the server ended the session)");
  }
  if (status == 429) return ResourceExhaustedError(text);
  if (status >= 500) return UnavailableError(text);
  return InvalidArgumentError(text);
}

// One message to post, and what is known of it.
struct Job {
  std::string message;
  uint64_t seq = 0;
  bool is_request = false;
  json id;              // a request's id
  std::string id_text;  // the id as JSON, for messages
  SteadyClock::time_point deadline;
};

enum class Method { kPost, kGet, kDelete };

class HttpTransport;
enum class Body { kNone, kError, kJson, kSse, kOther };

// One HTTP exchange: the state libcurl's callbacks fill in.
struct Exchange {
  explicit Exchange(const Job* job) : job(job) {}

  const Job* job;
  CURL* curl = nullptr;
  HttpTransport* transport = nullptr;
  bool carried_session = false;  // whether the request sent Mcp-Session-Id
  long status = 0;               // 0 until the answer's headers are in
  std::string media_type;
  Body body = Body::kNone;
  std::string content;  // kJson: the message; kError, kOther: the start of the body
  SseReader sse{kMaxMessageBytes};
  bool answered = false;  // the response to the job's request was delivered
  bool stopped = false;   // the body was cut short on purpose
  Status failed;          // what the callbacks found wrong
  std::string session_header;
  bool has_session_header = false;
  std::string error;  // libcurl's description of a failed transfer
};

// A transfer's handles, pooled between messages.
struct Handles {
  CURLM* multi = nullptr;
  CURL* easy = nullptr;
};

class HttpTransport final : public Transport {
 public:
  HttpTransport(HttpOptions options, std::string public_url)
      : options_(std::move(options)), public_url_(std::move(public_url)) {}
  ~HttpTransport() override { Close(); }

  Status Start(MessageFn on_message, ClosedFn on_closed) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (started_) return FailedPreconditionError("the transport was started already");
    if (closed_) return UnavailableError("the transport to " + public_url_ + " is closed");
    on_message_ = std::move(on_message);
    on_closed_ = std::move(on_closed);
    started_ = true;
    return OkStatus();
  }

  Status Send(const std::string& message) override;
  void Close() override;

  std::string Describe() const override { return public_url_; }
  std::string SessionId() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return session_id_;
  }
  void SetProtocolVersion(const std::string& version) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (IsVisibleAscii(version)) protocol_version_ = version;
  }

  static size_t OnHeader(char* data, size_t size, size_t count, void* user);
  static size_t OnBody(char* data, size_t size, size_t count, void* user);

 private:
  struct Worker {
    std::thread thread;
    bool done = false;  // guarded by mu_
  };

  void Run(const Job& job);
  Status Post(const Job& job);
  Status Resume(const Job& job, const Exchange& first);
  CURLcode Perform(Method method, const Job& job, const std::string& last_event_id, Exchange& ex);
  CURLcode Drive(Handles& handles);
  curl_slist* Headers(Method method, const std::string& last_event_id, bool* carried_session);
  Status Judge(const Exchange& ex, CURLcode code, const std::string& what);
  void BeginBody(Exchange& ex);
  void OnEvent(Exchange& ex, SseEvent event);
  void Deliver(std::string message);
  void Fail(const Status& why);
  void AbortTransfers();
  void SendDelete();

  Handles Acquire();
  void Release(Handles handles);

  const HttpOptions options_;
  const std::string public_url_;
  MessageFn on_message_;  // set by Start, before any thread that reads it
  ClosedFn on_closed_;

  mutable std::mutex mu_;
  std::condition_variable cv_;  // notes_in_flight_ shrank, or abort_ was set
  std::atomic<bool> abort_{false};
  bool started_ = false;                // guarded by mu_
  bool closed_ = false;                 // guarded by mu_
  Status broken_;                       // guarded by mu_
  bool session_gone_ = false;           // guarded by mu_
  std::string session_id_;              // guarded by mu_
  std::string protocol_version_;        // guarded by mu_
  uint64_t next_seq_ = 1;               // guarded by mu_
  std::set<uint64_t> notes_in_flight_;  // guarded by mu_
  std::list<Worker> workers_;           // guarded by mu_
  std::set<CURLM*> active_;             // guarded by mu_
  std::vector<Handles> idle_;           // guarded by mu_

  std::mutex deliver_mu_;  // held while a callback runs
  bool silenced_ = false;  // guarded by deliver_mu_: no callback runs any more
};

Status HttpTransport::Send(const std::string& message) {
  Result<RpcMessage> parsed = ParseRpcMessage(message);
  if (!parsed.ok()) return parsed.status();
  auto job = std::make_unique<Job>();
  job->message = message;
  job->is_request = parsed->kind == RpcMessage::Kind::kRequest;
  job->id = parsed->id;
  job->id_text = DumpJson(parsed->id);
  job->deadline = SteadyClock::now() + options_.request_timeout;
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_ || closed_) {
    return UnavailableError("the transport to " + public_url_ + " is closed");
  }
  if (!broken_.ok()) return UnavailableError(broken_.message());
  // Threads that finished are joined here, so a long session does not pile them up.
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (!it->done) {
      ++it;
      continue;
    }
    it->thread.join();
    it = workers_.erase(it);
  }
  job->seq = next_seq_++;
  if (!job->is_request) notes_in_flight_.insert(job->seq);
  Worker& worker = workers_.emplace_back();
  try {
    worker.thread = std::thread([this, job = std::move(job), &worker] {
      BlockSigpipe();
      Run(*job);
      std::lock_guard<std::mutex> done(mu_);
      worker.done = true;
    });
  } catch (const std::system_error& e) {
    workers_.pop_back();
    notes_in_flight_.erase(next_seq_ - 1);
    cv_.notify_all();
    return ResourceExhaustedError(std::string("cannot start a thread to post a message: ") +
                                  e.what());
  }
  return OkStatus();
}

void HttpTransport::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
  }
  {
    // Waits for a callback that is running; none starts after this.
    std::lock_guard<std::mutex> lock(deliver_mu_);
    silenced_ = true;
  }
  AbortTransfers();
  std::list<Worker> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers.splice(workers.end(), workers_);
  }
  for (Worker& worker : workers) worker.thread.join();
  SendDelete();
  std::lock_guard<std::mutex> lock(mu_);
  for (Handles& handles : idle_) {
    curl_easy_cleanup(handles.easy);
    curl_multi_cleanup(handles.multi);
  }
  idle_.clear();
}

void HttpTransport::Run(const Job& job) {
  {
    // A notification or response waits for those before it, so that the server sees them in
    // the order they were sent; a request waits for them too, but never for another request.
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] {
      return abort_.load() || notes_in_flight_.empty() || *notes_in_flight_.begin() >= job.seq;
    });
  }
  Status outcome = abort_.load() ? OkStatus() : Post(job);
  if (!job.is_request) {
    std::lock_guard<std::mutex> lock(mu_);
    notes_in_flight_.erase(job.seq);
    cv_.notify_all();
  }
  if (!outcome.ok()) Fail(outcome);
}

Status HttpTransport::Post(const Job& job) {
  Exchange ex(&job);
  const CURLcode code = Perform(Method::kPost, job, "", ex);
  MEND_RETURN_IF_ERROR(Judge(ex, code, "POST " + public_url_));
  const std::string what = "the answer to request " + job.id_text;
  switch (ex.body) {
    case Body::kSse:
      return ex.answered || !job.is_request ? OkStatus() : Resume(job, ex);
    case Body::kJson:
      // A notification or response is answered with 202 and nothing else; a body some servers
      // send anyway (an empty result, without an id) answers nothing, so it is not delivered.
      if (!job.is_request) return OkStatus();
      if (ex.content.empty()) return UnavailableError(what + " is empty");
      Deliver(std::move(ex.content));
      return OkStatus();
    default:
      if (!job.is_request) return OkStatus();
      return UnavailableError(
          "POST " + public_url_ + " answered request " + job.id_text + " with HTTP " +
          std::to_string(ex.status) + " and " +
          (ex.media_type.empty() ? "no message" : "Content-Type " + ex.media_type) +
          " instead of application/json or text/event-stream");
  }
}

// Follows a request's broken event stream with GETs carrying Last-Event-ID until the response
// arrives. Servers may close a stream on purpose and expect the client to come back after
// "retry" (MCP 2025-11-25), so only resumptions that bring nothing new count against the limit.
Status HttpTransport::Resume(const Job& job, const Exchange& first) {
  std::string last_id = first.sse.last_event_id();
  std::optional<std::chrono::milliseconds> retry = first.sse.retry();
  std::string detail = first.error;
  int fruitless = 0;
  for (;;) {
    if (abort_.load()) return OkStatus();
    std::string text = "the server's stream for request " + job.id_text + " broke off";
    if (!detail.empty()) text += " (" + detail + ")";
    if (last_id.empty()) {
      return UnavailableError(text + " and cannot be resumed: it had no event id");
    }
    if (fruitless >= options_.max_resumptions) {
      return UnavailableError(text + "; " + std::to_string(fruitless) +
                              " resumptions in a row brought nothing new");
    }
    if (SteadyClock::now() >= job.deadline) {
      return DeadlineExceededError("request " + job.id_text + " got no answer within " +
                                   std::to_string(options_.request_timeout.count()) + " ms");
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      const auto wake =
          std::min(job.deadline, SteadyClock::now() + retry.value_or(std::chrono::milliseconds(0)));
      if (cv_.wait_until(lock, wake, [&] { return abort_.load(); })) return OkStatus();
    }
    ++fruitless;
    Exchange ex(&job);
    const CURLcode code = Perform(Method::kGet, job, last_id, ex);
    MEND_RETURN_IF_ERROR(Judge(ex, code, "GET " + public_url_ + " (resuming a stream)"));
    if (ex.body != Body::kSse) {
      return UnavailableError(
          "GET " + public_url_ + " answered a resumption with " +
          (ex.media_type.empty() ? "no event stream" : "Content-Type " + ex.media_type));
    }
    if (ex.answered) return OkStatus();
    if (!ex.sse.last_event_id().empty() && ex.sse.last_event_id() != last_id) {
      last_id = ex.sse.last_event_id();
      fruitless = 0;
    }
    if (ex.sse.retry().has_value()) retry = ex.sse.retry();
    detail = ex.error;
  }
}

// Whether the finished exchange failed in a way that is not an event stream's end, which the
// caller judges.
Status HttpTransport::Judge(const Exchange& ex, CURLcode code, const std::string& what) {
  if (!ex.failed.ok()) return ex.failed;
  if (ex.status != 0 && (ex.status < 200 || ex.status >= 300)) {
    if (ex.status == 404 && ex.carried_session) {
      std::lock_guard<std::mutex> lock(mu_);
      session_gone_ = true;
    }
    return HttpError(what, ex.status, ex.content, ex.carried_session);
  }
  if (ex.body == Body::kSse || code == CURLE_OK || ex.stopped) return OkStatus();
  if (code == CURLE_OPERATION_TIMEDOUT && ex.status != 0) {
    return DeadlineExceededError(what + ": no complete answer within " +
                                 std::to_string(options_.request_timeout.count()) + " ms");
  }
  return UnavailableError(what + ": " + ex.error);
}

CURLcode HttpTransport::Perform(Method method, const Job& job, const std::string& last_event_id,
                                Exchange& ex) {
  curl_slist* headers = Headers(method, last_event_id, &ex.carried_session);
  Handles handles = Acquire();
  if (headers == nullptr || handles.easy == nullptr) {
    curl_slist_free_all(headers);
    Release(handles);
    ex.error = "out of memory";
    return CURLE_OUT_OF_MEMORY;
  }
  CURL* curl = handles.easy;
  char errbuf[CURL_ERROR_SIZE] = {0};
  ex.curl = curl;
  ex.transport = this;
  const auto timeout =
      std::max(std::chrono::ceil<std::chrono::milliseconds>(job.deadline - SteadyClock::now()),
               std::chrono::milliseconds(1));
  curl_easy_setopt(curl, CURLOPT_URL, options_.url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM, no SIGPIPE: safe in threads
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min(options_.connect_timeout, timeout).count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &HttpTransport::OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &HttpTransport::OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &ex);
  if (method == Method::kPost) {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, job.message.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(job.message.size()));
  }
  const CURLcode code = Drive(handles);
  if (code != CURLE_OK) ex.error = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(code);
  BeginBody(ex);
  curl_slist_free_all(headers);
  Release(handles);
  return code;
}

// Runs the transfer on its multi handle until it ends or the transport aborts it.
CURLcode HttpTransport::Drive(Handles& handles) {
  if (curl_multi_add_handle(handles.multi, handles.easy) != CURLM_OK) return CURLE_FAILED_INIT;
  {
    std::lock_guard<std::mutex> lock(mu_);
    active_.insert(handles.multi);
  }
  CURLcode result = CURLE_ABORTED_BY_CALLBACK;
  while (!abort_.load()) {
    int running = 0;
    if (curl_multi_perform(handles.multi, &running) != CURLM_OK) {
      result = CURLE_FAILED_INIT;
      break;
    }
    if (running == 0) {
      int left = 0;
      CURLMsg* msg = curl_multi_info_read(handles.multi, &left);
      result = msg != nullptr && msg->msg == CURLMSG_DONE ? msg->data.result : CURLE_RECV_ERROR;
      break;
    }
    curl_multi_poll(handles.multi, nullptr, 0, kPollMillis, nullptr);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    active_.erase(handles.multi);
  }
  curl_multi_remove_handle(handles.multi, handles.easy);
  return result;
}

curl_slist* HttpTransport::Headers(Method method, const std::string& last_event_id,
                                   bool* carried_session) {
  std::vector<std::string> lines;
  if (method == Method::kPost) {
    lines.push_back("Content-Type: application/json");
    lines.push_back("Accept: application/json, text/event-stream");
  } else if (method == Method::kGet) {
    lines.push_back("Accept: text/event-stream");
    lines.push_back("Last-Event-ID: " + last_event_id);
  }
  lines.push_back("Expect:");  // no "100-continue" round trip before a large body
  for (const auto& [name, value] : options_.headers) {
    // libcurl drops a header with an empty value unless it is written "Name;".
    lines.push_back(value.empty() ? name + ";" : name + ": " + value);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    *carried_session = !session_id_.empty();
    if (!session_id_.empty()) lines.push_back("Mcp-Session-Id: " + session_id_);
    if (!protocol_version_.empty()) lines.push_back("MCP-Protocol-Version: " + protocol_version_);
  }
  curl_slist* list = nullptr;
  for (const std::string& line : lines) {
    curl_slist* next = curl_slist_append(list, line.c_str());
    if (next == nullptr) {
      curl_slist_free_all(list);
      return nullptr;
    }
    list = next;
  }
  return list;
}

size_t HttpTransport::OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const size_t n = size * count;
  const std::string_view line(data, n);
  const size_t colon = line.find(':');
  if (line.substr(0, 5) == "HTTP/") {
    // A new status line (after "100 Continue") starts a new set of headers.
    ex->has_session_header = false;
    ex->session_header.clear();
  } else if (colon != std::string_view::npos &&
             ToLowerAscii(line.substr(0, colon)) == "mcp-session-id") {
    ex->has_session_header = true;
    ex->session_header = std::string(Trim(line.substr(colon + 1)));
  }
  return n;
}

// Runs once, at the first byte of the body or at the end of a transfer without one: the status
// and type of the answer decide what its body is, and a 2xx answer's session is adopted before
// any of its messages is delivered.
void HttpTransport::BeginBody(Exchange& ex) {
  if (ex.body != Body::kNone) return;
  curl_easy_getinfo(ex.curl, CURLINFO_RESPONSE_CODE, &ex.status);
  if (ex.status == 0) return;
  char* type = nullptr;
  curl_easy_getinfo(ex.curl, CURLINFO_CONTENT_TYPE, &type);
  ex.media_type = type != nullptr ? MediaType(type) : "";
  if (ex.status < 200 || ex.status >= 300) {
    ex.body = Body::kError;
    return;
  }
  if (ex.has_session_header) {
    const std::string& id = ex.session_header;
    if (id.empty() || id.size() > kMaxSessionIdBytes || !IsVisibleAscii(id)) {
      ex.failed = UnavailableError("the server at " + public_url_ +
                                   " sent an Mcp-Session-Id that is not 1 to 1024 visible ASCII "
                                   "characters");
    } else {
      std::lock_guard<std::mutex> lock(mu_);
      if (session_id_.empty()) session_id_ = id;
    }
  }
  ex.body = ex.media_type == "application/json"    ? Body::kJson
            : ex.media_type == "text/event-stream" ? Body::kSse
                                                   : Body::kOther;
}

size_t HttpTransport::OnBody(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const size_t n = size * count;
  const std::string_view bytes(data, n);
  ex->transport->BeginBody(*ex);
  if (!ex->failed.ok()) return 0;  // a non-n return makes libcurl end the transfer
  switch (ex->body) {
    case Body::kJson:
      if (ex->content.size() + n > kMaxMessageBytes) {
        ex->failed =
            ResourceExhaustedError("the server's answer to request " + ex->job->id_text +
                                   " is over " + std::to_string(kMaxMessageBytes) + " bytes");
        return 0;
      }
      ex->content.append(bytes);
      return n;
    case Body::kSse: {
      Status read = ex->sse.Feed(
          bytes, [ex](SseEvent event) { ex->transport->OnEvent(*ex, std::move(event)); });
      if (!read.ok()) {
        ex->failed = read;
        return 0;
      }
      // The stream has done its job; the server should end it now, and is not waited for.
      ex->stopped = ex->answered;
      return ex->answered ? 0 : n;
    }
    default:
      // An error's body, or an unexpected one: its start is enough for a message.
      ex->content.append(
          bytes.substr(0, kErrorBodyBytes - std::min(kErrorBodyBytes, ex->content.size())));
      ex->stopped = ex->content.size() >= kErrorBodyBytes;
      return ex->stopped ? 0 : n;
  }
}

void HttpTransport::OnEvent(Exchange& ex, SseEvent event) {
  if (event.type != "message" || event.data.empty()) return;  // e.g. a priming event
  bool response = false;
  if (ex.job != nullptr && ex.job->is_request) {
    Result<RpcMessage> m = ParseRpcMessage(event.data);
    response = m.ok() &&
               (m->kind == RpcMessage::Kind::kResult || m->kind == RpcMessage::Kind::kError) &&
               m->id == ex.job->id;
  }
  Deliver(std::move(event.data));
  if (response) ex.answered = true;
}

void HttpTransport::Deliver(std::string message) {
  std::lock_guard<std::mutex> lock(deliver_mu_);
  if (silenced_) return;
  on_message_(std::move(message));
}

void HttpTransport::Fail(const Status& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_ || !broken_.ok()) return;
    broken_ = why;
  }
  AbortTransfers();
  std::lock_guard<std::mutex> lock(deliver_mu_);
  if (silenced_) return;
  silenced_ = true;
  on_closed_(why);
}

void HttpTransport::AbortTransfers() {
  std::lock_guard<std::mutex> lock(mu_);
  abort_.store(true);
  for (CURLM* multi : active_) curl_multi_wakeup(multi);
  cv_.notify_all();
}

// Ends the session on the server, best effort: a server that does not allow it answers 405.
void HttpTransport::SendDelete() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (session_id_.empty() || session_gone_) return;
  }
  // abort_ is set by now, so this transfer runs blocking rather than through Drive.
  bool carried_session = false;
  curl_slist* headers = Headers(Method::kDelete, "", &carried_session);
  CURL* curl = curl_easy_init();
  if (curl != nullptr && headers != nullptr) {
    curl_easy_setopt(curl, CURLOPT_URL, options_.url.c_str());
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "DELETE");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                     static_cast<long>(std::chrono::milliseconds(kDeleteTimeout).count()));
    curl_easy_setopt(
        curl, CURLOPT_WRITEFUNCTION,
        +[](char*, size_t size, size_t count, void*) { return size * count; });
    (void)curl_easy_perform(curl);
  }
  if (curl != nullptr) curl_easy_cleanup(curl);
  curl_slist_free_all(headers);
}

Handles HttpTransport::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      Handles handles = idle_.back();
      idle_.pop_back();
      return handles;
    }
  }
  Handles handles{curl_multi_init(), curl_easy_init()};
  if (handles.multi == nullptr || handles.easy == nullptr) {
    Release(handles);
    return {};
  }
  return handles;
}

void HttpTransport::Release(Handles handles) {
  if (handles.easy != nullptr && handles.multi != nullptr) {
    curl_easy_reset(handles.easy);
    std::lock_guard<std::mutex> lock(mu_);
    if (!closed_ && idle_.size() < kIdleHandles) {
      idle_.push_back(handles);
      return;
    }
  }
  if (handles.easy != nullptr) curl_easy_cleanup(handles.easy);
  if (handles.multi != nullptr) curl_multi_cleanup(handles.multi);
}

}  // namespace

Result<std::unique_ptr<Transport>> MakeHttpTransport(HttpOptions options) {
  GlobalInitOnce();
  MEND_ASSIGN_OR_RETURN(std::string public_url, PublicUrl(options.url));
  MEND_RETURN_IF_ERROR(CheckHeaders(options));
  if (options.connect_timeout.count() <= 0 || options.request_timeout.count() <= 0) {
    return InvalidArgumentError("the timeouts of an MCP server over HTTP must be positive");
  }
  if (options.max_resumptions < 0) {
    return InvalidArgumentError("max_resumptions cannot be negative");
  }
  return std::unique_ptr<Transport>(new HttpTransport(std::move(options), std::move(public_url)));
}

}  // namespace mend::mcp
