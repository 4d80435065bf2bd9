// `mend proxy` as a user runs it, with unmodified client libraries from npm that only had their
// base URL changed (tests/proxy_clients): the official OpenAI and Anthropic SDKs, and an agent of
// the OpenAI Agents SDK whose tool fails in a first conversation and whose second, similar
// conversation gets the lesson in its system prompt, with the proxy restarted (and its lesson
// queue drained) in between. The upstream is the fake LLM server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

const std::string kClientsDir = MEND_PROXY_CLIENTS_DIR;
constexpr char kClientKey[] = "sk-client-dummy-key";

// The fake upstream's routes: the agent's two conversations and the lesson generator.
const char kRoutes[] = R"json([
  {"name": "tools", "contains": ["weather in Paris"], "responses": [{"argument_pieces": 3,
    "tool_calls": [{"id": "call_w", "name": "get_weather", "arguments": {"city": "Paris"}},
                   {"id": "call_c", "name": "read_config", "arguments": {"path": "/srv/app/app.conf"}}]}]},
  {"name": "lesson", "contains": ["OUTCOME (why we are reflecting):", "read_config"], "responses": [{"text":
    "<situation>Reading the app's configuration when a task names /etc/app.conf</situation><mistake>Read /etc/app.conf, which does not exist on these hosts</mistake><correction>Read the app config from /srv/app/app.conf instead of /etc/app.conf</correction><tags>app-config, read-config, log-level</tags>"}]},
  {"name": "log-answer", "contains": ["What log level", "log_level = info"],
   "responses": [{"text": "The app logs at level info."}]},
  {"name": "log-read", "contains": ["What log level"], "responses": [{"tool_calls": [
    {"id": "call_b1", "name": "read_config", "arguments": {"path": "/srv/app/app.conf"}}]}]},
  {"name": "port-answer", "contains": ["What port", "port = 8080"],
   "responses": [{"text": "The app listens on port 8080."}]},
  {"name": "port-retry", "contains": ["What port", "Error: no such file /etc/app.conf"],
   "responses": [{"tool_calls": [
    {"id": "call_a2", "name": "read_config", "arguments": {"path": "/srv/app/app.conf"}}]}]},
  {"name": "port-read", "contains": ["What port"], "responses": [{"tool_calls": [
    {"id": "call_a1", "name": "read_config", "arguments": {"path": "/etc/app.conf"}}]}]}
])json";

class ProxyE2eTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    if (std::string(MEND_NODE_EXECUTABLE).empty()) {
      GTEST_SKIP() << "node is not installed (scripts/bootstrap installs it)";
    }
    if (!std::filesystem::exists(kClientsDir + "/node_modules/openai")) {
      GTEST_SKIP() << "the npm packages of tests/proxy_clients are not installed (run "
                      "scripts/bootstrap)";
    }
    // The clients' own key reaches neither the upstream (checked per test) nor any file or
    // output of the proxy.
    PlantSecret(kClientKey);
    log_ = dir_->File("upstream.jsonl");
    std::vector<std::string> args = {"--routes", WriteTestFile("routes.json", kRoutes), "--log",
                                     log_};
    for (const std::string& flag : ApiKeyFlags()) args.push_back(flag);
    StartFakeLlm(args);
    // The proxy's upstream and its lesson provider: the fake server, with the planted key.
    env_.push_back("MEND_PROVIDER=openai");
    env_.push_back("MEND_MODEL=gpt-4o-mini");
    env_.push_back("MEND_BASE_URL=" + ServerUrl());
  }

  // Starts `mend proxy` on a free loopback port with `extra` flags and returns its port.
  int StartProxy(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"proxy", "--listen", "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    proxy_ = StartListening(args);
    return proxy_.port;
  }

  // SIGTERM, and the proxy's exit after its lesson queue drained.
  ChildOutput StopProxy() {
    auto out = FinishListening(proxy_, SIGTERM, std::chrono::seconds(60));
    EXPECT_THAT(out, IsOk());
    if (!out.ok()) return {};
    EXPECT_TRUE(out->status.exited);
    EXPECT_EQ(out->status.code, 0) << out->err;
    return *out;
  }

  // Runs a script of tests/proxy_clients with `env`; its last stdout line, parsed.
  Json Node(const std::string& script, const std::vector<std::string>& args,
            std::vector<std::string> env) {
    std::vector<std::string> argv = {MEND_NODE_EXECUTABLE, kClientsDir + "/" + script};
    argv.insert(argv.end(), args.begin(), args.end());
    env.push_back("PATH=/usr/bin:/bin");
    env.push_back("MEND_TEST_API_KEY=" + std::string(kClientKey));
    env.push_back("MEND_TEST_TIMEOUT_MS=30000");
    auto out = RunProcess(argv, env, std::chrono::seconds(90));
    EXPECT_THAT(out, IsOk());
    if (!out.ok()) return nullptr;
    captured_ += out->out + out->err;
    EXPECT_EQ(out->status.code, 0)
        << script << " " << (args.empty() ? "" : args[0]) << ": " << out->err;
    const size_t start = out->out.rfind('\n', out->out.size() >= 2 ? out->out.size() - 2 : 0);
    const std::string last = out->out.substr(start == std::string::npos ? 0 : start + 1);
    Json parsed = Json::parse(last, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << script << " " << (args.empty() ? "" : args[0])
                                        << " printed: " << out->out << "\nstderr: " << out->err;
    return parsed;
  }

  std::vector<std::string> OpenAiEnv(int port) const {
    return {"MEND_TEST_OPENAI_BASE_URL=http://127.0.0.1:" + std::to_string(port) + "/v1"};
  }

  // The system prompt of each chat request the upstream received, in order.
  std::vector<std::string> UpstreamSystemPrompts() {
    std::vector<std::string> prompts;
    for (const Json& body : LoggedBodies(log_)) {
      if (!body.contains("messages")) continue;
      const Json& first = body["messages"][0];
      prompts.push_back(first.value("role", "") == "system" && first["content"].is_string()
                            ? first["content"].get<std::string>()
                            : "");
    }
    return prompts;
  }

  std::string log_;
  Listening proxy_;
};

TEST_F(ProxyE2eTest, AnAgentsToolFailureBecomesALessonItsNextSimilarConversationReceives) {
  int port = StartProxy();
  ASSERT_GT(port, 0);
  Json first = Node("agent_lesson.mjs", {}, [&] {
    std::vector<std::string> env = OpenAiEnv(port);
    env.push_back("MEND_TEST_CONVERSATIONS=1");
    return env;
  }());
  ASSERT_TRUE(first.is_object());
  const Json& run1 = first["runs"][0];
  EXPECT_EQ(run1["final_output"], "The app listens on port 8080.");
  ASSERT_EQ(run1["tool_calls"].size(), 2u);
  EXPECT_TRUE(run1["tool_calls"][0]["failed"].get<bool>());
  EXPECT_FALSE(run1["tool_calls"][1]["failed"].get<bool>());
  // Nothing was known yet: no memory section in conversation 1.
  for (const std::string& prompt : UpstreamSystemPrompts()) {
    EXPECT_THAT(prompt, Not(HasSubstr("## Long-term Memory")));
  }

  // A stop drains the lesson queue: the failure and what worked became a lesson.
  ChildOutput stopped = StopProxy();
  EXPECT_THAT(stopped.err, HasSubstr("stopped"));
  Json lessons = MendJson({"memory", "list"});
  EXPECT_THAT(lessons.dump(), HasSubstr("/srv/app/app.conf"));
  EXPECT_EQ(MendJson({"reflect"})["wal_records"], 0);

  port = StartProxy();
  ASSERT_GT(port, 0);
  Json second = Node("agent_lesson.mjs", {}, [&] {
    std::vector<std::string> env = OpenAiEnv(port);
    env.push_back("MEND_TEST_CONVERSATIONS=2");
    return env;
  }());
  ASSERT_TRUE(second.is_object());
  EXPECT_EQ(second["runs"][0]["final_output"], "The app logs at level info.");
  // Conversation 2's first request carried the lesson at the end of the agent's instructions.
  std::vector<std::string> prompts = UpstreamSystemPrompts();
  ASSERT_FALSE(prompts.empty());
  const std::string& last = prompts.back();
  EXPECT_THAT(last, HasSubstr("You run the app in production."));
  EXPECT_THAT(last, HasSubstr("\n\n## Long-term Memory"));
  EXPECT_THAT(last,
              HasSubstr("Read the app config from /srv/app/app.conf instead of /etc/app.conf"));
  // Every request of conversation 2 had the same prompt, byte for byte.
  const std::vector<Json> bodies = LoggedBodies(log_);
  int with_lesson = 0;
  for (const std::string& prompt : prompts) {
    if (prompt.find("/srv/app/app.conf instead") != std::string::npos) {
      EXPECT_EQ(prompt, last);
      ++with_lesson;
    }
  }
  EXPECT_EQ(with_lesson, 2);  // the tool call turn and the answer turn
  StopProxy();
}

TEST_F(ProxyE2eTest, TheOpenAiSdkWorksUnchangedThroughTheProxy) {
  const int port = StartProxy();
  ASSERT_GT(port, 0);
  const std::vector<std::string> env = OpenAiEnv(port);

  Json plain = Node("openai_chat.mjs", {"plain"}, env);
  EXPECT_EQ(plain["content"], "ok");
  EXPECT_EQ(plain["usage"]["prompt_tokens"], 10);

  Json stream = Node("openai_chat.mjs", {"stream"}, env);
  EXPECT_EQ(stream["text"], "ok");
  EXPECT_TRUE(stream["last_chunk_empty_choices"].get<bool>());
  EXPECT_TRUE(stream["last_chunk_has_usage"].get<bool>());
  EXPECT_EQ(stream["chunks"][0]["choices"][0]["delta"]["role"], "assistant");

  std::vector<std::string> tools_env = env;
  tools_env.push_back("MEND_TEST_PROMPT=What is the weather in Paris, and the app's config?");
  Json tools = Node("openai_chat.mjs", {"tools"}, tools_env);
  ASSERT_EQ(tools["tool_calls"].size(), 2u) << tools.dump();
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(tools["tool_calls"][i]["index"], i);
    EXPECT_EQ(tools["tool_calls"][i]["argument_chunks"], 3);  // not bunched at the end
  }
  EXPECT_EQ(tools["tool_calls"][0]["arguments_json"]["city"], "Paris");
  EXPECT_EQ(tools["tool_calls"][1]["name"], "read_config");
  EXPECT_EQ(tools["finish_reason"], "tool_calls");

  Json models = Node("openai_chat.mjs", {"models"}, env);
  EXPECT_THAT(models["ids"].dump(), HasSubstr("fake-model"));
  Json embeddings = Node("openai_chat.mjs", {"embeddings"}, env);
  EXPECT_EQ(embeddings["dimensions"], 8);
  Json responses = Node("openai_chat.mjs", {"responses"}, env);
  EXPECT_EQ(responses["output_text"], "ok");
  EXPECT_EQ(responses["stream_event_types"].back(), "response.completed");

  // The client's own key never reached the upstream; the proxy's did.
  for (const Json& line : ReadJsonLines(log_)) {
    EXPECT_THAT(line.dump(), Not(HasSubstr(kClientKey)));
  }
  auto metrics = httplib::Client("127.0.0.1", port).Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(
      metrics->body,
      HasSubstr(R"(mend_proxy_requests_total{route="/v1/chat/completions",status="200"} 3)"));
  StopProxy();
}

// Over HTTPS (proxy.tls_cert, proxy.tls_key) with a certificate made here: the SDK, trusting it
// through NODE_EXTRA_CA_CERTS, works unchanged; without trusting it, it refuses to connect.
TEST_F(ProxyE2eTest, TheOpenAiSdkWorksOverHttpsWithTheProxysCertificate) {
  const std::string cert = dir_->File("proxy.crt");
  const std::string key = dir_->File("proxy.key");
  auto made = RunProcess({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                          "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
                          "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"},
                         {"PATH=/usr/bin:/bin"}, std::chrono::seconds(60));
  ASSERT_THAT(made, IsOk());
  ASSERT_EQ(made->status.code, 0) << made->err;
  const int port = StartProxy({"--tls-cert", cert, "--tls-key", key});
  ASSERT_GT(port, 0);
  const std::string base_url = "https://127.0.0.1:" + std::to_string(port) + "/v1";

  Json plain = Node("openai_chat.mjs", {"plain"},
                    {"MEND_TEST_OPENAI_BASE_URL=" + base_url, "NODE_EXTRA_CA_CERTS=" + cert});
  EXPECT_EQ(plain["content"], "ok");
  Json stream = Node("openai_chat.mjs", {"stream"},
                     {"MEND_TEST_OPENAI_BASE_URL=" + base_url, "NODE_EXTRA_CA_CERTS=" + cert});
  EXPECT_EQ(stream["text"], "ok");

  std::vector<std::string> argv = {MEND_NODE_EXECUTABLE, kClientsDir + "/openai_chat.mjs", "plain"};
  auto untrusted = RunProcess(argv,
                              {"PATH=/usr/bin:/bin", "MEND_TEST_OPENAI_BASE_URL=" + base_url,
                               "MEND_TEST_API_KEY=" + std::string(kClientKey),
                               "MEND_TEST_TIMEOUT_MS=30000", "MEND_TEST_MAX_RETRIES=0"},
                              std::chrono::seconds(90));
  ASSERT_THAT(untrusted, IsOk());
  EXPECT_NE(untrusted->status.code, 0) << untrusted->out;
  StopProxy();
}

TEST_F(ProxyE2eTest, TheOpenAiSdkSeesUpstreamErrorsAsTheUpstreamSentThem) {
  MEND_ASSERT_OK(StopFakeLlm(SIGTERM));
  std::vector<std::string> args = {"--script", WriteTestFile("script.json", R"([
    {"status": 400, "error_message": "This model's maximum context length is 8192 tokens",
     "error_type": "context_length_exceeded"},
    {"text": "one two three four five six seven eight nine ten"}])")};
  for (const std::string& flag : ApiKeyFlags()) args.push_back(flag);
  StartFakeLlm(args);
  const int port = StartProxy({"--upstream", ServerUrl() + "/v1"});
  ASSERT_GT(port, 0);
  Json error = Node("openai_chat.mjs", {"error"}, OpenAiEnv(port));
  EXPECT_EQ(error["error_class"], "BadRequestError");
  EXPECT_EQ(error["status"], 400);
  EXPECT_EQ(error["code"], "context_length_exceeded");
  Json abort = Node("openai_chat.mjs", {"abort"}, OpenAiEnv(port));
  EXPECT_GE(abort["chunks_read"].get<int>(), 1);
  StopProxy();
}

TEST_F(ProxyE2eTest, TheAnthropicSdkWorksUnchangedThroughTheProxy) {
  const int port = StartProxy({"--upstream-kind", "anthropic", "--upstream", ServerUrl()});
  ASSERT_GT(port, 0);
  const std::vector<std::string> env = {"MEND_TEST_ANTHROPIC_BASE_URL=http://127.0.0.1:" +
                                        std::to_string(port)};
  Json plain = Node("anthropic_messages.mjs", {"plain"}, env);
  EXPECT_EQ(plain["text"], "ok");
  EXPECT_EQ(plain["stop_reason"], "end_turn");
  Json stream = Node("anthropic_messages.mjs", {"stream"}, env);
  EXPECT_EQ(stream["event_types"].front(), "message_start");
  EXPECT_EQ(stream["event_types"].back(), "message_stop");
  Json blocks = Node("anthropic_messages.mjs", {"system_blocks"}, env);
  EXPECT_EQ(blocks["text"], "ok");
  // The upstream got the proxy's key as x-api-key, and the system blocks untouched (nothing was
  // recalled for these tasks).
  const std::vector<Json> lines = ReadJsonLines(log_);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back()["headers"]["x-api-key"], "<redacted>");
  EXPECT_EQ(lines.back()["path"], "/v1/messages");
  StopProxy();
}

// With proxy.token the clients' key is the token: the openai client passes with it, a wrong one
// is refused, and the token (planted in SetUp as the clients' key) is written nowhere.
TEST_F(ProxyE2eTest, AProxyTokenGuardsTheRoutesAndIsWrittenNowhere) {
  env_.push_back("MEND_PROXY_TOKEN=" + std::string(kClientKey));
  const int port = StartProxy();
  ASSERT_GT(port, 0);
  Json plain = Node("openai_chat.mjs", {"plain"}, OpenAiEnv(port));
  EXPECT_EQ(plain["content"], "ok");
  httplib::Client client("127.0.0.1", port);
  auto refused = client.Post(
      "/v1/chat/completions", {{"Authorization", "Bearer not-the-token"}},
      R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]})", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  StopProxy();
}

TEST_F(ProxyE2eTest, AnyAddressOtherThanLoopbackNeedsAToken) {
  auto out =
      RunProcess({MEND_BINARY, "--home", Home(), "proxy", "--listen", "0.0.0.0:0"}, env_, kBound);
  MEND_ASSERT_OK(out);
  EXPECT_EQ(out->status.code, 2);
  EXPECT_THAT(out->err, HasSubstr("proxy.token"));
  EXPECT_EQ(out->out, "");
  auto bad_kind = RunProcess({MEND_BINARY, "--home", Home(), "proxy", "--upstream-kind", "gemini"},
                             env_, kBound);
  MEND_ASSERT_OK(bad_kind);
  EXPECT_EQ(bad_kind->status.code, 2);
  EXPECT_THAT(bad_kind->err, HasSubstr("openai or anthropic"));
  auto bad_url =
      RunProcess({MEND_BINARY, "--home", Home(), "proxy", "--upstream", "ftp://x"}, env_, kBound);
  MEND_ASSERT_OK(bad_url);
  EXPECT_EQ(bad_url->status.code, 2);
  EXPECT_THAT(bad_url->err, HasSubstr("http"));
}

TEST_F(ProxyE2eTest, ServeMountsTheProxyWhenAnUpstreamIsSet) {
  env_.push_back("MEND_PROXY_UPSTREAM=" + ServerUrl() + "/v1");
  env_.push_back("MEND_SERVE_TOKEN=serve-t0ken");
  PlantSecret("serve-t0ken");
  Listening serve = StartListening({"serve", "--listen", "127.0.0.1:0"});
  const int port = serve.port;
  ASSERT_GT(port, 0);
  // The proxy's route takes the client's key; serve's API still wants serve.token.
  Json plain = Node("openai_chat.mjs", {"plain"}, OpenAiEnv(port));
  EXPECT_EQ(plain["content"], "ok");
  httplib::Client client("127.0.0.1", port);
  auto api = client.Get("/api/v1/runs");
  ASSERT_TRUE(api);
  EXPECT_EQ(api->status, 401);
  auto out = FinishListening(serve, SIGTERM);
  MEND_ASSERT_OK(out);
  EXPECT_EQ(out->status.code, 0) << out->err;
}

}  // namespace
}  // namespace mend::testing
