// The OTLP exporter, its libcurl transport and both encoders against a receiver that decodes each
// request with the protobuf definitions generated from opentelemetry-proto (as shipped in the
// @opentelemetry/otlp-transformer npm package): every field of every span must come back as sent.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/obs/otlp.h"
#include "tests/e2e/child_process.h"
#include "tests/obs/otlp_sample.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::IsOk;
using json = nlohmann::json;
using namespace std::chrono_literals;

const std::string kSupportDir = MEND_OTLP_SUPPORT_DIR;

std::string Nanos(Time t) {
  return std::to_string(
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

void ExpectValue(const json& v, const AttributeValue& expected, const std::string& key) {
  SCOPED_TRACE(key);
  if (const auto* s = std::get_if<std::string>(&expected)) {
    EXPECT_EQ(v.value("stringValue", "<absent>"), *s);
  } else if (const auto* i = std::get_if<int64_t>(&expected)) {
    EXPECT_EQ(v.value("intValue", "<absent>"), std::to_string(*i));
  } else if (const auto* d = std::get_if<double>(&expected)) {
    ASSERT_TRUE(v.contains("doubleValue"));
    EXPECT_EQ(v["doubleValue"].get<double>(), *d);
  } else if (const auto* b = std::get_if<bool>(&expected)) {
    ASSERT_TRUE(v.contains("boolValue"));
    EXPECT_EQ(v["boolValue"].get<bool>(), *b);
  } else {
    const auto& items = std::get<std::vector<std::string>>(expected);
    const json values = v["arrayValue"].value("values", json::array());
    ASSERT_EQ(values.size(), items.size());
    for (size_t i = 0; i < items.size(); ++i) EXPECT_EQ(values[i]["stringValue"], items[i]);
  }
}

void ExpectAttributes(const json& object, const std::vector<Attribute>& expected) {
  const json attrs = object.value("attributes", json::array());
  ASSERT_EQ(attrs.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(attrs[i]["key"], expected[i].key);
    ExpectValue(attrs[i]["value"], expected[i].value, expected[i].key);
  }
}

void ExpectSpan(const json& s, const SpanData& want) {
  SCOPED_TRACE(want.name);
  EXPECT_EQ(s.value("traceId", ""), want.context.trace_id);
  EXPECT_EQ(s.value("spanId", ""), want.context.span_id);
  EXPECT_EQ(s.value("parentSpanId", ""), want.parent_span_id);
  EXPECT_EQ(s.value("flags", 0), want.context.flags);
  EXPECT_EQ(s.value("name", ""), want.name);
  EXPECT_EQ(s.value("kind", 0), static_cast<int>(want.kind));
  EXPECT_EQ(s.value("startTimeUnixNano", ""), Nanos(want.start));
  EXPECT_EQ(s.value("endTimeUnixNano", ""), Nanos(want.end));
  ExpectAttributes(s, want.attributes);
  const json events = s.value("events", json::array());
  ASSERT_EQ(events.size(), want.events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].value("name", ""), want.events[i].name);
    EXPECT_EQ(events[i].value("timeUnixNano", ""), Nanos(want.events[i].time));
    ExpectAttributes(events[i], want.events[i].attributes);
  }
  const json links = s.value("links", json::array());
  ASSERT_EQ(links.size(), want.links.size());
  for (size_t i = 0; i < links.size(); ++i) {
    EXPECT_EQ(links[i].value("traceId", ""), want.links[i].context.trace_id);
    EXPECT_EQ(links[i].value("spanId", ""), want.links[i].context.span_id);
    EXPECT_EQ(links[i].value("flags", 0), want.links[i].context.flags);
    ExpectAttributes(links[i], want.links[i].attributes);
  }
  const json status = s.value("status", json::object());
  EXPECT_EQ(status.value("code", 0), static_cast<int>(want.status));
  EXPECT_EQ(status.value("message", ""), want.status_message);
}

class OtlpReceiverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(MEND_NODE_EXECUTABLE).empty()) {
      GTEST_SKIP() << "node is not installed (scripts/bootstrap installs it)";
    }
    if (!std::filesystem::exists(kSupportDir +
                                 "/node_modules/@opentelemetry/otlp-transformer/build/src/"
                                 "generated/root.js")) {
      GTEST_SKIP() << "the npm packages of tests/support/otlp are not installed (run "
                      "scripts/bootstrap, or npm ci in tests/support/otlp)";
    }
  }

  // Starts the receiver and returns its base URL (no path: the exporter appends /v1/traces).
  std::string StartReceiver(std::vector<std::string> args) {
    std::vector<std::string> argv = {MEND_NODE_EXECUTABLE, kSupportDir + "/receiver.js"};
    argv.insert(argv.end(), args.begin(), args.end());
    Result<std::unique_ptr<mend::testing::ChildProcess>> child =
        mend::testing::ChildProcess::Spawn(argv, {"PATH=/usr/bin:/bin"});
    EXPECT_TRUE(child.ok()) << child.status();
    receiver_ = std::move(child).value();
    Result<std::string> line = receiver_->ReadStdoutLine(20s);
    EXPECT_TRUE(line.ok()) << line.status();
    const std::string prefix = "listening on ";
    EXPECT_EQ(line->rfind(prefix, 0), 0u) << *line;
    return "http://" + line->substr(prefix.size());
  }

  json NextRequest() {
    Result<std::string> line = receiver_->ReadStdoutLine(20s);
    EXPECT_TRUE(line.ok()) << line.status();
    return line.ok() ? json::parse(*line) : json::object();
  }

  std::unique_ptr<OtlpExporter> Exporter(const std::string& base, OtlpProtocol protocol) {
    OtlpExporterOptions options;
    options.url = OtlpTracesUrl(base).value();
    options.headers = ParseOtlpHeaders("x-test=a%2Cb").value();
    options.protocol = protocol;
    options.resource = testing::SampleResource();
    options.transport = NewCurlOtlpTransport();
    options.clock = SystemClock::Default();
    options.random = &random_;
    options.initial_backoff = 10ms;
    options.max_backoff = 50ms;  // caps the receiver's Retry-After: 1
    return OtlpExporter::Create(std::move(options)).value();
  }

  void ExpectRequest(const json& line, std::string_view content_type) {
    ASSERT_EQ(line.value("status", 0), 200) << line.dump();
    EXPECT_EQ(line.value("contentType", ""), content_type);
    EXPECT_EQ(line["headers"].value("x-test", ""), "a,b");
    const json& rs = line["request"]["resourceSpans"];
    ASSERT_EQ(rs.size(), 1u);
    ExpectAttributes(rs[0]["resource"], testing::SampleResource().attributes);
    const json& ss = rs[0]["scopeSpans"];
    ASSERT_EQ(ss.size(), 1u);
    EXPECT_EQ(ss[0]["scope"].value("name", ""), "mend");
    EXPECT_EQ(ss[0]["scope"].value("version", ""), "0.9.0");
    const std::vector<SpanData> sent = testing::SampleSpans();
    const json spans = ss[0].value("spans", json::array());
    ASSERT_EQ(spans.size(), sent.size());
    for (size_t i = 0; i < sent.size(); ++i) ExpectSpan(spans[i], sent[i]);
  }

  SeededRandom random_{11};
  std::unique_ptr<mend::testing::ChildProcess> receiver_;
};

TEST_F(OtlpReceiverTest, ProtobufRequestDecodesToEveryFieldSent) {
  auto exporter = Exporter(StartReceiver({}), OtlpProtocol::kHttpProtobuf);
  for (const SpanData& s : testing::SampleSpans()) exporter->OnEnd(s);
  ASSERT_THAT(exporter->Flush(20s), IsOk());
  ExpectRequest(NextRequest(), "application/x-protobuf");
}

TEST_F(OtlpReceiverTest, JsonRequestDecodesToEveryFieldSent) {
  auto exporter = Exporter(StartReceiver({}), OtlpProtocol::kHttpJson);
  for (const SpanData& s : testing::SampleSpans()) exporter->OnEnd(s);
  ASSERT_THAT(exporter->Flush(20s), IsOk());
  ExpectRequest(NextRequest(), "application/json");
}

TEST_F(OtlpReceiverTest, A503IsRetriedAndTheBatchDeliveredOnce) {
  auto exporter = Exporter(StartReceiver({"--fail-first", "1"}), OtlpProtocol::kHttpProtobuf);
  for (const SpanData& s : testing::SampleSpans()) exporter->OnEnd(s);
  ASSERT_THAT(exporter->Flush(20s), IsOk());
  EXPECT_EQ(NextRequest().value("status", 0), 503);
  ExpectRequest(NextRequest(), "application/x-protobuf");
  EXPECT_EQ(exporter->spans_exported(), testing::SampleSpans().size());
  EXPECT_EQ(exporter->export_failures(), 1u);
  EXPECT_EQ(exporter->spans_dropped(), 0u);
}

// The real `mend run`, configured with observe.otlp.endpoint, sends its run's spans to the
// collector: every span of the trace arrives, decoded by the official definitions, when the
// process exits.
TEST_F(OtlpReceiverTest, MendRunExportsItsTrace) {
  const std::string base = StartReceiver({});
  std::string dir = (std::filesystem::temp_directory_path() / "mend-otlp-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::filesystem::create_directories(dir + "/agent/ws");
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
  };
  write("agent/agent.toml", "name = \"exported\"\ntools = [\"read_file\"]\nworkspace = \"ws\"\n");
  write("agent/instructions.md", "Answer.\n");
  write("agent/ws/notes.txt", "Tuesday\n");
  write("script.json", R"([
    {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
    {"text": "Tuesday"}])");
  Result<mend::testing::ChildOutput> run = mend::testing::RunProcess(
      {MEND_BINARY, "--home", dir + "/home", "--json", "run", dir + "/agent", "when?", "--id", "r1",
       "--provider", "scripted", "--script-file", dir + "/script.json"},
      {"PATH=/usr/bin:/bin", "HOME=" + dir, "MEND_OTLP_ENDPOINT=" + base}, 20s);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_TRUE(run->status.exited && run->status.code == 0) << run->err;
  const std::string trace_id = json::parse(run->out).value("trace_id", "");
  ASSERT_EQ(trace_id.size(), 32u) << run->out;

  // Attempt, two model turns, one tool call; maybe in several requests.
  std::multiset<std::string> names;
  while (names.size() < 4) {
    const json line = NextRequest();
    ASSERT_EQ(line.value("status", 0), 200) << line.dump();
    EXPECT_EQ(line.value("contentType", ""), "application/x-protobuf");
    for (const json& rs : line["request"]["resourceSpans"]) {
      for (const json& ss : rs["scopeSpans"]) {
        for (const json& span : ss["spans"]) {
          EXPECT_EQ(span.value("traceId", ""), trace_id) << span.dump();
          names.insert(span.value("name", ""));
        }
      }
    }
  }
  EXPECT_EQ(names, (std::multiset<std::string>{"invoke_agent exported", "chat", "chat",
                                               "execute_tool read_file"}));
  std::filesystem::remove_all(dir);
}

// A home with an agent that reads a file and answers, and `mend run` of it as run `id`, exporting
// to `endpoint`; the run's trace id.
class MendRunExport {
 public:
  MendRunExport() {
    dir_ = (std::filesystem::temp_directory_path() / "mend-otlp-XXXXXX").string();
    EXPECT_NE(mkdtemp(dir_.data()), nullptr);
    std::filesystem::create_directories(dir_ + "/agent/ws");
    Write("agent/agent.toml", "name = \"exported\"\ntools = [\"read_file\"]\nworkspace = \"ws\"\n");
    Write("agent/instructions.md", "Answer.\n");
    Write("agent/ws/notes.txt", "Tuesday\n");
  }
  ~MendRunExport() { std::filesystem::remove_all(dir_); }

  std::string Run(const std::string& id, const std::string& endpoint) {
    Write(id + ".json", R"([
      {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
      {"text": "Tuesday"}])");
    Result<mend::testing::ChildOutput> run = mend::testing::RunProcess(
        {MEND_BINARY, "--home", dir_ + "/home", "--json", "run", dir_ + "/agent", "when?", "--id",
         id, "--provider", "scripted", "--script-file", dir_ + "/" + id + ".json"},
        {"PATH=/usr/bin:/bin", "HOME=" + dir_, "MEND_OTLP_ENDPOINT=" + endpoint}, 20s);
    EXPECT_TRUE(run.ok()) << run.status();
    if (!run.ok()) return "";
    EXPECT_TRUE(run->status.exited && run->status.code == 0) << run->err;
    return json::parse(run->out).value("trace_id", "");
  }

 private:
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
  }
  std::string dir_;
};

// The spans of accepted requests by name, per trace id, until `want` spans of `trace_id` came.
std::multiset<std::string> SpansOf(const std::string& trace_id, size_t want,
                                   const std::function<json()>& next) {
  std::multiset<std::string> names;
  while (names.size() < want) {
    const json line = next();
    if (line.empty()) break;  // no more requests came (the failure is reported by `next`)
    if (line.value("status", 0) != 200) continue;  // a refused request; its spans come again
    for (const json& rs : line["request"]["resourceSpans"]) {
      for (const json& ss : rs["scopeSpans"]) {
        for (const json& span : ss["spans"]) {
          if (span.value("traceId", "") == trace_id) names.insert(span.value("name", ""));
        }
      }
    }
  }
  return names;
}

const std::multiset<std::string> kRunSpans = {"invoke_agent exported", "chat", "chat",
                                              "execute_tool read_file"};

// The issue's case: a short run, a collector that answers its first request with 503. The
// exiting process retries within its shutdown deadline (after the receiver's Retry-After: 1) and
// every span arrives.
TEST_F(OtlpReceiverTest, MendRunsExitRetriesA503AndDeliversItsTrace) {
  const std::string base = StartReceiver({"--fail-first", "1"});
  MendRunExport home;
  const std::string trace_id = home.Run("r1", base);
  ASSERT_EQ(trace_id.size(), 32u);
  EXPECT_EQ(NextRequest().value("status", 0), 503);
  EXPECT_EQ(SpansOf(trace_id, 4, [this] { return NextRequest(); }), kRunSpans);
}

// A run whose collector cannot be reached at all leaves its spans in observe.db; the next `mend
// run` with a collector sends them along with its own.
TEST_F(OtlpReceiverTest, SpansARunCouldNotExportAreSentByTheNextRun) {
  MendRunExport home;
  // Nothing listens on this port: every request is refused.
  const std::string unreachable = StartReceiver({});
  receiver_.reset();
  const std::string first = home.Run("r1", unreachable);
  ASSERT_EQ(first.size(), 32u);

  const std::string base = StartReceiver({});
  const std::string second = home.Run("r2", base);
  ASSERT_EQ(second.size(), 32u);
  std::multiset<std::string> both;
  while (both.size() < 8) {
    const json line = NextRequest();
    ASSERT_EQ(line.value("status", 0), 200) << line.dump();
    for (const json& rs : line["request"]["resourceSpans"]) {
      for (const json& ss : rs["scopeSpans"]) {
        for (const json& span : ss["spans"]) {
          const std::string trace = span.value("traceId", "");
          EXPECT_TRUE(trace == first || trace == second) << span.dump();
          both.insert((trace == first ? "r1 " : "r2 ") + span.value("name", ""));
        }
      }
    }
  }
  std::multiset<std::string> want;
  for (const std::string& name : kRunSpans) {
    want.insert("r1 " + name);
    want.insert("r2 " + name);
  }
  EXPECT_EQ(both, want);
}

}  // namespace
}  // namespace mend::obs
