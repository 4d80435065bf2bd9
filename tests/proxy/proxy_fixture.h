#pragma once

// A proxy service on its own listener in front of the fake LLM server, over a temporary mend.db,
// with a manual clock, a memory source and a lesson queue that record what they are asked, an
// in-memory span processor and a metrics registry. Route tests derive from ProxyTest.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/base/random.h"
#include "mend/lessonq/durable_queue.h"
#include "mend/obs/metrics.h"
#include "mend/obs/trace.h"
#include "mend/proxy/proxy.h"
#include "tests/e2e/temp_dir.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/status_matchers.h"

namespace mend::proxy {

// Answers "## Long-term Memory\n- fact <n>" where n counts the calls, so a test sees whether a
// later turn got the first section again or a new recall.
class CountingMemory final : public MemorySource {
 public:
  Result<std::string> SectionFor(const std::string& task, const std::string& workspace) override {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(task);
    workspaces_.push_back(workspace);
    if (fail_) return UnavailableError("memory store is down");
    return "## Long-term Memory\n- fact " + std::to_string(tasks_.size());
  }
  int calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(tasks_.size());
  }
  std::vector<std::string> tasks() const {
    std::lock_guard<std::mutex> lock(mu_);
    return tasks_;
  }
  std::vector<std::string> workspaces() const {
    std::lock_guard<std::mutex> lock(mu_);
    return workspaces_;
  }
  void set_fail(bool fail) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_ = fail;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> tasks_;
  std::vector<std::string> workspaces_;
  bool fail_ = false;
};

class RecordingLessons final : public lessonq::LessonEnqueuer {
 public:
  Result<lessonq::EnqueueResult> Enqueue(const lessonq::LessonRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(request);
    return lessonq::EnqueueResult{};
  }
  std::vector<lessonq::LessonRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<lessonq::LessonRequest> requests_;
};

class ProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<testing::ScopedTempDir>> dir = testing::ScopedTempDir::Create();
    ASSERT_TRUE(dir.ok());
    dir_ = *std::move(dir);
    Result<std::unique_ptr<testing::FakeLlmServer>> upstream = testing::FakeLlmServer::Start();
    ASSERT_TRUE(upstream.ok());
    upstream_ = *std::move(upstream);
    options_.upstream = upstream_->base_url() + "/v1";
    options_.upstream_api_key = "sk-upstream";
    options_.retry.base_delay = std::chrono::seconds(1);
    options_.retry.max_delay = std::chrono::seconds(8);
    options_.connect_timeout = std::chrono::seconds(10);
    spans_ = std::make_shared<obs::MemorySpanProcessor>();
    obs::TracerOptions tracer_options;
    tracer_options.clock = &clock_;
    tracer_options.random = &random_;
    tracer_ = std::make_unique<obs::Tracer>(tracer_options);
    tracer_->AddProcessor(spans_);
  }

  void TearDown() override {
    client_.reset();
    if (listener_ != nullptr) listener_->Stop();
    listener_.reset();
    service_.reset();
    upstream_.reset();
  }

  // Creates the service from options_ and starts its listener.
  void Start() {
    ProxyDeps deps;
    deps.clock = &clock_;
    deps.database_path = dir_->File("mend.db");
    deps.memory = &memory_;
    deps.lessons = &lessons_;
    deps.tracer = tracer_.get();
    deps.metrics = &metrics_;
    deps.lesson_provider = "openai";
    deps.lesson_model = "gpt-4o-mini";
    Result<std::unique_ptr<ProxyService>> service = ProxyService::Create(options_, deps);
    ASSERT_THAT(service, testing::IsOk());
    service_ = *std::move(service);
    Result<std::unique_ptr<ProxyListener>> listener =
        ProxyListener::Start(*service_, listener_options_);
    ASSERT_THAT(listener, testing::IsOk());
    listener_ = *std::move(listener);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", listener_->port());
    client_->set_read_timeout(std::chrono::seconds(60));
  }

  // Stops the service and starts a new one on the same database (a proxy restart).
  void Restart() {
    client_.reset();
    listener_->Stop();
    listener_.reset();
    service_.reset();
    Start();
  }

  struct Reply {
    int status = 0;
    std::string body;
    httplib::Headers headers;
    std::string Header(const std::string& name) const {
      auto it = headers.find(name);
      return it == headers.end() ? "" : it->second;
    }
    nlohmann::json Json() const { return nlohmann::json::parse(body, nullptr, false); }
  };

  Reply Post(const std::string& path, const std::string& body, httplib::Headers headers = {}) {
    return ToReply(client_->Post(path.c_str(), headers, body, "application/json"));
  }

  Reply Get(const std::string& path, httplib::Headers headers = {}) {
    return ToReply(client_->Get(path.c_str(), headers));
  }

  static Reply ToReply(const httplib::Result& r) {
    Reply reply;
    if (!r) {
      ADD_FAILURE() << "no answer from the proxy: " << httplib::to_string(r.error());
      return reply;
    }
    reply.status = r->status;
    reply.body = r->body;
    reply.headers = r->headers;
    return reply;
  }

  // The body of the last request the upstream received, as JSON.
  nlohmann::json LastUpstreamBody() const {
    std::vector<testing::RecordedRequest> requests = upstream_->requests();
    if (requests.empty()) return nullptr;
    return nlohmann::json::parse(requests.back().body, nullptr, false);
  }
  std::string LastUpstreamRaw() const {
    std::vector<testing::RecordedRequest> requests = upstream_->requests();
    return requests.empty() ? "" : requests.back().body;
  }

  // The value of the metric line that starts with `series` ("name{labels}"), or -1.
  double Metric(const std::string& series) const {
    const std::string text = metrics_.RenderPrometheus();
    size_t at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size() + 2));
  }

  // Waits until Metric(series) reaches `value`, for metrics a server thread updates after the
  // test's request has returned; false after `bound` (a safety net, not a measurement).
  bool WaitForMetric(const std::string& series, double value,
                     std::chrono::seconds bound = std::chrono::seconds(30)) const {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    while (Metric(series) < value) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::yield();
    }
    return true;
  }

  ManualClock clock_{Time(std::chrono::hours(24 * 365 * 56))};
  SeededRandom random_{7};
  std::unique_ptr<testing::ScopedTempDir> dir_;
  std::unique_ptr<testing::FakeLlmServer> upstream_;
  ProxyOptions options_;
  ListenerOptions listener_options_ = [] {
    ListenerOptions options;
    options.port = 0;
    return options;
  }();
  CountingMemory memory_;
  RecordingLessons lessons_;
  obs::MetricsRegistry metrics_;
  std::shared_ptr<obs::MemorySpanProcessor> spans_;
  std::unique_ptr<obs::Tracer> tracer_;
  std::unique_ptr<ProxyService> service_;
  std::unique_ptr<ProxyListener> listener_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace mend::proxy
