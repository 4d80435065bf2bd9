// GET /api/v1/metrics/series: runs and model calls per bucket from observe.db, and the parameters
// it refuses.
#include <gmock/gmock.h>

#include <chrono>
#include <string>

#include "mend/base/home_layout.h"
#include "mend/base/manual_clock.h"
#include "mend/base/time_format.h"
#include "mend/obs/span_store.h"
#include "tests/server/server_fixture.h"

namespace mend::server {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

Time At(const char* text) { return *ParseRfc3339(text); }

obs::SpanData Span(const std::string& trace, const std::string& id, const std::string& run,
                   Time start, Time end) {
  obs::SpanData s;
  s.context.trace_id = trace;
  s.context.span_id = id;
  s.run_id = run;
  s.start = start;
  s.end = end;
  return s;
}

class SeriesApiTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    env_.clock = &clock_;
  }

  // Run `run` of agent `agent` with one chat call of `model`, from `start` for `seconds`.
  void WriteRun(const std::string& trace, const std::string& run, const std::string& agent,
                const std::string& model, const char* start, int seconds,
                const std::string& status) {
    const Time t0 = At(start);
    obs::SpanData attempt =
        Span(trace, "00000000000000a1", run, t0, t0 + std::chrono::seconds(seconds));
    attempt.name = "invoke_agent " + agent;
    attempt.attributes = {{"gen_ai.operation.name", std::string("invoke_agent")},
                          {"gen_ai.agent.name", agent},
                          {"mend.run.status", status}};
    obs::SpanData chat = Span(trace, "00000000000000a2", run, t0, t0 + std::chrono::seconds(1));
    chat.parent_span_id = attempt.context.span_id;
    chat.name = "chat " + model;
    chat.attributes = {{"gen_ai.operation.name", std::string("chat")},
                       {"gen_ai.request.model", model},
                       {"gen_ai.usage.input_tokens", int64_t{50}},
                       {"gen_ai.usage.output_tokens", int64_t{5}},
                       {"mend.cost_usd", 0.125}};
    auto store = obs::SpanStore::Open(home::ObserveFile(home_));
    MEND_ASSERT_OK(store);
    MEND_ASSERT_OK((*store)->Write({chat, attempt}));
  }

  ManualClock clock_{*ParseRfc3339("2025-01-02T10:20:00Z")};
};

constexpr char kT1[] = "0000000000000000000000000000000a";
constexpr char kT2[] = "0000000000000000000000000000000b";
constexpr char kT3[] = "0000000000000000000000000000000c";

TEST_F(SeriesApiTest, RunsPerAgentInHourBuckets) {
  StartServer();
  WriteRun(kT1, "r1", "writer", "m-a", "2025-01-02T08:10:00Z", 30, "completed");
  WriteRun(kT2, "r2", "writer", "m-a", "2025-01-02T08:40:00Z", 10, "failed");
  WriteRun(kT3, "r3", "helper", "m-b", "2025-01-02T09:05:00Z", 2, "completed");

  Reply reply = Get("/api/v1/metrics/series?bucket=hour&by=agent");
  ASSERT_EQ(reply.status, 200) << reply.text;
  // Without from and to: the 24 hours up to the end of the current hour.
  EXPECT_EQ(reply.body["from"], "2025-01-01T11:00:00Z");
  EXPECT_EQ(reply.body["to"], "2025-01-02T11:00:00Z");
  EXPECT_EQ(reply.body["bucket_seconds"], 3600);
  EXPECT_EQ(reply.body["counts"], "runs");
  ASSERT_EQ(reply.body["series"].size(), 2u);
  EXPECT_EQ(reply.body["series"][0], nlohmann::json::parse(R"({"key":"helper","points":[
    {"start":"2025-01-02T09:00:00Z","count":1,"failed":0,"failure_rate":0.0,"cost_usd":0.125,
     "input_tokens":50,"output_tokens":5,"mean_ms":2000.0,"max_ms":2000.0}]})"));
  const nlohmann::json& writer = reply.body["series"][1];
  EXPECT_EQ(writer["key"], "writer");
  ASSERT_EQ(writer["points"].size(), 1u);
  EXPECT_EQ(writer["points"][0]["start"], "2025-01-02T08:00:00Z");
  EXPECT_EQ(writer["points"][0]["count"], 2);
  EXPECT_EQ(writer["points"][0]["failed"], 1);
  EXPECT_EQ(writer["points"][0]["failure_rate"], 0.5);
  EXPECT_EQ(writer["points"][0]["cost_usd"], 0.25);
  EXPECT_EQ(writer["points"][0]["mean_ms"], 20000.0);
}

TEST_F(SeriesApiTest, ModelCallsPerModelInAGivenRange) {
  StartServer();
  WriteRun(kT1, "r1", "writer", "m-a", "2025-01-02T08:10:00Z", 30, "completed");
  WriteRun(kT3, "r3", "helper", "m-b", "2025-01-02T09:05:00Z", 2, "completed");

  Reply reply = Get(
      "/api/v1/metrics/series?by=model&bucket=minute&from=2025-01-02T09:00:00Z&to=2025-01-02T10:"
      "00:00Z");
  ASSERT_EQ(reply.status, 200) << reply.text;
  EXPECT_EQ(reply.body["counts"], "model_calls");
  ASSERT_EQ(reply.body["series"].size(), 1u);
  EXPECT_EQ(reply.body["series"][0]["key"], "m-b");
  EXPECT_EQ(reply.body["series"][0]["points"][0]["start"], "2025-01-02T09:05:00Z");
  EXPECT_EQ(reply.body["series"][0]["points"][0]["mean_ms"], 1000.0);
}

TEST_F(SeriesApiTest, NothingRecordedIsAnEmptyList) {
  StartServer();
  Reply reply = Get("/api/v1/metrics/series?bucket=day");
  ASSERT_EQ(reply.status, 200) << reply.text;
  EXPECT_EQ(reply.body["series"], nlohmann::json::array());
  EXPECT_EQ(reply.body["from"], "2024-12-04T00:00:00Z");
  EXPECT_EQ(reply.body["to"], "2025-01-03T00:00:00Z");
}

TEST_F(SeriesApiTest, BadParametersAreRefusedNamingThem) {
  StartServer();
  struct Case {
    const char* query;
    const char* starts;
  };
  for (const Case& c : {Case{"bucket=week", "bucket: "}, Case{"by=tool", "by: "},
                        Case{"from=yesterday", "from: "}, Case{"to=2025-13-01T00:00:00Z", "to: "},
                        Case{"from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z", "from: "},
                        Case{"bucket=minute&from=2024-01-01T00:00:00Z", "bucket: "}}) {
    Reply reply = Get(std::string("/api/v1/metrics/series?") + c.query);
    EXPECT_EQ(reply.status, 400) << c.query;
    EXPECT_EQ(reply.body["error"]["code"], "INVALID_ARGUMENT") << c.query;
    EXPECT_THAT(reply.body["error"]["message"].get<std::string>(), StartsWith(c.starts)) << c.query;
  }
  Reply many = Get("/api/v1/metrics/series?bucket=minute&from=2024-01-01T00:00:00Z");
  EXPECT_THAT(many.body["error"]["message"].get<std::string>(), HasSubstr("1000 buckets"));
}

}  // namespace
}  // namespace mend::server
