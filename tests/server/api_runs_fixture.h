#pragma once

// The runs route group's tests: agent folders with tools, a server over any provider, and a
// provider that holds a model turn until the test lets it go.

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/llm/provider.h"
#include "tests/server/server_fixture.h"

namespace mend::server {

// Answers `answers` in call order (the last one again past the end). The call numbered
// `hold_call` (0-based) waits inside Complete until Release(). Thread-safe.
class HeldProvider final : public llm::LlmProvider {
 public:
  HeldProvider(std::vector<llm::Completion> answers, int hold_call)
      : answers_(std::move(answers)), hold_call_(hold_call) {}

  Result<llm::Completion> Complete(const llm::CompletionRequest&) override {
    std::unique_lock<std::mutex> lock(mu_);
    const int call = calls_++;
    changed_.notify_all();
    if (call == hold_call_) changed_.wait(lock, [this] { return released_; });
    return answers_.at(std::min<size_t>(static_cast<size_t>(call), answers_.size() - 1));
  }
  std::string_view name() const override { return "held"; }

  // Blocks until call `n` (0-based) has begun.
  void WaitForCall(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return calls_ > n; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    changed_.notify_all();
  }
  int calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::vector<llm::Completion> answers_;
  const int hold_call_;
  int calls_ = 0;
  bool released_ = false;
};

inline llm::Completion TextAnswer(std::string text) {
  llm::Completion c;
  c.text = std::move(text);
  return c;
}

inline llm::Completion CallAnswer(std::string id, std::string tool, std::string arguments) {
  llm::Completion c;
  c.tool_calls.push_back({std::move(id), std::move(tool), std::move(arguments)});
  c.finish_reason = llm::FinishReason::kToolCalls;
  return c;
}

inline llm::ScriptedStep ToolStep(std::string id, std::string tool, std::string arguments) {
  llm::ScriptedStep step;
  step.tool_calls.push_back({std::move(id), std::move(tool), std::move(arguments)});
  return step;
}

inline llm::ScriptedStep TextStep(std::string text) {
  llm::ScriptedStep step;
  step.text = std::move(text);
  return step;
}

class RunsApiTest : public ServerTest {
 protected:
  static constexpr Duration kRunBound = std::chrono::seconds(60);

  // Writes agents_dir_/<name> with `tools` enabled, and tools/<file> for each of `tool_files`.
  void WriteToolAgent(const std::string& name, const std::string& tools,
                      const std::map<std::string, std::string>& tool_files = {}) {
    const std::string dir = agents_dir_ + "/" + name;
    MEND_ASSERT_OK(env_.fs->CreateDirs(dir + "/tools"));
    MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, dir + "/agent.toml",
                                       "name = \"" + name + "\"\ntools = " + tools + "\n"));
    MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, dir + "/instructions.md", "Do the task.\n"));
    for (const auto& [file, text] : tool_files) {
      MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, dir + "/tools/" + file, text));
    }
  }

  // A command tool that needs approval (the default for a tool that is not read-only).
  static std::string DeployTool() {
    return "name = \"deploy\"\ndescription = \"Deploys.\"\n"
           "command = [\"/bin/sh\", \"-c\", \"echo deployed\"]\n";
  }

  // As ServerTest::StartServer, with any provider.
  void StartWith(std::unique_ptr<llm::LlmProvider> provider,
                 std::map<std::string, std::string> flags = {}) {
    ConfigSources sources;
    sources.flags = std::move(flags);
    sources.flags["home"] = home_;
    sources.flags["provider.retries"] = "0";  // a scripted failure is one that lasts
    Result<Config> config = LoadConfig(sources, *env_.fs);
    MEND_ASSERT_OK(config);
    app::RuntimeOptions runtime_options;
    runtime_options.provider = std::move(provider);
    runtime_options.event_log = app::EventLog::kNone;
    runtime_options.caller_dir = dir_;
    auto runtime = app::OpenRuntime(*config, env_, std::move(runtime_options));
    MEND_ASSERT_OK(runtime);
    runtime_ = *std::move(runtime);
    Restart();
  }

  // A new server on the same runtime (after the previous one stopped).
  void Restart() {
    ServerOptions options;
    options.port = 0;
    options.agents_dir = agents_dir_;
    server_.reset();
    auto server = Server::Create(*runtime_, options);
    MEND_ASSERT_OK(server);
    server_ = *std::move(server);
    MEND_ASSERT_OK(server_->Start());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(std::chrono::seconds(30));
  }

  // Waits for the runs the server drives to return; the test fails if one is still running.
  void WaitForRuns() { ASSERT_EQ(server_->WaitForRuns(kRunBound), 0); }

  Reply StartRun(const std::string& agent, const std::string& task, const std::string& id = "") {
    nlohmann::json body = {{"agent", agent}, {"task", task}};
    if (!id.empty()) body["id"] = id;
    return Post("/api/v1/runs", body);
  }

  // The run's detail once the server stopped driving it.
  nlohmann::json Settled(const std::string& id) {
    WaitForRuns();
    Reply reply = Get("/api/v1/runs/" + id);
    EXPECT_EQ(reply.status, 200) << reply.text;
    return reply.body;
  }
};

}  // namespace mend::server
