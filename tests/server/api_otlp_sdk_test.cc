// The OpenTelemetry JavaScript SDK (tests/support/otlp_sdk/send_spans.js: sdk-trace-node with
// the otlp-http and otlp-proto exporters) sends a trace to a running server, and the trace is
// then found through the API beside mend's own runs. Skips when node or the packages are missing.
#include <gmock/gmock.h>

#include <filesystem>

#include "tests/e2e/child_process.h"
#include "tests/server/server_fixture.h"

namespace mend::server {
namespace {

const std::string kSdkDir = MEND_OTLP_SDK_DIR;

class OtlpSdkServeTest : public ServerTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (std::string(MEND_NODE_EXECUTABLE).empty()) GTEST_SKIP() << "node is not installed";
    if (!std::filesystem::exists(kSdkDir + "/node_modules/@opentelemetry/sdk-trace-node")) {
      GTEST_SKIP() << "the npm packages of tests/support/otlp_sdk are not installed "
                      "(scripts/bootstrap installs them)";
    }
  }
};

TEST_P(OtlpSdkServeTest, SpansFromTheSdkAreFoundThroughTheApi) {
  StartServer();
  const std::string url = "http://127.0.0.1:" + std::to_string(server_->port()) + "/v1/traces";
  auto sent = mend::testing::RunProcess(
      {MEND_NODE_EXECUTABLE, kSdkDir + "/send_spans.js", url, GetParam(), "billing-agent", "3"},
      {"PATH=/usr/bin:/bin"}, std::chrono::seconds(60));
  MEND_ASSERT_OK(sent);
  ASSERT_EQ(sent->status.code, 0) << sent->out << sent->err;

  Reply list = Get("/api/v1/traces");
  ASSERT_EQ(list.status, 200) << list.text;
  ASSERT_EQ(list.body["traces"].size(), 1u) << list.text;
  const nlohmann::json& trace = list.body["traces"][0];
  EXPECT_EQ(trace["service"], "billing-agent");
  EXPECT_EQ(trace["spans"], 4);
  EXPECT_EQ(trace["errors"], 1);
  EXPECT_EQ(trace["has_root"], true);

  Reply spans = Get("/api/v1/traces/" + trace["trace_id"].get<std::string>());
  ASSERT_EQ(spans.status, 200);
  ASSERT_EQ(spans.body["spans"].size(), 4u);
  int children = 0;
  for (const nlohmann::json& span : spans.body["spans"]) {
    EXPECT_EQ(span["attributes"]["service.name"], "billing-agent");
    if (!span["parent_span_id"].is_null()) ++children;
  }
  EXPECT_EQ(children, 3);
}

INSTANTIATE_TEST_SUITE_P(Encodings, OtlpSdkServeTest, ::testing::Values("proto", "json"));

}  // namespace
}  // namespace mend::server
