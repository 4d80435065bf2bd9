#pragma once

// A scripted OTLP transport and a Random for the exporter's tests.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/random.h"
#include "mend/obs/otlp_transport.h"

namespace mend::obs::testing {

// Answers from a script (200 once it runs out), records every request and the virtual time it was
// made at. With `hang` set, Post blocks until Cancel().
class FakeTransport final : public OtlpTransport {
 public:
  struct Call {
    std::string body;
    std::string content_type;
    std::vector<HttpHeader> headers;
    Duration timeout;
    Time at;
  };

  explicit FakeTransport(Clock* clock) : clock_(clock) {}

  void Script(Result<HttpReply> reply) {
    std::lock_guard<std::mutex> lock(mu_);
    script_.push_back(std::move(reply));
  }
  void Hang() { hang_ = true; }

  Result<HttpReply> Post(const std::string&, const std::vector<HttpHeader>& headers,
                         const std::string& body, std::string_view content_type,
                         Duration timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    calls_.push_back({body, std::string(content_type), headers, timeout, clock_->Now()});
    cv_.notify_all();
    if (hang_) {
      cv_.wait(lock, [&] { return cancelled_; });
      return CancelledError("cancelled");
    }
    if (script_.empty()) return HttpReply{200, "", ""};
    Result<HttpReply> reply = std::move(script_.front());
    script_.pop_front();
    return reply;
  }

  void Cancel() override {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    cv_.notify_all();
  }

  // Waits (real time, as a guard against a hang only) until `n` requests were made.
  bool WaitForCalls(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return calls_.size() >= n; });
  }
  std::vector<Call> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  Clock* clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Result<HttpReply>> script_;
  std::vector<Call> calls_;
  bool hang_ = false;
  bool cancelled_ = false;
};

// Next64() == 0: every jittered delay is exactly half its base.
class ZeroRandom final : public Random {
 public:
  uint64_t Next64() override { return 0; }
};

}  // namespace mend::obs::testing
