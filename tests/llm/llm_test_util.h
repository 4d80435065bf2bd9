#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "mend/base/memory_file_system.h"
#include "mend/llm/factory.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/status_matchers.h"

namespace mend::llm::test {

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

}  // namespace mend::llm::test
