#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/fake_llm_server.h"

namespace mend::testing {

// One server-sent event: its "event:" name ("" when it has none) and its "data:" value.
struct SseEvent {
  std::string name;
  std::string data;
};

// The complete events of `body`, in order; an event not yet ended by its blank line is left out.
inline std::vector<SseEvent> ParseSse(const std::string& body) {
  std::vector<SseEvent> events;
  SseEvent event;
  bool open = false;
  std::istringstream in(body);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // the last line has no newline yet
    if (line.empty()) {
      if (open) events.push_back(std::move(event));
      event = SseEvent{};
      open = false;
    } else if (line.rfind("event: ", 0) == 0) {
      event.name = line.substr(7);
      open = true;
    } else if (line.rfind("data: ", 0) == 0) {
      event.data = line.substr(6);
      open = true;
    }
  }
  return events;
}

// What a client received for one request, also when the transfer failed midway.
struct Received {
  httplib::Error error = httplib::Error::Unknown;  // Success once the whole body arrived
  int status = -1;                                 // -1: no status line arrived
  std::string body;                                // the bytes of the body that arrived
};

// POSTs `body` as JSON to `path` at `url` on a new connection and collects the body as it
// arrives. `on_data`, when set, sees the body received so far after each piece; returning false
// cancels the request and closes the connection.
inline Received PostAndReceive(const std::string& url, const std::string& path,
                               const std::string& body,
                               const std::function<bool(const std::string&)>& on_data = nullptr) {
  httplib::Client client(url);
  client.set_tcp_nodelay(true);
  Received received;
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body;
  req.set_header("Content-Type", "application/json");
  req.response_handler = [&](const httplib::Response& res) {
    received.status = res.status;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    received.body.append(data, n);
    return on_data == nullptr || on_data(received.body);
  };
  received.error = client.send(req).error();
  return received;
}

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
