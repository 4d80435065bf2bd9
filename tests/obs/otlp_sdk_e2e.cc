// What the official OpenTelemetry JS SDK sends decodes as it should: tests/support/otlp_sdk/
// send_spans.js exports a small trace (both OTLP/HTTP encodings) to an HTTP server inside this
// test, which feeds each body to DecodeOtlpTraces; the spans must come back with their names,
// parents, kinds, status, events, typed attributes and the SDK's resource (service.name), and
// land in observe.db as one trace.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "mend/obs/otlp_decode.h"
#include "mend/obs/span_store.h"
#include "tests/e2e/child_process.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::IsOk;
using ::testing::ElementsAre;
using json = nlohmann::json;
using namespace std::chrono_literals;

const std::string kSdkDir = MEND_OTLP_SDK_DIR;

// Accepts POST /v1/traces on an ephemeral loopback port and decodes every body by its
// Content-Type; POST /v1/reject answers 400.
class CaptureServer {
 public:
  CaptureServer() {
    server_.Post("/v1/traces", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string type = req.get_header_value("Content-Type");
      const OtlpProtocol protocol = type.rfind("application/json", 0) == 0
                                        ? OtlpProtocol::kHttpJson
                                        : OtlpProtocol::kHttpProtobuf;
      std::lock_guard<std::mutex> lock(mu_);
      content_types_.push_back(type);
      decoded_.push_back(DecodeOtlpTraces(req.body, protocol));
      res.status = decoded_.back().ok() ? 200 : 400;
      res.set_content(protocol == OtlpProtocol::kHttpJson ? "{}" : "", type.c_str());
    });
    server_.Post("/v1/reject",
                 [](const httplib::Request&, httplib::Response& res) { res.status = 400; });
    port_ = server_.bind_to_any_port("127.0.0.1");
    // Connections queue on the bound socket until the accept loop runs.
    thread_ = std::thread([this] {
      server_.listen_after_bind();
      listen_returned_ = true;
    });
  }
  ~CaptureServer() {
    // stop() only ends an accept loop that has started.
    while (!server_.is_running() && !listen_returned_) std::this_thread::yield();
    server_.stop();
    thread_.join();
  }

  std::string Url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
  }
  std::vector<std::string> content_types() {
    std::lock_guard<std::mutex> lock(mu_);
    return content_types_;
  }
  // Every span of every request; fails the test when a request did not decode.
  std::vector<SpanData> spans() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<SpanData> out;
    for (const Result<std::vector<SpanData>>& r : decoded_) {
      EXPECT_THAT(r, IsOk());
      if (r.ok()) out.insert(out.end(), r->begin(), r->end());
    }
    return out;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> listen_returned_{false};
  std::mutex mu_;
  std::vector<std::string> content_types_;
  std::vector<Result<std::vector<SpanData>>> decoded_;
};

const AttributeValue* Attr(const SpanData& span, std::string_view key) {
  return FindAttribute(span.attributes, key);
}

class OtlpSdkTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (std::string(MEND_NODE_EXECUTABLE).empty()) {
      GTEST_SKIP() << "node is not installed (scripts/bootstrap installs it)";
    }
    if (!std::filesystem::exists(kSdkDir + "/node_modules/@opentelemetry/sdk-trace-node")) {
      GTEST_SKIP() << "the npm packages of tests/support/otlp_sdk are not installed (run "
                      "scripts/bootstrap, or npm ci in tests/support/otlp_sdk)";
    }
  }

  Result<mend::testing::ChildOutput> Send(const std::string& url, const std::string& service,
                                          int children) {
    return mend::testing::RunProcess({MEND_NODE_EXECUTABLE, kSdkDir + "/send_spans.js", url,
                                      GetParam(), service, std::to_string(children)},
                                     {"PATH=/usr/bin:/bin"}, 60s);
  }
};

void ExpectChild(const SpanData& child, int i, const SpanData& root) {
  SCOPED_TRACE(child.name);
  EXPECT_EQ(child.name, "tool.call " + std::to_string(i));
  EXPECT_EQ(child.context.trace_id, root.context.trace_id);
  EXPECT_EQ(child.parent_span_id, root.context.span_id);
  EXPECT_EQ(child.kind, SpanKind::kInternal);
  EXPECT_GE(child.end, child.start);
  ASSERT_NE(Attr(child, "tool.index"), nullptr);
  EXPECT_EQ(*Attr(child, "tool.index"), AttributeValue(int64_t{i}));
  EXPECT_EQ(*Attr(child, "tool.name"), AttributeValue("tool-" + std::to_string(i)));
  EXPECT_EQ(*Attr(child, "tool.score"), AttributeValue(i + 0.5));
  EXPECT_EQ(*Attr(child, "tool.cached"), AttributeValue(i % 2 == 1));
  EXPECT_EQ(*Attr(child, "tool.tags"), AttributeValue(std::vector<std::string>{"alpha", "beta"}));
  EXPECT_EQ(*Attr(child, "tool.sizes"), AttributeValue(std::string("[1,2,3]")));
  if (i != 0) {
    EXPECT_EQ(child.status, SpanStatus::kUnset);
    EXPECT_TRUE(child.events.empty());
    return;
  }
  EXPECT_EQ(child.status, SpanStatus::kError);
  EXPECT_EQ(child.status_message, "tool failed");
  ASSERT_EQ(child.events.size(), 1u);
  EXPECT_EQ(child.events[0].name, "retry");
  EXPECT_THAT(child.events[0].attributes,
              ElementsAre(Attribute{"retry.attempt", int64_t{2}},
                          Attribute{"retry.reason", std::string("timeout")}));
}

TEST_P(OtlpSdkTest, SdkTraceDecodesAndListsAsOneTrace) {
  CaptureServer server;
  const std::string service = "sdk-" + GetParam();
  Result<mend::testing::ChildOutput> run = Send(server.Url("/v1/traces"), service, 3);
  ASSERT_THAT(run, IsOk());
  ASSERT_TRUE(run->status.exited && run->status.code == 0) << run->err;
  const json ids = json::parse(run->out);

  for (const std::string& type : server.content_types()) {
    EXPECT_EQ(type, GetParam() == "json" ? "application/json" : "application/x-protobuf");
  }
  std::map<std::string, SpanData> by_name;
  for (const SpanData& s : server.spans()) by_name[s.name] = s;
  ASSERT_EQ(by_name.size(), 4u);
  const SpanData& root = by_name["agent.run"];
  EXPECT_EQ(root.context.trace_id, ids["traceId"]);
  EXPECT_EQ(root.context.span_id, ids["rootSpanId"]);
  EXPECT_EQ(root.parent_span_id, "");
  EXPECT_EQ(root.kind, SpanKind::kServer);
  EXPECT_EQ(root.context.flags & 1, 1);  // sampled
  EXPECT_EQ(root.run_id, "");
  EXPECT_GT(root.start, Time{});
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"service.name", service},
                                                        {"deployment.environment.name", "test"},
                                                        {"otel.scope.name", "mend-otlp-sdk-peer"},
                                                        {"otel.scope.version", "1.0.0"},
                                                        {"agent.task", "send spans"}}) {
    ASSERT_NE(Attr(root, key), nullptr) << key;
    EXPECT_EQ(*Attr(root, key), AttributeValue(value)) << key;
  }
  for (int i = 0; i < 3; ++i) {
    const SpanData& child = by_name["tool.call " + std::to_string(i)];
    EXPECT_EQ(child.context.span_id, ids["childSpanIds"][i]);
    EXPECT_EQ(*Attr(child, "service.name"), AttributeValue(service));
    ExpectChild(child, i, root);
  }

  // Stored, the spans are one foreign trace.
  std::string dir = (std::filesystem::temp_directory_path() / "mend-otlp-sdk-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  {
    auto store = SpanStore::Open(dir + "/observe.db");
    ASSERT_THAT(store, IsOk());
    MEND_ASSERT_OK((*store)->Write(server.spans()));
    Result<TracePage> page = (*store)->ListTraces({});
    ASSERT_THAT(page, IsOk());
    ASSERT_EQ(page->traces.size(), 1u);
    const TraceSummary& t = page->traces[0];
    EXPECT_EQ(t.trace_id, ids["traceId"]);
    EXPECT_EQ(t.root_name, "agent.run");
    EXPECT_TRUE(t.has_root);
    EXPECT_EQ(t.service_name, service);
    EXPECT_EQ(t.span_count, 4);
    EXPECT_EQ(t.error_count, 1);
    EXPECT_EQ(t.run_id, "");
  }
  std::filesystem::remove_all(dir);
}

TEST_P(OtlpSdkTest, RefusedExportExitsNonZero) {
  CaptureServer server;
  Result<mend::testing::ChildOutput> run = Send(server.Url("/v1/reject"), "refused", 1);
  ASSERT_THAT(run, IsOk());
  EXPECT_TRUE(run->status.exited);
  EXPECT_EQ(run->status.code, 1) << run->err;
  EXPECT_THAT(run->err, ::testing::HasSubstr("export to"));
}

INSTANTIATE_TEST_SUITE_P(Protocols, OtlpSdkTest, ::testing::Values("json", "proto"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace mend::obs
