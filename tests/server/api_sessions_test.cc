// GET /api/v1/sessions and /api/v1/sessions/{id}: mend proxy's conversations from observe.db, one
// thread of calls each.
#include <gmock/gmock.h>

#include <chrono>
#include <string>

#include "mend/base/home_layout.h"
#include "mend/base/time_format.h"
#include "mend/obs/span_store.h"
#include "tests/server/server_fixture.h"

namespace mend::server {
namespace {

class SessionsApiTest : public ServerTest {
 protected:
  // One proxied call of conversation `conversation` in trace `trace`, as mend proxy writes it.
  void WriteCall(const std::string& trace, const std::string& conversation, const char* start,
                 obs::SpanStatus status = obs::SpanStatus::kUnset) {
    obs::SpanData s;
    s.context.trace_id = trace;
    s.context.span_id = "00000000000000c1";
    s.run_id = "proxy-" + conversation;
    s.name = "chat m-1";
    s.kind = obs::SpanKind::kClient;
    s.start = *ParseRfc3339(start);
    s.end = s.start + std::chrono::milliseconds(250);
    s.status = status;
    s.attributes = {{"gen_ai.operation.name", std::string("chat")},
                    {"gen_ai.request.model", std::string("m-1")},
                    {"gen_ai.usage.input_tokens", int64_t{40}},
                    {"gen_ai.usage.output_tokens", int64_t{4}},
                    {"mend.cost_usd", 0.5},
                    {"http.response.status_code", int64_t{200}},
                    {"session.id", conversation},
                    {"mend.proxy.route", std::string("/v1/chat/completions")},
                    {"mend.agent", std::string("support")}};
    auto store = obs::SpanStore::Open(home::ObserveFile(home_));
    MEND_ASSERT_OK(store);
    MEND_ASSERT_OK((*store)->Write({s}));
  }
};

constexpr char kT1[] = "000000000000000000000000000000d1";
constexpr char kT2[] = "000000000000000000000000000000d2";
constexpr char kT3[] = "000000000000000000000000000000d3";

TEST_F(SessionsApiTest, ListsConversationsByLatestCall) {
  StartServer();
  WriteCall(kT1, "conv-a", "2025-01-02T08:00:00Z");
  WriteCall(kT2, "conv-b", "2025-01-02T08:05:00Z");
  WriteCall(kT3, "conv-a", "2025-01-02T08:10:00Z");
  Reply reply = Get("/api/v1/sessions");
  ASSERT_EQ(reply.status, 200) << reply.text;
  ASSERT_EQ(reply.body["sessions"].size(), 2u);
  EXPECT_EQ(reply.body["sessions"][0], nlohmann::json::parse(R"({"id":"conv-a",
    "run_id":"proxy-conv-a","agent":"support","first":"2025-01-02T08:00:00Z",
    "last":"2025-01-02T08:10:00.25Z","call_count":2,"cost_usd":1.0,"input_tokens":80,
    "output_tokens":8})"));
  EXPECT_EQ(reply.body["sessions"][1]["id"], "conv-b");
  EXPECT_EQ(Get("/api/v1/sessions?limit=1").body["sessions"].size(), 1u);
  EXPECT_EQ(Get("/api/v1/sessions?limit=0").status, 400);
}

TEST_F(SessionsApiTest, OneSessionIsItsCallsInOrderAcrossTraces) {
  StartServer();
  WriteCall(kT3, "conv-a", "2025-01-02T08:10:00Z", obs::SpanStatus::kError);
  WriteCall(kT1, "conv-a", "2025-01-02T08:00:00Z");
  Reply reply = Get("/api/v1/sessions/conv-a");
  ASSERT_EQ(reply.status, 200) << reply.text;
  EXPECT_EQ(reply.body["call_count"], 2);
  ASSERT_EQ(reply.body["calls"].size(), 2u);
  const nlohmann::json& first = reply.body["calls"][0];
  EXPECT_EQ(first["trace_id"], kT1);
  EXPECT_EQ(first["start"], "2025-01-02T08:00:00Z");
  EXPECT_EQ(first["model"], "m-1");
  EXPECT_EQ(first["route"], "/v1/chat/completions");
  EXPECT_EQ(first["http_status"], 200);
  EXPECT_EQ(first["duration_ms"], 250.0);
  EXPECT_EQ(first["cost_usd"], 0.5);
  EXPECT_EQ(reply.body["calls"][1]["trace_id"], kT3);
  EXPECT_EQ(reply.body["calls"][1]["status"], "error");
}

TEST_F(SessionsApiTest, AnUnknownSessionIs404AndAnOverlongIdIs400) {
  StartServer();
  WriteCall(kT1, "conv-a", "2025-01-02T08:00:00Z");
  Reply missing = Get("/api/v1/sessions/conv-z");
  EXPECT_EQ(missing.status, 404) << missing.text;
  EXPECT_EQ(missing.body["error"]["code"], "NOT_FOUND");
  Reply long_id = Get("/api/v1/sessions/" + std::string(1025, 'x'));
  EXPECT_EQ(long_id.status, 400) << long_id.text;
  EXPECT_THAT(long_id.body["error"]["message"].get<std::string>(), ::testing::StartsWith("id: "));
}

TEST_F(SessionsApiTest, NoConversationsIsAnEmptyList) {
  StartServer();
  Reply reply = Get("/api/v1/sessions");
  ASSERT_EQ(reply.status, 200) << reply.text;
  EXPECT_EQ(reply.body["sessions"], nlohmann::json::array());
}

}  // namespace
}  // namespace mend::server
