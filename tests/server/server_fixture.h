#pragma once

// A `mend serve` HTTP server on a free loopback port over a fresh temporary home, with a
// scripted provider, and an HTTP client for it. Route tests derive from ServerTest.

#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mend/app/runtime.h"
#include "mend/base/config.h"
#include "mend/base/env.h"
#include "mend/base/file_system.h"
#include "mend/llm/scripted_provider.h"
#include "mend/server/server.h"
#include "tests/support/status_matchers.h"

namespace mend::server {

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "mend-serve-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    home_ = dir_ + "/home";
    agents_dir_ = dir_ + "/agents";
    env_ = Env::Default();
  }
  void TearDown() override {
    server_.reset();
    runtime_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Writes a minimal agent folder agents_dir_/<name>.
  void WriteAgent(const std::string& name, const std::string& toml_extra = "") {
    const std::string dir = agents_dir_ + "/" + name;
    MEND_ASSERT_OK(env_.fs->CreateDirs(dir));
    MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, dir + "/agent.toml",
                                       "name = \"" + name + "\"\ntools = []\n" + toml_extra));
    MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, dir + "/instructions.md", "Answer briefly.\n"));
  }

  // Opens the runtime (scripted provider answering `steps`) and starts a server on it.
  void StartServer(std::vector<llm::ScriptedStep> steps = {}, ServerOptions options = {},
                   std::map<std::string, std::string> flags = {}) {
    ConfigSources sources;
    sources.flags = std::move(flags);
    sources.flags["home"] = home_;
    // A scripted failure is one that lasts (a test that wants the runs' retries sets the flag).
    if (!sources.flags.contains("provider.retries")) sources.flags["provider.retries"] = "0";
    Result<Config> config = LoadConfig(sources, *env_.fs);
    MEND_ASSERT_OK(config);
    app::RuntimeOptions runtime_options;
    runtime_options.provider = std::make_unique<llm::ScriptedProvider>(std::move(steps));
    runtime_options.event_log = app::EventLog::kNone;
    runtime_options.caller_dir = dir_;
    auto runtime = app::OpenRuntime(*config, env_, std::move(runtime_options));
    MEND_ASSERT_OK(runtime);
    runtime_ = *std::move(runtime);
    options.port = 0;
    if (options.agents_dir.empty()) options.agents_dir = agents_dir_;
    auto server = Server::Create(*runtime_, options);
    MEND_ASSERT_OK(server);
    server_ = *std::move(server);
    MEND_ASSERT_OK(server_->Start());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(std::chrono::seconds(30));
  }

  struct Reply {
    int status = 0;
    nlohmann::json body;
    std::string text;
    httplib::Headers headers;
  };

  static Reply ToReply(const httplib::Result& result) {
    Reply reply;
    if (!result) return reply;
    reply.status = result->status;
    reply.text = result->body;
    reply.headers = result->headers;
    reply.body = nlohmann::json::parse(result->body, nullptr, /*allow_exceptions=*/false);
    return reply;
  }
  Reply Get(const std::string& path, const httplib::Headers& headers = {}) {
    return ToReply(client_->Get(path, headers));
  }
  Reply Post(const std::string& path, const nlohmann::json& body = nlohmann::json::object(),
             const httplib::Headers& headers = {}) {
    return ToReply(client_->Post(path, headers, body.dump(), "application/json"));
  }
  Reply Delete(const std::string& path, const httplib::Headers& headers = {}) {
    return ToReply(client_->Delete(path, headers));
  }

  std::string dir_, home_, agents_dir_;
  Env env_;
  std::unique_ptr<app::Runtime> runtime_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace mend::server
