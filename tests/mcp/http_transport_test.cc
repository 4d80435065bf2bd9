// The Streamable HTTP transport, driven through the real client against a scripted MCP server that
// runs in the test process on loopback (cpp-httplib), and its SSE reader on its own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "mcp/sse_reader.h"
#include "mend/mcp/client.h"
#include "mend/mcp/transport.h"
#include "tests/support/status_matchers.h"

namespace mend::mcp {
namespace {

using ::mend::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;
using json = nlohmann::json;

constexpr auto kWait = std::chrono::seconds(10);
constexpr char kSession[] = "session-7f3a";

// What the server was sent, one HTTP request each.
struct Seen {
  std::string verb;    // POST, GET, DELETE
  std::string method;  // the JSON-RPC method; "" for a response or a GET or DELETE
  json message;
  std::string session;
  std::string version;
  std::string last_event_id;
  std::string authorization;
};

// How the server misbehaves, set before the client connects.
struct Script {
  bool sse = false;  // answer requests with an event stream rather than JSON
  bool assign_session = true;
  std::string session = kSession;  // what Mcp-Session-Id says
  std::string version;             // the revision initialize answers; "" echoes the client's
  int fail_status = 0;             // answer every POST with this status
  bool expire_session = false;     // forget the session once the client is initialized
  bool list_changed_before_call = false;
  bool ping_before_call = false;  // ask the client for a ping first and wait for its answer
  enum class Cut { kNone, kAfterFirstEvent, kAfterPriming, kWithoutIds } cut = Cut::kNone;
  int resumptions_that_break = 0;  // GETs that break again with nothing new
  std::string call_data;           // the data of the tools/call event, instead of the result
  bool hold_call = false;          // tools/call answers only when the server stops
  bool accept_call = false;        // tools/call is answered 202 Accepted, with no message
};

std::string Event(const std::string& id, const std::string& data) {
  return (id.empty() ? "" : "id: " + id + "\n") + "data: " + data + "\n\n";
}

class FakeHttpMcpServer {
 public:
  explicit FakeHttpMcpServer(Script script) : script_(std::move(script)) {
    server_.Post("/mcp", [this](const auto& req, auto& res) { OnPost(req, res); });
    server_.Get("/mcp", [this](const auto& req, auto& res) { OnGet(req, res); });
    server_.Delete("/mcp", [this](const auto& req, auto& res) {
      Record("DELETE", req, json());
      res.status = req.get_header_value("Mcp-Session-Id") == script_.session ? 200 : 404;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // The socket queues connections already; this only makes sure stop() finds the loop running.
    while (!server_.is_running()) std::this_thread::yield();
  }
  ~FakeHttpMcpServer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/mcp"; }

  std::vector<Seen> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  std::vector<std::string> verbs() {
    std::vector<std::string> out;
    for (const Seen& s : seen()) out.push_back(s.verb + " " + s.method);
    return out;
  }
  // Waits until the server was sent a request for which `pred` holds.
  bool WaitFor(const std::function<bool(const Seen&)>& pred) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kWait, [&] {
      for (const Seen& s : seen_) {
        if (pred(s)) return true;
      }
      return false;
    });
  }

 private:
  void Record(const std::string& verb, const httplib::Request& req, json message) {
    Seen s;
    s.verb = verb;
    if (message.is_object() && message.contains("method")) s.method = message["method"];
    s.message = std::move(message);
    s.session = req.get_header_value("Mcp-Session-Id");
    s.version = req.get_header_value("MCP-Protocol-Version");
    s.last_event_id = req.get_header_value("Last-Event-ID");
    s.authorization = req.get_header_value("Authorization");
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back(std::move(s));
    cv_.notify_all();
  }

  // Whether the session and revision headers are right; answers the error when not.
  bool CheckHeaders(const httplib::Request& req, httplib::Response& res) {
    const std::string session = req.get_header_value("Mcp-Session-Id");
    std::lock_guard<std::mutex> lock(mu_);
    if (script_.assign_session && (session != script_.session || expired_)) {
      res.status = session.empty() ? 400 : 404;
      return false;
    }
    if (req.get_header_value("MCP-Protocol-Version") != negotiated_) {
      res.status = 400;
      res.set_content("bad MCP-Protocol-Version", "text/plain");
      return false;
    }
    return true;
  }

  void OnPost(const httplib::Request& req, httplib::Response& res) {
    json message = json::parse(req.body, nullptr, false);
    Record("POST", req, message);
    if (script_.fail_status != 0) {
      res.status = script_.fail_status;
      res.set_content("missing or bad token", "text/plain");
      return;
    }
    const std::string method = message.value("method", "");
    if (method == "initialize") {
      std::lock_guard<std::mutex> lock(mu_);
      negotiated_ = script_.version.empty()
                        ? message["params"]["protocolVersion"].get<std::string>()
                        : script_.version;
      if (script_.assign_session) res.set_header("Mcp-Session-Id", script_.session);
      Answer(res, Result(message["id"], {{"protocolVersion", negotiated_},
                                         {"capabilities", {{"tools", json::object()}}},
                                         {"serverInfo", {{"name", "fake-http"}}}}));
      return;
    }
    if (!CheckHeaders(req, res)) return;
    if (!message.contains("id") || !message.contains("method")) {
      res.status = 202;  // a notification or a response
      std::lock_guard<std::mutex> lock(mu_);
      if (method == "notifications/initialized" && script_.expire_session) expired_ = true;
      if (message.value("id", json()) == "srv-1" && message.contains("result")) pong_ = true;
      cv_.notify_all();
      return;
    }
    if (method == "tools/list") {
      Answer(res, Result(message["id"], {{"tools", {{{"name", "echo"}}, {{"name", "add"}}}}}));
    } else if (method == "tools/call") {
      Call(message, res);
    } else {
      res.status = 400;
    }
  }

  void Call(const json& message, httplib::Response& res) {
    const std::string result =
        Result(message["id"], {{"content", {{{"type", "text"}, {"text", "called"}}}}});
    if (script_.hold_call) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_; });
      res.status = 503;
      return;
    }
    if (script_.accept_call) {
      res.status = 202;
      return;
    }
    const std::string note = Notification("notifications/tools/list_changed");
    using Cut = Script::Cut;
    switch (script_.cut) {
      case Cut::kAfterFirstEvent:
        return Stream(res, Event("c1", note), result, /*cut=*/true);
      case Cut::kAfterPriming:
        return Stream(res, "retry: 5\n" + Event("p1", ""), result, /*cut=*/false);
      case Cut::kWithoutIds:
        return Stream(res, Event("", note), result, /*cut=*/true);
      case Cut::kNone:
        break;
    }
    if (!script_.call_data.empty()) return SseAnswer(res, {script_.call_data}, "e1");
    if (script_.list_changed_before_call) return SseAnswer(res, {note, result}, "e1");
    if (script_.ping_before_call) {
      res.set_chunked_content_provider("text/event-stream", [this, result](
                                                                size_t, httplib::DataSink& sink) {
        const std::string ping = Event("e1", R"({"jsonrpc":"2.0","id":"srv-1","method":"ping"})");
        sink.write(ping.data(), ping.size());
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait_for(lock, kWait, [&] { return stopping_ || pong_; });
        lock.unlock();
        const std::string event = Event("e2", result);
        sink.write(event.data(), event.size());
        sink.done();
        return true;
      });
      return;
    }
    Answer(res, result);
  }

  // Writes `first` and ends the stream, cut (no chunked terminator) or cleanly; a GET with
  // Last-Event-ID then gets `rest`.
  void Stream(httplib::Response& res, std::string first, std::string rest, bool cut) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending_ = std::move(rest);
    }
    res.set_chunked_content_provider("text/event-stream",
                                     [first, cut](size_t, httplib::DataSink& sink) {
                                       sink.write(first.data(), first.size());
                                       if (cut) return false;
                                       sink.done();
                                       return true;
                                     });
  }

  void OnGet(const httplib::Request& req, httplib::Response& res) {
    Record("GET", req, json());
    if (!CheckHeaders(req, res)) return;
    std::string rest;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (req.get_header_value("Last-Event-ID").empty() || pending_.empty()) {
        res.status = 405;  // no stream of its own for the client
        return;
      }
      if (breaks_ < script_.resumptions_that_break) {
        ++breaks_;
        res.set_chunked_content_provider("text/event-stream", [](size_t, httplib::DataSink& sink) {
          sink.write(": nothing new\n", 14);
          return false;
        });
        return;
      }
      rest = pending_;
    }
    SseAnswer(res, {rest}, "c2");
  }

  // One message as JSON, or as an event stream when the script says so.
  void Answer(httplib::Response& res, const std::string& message) {
    if (script_.sse) return SseAnswer(res, {message}, "e1");
    res.set_content(message, "application/json");
  }
  // The messages as events, ids counting up from `first_id`; CRLF line ends on the comment.
  static void SseAnswer(httplib::Response& res, const std::vector<std::string>& messages,
                        const std::string& first_id) {
    std::string body = ": a comment\r\n";
    for (size_t i = 0; i < messages.size(); ++i) {
      body += Event(i == 0 ? first_id : "e" + std::to_string(i + 1), messages[i]);
    }
    res.set_content(body, "text/event-stream");
  }

  static std::string Result(const json& id, const json& result) {
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}.dump();
  }
  static std::string Notification(const std::string& method) {
    return json{{"jsonrpc", "2.0"}, {"method", method}}.dump();
  }

  Script script_;
  httplib::Server server_;
  int port_ = -1;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Seen> seen_;
  std::string negotiated_;
  bool expired_ = false;
  bool stopping_ = false;
  bool pong_ = false;
  std::string pending_;  // the rest of a cut stream
  int breaks_ = 0;
};

class HttpTransportTest : public ::testing::Test {
 protected:
  void Serve(Script script) { server_ = std::make_unique<FakeHttpMcpServer>(std::move(script)); }

  HttpOptions Http() {
    HttpOptions options;
    options.url = server_->url();
    options.headers = {{"Authorization", "Bearer t0ken"}};
    return options;
  }

  Result<std::unique_ptr<Client>> Connect(HttpOptions http) {
    MEND_ASSIGN_OR_RETURN(std::unique_ptr<Transport> transport, MakeHttpTransport(std::move(http)));
    ClientOptions options;
    options.name = "fake-http";
    options.request_timeout = kWait;
    return Client::Connect(std::move(transport), std::move(options));
  }
  Result<std::unique_ptr<Client>> Connect() { return Connect(Http()); }

  static Result<CallResult> Call(Client& client) {
    return client.CallTool("echo", {{"text", "hi"}}, kWait);
  }

  std::unique_ptr<FakeHttpMcpServer> server_;
};

TEST_F(HttpTransportTest, JsonAnswersCarryTheSessionAndEndItWithDelete) {
  Serve({});
  auto client = Connect();
  MEND_ASSERT_OK(client);
  auto tools = (*client)->ListTools();
  MEND_ASSERT_OK(tools);
  ASSERT_THAT(*tools, SizeIs(2));
  EXPECT_EQ((*tools)[0].name, "echo");
  auto call = Call(**client);
  MEND_ASSERT_OK(call);
  EXPECT_EQ(call->result["content"][0]["text"], "called");
  EXPECT_EQ((*client)->session_id(), kSession);
  (*client)->Close();

  EXPECT_THAT(server_->verbs(), ElementsAre("POST initialize", "POST notifications/initialized",
                                            "POST tools/list", "POST tools/call", "DELETE "));
  const std::vector<Seen> seen = server_->seen();
  EXPECT_EQ(seen[0].session, "");
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_EQ(seen[i].session, kSession) << i;
  for (const Seen& s : seen) EXPECT_EQ(s.authorization, "Bearer t0ken") << s.verb << s.method;
}

TEST_F(HttpTransportTest, RequestsAfterInitializeCarryTheNegotiatedRevision) {
  Script script;
  script.version = "2025-06-18";
  Serve(script);
  auto client = Connect();
  MEND_ASSERT_OK(client);
  MEND_ASSERT_OK((*client)->ListTools());
  (*client)->Close();
  const std::vector<Seen> seen = server_->seen();
  ASSERT_THAT(seen, SizeIs(4));
  EXPECT_EQ(seen[0].version, "");  // initialize: nothing is negotiated yet
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_EQ(seen[i].version, "2025-06-18") << i;
}

TEST_F(HttpTransportTest, ServerWithoutSessionGetsNoSessionHeaderAndNoDelete) {
  Script script;
  script.assign_session = false;
  script.sse = true;
  Serve(script);
  auto client = Connect();
  MEND_ASSERT_OK(client);
  MEND_ASSERT_OK((*client)->ListTools());
  EXPECT_EQ((*client)->session_id(), "");
  (*client)->Close();
  EXPECT_THAT(server_->verbs(),
              ElementsAre("POST initialize", "POST notifications/initialized", "POST tools/list"));
}

TEST_F(HttpTransportTest, SessionIdThatIsNotVisibleAsciiBreaksTheSession) {
  Script script;
  script.session = "two words";
  Serve(script);
  EXPECT_THAT(Connect(), StatusIs(StatusCode::kUnavailable, HasSubstr("Mcp-Session-Id")));
}

TEST_F(HttpTransportTest, EventStreamDeliversANotificationBeforeTheResponse) {
  Script script;
  script.sse = true;
  script.list_changed_before_call = true;
  Serve(script);
  auto client = Connect();
  MEND_ASSERT_OK(client);
  MEND_ASSERT_OK((*client)->ListTools());
  EXPECT_FALSE((*client)->tools_changed());
  MEND_ASSERT_OK(Call(**client));
  EXPECT_TRUE((*client)->tools_changed());
}

TEST_F(HttpTransportTest, ServerRequestOnTheStreamIsAnswered) {
  Script script;
  script.sse = true;
  script.ping_before_call = true;
  Serve(script);
  auto client = Connect();
  MEND_ASSERT_OK(client);
  // The server answers the call only after the client answered its ping.
  MEND_ASSERT_OK(Call(**client));
  EXPECT_TRUE(server_->WaitFor([](const Seen& s) {
    return s.message.value("id", json()) == "srv-1" && s.message.contains("result");
  }));
}

TEST_F(HttpTransportTest, BrokenStreamIsResumedWithLastEventId) {
  Script script;
  script.cut = Script::Cut::kAfterFirstEvent;
  Serve(script);
  auto client = Connect();
  MEND_ASSERT_OK(client);
  auto call = Call(**client);
  MEND_ASSERT_OK(call);
  EXPECT_EQ(call->result["content"][0]["text"], "called");
  EXPECT_TRUE((*client)->tools_changed());  // the event before the break was delivered
  const std::vector<Seen> seen = server_->seen();
  ASSERT_EQ(seen.back().verb, "GET");
  EXPECT_EQ(seen.back().last_event_id, "c1");
  EXPECT_EQ(seen.back().session, kSession);
  EXPECT_EQ(seen.back().authorization, "Bearer t0ken");
}

TEST_F(HttpTransportTest, StreamClosedAfterAPrimingEventIsPolled) {
  Script script;
  script.cut = Script::Cut::kAfterPriming;
  Serve(script);
  auto client = Connect();
  MEND_ASSERT_OK(client);
  MEND_ASSERT_OK(Call(**client));
  EXPECT_EQ(server_->seen().back().last_event_id, "p1");
}

TEST_F(HttpTransportTest, BrokenStreamWithoutEventIdsBreaksTheSession) {
  Script script;
  script.cut = Script::Cut::kWithoutIds;
  Serve(script);
  auto client = Connect();
  MEND_ASSERT_OK(client);
  EXPECT_THAT(Call(**client), StatusIs(StatusCode::kUnavailable,
                                       HasSubstr("the server's stream for request 2 broke off")));
  EXPECT_FALSE((*client)->alive());
  for (const Seen& s : server_->seen()) EXPECT_NE(s.verb, "GET");
}

TEST_F(HttpTransportTest, ResumptionGivesUpAfterMaxResumptionsWithNothingNew) {
  Script script;
  script.cut = Script::Cut::kAfterFirstEvent;
  script.resumptions_that_break = 100;
  Serve(script);
  HttpOptions http = Http();
  http.max_resumptions = 2;
  auto client = Connect(http);
  MEND_ASSERT_OK(client);
  EXPECT_THAT(Call(**client), StatusIs(StatusCode::kUnavailable,
                                       AllOf(HasSubstr("broke off"), HasSubstr("2 resumptions"))));
  int gets = 0;
  for (const Seen& s : server_->seen()) gets += s.verb == "GET";
  EXPECT_EQ(gets, 2);
}

TEST_F(HttpTransportTest, UnauthorizedIsUnauthenticatedAndNamesTheStatus) {
  Script script;
  script.fail_status = 401;
  Serve(script);
  auto client = Connect();
  EXPECT_THAT(client, StatusIs(StatusCode::kUnauthenticated,
                               AllOf(HasSubstr("HTTP 401"), HasSubstr("missing or bad token"),
                                     Not(HasSubstr("t0ken")))));
}

TEST_F(HttpTransportTest, ServerErrorIsUnavailable) {
  Script script;
  script.fail_status = 503;
  Serve(script);
  EXPECT_THAT(Connect(), StatusIs(StatusCode::kUnavailable, HasSubstr("HTTP 503")));
}

TEST_F(HttpTransportTest, ExpiredSessionIsUnavailableAndNotDeleted) {
  Script script;
  script.expire_session = true;
  Serve(script);
  auto client = Connect();
  MEND_ASSERT_OK(client);
  EXPECT_THAT((*client)->ListTools(), StatusIs(StatusCode::kUnavailable,
                                               AllOf(HasSubstr("HTTP 404"), HasSubstr("session"))));
  (*client)->Close();
  for (const Seen& s : server_->seen()) EXPECT_NE(s.verb, "DELETE");
}

TEST_F(HttpTransportTest, RequestAnsweredWithoutAMessageBreaksTheSession) {
  Script script;
  script.accept_call = true;
  Serve(script);
  auto client = Connect();
  MEND_ASSERT_OK(client);
  EXPECT_THAT(Call(**client), StatusIs(StatusCode::kUnavailable,
                                       AllOf(HasSubstr("HTTP 202"), HasSubstr("no message"))));
}

TEST_F(HttpTransportTest, MalformedEventDataBreaksTheSession) {
  Script script;
  script.call_data = "{not json";
  Serve(script);
  auto client = Connect();
  MEND_ASSERT_OK(client);
  EXPECT_THAT(Call(**client), StatusIs(StatusCode::kUnavailable, HasSubstr("malformed")));
  EXPECT_FALSE((*client)->alive());
}

TEST_F(HttpTransportTest, EventOverTheMessageLimitIsResourceExhausted) {
  Script script;
  script.call_data = std::string(kMaxMessageBytes + 1, 'x');
  Serve(script);
  auto client = Connect();
  MEND_ASSERT_OK(client);
  EXPECT_THAT(Call(**client), StatusIs(StatusCode::kResourceExhausted));
}

TEST_F(HttpTransportTest, CloseAbortsACallInFlight) {
  Script script;
  script.hold_call = true;
  Serve(script);
  auto client = Connect();
  MEND_ASSERT_OK(client);
  auto call = std::async(std::launch::async, [&] { return Call(**client); });
  ASSERT_TRUE(server_->WaitFor([](const Seen& s) { return s.method == "tools/call"; }));
  (*client)->Close();
  // The server holds the call until it stops, so only the abort can end it.
  ASSERT_EQ(call.wait_for(kWait), std::future_status::ready);
  EXPECT_THAT(call.get(), StatusIs(StatusCode::kUnavailable, HasSubstr("closed")));
  EXPECT_TRUE(server_->WaitFor([](const Seen& s) { return s.verb == "DELETE"; }));
}

TEST_F(HttpTransportTest, UnreachableServerIsUnavailable) {
  Serve({});
  HttpOptions http = Http();
  server_.reset();  // its port is free now: nothing listens there
  EXPECT_THAT(Connect(http), StatusIs(StatusCode::kUnavailable, HasSubstr("POST")));
}

TEST_F(HttpTransportTest, BadOptionsAreInvalidArgument) {
  for (const char* url : {"", "not a url", "ftp://example.com/mcp", "file:///x", "http://"}) {
    HttpOptions http;
    http.url = url;
    EXPECT_THAT(MakeHttpTransport(http), StatusIs(StatusCode::kInvalidArgument)) << url;
  }
  HttpOptions http;
  http.url = "https://example.com/mcp";
  http.headers = {{"Accept", "text/plain"}};
  EXPECT_THAT(MakeHttpTransport(http), StatusIs(StatusCode::kInvalidArgument));
  http.headers = {{"X-Token", "a\r\nInjected: yes"}};
  EXPECT_THAT(MakeHttpTransport(http),
              StatusIs(StatusCode::kInvalidArgument, Not(HasSubstr("Injected"))));
  http.headers = {{"Bad Name", "x"}};
  EXPECT_THAT(MakeHttpTransport(http), StatusIs(StatusCode::kInvalidArgument));
  http.headers = {};
  http.request_timeout = std::chrono::milliseconds(0);
  EXPECT_THAT(MakeHttpTransport(http), StatusIs(StatusCode::kInvalidArgument));
}

TEST_F(HttpTransportTest, DescribeLeavesOutUserinfoAndQuery) {
  HttpOptions http;
  http.url = "https://user:pa55@mcp.example.com:8443/v1/mcp?key=s3cret#frag";
  auto transport = MakeHttpTransport(http);
  MEND_ASSERT_OK(transport);
  EXPECT_EQ((*transport)->Describe(), "https://mcp.example.com:8443/v1/mcp");
}

TEST_F(HttpTransportTest, TransportKeepsItsContract) {
  Serve({});
  auto transport = MakeHttpTransport(Http());
  MEND_ASSERT_OK(transport);
  Transport& t = **transport;
  const std::string initialize =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})";
  EXPECT_THAT(t.Send(initialize), StatusIs(StatusCode::kUnavailable));  // not started
  std::promise<std::string> first;
  std::atomic<int> closed{0};
  MEND_ASSERT_OK(t.Start([&](std::string m) { first.set_value(std::move(m)); },
                         [&](Status) { closed.fetch_add(1); }));
  EXPECT_THAT(t.Start([](std::string) {}, [](Status) {}),
              StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(t.Send("{oops"), StatusIs(StatusCode::kInvalidArgument));
  MEND_ASSERT_OK(t.Send(initialize));
  auto answer = first.get_future();
  ASSERT_EQ(answer.wait_for(kWait), std::future_status::ready);
  EXPECT_THAT(answer.get(), HasSubstr("protocolVersion"));
  EXPECT_EQ(t.SessionId(), kSession);
  t.Close();
  t.Close();
  EXPECT_THAT(t.Send(initialize), StatusIs(StatusCode::kUnavailable));
  EXPECT_EQ(closed.load(), 0);
  EXPECT_EQ(server_->seen().back().verb, "DELETE");
}

// The SSE reader on its own.

std::vector<SseEvent> ReadAll(SseReader& reader, const std::vector<std::string>& chunks) {
  std::vector<SseEvent> events;
  for (const std::string& chunk : chunks) {
    EXPECT_THAT(reader.Feed(chunk, [&](SseEvent e) { events.push_back(std::move(e)); }),
                ::mend::testing::IsOk());
  }
  return events;
}

std::vector<std::string> Data(const std::vector<SseEvent>& events) {
  std::vector<std::string> out;
  for (const SseEvent& e : events) out.push_back(e.data);
  return out;
}

TEST(HttpSseReaderTest, SplitsLinesOnLfCrAndCrlfWhereverChunksEnd) {
  const std::string stream = "data: a\r\ndata: b\r\rdata:c\n\ndata: d\r\n\r\n";
  SseReader whole(1024);
  EXPECT_THAT(Data(ReadAll(whole, {stream})), ElementsAre("a\nb", "c", "d"));
  std::vector<std::string> bytes;
  for (char c : stream) bytes.emplace_back(1, c);
  SseReader byte_by_byte(1024);
  EXPECT_THAT(Data(ReadAll(byte_by_byte, bytes)), ElementsAre("a\nb", "c", "d"));
}

TEST(HttpSseReaderTest, IgnoresCommentsAndUnknownFieldsAndKeepsTheType) {
  SseReader reader(1024);
  auto events = ReadAll(reader, {"\xEF\xBB\xBF: keep-alive\nfoo: bar\nevent: other\ndata: x\n\n",
                                 "data:  two spaces\n\n"});
  ASSERT_THAT(events, SizeIs(2));
  EXPECT_EQ(events[0].type, "other");
  EXPECT_EQ(events[0].data, "x");
  EXPECT_EQ(events[1].type, "message");
  EXPECT_EQ(events[1].data, " two spaces");
}

TEST(HttpSseReaderTest, EventIdsLastUntilChangedAndCountOnlyWhenDispatched) {
  SseReader reader(1024);
  auto events = ReadAll(reader, {"id: 7\n\n"});  // no data: nothing dispatched, the id counts
  EXPECT_THAT(events, SizeIs(0));
  EXPECT_EQ(reader.last_event_id(), "7");
  events = ReadAll(reader, {"data: x\n\n", "id: 9\ndata: cut off"});
  ASSERT_THAT(events, SizeIs(1));
  EXPECT_EQ(events[0].id, "7");
  EXPECT_EQ(reader.last_event_id(), "7");
}

TEST(HttpSseReaderTest, ReadsTheRetryField) {
  SseReader reader(1024);
  ReadAll(reader, {"retry: 2x\n"});
  EXPECT_FALSE(reader.retry().has_value());
  ReadAll(reader, {"retry: 250\n"});
  EXPECT_EQ(reader.retry(), std::chrono::milliseconds(250));
}

TEST(HttpSseReaderTest, DataOverTheLimitIsResourceExhausted) {
  const auto ignore = [](SseEvent) {};
  SseReader one_line(8);
  EXPECT_THAT(one_line.Feed("data: 123456789\n", ignore), StatusIs(StatusCode::kResourceExhausted));
  EXPECT_THAT(one_line.Feed("\n", ignore), StatusIs(StatusCode::kResourceExhausted));
  SseReader two_lines(8);
  EXPECT_THAT(two_lines.Feed("data: 1234\ndata: 5678\n", ignore),
              StatusIs(StatusCode::kResourceExhausted));
  SseReader endless(8);
  EXPECT_THAT(endless.Feed(": " + std::string(100, 'x'), ignore),
              StatusIs(StatusCode::kResourceExhausted));
}

}  // namespace
}  // namespace mend::mcp
