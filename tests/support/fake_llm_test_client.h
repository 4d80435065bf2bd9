#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/fake_llm_server.h"

namespace mend::testing {

// A fake server per test and one-shot httplib clients for it. Only for the fake server's own
// tests, which include httplib anyway.
class FakeLlmServerFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = FakeLlmServer::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(server).value();
  }

  httplib::Result Post(const std::string& path, const std::string& body,
                       const httplib::Headers& headers = {}) {
    httplib::Client client(server_->base_url());
    client.set_tcp_nodelay(true);
    return client.Post(path.c_str(), headers, body, "application/json");
  }

  httplib::Result Get(const std::string& path) {
    httplib::Client client(server_->base_url());
    return client.Get(path.c_str());
  }

  // The HTTP status, or -1 when no response arrived.
  int PostStatus(const std::string& path, const std::string& body,
                 const httplib::Headers& headers = {}) {
    auto res = Post(path, body, headers);
    return res ? res->status : -1;
  }

  // The parsed 200 body; an empty object (and a test failure) otherwise.
  nlohmann::json PostJson(const std::string& path, const std::string& body) {
    auto res = Post(path, body);
    if (!res || res->status != 200) {
      ADD_FAILURE() << "POST " << path << " failed";
      return nlohmann::json::object();
    }
    return nlohmann::json::parse(res->body);
  }

  std::unique_ptr<FakeLlmServer> server_;
};

}  // namespace mend::testing
