// The traces routes and the OTLP receiver: spans other programs send (protobuf, JSON, gzip) are
// listed beside mend's own runs, and bad requests get clear errors.
#include <gmock/gmock.h>
#include <zlib.h>

#include "mend/agent/agent.h"
#include "mend/obs/otlp_encode.h"
#include "mend/obs/trace.h"
#include "tests/server/server_fixture.h"
#include "tests/support/raw_http.h"

namespace mend::server {
namespace {

using ::testing::HasSubstr;

constexpr char kTrace[] = "0af7651916cd43dd8448eb211c80319c";

std::vector<obs::SpanData> ForeignSpans() {
  const Time t0 = Time(std::chrono::seconds(1'700'000'000));
  obs::SpanData root;
  root.context.trace_id = kTrace;
  root.context.span_id = "b7ad6b7169203331";
  root.name = "checkout";
  root.kind = obs::SpanKind::kServer;
  root.start = t0;
  root.end = t0 + std::chrono::milliseconds(120);
  root.attributes.push_back({"http.route", std::string("/cart")});
  obs::SpanData child = root;
  child.context.span_id = "00f067aa0ba902b7";
  child.parent_span_id = root.context.span_id;
  child.name = "charge card";
  child.kind = obs::SpanKind::kClient;
  child.status = obs::SpanStatus::kError;
  child.status_message = "declined";
  child.attributes = {{"retries", int64_t{2}}};
  child.events.push_back({"exception", t0 + std::chrono::milliseconds(5), {}});
  return {child, root};
}

std::string Gzip(const std::string& data) {
  z_stream s{};
  deflateInit2(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&s, data.size()) + 32, '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  s.avail_in = static_cast<uInt>(data.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  deflate(&s, Z_FINISH);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

class TracesApiTest : public ServerTest {
 protected:
  obs::OtlpResource Resource() {
    obs::OtlpResource resource;
    resource.attributes = {{"service.name", std::string("shop")}};
    resource.scope_name = "shop-tracer";
    return resource;
  }
  httplib::Result PostOtlp(const std::string& body, const std::string& type,
                           const httplib::Headers& headers = {}) {
    return client_->Post("/v1/traces", headers, body, type.c_str());
  }
};

TEST_F(TracesApiTest, ProtobufSpansAreListedAndShown) {
  StartServer();
  auto posted =
      PostOtlp(obs::EncodeOtlpProtobuf(Resource(), ForeignSpans()), "application/x-protobuf");
  ASSERT_TRUE(posted);
  EXPECT_EQ(posted->status, 200) << posted->body;
  EXPECT_EQ(posted->get_header_value("Content-Type"), "application/x-protobuf");
  EXPECT_EQ(posted->body, "");

  Reply list = Get("/api/v1/traces");
  ASSERT_EQ(list.status, 200) << list.text;
  ASSERT_EQ(list.body["traces"].size(), 1u);
  const nlohmann::json& t = list.body["traces"][0];
  EXPECT_EQ(t["trace_id"], kTrace);
  EXPECT_EQ(t["name"], "checkout");
  EXPECT_EQ(t["spans"], 2);
  EXPECT_EQ(t["errors"], 1);
  EXPECT_EQ(t["run_id"], nullptr);
  EXPECT_EQ(t["service"], "shop");
  EXPECT_EQ(list.body["total"], 1);

  Reply trace = Get(std::string("/api/v1/traces/") + kTrace);
  ASSERT_EQ(trace.status, 200) << trace.text;
  ASSERT_EQ(trace.body["spans"].size(), 2u);
  bool saw_child = false;
  for (const nlohmann::json& span : trace.body["spans"]) {
    if (span["name"] != "charge card") continue;
    saw_child = true;
    EXPECT_EQ(span["parent_span_id"], "b7ad6b7169203331");
    EXPECT_EQ(span["status"], "error");
    EXPECT_EQ(span["status_message"], "declined");
    EXPECT_EQ(span["attributes"]["retries"], 2);
    EXPECT_EQ(span["events"][0]["name"], "exception");
  }
  EXPECT_TRUE(saw_child);
}

TEST_F(TracesApiTest, JsonAndGzipBodiesAreAccepted) {
  StartServer();
  auto json = PostOtlp(obs::EncodeOtlpJson(Resource(), ForeignSpans()), "application/json");
  ASSERT_TRUE(json);
  EXPECT_EQ(json->status, 200) << json->body;
  EXPECT_EQ(json->body, "{}");

  std::vector<obs::SpanData> other = ForeignSpans();
  for (obs::SpanData& s : other) s.context.trace_id = "1af7651916cd43dd8448eb211c80319c";
  auto gz = PostOtlp(Gzip(obs::EncodeOtlpProtobuf(Resource(), other)), "application/x-protobuf",
                     {{"Content-Encoding", "gzip"}});
  ASSERT_TRUE(gz);
  EXPECT_EQ(gz->status, 200) << gz->body;
  Reply list = Get("/api/v1/traces?limit=1");
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.body["total"], 2);
  EXPECT_EQ(list.body["more"], 1);
  ASSERT_TRUE(list.body["next"].is_string());
  Reply second = Get("/api/v1/traces?limit=1&cursor=" + list.body["next"].get<std::string>());
  ASSERT_EQ(second.status, 200);
  ASSERT_EQ(second.body["traces"].size(), 1u);
  EXPECT_NE(second.body["traces"][0]["trace_id"], list.body["traces"][0]["trace_id"]);
  EXPECT_EQ(second.body["next"], nullptr);
}

TEST_F(TracesApiTest, BadRequestsGetClearErrors) {
  StartServer();
  auto type = PostOtlp("x", "text/plain");
  ASSERT_TRUE(type);
  EXPECT_EQ(type->status, 415);
  EXPECT_THAT(type->body, HasSubstr("application/x-protobuf"));

  auto garbage = PostOtlp(std::string("\x0a\xff\xff\xff", 4), "application/x-protobuf");
  ASSERT_TRUE(garbage);
  EXPECT_EQ(garbage->status, 400);
  EXPECT_THAT(garbage->body, HasSubstr("INVALID_ARGUMENT"));

  auto bad_gzip =
      PostOtlp("not gzip at all", "application/x-protobuf", {{"Content-Encoding", "gzip"}});
  ASSERT_TRUE(bad_gzip);
  EXPECT_EQ(bad_gzip->status, 400);

  auto brotli = PostOtlp("x", "application/json", {{"Content-Encoding", "br"}});
  ASSERT_TRUE(brotli);
  EXPECT_EQ(brotli->status, 400);

  EXPECT_EQ(Get("/api/v1/traces/not-a-trace").status, 400);
  EXPECT_EQ(Get("/api/v1/traces/2af7651916cd43dd8448eb211c80319c").status, 404);
  EXPECT_EQ(Get("/api/v1/traces?limit=0").status, 400);
  EXPECT_EQ(Get("/api/v1/traces?cursor=zzz").status, 400);
  EXPECT_EQ(Get("/api/v1/runs/nope/trace").status, 404);
  // Nothing was stored by the refused requests.
  EXPECT_EQ(Get("/api/v1/traces").body["total"], 0);
}

TEST_F(TracesApiTest, AChunkedBodyIsBoundedToo) {
  StartServer();
  // OpenTelemetry's JavaScript exporters send chunked bodies, without a Content-Length: those
  // are read, up to the same limit.
  httplib::Client raw("127.0.0.1", server_->port());
  const std::string chunk(1 << 20, 'x');
  auto res = raw.Post(
      "/v1/traces",
      [&chunk](size_t offset, httplib::DataSink& sink) {
        if (offset < (40u << 20)) {
          sink.write(chunk.data(), chunk.size());
        } else {
          sink.done();
        }
        return true;
      },
      "application/json");
  // The server answers 413 and closes while the client still sends, so the client may see
  // either the answer or the closed connection; either way nothing past the limit was kept.
  if (res) {
    EXPECT_EQ(res->status, 413);
  } else {
    EXPECT_EQ(res.error(), httplib::Error::Write);
  }
  EXPECT_EQ(Get("/api/v1/traces").body["total"], 0);
  EXPECT_EQ(Get("/healthz").status, 200);
}

TEST_F(TracesApiTest, AGzipBodyIsBoundedByItsInflatedSize) {
  StartServer();
  // 40 MiB of zeros compress to about 40 KiB: small on the wire, past the limit once inflated.
  const std::string bomb = Gzip(std::string(40u << 20, '\0'));
  ASSERT_LT(bomb.size(), 1u << 20);
  auto res = PostOtlp(bomb, "application/x-protobuf", {{"Content-Encoding", "gzip"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_EQ(Get("/api/v1/traces").body["total"], 0);
}

TEST_F(TracesApiTest, AnAnnouncedBodyOverTheLimitIsRefusedUnread) {
  StartServer();
  // Only the head is sent: the server answers before reading a byte of the body. (cpp-httplib's
  // client would add a second Content-Length for its empty body, which is refused as ambiguous.)
  const int fd = testing::RawConnect(server_->port());
  testing::RawSend(fd,
                   "POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "Content-Type: application/x-protobuf\r\nContent-Length: " +
                       std::to_string(64u << 20) + "\r\n\r\n");
  EXPECT_THAT(testing::RawReadResponse(fd), ::testing::StartsWith("HTTP/1.1 413"));
  ::close(fd);
}

TEST_F(TracesApiTest, ARunsTraceIsFoundByItsRunId) {
  WriteAgent("helper");
  std::vector<llm::ScriptedStep> steps(1);
  steps[0].text = "done";
  StartServer(steps);
  auto agent = app::OpenAgent(*runtime_, agents_dir_ + "/helper");
  MEND_ASSERT_OK(agent);
  agent::SendOptions send;
  send.run_id = "traced-1";
  MEND_ASSERT_OK((*agent)->Send("do it", send));
  ASSERT_NE(runtime_->tracer, nullptr);
  MEND_ASSERT_OK(runtime_->tracer->Flush(std::chrono::seconds(10)));

  Reply trace = Get("/api/v1/runs/traced-1/trace");
  ASSERT_EQ(trace.status, 200) << trace.text;
  EXPECT_EQ(trace.body["run_id"], "traced-1");
  bool saw_chat = false;
  for (const nlohmann::json& span : trace.body["spans"]) {
    saw_chat = saw_chat || span["name"].get<std::string>().rfind("chat", 0) == 0;
  }
  EXPECT_TRUE(saw_chat) << trace.text;
  Reply list = Get("/api/v1/traces");
  ASSERT_EQ(list.body["traces"].size(), 1u);
  EXPECT_EQ(list.body["traces"][0]["run_id"], "traced-1");
  EXPECT_EQ(list.body["traces"][0]["service"], "mend");
}

// A one-span trace another program sent: trace `n` (1..9), started n minutes after t0, of agent
// `agent` and model `model` when set, failed with `error` when set.
obs::SpanData FilterSpan(int n, const std::string& agent, const std::string& model,
                         const std::string& error) {
  obs::SpanData span;
  span.context.trace_id = std::string(31, 'a') + std::to_string(n);
  span.context.span_id = std::string(15, 'b') + std::to_string(n);
  span.name = "work " + std::to_string(n);
  span.start = Time(std::chrono::seconds(1'700'000'000)) + std::chrono::minutes(n);
  span.end = span.start + std::chrono::seconds(1);
  if (!agent.empty()) span.attributes.push_back({"gen_ai.agent.name", agent});
  if (!model.empty()) span.attributes.push_back({"gen_ai.request.model", model});
  if (!error.empty()) {
    span.status = obs::SpanStatus::kError;
    span.status_message = error;
  }
  return span;
}

class TraceFiltersTest : public TracesApiTest {
 protected:
  // Traces 1..4: 1 and 2 of service "shop", 3 and 4 of "bank"; agents, models and errors as below.
  void Seed() {
    StartServer();
    obs::OtlpResource shop = Resource();
    obs::OtlpResource bank = Resource();
    bank.attributes = {{"service.name", std::string("bank")}};
    Post(shop, {FilterSpan(1, "planner", "gpt-small", ""),
                FilterSpan(2, "writer", "gpt-small", "Rate limit exceeded")});
    Post(bank,
         {FilterSpan(3, "planner", "big-model", "disk full"), FilterSpan(4, "", "big-model", "")});
  }
  void Post(const obs::OtlpResource& resource, const std::vector<obs::SpanData>& spans) {
    auto posted = PostOtlp(obs::EncodeOtlpJson(resource, spans), "application/json");
    ASSERT_TRUE(posted);
    ASSERT_EQ(posted->status, 200) << posted->body;
  }
  // The last digits of the traces the list answers, newest first.
  std::vector<int> Listed(const std::string& query) {
    Reply list = Get("/api/v1/traces?" + query);
    EXPECT_EQ(list.status, 200) << query << ": " << list.text;
    std::vector<int> ids;
    for (const nlohmann::json& t : list.body["traces"]) {
      ids.push_back(t["trace_id"].get<std::string>().back() - '0');
    }
    EXPECT_EQ(list.body["total"], ids.size()) << query;
    return ids;
  }
};

TEST_F(TraceFiltersTest, EachFilterNarrowsTheList) {
  Seed();
  using ::testing::ElementsAre;
  EXPECT_THAT(Listed(""), ElementsAre(4, 3, 2, 1));
  EXPECT_THAT(Listed("agent=planner"), ElementsAre(3, 1));
  EXPECT_THAT(Listed("service=shop"), ElementsAre(2, 1));
  EXPECT_THAT(Listed("status=error"), ElementsAre(3, 2));
  EXPECT_THAT(Listed("status=ok"), ElementsAre(4, 1));
  EXPECT_THAT(Listed("model=big-model"), ElementsAre(4, 3));
  EXPECT_THAT(Listed("from=2023-11-14T22:16:00Z"), ElementsAre(4, 3));
  EXPECT_THAT(Listed("to=2023-11-14T22:16:00Z"), ElementsAre(2, 1));
  EXPECT_THAT(Listed("error_text=rate%20LIMIT"), ElementsAre(2));
  // An empty value is no filter.
  EXPECT_THAT(Listed("agent=&status=&from="), ElementsAre(4, 3, 2, 1));
}

TEST_F(TraceFiltersTest, FiltersCombineAndPage) {
  Seed();
  using ::testing::ElementsAre;
  EXPECT_THAT(Listed("agent=planner&status=error"), ElementsAre(3));
  EXPECT_THAT(Listed("service=shop&model=gpt-small&error_text=rate"), ElementsAre(2));
  EXPECT_THAT(Listed("service=bank&agent=writer"), ElementsAre());
  EXPECT_THAT(Listed("from=2023-11-14T22:15:00Z&to=2023-11-14T22:17:00Z"), ElementsAre(3, 2));

  Reply first = Get("/api/v1/traces?limit=1&model=gpt-small");
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_EQ(first.body["total"], 2);
  EXPECT_EQ(first.body["more"], 1);
  ASSERT_TRUE(first.body["next"].is_string());
  Reply second =
      Get("/api/v1/traces?limit=1&model=gpt-small&cursor=" + first.body["next"].get<std::string>());
  ASSERT_EQ(second.status, 200) << second.text;
  ASSERT_EQ(second.body["traces"].size(), 1u);
  EXPECT_EQ(second.body["traces"][0]["trace_id"], std::string(31, 'a') + "1");
  EXPECT_EQ(second.body["more"], 0);
  EXPECT_EQ(second.body["next"], nullptr);
}

TEST_F(TraceFiltersTest, ABadParameterIsRefusedNamingIt) {
  Seed();
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"status=failed", "status"},
      {"from=yesterday", "from"},
      {"to=2023-11-14", "to"},
      {"from=2023-11-14T22:16:00Z&to=2023-11-14T22:15:00Z", "from"},
      {"agent=" + std::string(2000, 'x'), "agent"},
      {"error_text=" + std::string(2000, 'x'), "error_text"},
  };
  for (const auto& [query, name] : bad) {
    Reply r = Get("/api/v1/traces?" + query);
    EXPECT_EQ(r.status, 400) << query;
    EXPECT_EQ(r.body["error"]["code"], "INVALID_ARGUMENT") << query;
    EXPECT_THAT(r.body["error"]["message"].get<std::string>(), ::testing::StartsWith(name + ":"))
        << query;
  }
}

}  // namespace
}  // namespace mend::server
