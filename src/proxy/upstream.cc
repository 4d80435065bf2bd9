#include "proxy/upstream.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>

namespace mend::proxy {
namespace {

constexpr int kPollMillis = 100;
constexpr size_t kMaxIdleHandles = 256;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

// A multi handle with its one easy handle: the multi handle owns the connection cache, so both
// are kept together for reuse.
struct UpstreamCall::Handles {
  CURLM* multi = nullptr;
  CURL* easy = nullptr;
  ~Handles() {
    if (easy != nullptr) curl_easy_cleanup(easy);
    if (multi != nullptr) curl_multi_cleanup(multi);
  }
};

UpstreamPool::UpstreamPool(UpstreamTimeouts timeouts) : timeouts_(timeouts) { GlobalInit(); }
UpstreamPool::~UpstreamPool() = default;

Result<std::unique_ptr<UpstreamCall>> UpstreamPool::Start(UpstreamRequest request) {
  std::unique_ptr<UpstreamCall::Handles> handles;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      handles = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (handles == nullptr) {
    handles = std::make_unique<UpstreamCall::Handles>();
    handles->multi = curl_multi_init();
    handles->easy = curl_easy_init();
    if (handles->multi == nullptr || handles->easy == nullptr) {
      return InternalError("libcurl could not create a handle");
    }
  } else {
    curl_easy_reset(handles->easy);
  }
  std::unique_ptr<UpstreamCall> call(new UpstreamCall(*this, std::move(handles), timeouts_));
  CURL* easy = call->handles_->easy;
  call->request_body_ = std::move(request.body);
  curl_slist* list = nullptr;
  for (const std::string& header : request.headers) list = curl_slist_append(list, header.c_str());
  // libcurl adds "Expect: 100-continue" to large POSTs, which costs a round trip; no Accept
  // header of its own either.
  list = curl_slist_append(list, "Expect:");
  call->header_list_ = list;
  curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeouts_.connect.count()));
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &UpstreamCall::OnHeader);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, call.get());
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &UpstreamCall::OnBody);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, call.get());
  if (request.method == "GET") {
    curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(easy, CURLOPT_POST, 1L);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, call->request_body_.data());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(call->request_body_.size()));
    if (request.method != "POST") {
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
  }
  if (curl_multi_add_handle(call->handles_->multi, easy) != CURLM_OK) {
    return InternalError("libcurl could not start the transfer");
  }
  call->last_progress_ = std::chrono::steady_clock::now();
  return call;
}

void UpstreamPool::Release(std::unique_ptr<UpstreamCall::Handles> handles, bool reusable) {
  if (!reusable) return;  // destroying the handles closes their connections
  std::lock_guard<std::mutex> lock(mu_);
  if (idle_.size() < kMaxIdleHandles) idle_.push_back(std::move(handles));
}

UpstreamCall::UpstreamCall(UpstreamPool& pool, std::unique_ptr<Handles> handles,
                           UpstreamTimeouts timeouts)
    : pool_(pool), handles_(std::move(handles)), timeouts_(timeouts) {}

UpstreamCall::~UpstreamCall() {
  if (handles_ != nullptr) {
    curl_multi_remove_handle(handles_->multi, handles_->easy);
    // A transfer that did not end leaves its connection in an unknown state.
    pool_.Release(std::move(handles_), done_ && error_.ok() && !cancelled_);
  }
  curl_slist_free_all(static_cast<curl_slist*>(header_list_));
}

size_t UpstreamCall::OnHeader(char* data, size_t size, size_t count, void* self) {
  auto* call = static_cast<UpstreamCall*>(self);
  const size_t n = size * count;
  std::string_view line(data, n);
  if (line.starts_with("HTTP/")) {
    // A new status line (also after a 1xx interim reply): what follows belongs to it.
    call->headers_.clear();
    const size_t space = line.find(' ');
    call->status_ = space == std::string_view::npos
                        ? 0
                        : std::atoi(std::string(line.substr(space + 1, 3)).c_str());
    return n;
  }
  const std::string_view trimmed = TrimView(line);
  if (trimmed.empty()) {
    if (call->status_ >= 200) call->headers_done_ = true;
    return n;
  }
  const size_t colon = trimmed.find(':');
  if (colon != std::string_view::npos) {
    call->headers_.emplace_back(std::string(TrimView(trimmed.substr(0, colon))),
                                std::string(TrimView(trimmed.substr(colon + 1))));
  }
  return n;
}

size_t UpstreamCall::OnBody(char* data, size_t size, size_t count, void* self) {
  auto* call = static_cast<UpstreamCall*>(self);
  if (call->cancelled_) return 0;
  call->headers_done_ = true;
  call->buffer_.append(data, size * count);
  return size * count;
}

std::string UpstreamCall::Header(std::string_view name) const {
  for (const auto& [key, value] : headers_) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return "";
}

Status UpstreamCall::Finish(int curl_code) {
  done_ = true;
  const auto code = static_cast<CURLcode>(curl_code);
  if (code == CURLE_OK) return OkStatus();
  std::string what = curl_easy_strerror(code);
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      error_ = DeadlineExceededError("upstream timed out: " + what);
      break;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      error_ = InvalidArgumentError("upstream URL refused: " + what);
      break;
    case CURLE_WRITE_ERROR:
      error_ = CancelledError("upstream request cancelled");
      break;
    default:
      error_ = UnavailableError("upstream failed: " + what);
      break;
  }
  return error_;
}

Status UpstreamCall::Pump() {
  if (done_) return error_;
  if (cancelled_) return CancelledError("upstream request cancelled");
  const size_t buffered = buffer_.size();
  const bool had_headers = headers_done_;
  int running = 0;
  if (curl_multi_perform(handles_->multi, &running) != CURLM_OK) {
    done_ = true;
    error_ = InternalError("libcurl failed to drive the transfer");
    return error_;
  }
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(handles_->multi, &left)) {
    if (msg->msg == CURLMSG_DONE) return Finish(msg->data.result);
  }
  if (buffer_.size() != buffered || headers_done_ != had_headers) {
    last_progress_ = std::chrono::steady_clock::now();
    return OkStatus();
  }
  int ready = 0;
  curl_multi_poll(handles_->multi, nullptr, 0, kPollMillis, &ready);
  const auto limit =
      status_ == 0 && !headers_done_ ? timeouts_.connect + timeouts_.idle : timeouts_.idle;
  if (std::chrono::steady_clock::now() - last_progress_ > limit) {
    done_ = true;
    error_ = DeadlineExceededError("upstream sent nothing for too long");
    return error_;
  }
  return OkStatus();
}

Status UpstreamCall::WaitForHeaders() {
  while (!headers_done_ && !done_) {
    Status pumped = Pump();
    if (!pumped.ok() && !headers_done_) return pumped;
  }
  // Headers that arrived count even when the transfer failed right after them (in the same
  // read): the reply has begun, and Read reports the failure after the bytes that came.
  if (headers_done_ && status_ >= 200) return OkStatus();
  if (!error_.ok()) return error_;
  return UnavailableError("upstream closed the connection without a reply");
}

Status UpstreamCall::Read(std::string& out) {
  out.clear();
  while (buffer_.empty() && !done_) MEND_RETURN_IF_ERROR(Pump());
  if (!buffer_.empty()) {
    out.swap(buffer_);
    last_progress_ = std::chrono::steady_clock::now();
    return OkStatus();
  }
  return error_;
}

Result<std::string> UpstreamCall::ReadAll(size_t max_bytes) {
  std::string all;
  std::string chunk;
  while (true) {
    MEND_RETURN_IF_ERROR(Read(chunk));
    if (chunk.empty() && done_) break;
    all += chunk;
    if (all.size() > max_bytes) {
      Cancel();
      return ResourceExhaustedError("upstream reply larger than " + std::to_string(max_bytes) +
                                    " bytes");
    }
  }
  return all;
}

void UpstreamCall::Cancel() {
  cancelled_ = true;
  if (handles_ == nullptr) return;
  if (!done_) {
    done_ = true;
    error_ = CancelledError("upstream request cancelled");
  }
  // The handles go now, not with the call: that closes the connection, so the upstream sees the
  // request end while the call's owner is still finishing up.
  curl_multi_remove_handle(handles_->multi, handles_->easy);
  handles_.reset();
}

}  // namespace mend::proxy
