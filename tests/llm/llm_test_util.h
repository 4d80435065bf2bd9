#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "mend/base/memory_file_system.h"
#include "mend/llm/factory.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/status_matchers.h"

namespace mend::llm::test {

using ::mend::testing::FakeResponse;

// A recognisable key: every error message the tests see is checked not to contain it.
inline constexpr char kSecretKey[] = "sk-test-SECRET-1234";

// Fails the test when `s` carries the API key anywhere in its text.
inline void ExpectNoSecret(const Status& s) {
  EXPECT_EQ(s.ToString().find(kSecretKey), std::string::npos) << s.ToString();
  EXPECT_EQ(std::string(s.detail_code()).find(kSecretKey), std::string::npos);
}

// Starts a fake server that demands kSecretKey.
inline std::unique_ptr<testing::FakeLlmServer> StartServer() {
  auto server = testing::FakeLlmServer::Start();
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return nullptr;
  (*server)->RequireApiKey(kSecretKey);
  return std::move(server).value();
}

inline ProviderOptions HttpOptions(std::string kind, const testing::FakeLlmServer& server,
                                   std::string model) {
  ProviderOptions o;
  o.kind = std::move(kind);
  o.model = std::move(model);
  o.base_url = server.base_url();
  o.api_key = kSecretKey;
  o.connect_timeout = std::chrono::milliseconds(5000);
  o.timeout = std::chrono::milliseconds(10000);
  return o;
}

inline std::unique_ptr<LlmProvider> MakeProvider(const ProviderOptions& options) {
  MemoryFileSystem fs;
  Env env;
  env.fs = &fs;
  auto p = CreateProvider(options, env);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return nullptr;
  return std::move(p).value();
}

inline CompletionRequest UserAsks(std::string text) {
  CompletionRequest r;
  r.messages.push_back(Message::User(std::move(text)));
  return r;
}

// A fake server demanding kSecretKey and a provider of `kind` talking to it over real HTTP.
class HttpProviderTest : public ::testing::Test {
 protected:
  HttpProviderTest(std::string kind, std::string model)
      : kind_(std::move(kind)), model_(std::move(model)) {}

  void SetUp() override {
    server_ = StartServer();
    ASSERT_NE(server_, nullptr);
    options_ = HttpOptions(kind_, *server_, model_);
    provider_ = MakeProvider(options_);
    ASSERT_NE(provider_, nullptr);
  }

  // Completes a request the server answers with `response`; the result must be an error, and it
  // must not carry the key.
  Status FailWith(FakeResponse response) { return FailWith(*provider_, std::move(response)); }
  Status FailWith(LlmProvider& provider, FakeResponse response) {
    server_->Enqueue(std::move(response));
    Result<Completion> c = provider.Complete(UserAsks("hi"));
    EXPECT_FALSE(c.ok());
    if (c.ok()) return OkStatus();
    ExpectNoSecret(c.status());
    return c.status();
  }

  nlohmann::json LastRequestBody() {
    auto requests = server_->requests();
    EXPECT_FALSE(requests.empty());
    return requests.empty() ? nlohmann::json() : nlohmann::json::parse(requests.back().body);
  }

  static FakeResponse Fault(FakeResponse::Fault fault, int status = 200) {
    FakeResponse r;
    r.fault = fault;
    r.status = status;
    return r;
  }

  std::string kind_;
  std::string model_;
  std::unique_ptr<testing::FakeLlmServer> server_;
  ProviderOptions options_;
  std::unique_ptr<LlmProvider> provider_;
};

}  // namespace mend::llm::test
