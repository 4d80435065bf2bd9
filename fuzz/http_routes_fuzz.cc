// Requests to `mend serve` through its real router and route handlers (src/server/server.cc and
// api_*.cc, and `mend proxy`'s routes, which serve mounts with proxy.upstream set): the server
// tests/server/server_fixture.h starts, over a temporary home with the embedded SQLite stores, on
// a loopback port. Server keeps its cpp-httplib server to itself, so each input is one request of
// a keep-alive client rather than a call without a socket. A model that answers at once stands in
// for the provider (its first turn calls `ask_human` or `deploy` when the agent has them), and a
// small fake upstream answers the proxy (and any provider built from the configuration).
//
// The home is created once, holding three agents and a few runs, facts, a lesson and a trace the
// seeds name (r1 waits for an answer, r2 for an approval, r3 completed). Inputs change it; after
// kChangesBeforeReset accepted state changes the server and runtime are closed, the home deleted
// and made again, so the state stays bounded.
//
// Input: "method\0target\0headers\0body". The method is one cpp-httplib sends as asked (GET, HEAD,
// POST, PUT, PATCH, DELETE, OPTIONS; others are skipped); the target is the path with any query
// string, bytes that cannot stand in a request line percent-encoded; headers one "Name: value"
// per line (names that are not HTTP tokens, and the headers that frame the message, are left
// out). The serve token and the proxy token are the constants below.
//
// Invariants: a response arrives, with a status from 100 to 599; a JSON body is valid JSON (but
// for a request with a Range header: cpp-httplib cuts any answer to the range); an error from
// serve's own routes is {"error":{"code","message"}}; a request without the serve token on a path
// that is neither public (probes, the UI's files) nor the proxy's is refused with 401 or 403, or
// before routing (a request cpp-httplib cannot parse, a body on a method that has none); a request
// without the proxy token gets no 2xx or 3xx from a proxy path; and the connection stays in step:
// a request of the target's own, sent next on it, gets its own answer, so no part of the input's
// request (a body left unread) was read as another request.
#include <httplib.h>
#include <stdlib.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "mend/app/runtime.h"
#include "mend/base/config.h"
#include "mend/base/env.h"
#include "mend/base/file_system.h"
#include "mend/llm/provider.h"
#include "mend/server/server.h"

namespace mend::server {
namespace {

constexpr char kServeToken[] = "fuzz-serve-token-0123456789";
constexpr char kProxyToken[] = "fuzz-proxy-token-9876543210";
constexpr int kChangesBeforeReset = 1000;
constexpr auto kReplyTimeout = std::chrono::seconds(20);

// What the model and the fake upstream say: a text that also reads as a reflection's lesson.
constexpr char kModelText[] =
    "<situation>Refactoring large files</situation>\n<mistake>Rewrote the whole file</mistake>\n"
    "<correction>Edit only the lines that change</correction>\n<tags>edit, large-file</tags>";

// Answers every request at once: the first turn of an agent with `ask_human` or `deploy` calls
// it (the run then waits for an answer or an approval), any other turn is kModelText.
class InstantModel final : public llm::LlmProvider {
 public:
  Result<llm::Completion> Complete(const llm::CompletionRequest& request) override {
    llm::Completion completion;
    completion.usage = {10, 5};
    completion.usage_reported = true;
    bool answered = false;
    for (const llm::Message& m : request.messages) answered |= m.role == llm::Role::kAssistant;
    for (const llm::ToolDefinition& tool : request.tools) {
      if (answered) break;
      if (tool.name == "ask_human") {
        completion.tool_calls.push_back({"q1", "ask_human", R"({"question":"which colour?"})"});
      } else if (tool.name == "deploy") {
        completion.tool_calls.push_back({"c1", "deploy", "{}"});
      }
    }
    if (completion.tool_calls.empty()) {
      completion.text = kModelText;
    } else {
      completion.finish_reason = llm::FinishReason::kToolCalls;
    }
    return completion;
  }
  std::string_view name() const override { return "fuzz"; }
};

std::string ChatCompletion() {
  return nlohmann::json{{"id", "chatcmpl-1"},
                        {"object", "chat.completion"},
                        {"model", "gpt-4o-mini"},
                        {"choices",
                         {{{"index", 0},
                           {"message", {{"role", "assistant"}, {"content", kModelText}}},
                           {"finish_reason", "stop"}}}},
                        {"usage", {{"prompt_tokens", 10}, {"completion_tokens", 5}}}}
      .dump();
}

std::string AnthropicMessage() {
  return nlohmann::json{{"id", "msg_1"},
                        {"type", "message"},
                        {"role", "assistant"},
                        {"model", "claude-3-5-haiku"},
                        {"content", {{{"type", "text"}, {"text", kModelText}}}},
                        {"stop_reason", "end_turn"},
                        {"usage", {{"input_tokens", 10}, {"output_tokens", 5}}}}
      .dump();
}

std::string ResponsesReply() {
  return nlohmann::json{{"id", "resp_1"},
                        {"object", "response"},
                        {"model", "gpt-4o-mini"},
                        {"status", "completed"},
                        {"output",
                         {{{"type", "message"},
                           {"role", "assistant"},
                           {"content", {{{"type", "output_text"}, {"text", kModelText}}}}}}},
                        {"usage", {{"input_tokens", 10}, {"output_tokens", 5}}}}
      .dump();
}

constexpr char kChatStream[] =
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini\","
    "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Done\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini\","
    "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5}}\n\n"
    "data: [DONE]\n\n";

constexpr char kMessagesStream[] =
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\","
    "\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-3-5-haiku\",\"content\":[],"
    "\"usage\":{\"input_tokens\":10,\"output_tokens\":0}}}\n\n"
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
    "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
    "\"delta\":{\"type\":\"text_delta\",\"text\":\"Done\"}}\n\n"
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
    "\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n"
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

bool AsksForStream(const std::string& body) {
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return false;
  auto stream = parsed.find("stream");
  return stream != parsed.end() && stream->is_boolean() && stream->get<bool>();
}

// The upstream of the proxy and the base URL of providers built from the configuration: canned
// answers in the shape of the endpoint called.
void AddUpstreamRoutes(httplib::Server& upstream) {
  upstream.Post(".*", [](const httplib::Request& req, httplib::Response& res) {
    const bool stream = AsksForStream(req.body);
    if (req.path.ends_with("/chat/completions")) {
      if (stream) return res.set_content(kChatStream, "text/event-stream");
      return res.set_content(ChatCompletion(), "application/json");
    }
    if (req.path.ends_with("/messages")) {
      if (stream) return res.set_content(kMessagesStream, "text/event-stream");
      return res.set_content(AnthropicMessage(), "application/json");
    }
    if (req.path.ends_with("/responses"))
      return res.set_content(ResponsesReply(), "application/json");
    if (req.path.ends_with("/embeddings")) {
      return res.set_content(
          R"({"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2,0.3]}],)"
          R"("model":"text-embedding-3-small","usage":{"prompt_tokens":3,"total_tokens":3}})",
          "application/json");
    }
    res.status = 404;
    res.set_content(R"({"error":{"message":"no such endpoint","type":"invalid_request_error"}})",
                    "application/json");
  });
  upstream.Get(".*", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"object":"list","data":[{"id":"gpt-4o-mini","object":"model"}]})",
                    "application/json");
  });
}

struct Reply {
  bool arrived = false;
  int status = 0;
  std::string body;
  std::string content_type;
};

// The server over its home, and the client that talks to it. Created at the first input, shut
// down (and its temporary folder deleted) when the process exits normally.
class Harness {
 public:
  static Harness& Get() {
    static Harness* harness = [] {
      auto* h = new Harness();
      std::atexit([] { Get().ShutDown(); });
      return h;
    }();
    return *harness;
  }

  Reply Send(const httplib::Request& request) {
    Reply reply = SendOnce(request);
    // A keep-alive connection the server closed as the request went out: once more on a new one.
    if (!reply.arrived) reply = SendOnce(request);
    return reply;
  }

  // Sends a request of its own on the same keep-alive connection and checks that the answer is
  // its own. A server that left part of the previous request unread, and read it as the next
  // request, or that framed its response wrongly, answers it with something else.
  void CheckInStep(const httplib::Request& previous) {
    const std::string path = "/api/v1/fuzz-canary-" + std::to_string(++canaries_);
    httplib::Request canary;
    canary.method = "GET";
    canary.path = path;
    canary.headers.emplace("Authorization", std::string("Bearer ") + kServeToken);
    const Reply reply = Send(canary);
    FUZZ_CHECK(reply.arrived && reply.status == 404 && reply.body.find(path) != std::string::npos,
               "out of step: after " + previous.method + " " + previous.path + ", GET " + path +
                   " on the same connection got " + std::to_string(reply.status) + " " +
                   reply.body);
  }

  // Counts a request that changed the state; past the limit, starts again from a new home.
  void Changed() {
    if (++changes_ < kChangesBeforeReset) return;
    Close();
    Open();
  }

 private:
  Harness() {
    std::string pattern = (std::filesystem::temp_directory_path() / "mend-fuzz-XXXXXX").string();
    FUZZ_CHECK(mkdtemp(pattern.data()) != nullptr, "cannot create a temporary folder");
    dir_ = pattern;
    env_ = Env::Default();
    upstream_ = std::make_unique<httplib::Server>();
    AddUpstreamRoutes(*upstream_);
    upstream_port_ = upstream_->bind_to_any_port("127.0.0.1");
    FUZZ_CHECK(upstream_port_ > 0, "the fake upstream cannot listen");
    upstream_thread_ = std::thread([this] { upstream_->listen_after_bind(); });
    WriteAgent("helper", "[]", "");
    WriteAgent("painter", "[\"ask_human\"]", "");
    WriteAgent("shipper", "[\"deploy\"]",
               "name = \"deploy\"\ndescription = \"Deploys.\"\n"
               "command = [\"/bin/sh\", \"-c\", \"echo deployed\"]\n");
    Open();
  }

  void WriteAgent(const std::string& name, const std::string& tools, const std::string& tool) {
    const std::string dir = dir_ + "/agents/" + name;
    FUZZ_CHECK(env_.fs->CreateDirs(dir + "/tools").ok(), dir);
    FUZZ_CHECK(WriteFileAtomically(*env_.fs, dir + "/agent.toml",
                                   "name = \"" + name + "\"\ntools = " + tools + "\n")
                   .ok(),
               name);
    FUZZ_CHECK(WriteFileAtomically(*env_.fs, dir + "/instructions.md", "Do the task.\n").ok(),
               name);
    if (!tool.empty()) {
      FUZZ_CHECK(WriteFileAtomically(*env_.fs, dir + "/tools/deploy.toml", tool).ok(), name);
    }
  }

  void Open() {
    changes_ = 0;
    const std::string upstream = "http://127.0.0.1:" + std::to_string(upstream_port_) + "/v1";
    ConfigSources sources;
    sources.flags = {{"home", dir_ + "/home"},
                     {"provider.retries", "0"},
                     {"provider.base_url", upstream},
                     {"proxy.upstream", upstream},
                     {"proxy.token", kProxyToken},
                     {"proxy.max_attempts", "1"},
                     {"reflexion.queue.drain_timeout", "2s"}};
    Result<Config> config = LoadConfig(sources, *env_.fs);
    FUZZ_CHECK(config.ok(), config.status().ToString());
    app::RuntimeOptions runtime_options;
    runtime_options.provider = std::make_unique<InstantModel>();
    runtime_options.event_log = app::EventLog::kNone;
    runtime_options.caller_dir = dir_;
    Result<std::unique_ptr<app::Runtime>> runtime =
        app::OpenRuntime(*config, env_, std::move(runtime_options));
    FUZZ_CHECK(runtime.ok(), runtime.status().ToString());
    runtime_ = *std::move(runtime);
    ServerOptions options;
    options.port = 0;
    options.token = kServeToken;
    options.agents_dir = dir_ + "/agents";
    options.threads = 4;
    options.drain_timeout = std::chrono::seconds(2);
    Result<std::unique_ptr<Server>> server = Server::Create(*runtime_, options);
    FUZZ_CHECK(server.ok(), server.status().ToString());
    server_ = *std::move(server);
    Status started = server_->Start();
    FUZZ_CHECK(started.ok(), started.ToString());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_keep_alive(true);
    client_->set_tcp_nodelay(true);
    client_->set_url_encode(false);
    client_->set_read_timeout(kReplyTimeout);
    client_->set_write_timeout(kReplyTimeout);
    Seed();
  }

  // What the seeds name: runs r1 (waiting for an answer), r2 (for an approval), r3 (completed),
  // a fact, a lesson, a queued lesson job and a trace.
  void Seed() {
    const std::string json = "application/json";
    const httplib::Headers auth = {{"Authorization", std::string("Bearer ") + kServeToken}};
    client_->Post("/api/v1/runs", auth, R"({"agent":"painter","task":"paint","id":"r1"})", json);
    client_->Post("/api/v1/runs", auth, R"({"agent":"shipper","task":"ship it","id":"r2"})", json);
    client_->Post("/api/v1/runs", auth, R"({"agent":"helper","task":"try","id":"r3"})", json);
    client_->Post("/api/v1/memory", auth, R"({"text":"run the migrations first"})", json);
    client_->Post("/api/v1/lessons", auth, R"({"text":"keep secrets out of answers"})", json);
    client_->Post("/api/v1/lessons/enqueue", auth,
                  R"({"task":"Edit main.go","trigger":"error","attempt":"used full rewrite",)"
                  R"("outcome":"ERROR: file too large"})",
                  json);
    client_->Post("/v1/traces", auth,
                  R"({"resourceSpans":[{"resource":{"attributes":[{"key":"service.name",)"
                  R"("value":{"stringValue":"shop"}}]},"scopeSpans":[{"spans":[{"traceId":)"
                  R"("0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331",)"
                  R"("name":"checkout","kind":2,"startTimeUnixNano":"1700000000000000000",)"
                  R"("endTimeUnixNano":"1700000000120000000"}]}]}]})",
                  json);
    server_->WaitForRuns(std::chrono::seconds(10));
  }

  Reply SendOnce(const httplib::Request& request) {
    Reply reply;
    httplib::Result result = client_->send(request);
    if (!result) return reply;
    reply.arrived = true;
    reply.status = result->status;
    reply.body = result->body;
    reply.content_type = result->get_header_value("Content-Type");
    return reply;
  }

  void Close() {
    client_.reset();
    server_.reset();
    runtime_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_ + "/home", ignored);
  }

  void ShutDown() {
    Close();
    upstream_->stop();
    if (upstream_thread_.joinable()) upstream_thread_.join();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  std::string dir_;
  Env env_;
  std::unique_ptr<httplib::Server> upstream_;
  int upstream_port_ = 0;
  std::thread upstream_thread_;
  std::unique_ptr<app::Runtime> runtime_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<httplib::Client> client_;
  int changes_ = 0;
  uint64_t canaries_ = 0;
};

bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// The target as it goes into the request line: bytes that would end or split it, and those
// outside ASCII, percent-encoded.
std::string RequestTarget(std::string_view text) {
  if (text.empty()) return "/";
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    } else {
      out += c;
    }
  }
  return out;
}

// The path as cpp-httplib hands it to the server: the fragment (from '#') dropped, the first part
// of the rest between '?'s that is not empty, percent-decoded.
std::string ServerPath(std::string_view target) {
  target = target.substr(0, target.find('#'));
  while (!target.empty()) {
    const size_t end = target.find('?');
    std::string_view part = target.substr(0, end);
    if (!part.empty()) {
      return httplib::detail::decode_url(std::string(part), /*convert_plus_to_space=*/false);
    }
    if (end == std::string_view::npos) break;
    target.remove_prefix(end + 1);
  }
  return "";
}

// The headers of the input, without those that frame the message (the client sets them).
void AddHeaders(std::string_view text, httplib::Request& req) {
  static constexpr std::string_view kFraming[] = {
      "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Expect", "Upgrade", "TE",
      "Trailer",        "Proxy-Connection"};
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    size_t colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos) continue;
    std::string_view name = line.substr(0, colon);
    bool token = true;
    for (char c : name) token = token && IsTokenChar(c);
    if (!token) continue;
    bool framing = false;
    for (std::string_view f : kFraming) framing = framing || EqualsIgnoringCase(name, f);
    if (framing) continue;
    std::string value;
    for (char c : line.substr(colon + 1)) {
      if (c != '\r' && c != '\0') value += c;
    }
    req.headers.emplace(std::string(name), std::string(Trim(value)));
  }
}

// Whether one of the request's headers `name` (in any case) is `value`.
bool HasHeaderValue(const httplib::Request& req, std::string_view name, std::string_view value) {
  for (const auto& [key, v] : req.headers) {
    if (EqualsIgnoringCase(key, name) && v == value) return true;
  }
  return false;
}

// Whether the request has a header `name` (in any case).
bool HasHeader(const httplib::Request& req, std::string_view name) {
  for (const auto& [key, v] : req.headers) {
    if (EqualsIgnoringCase(key, name)) return true;
  }
  return false;
}

// Whether an Authorization header holds "Bearer <token>" (the scheme in any case).
bool HasBearer(const httplib::Request& req, std::string_view token) {
  for (const auto& [key, v] : req.headers) {
    if (EqualsIgnoringCase(key, "Authorization") && v.size() == 7 + token.size() &&
        EqualsIgnoringCase(std::string_view(v).substr(0, 7), "bearer ") &&
        std::string_view(v).substr(7) == token) {
      return true;
    }
  }
  return false;
}

// docs/http_api.md: the probes and the UI's static files need no token.
bool IsPublic(const std::string& path) {
  return path == "/healthz" || path == "/readyz" || path == "/" || path == "/favicon.ico" ||
         path.starts_with("/ui/");
}

// docs/proxy.md: with proxy.upstream set, serve mounts the proxy's /v1/ routes beside its own
// /v1/traces.
bool IsProxy(const std::string& path) { return path.starts_with("/v1/") && path != "/v1/traces"; }

bool ChangesState(const std::string& method) {
  return method != "GET" && method != "HEAD" && method != "OPTIONS";
}

// The message of an API error body {"error":{"code","message"}}, or nullopt for another body.
std::optional<std::string> ErrorMessage(const nlohmann::json& body) {
  if (!body.is_object()) return std::nullopt;
  auto error = body.find("error");
  if (error == body.end() || !error->is_object()) return std::nullopt;
  auto code = error->find("code");
  auto message = error->find("message");
  if (code == error->end() || !code->is_string() || message == error->end() ||
      !message->is_string()) {
    return std::nullopt;
  }
  return message->get<std::string>();
}

// The methods whose body cpp-httplib reads; another method's body is left on the connection.
bool ReadsBody(const std::string& method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

void CheckReply(const httplib::Request& req, const std::string& path, const Reply& reply) {
  FUZZ_CHECK(reply.arrived, "no response to " + req.method + " " + req.path);
  FUZZ_CHECK(reply.status >= 100 && reply.status <= 599, "status " + std::to_string(reply.status));
  // HEAD has no body; a request with a Range header gets part of one (cpp-httplib cuts every
  // answer to the range, errors too, and keeps a status the handler set).
  const bool whole_body = req.method != "HEAD" && !HasHeader(req, "Range") && reply.status != 204 &&
                          reply.status != 304;
  const nlohmann::json body =
      nlohmann::json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
  if (whole_body && reply.content_type.starts_with("application/json")) {
    FUZZ_CHECK(!body.is_discarded(), "a JSON body that is not JSON: " + reply.body);
  }
  const std::optional<std::string> error = ErrorMessage(body);
  const bool proxy = IsProxy(path);
  if (whole_body && reply.status >= 400 && !proxy) {
    FUZZ_CHECK(error.has_value(), "an error without the API's error body: " +
                                      std::to_string(reply.status) + " " + reply.body);
  }
  if (!IsPublic(path) && !proxy && !HasBearer(req, kServeToken)) {
    // Refused before any handler ran: a request cpp-httplib could not parse ("bad request"), a
    // Range header it could not parse (416), or a body on a method whose bodies are not read.
    const bool refused_early =
        (reply.status == 400 && error == "bad request") ||
        (reply.status == 416 && HasHeader(req, "Range")) ||
        (!req.body.empty() && !ReadsBody(req.method) && reply.status >= 400 && reply.status < 500);
    FUZZ_CHECK(reply.status == 401 || reply.status == 403 || refused_early,
               "no serve token, yet " + std::to_string(reply.status) + " for " + req.method + " " +
                   path + ": " + reply.body);
  }
  if (proxy && !HasBearer(req, kProxyToken) && !HasHeaderValue(req, "X-Mend-Token", kProxyToken) &&
      !HasHeaderValue(req, "x-api-key", kProxyToken)) {
    FUZZ_CHECK(reply.status >= 400, "no proxy token, yet " + std::to_string(reply.status) +
                                        " for " + req.method + " " + path);
  }
}

}  // namespace
}  // namespace mend::server

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mend;
  using namespace mend::server;
  std::vector<std::string_view> parts = fuzz::SplitParts(fuzz::AsText(data, size), 4);
  static constexpr std::string_view kMethods[] = {"GET",   "HEAD",   "POST",   "PUT",
                                                  "PATCH", "DELETE", "OPTIONS"};
  bool known = false;
  for (std::string_view m : kMethods) known = known || parts[0] == m;
  if (!known) return 0;

  httplib::Request req;
  req.method = std::string(parts[0]);
  req.path = RequestTarget(parts[1]);
  AddHeaders(parts[2], req);
  req.body = std::string(parts[3]);
  const std::string path = ServerPath(req.path);

  Harness& harness = Harness::Get();
  const Reply reply = harness.Send(req);
  CheckReply(req, path, reply);
  harness.CheckInStep(req);
  if (ChangesState(req.method) && reply.status >= 200 && reply.status < 300) harness.Changed();
  return 0;
}
