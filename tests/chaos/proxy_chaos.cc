// Proxy chaos: a real `mend proxy` in front of the fake LLM server, whose answers come after 5xx
// statuses, 429s with Retry-After, dropped connections, slow first bytes and streams cut in the
// middle. A client (as an SDK does) sends each request until it gets a whole answer. Every request
// must end with its own answer exactly once; the upstream must be asked exactly once per scripted
// answer (a retry after bytes reached the client would ask it again and splice two answers); a
// stream cut in the middle must never reach the client as a finished answer.
#include <httplib.h>
#include <signal.h>

#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/chaos/chaos.h"
#include "tests/chaos/chaos_util.h"
#include "tests/support/mend_command.h"

namespace mend::chaos {
namespace {

using Json = nlohmann::json;

// What a client got from one attempt.
struct Answer {
  int status = 0;
  std::string content;
  bool finished = false;  // a stream's [DONE], or a whole JSON answer
};

Answer ParseAnswer(const httplib::Result& res, bool stream) {
  Answer answer;
  if (!res) return answer;
  answer.status = res->status;
  if (res->status != 200) return answer;
  if (!stream) {
    Json body = Json::parse(res->body, nullptr, false);
    if (body.is_discarded() || !body.contains("choices")) return answer;
    answer.content = body["choices"][0]["message"].value("content", "");
    answer.finished = true;
    return answer;
  }
  std::istringstream lines(res->body);
  bool error = false;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("data: ", 0) != 0) continue;
    const std::string data = line.substr(6);
    if (data == "[DONE]") {
      answer.finished = true;
      continue;
    }
    Json event = Json::parse(data, nullptr, false);
    if (event.is_discarded() || event.contains("error")) {
      error = true;
      continue;
    }
    if (event.contains("choices") && !event["choices"].empty()) {
      const Json& delta = event["choices"][0].value("delta", Json::object());
      if (delta.contains("content") && delta["content"].is_string()) {
        answer.content += delta["content"].get<std::string>();
      }
    }
  }
  if (error) answer.finished = false;
  return answer;
}

}  // namespace

Result<ChaosRow> RunProxyChaos(const ChaosOptions& options) {
  std::mt19937 rng(options.seed * 104729u + 3);
  const int requests = 12 * options.scale;
  Json script = Json::array();
  std::vector<bool> streamed;
  std::vector<int> cuts;  // streams cut in the middle before each request's answer
  int64_t faults = 0;
  for (int i = 0; i < requests; ++i) {
    const bool stream = rng() % 2 == 0;
    streamed.push_back(stream);
    // Before the answer: 0-2 faults the proxy retries itself (it makes 3 attempts).
    const int before = std::discrete_distribution<int>({5, 3, 2})(rng);
    for (int k = 0; k < before; ++k) {
      switch (rng() % 5) {
        case 0:
          script.push_back({{"status", 500}, {"error_message", "chaos 500"}});
          break;
        case 1:
          script.push_back({{"status", 502}, {"fault", "html_error_page"}});
          break;
        case 2:
          script.push_back({{"status", 503}, {"error_message", "chaos 503"}});
          break;
        case 3:
          script.push_back(
              {{"status", 429}, {"retry_after_seconds", 1}, {"error_message", "chaos 429"}});
          break;
        default:
          script.push_back({{"fault", "drop_connection"}});
          break;
      }
      ++faults;
    }
    // A stream cut in the middle: the proxy has relayed bytes and must not retry; the client does.
    int cut = 0;
    if (stream && rng() % 3 == 0) {
      script.push_back({{"text", "a partial answer that never ends " + std::to_string(i)},
                        {"fault", "stream_cut"}});
      cut = 1;
      ++faults;
    }
    cuts.push_back(cut);
    Json answer = {{"text", "answer-" + std::to_string(i) + " from the upstream"}};
    if (rng() % 4 == 0) {
      answer["latency_ms"] = 300;  // a slow first byte
      ++faults;
    }
    script.push_back(answer);
  }
  const std::string script_path = options.work_dir + "/proxy-script.json";
  const std::string log_path = options.work_dir + "/proxy-upstream.jsonl";
  MEND_RETURN_IF_ERROR(WriteText(script_path, script.dump(1)));
  MEND_ASSIGN_OR_RETURN(testing::FakeServerProcess fake,
                        StartFake(options, {"--script", script_path, "--log", log_path}));
  const std::string upstream = testing::LoopbackUrl(fake.port) + "/v1";
  const std::string home = options.work_dir + "/proxy-home";
  std::vector<std::string> env = testing::CleanEnv(
      options.work_dir,
      {"MEND_PROXY_UPSTREAM=" + upstream, "MEND_PROXY_UPSTREAM_API_KEY=sk-chaos-upstream-4242",
       "MEND_PROVIDER=openai", "MEND_MODEL=chaos-model", "MEND_BASE_URL=" + upstream,
       "MEND_API_KEY=sk-chaos-KEY-4141"});
  std::vector<std::string> mend = MendArgv(options, home, {"proxy", "--listen", "127.0.0.1:0"});
  std::erase(mend, "--json");
  const std::string proxy_log = options.work_dir + "/proxy.log";
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<testing::ChildProcess> proxy,
                        testing::ChildProcess::Spawn(testing::OutputToFile(proxy_log, mend), env));
  // Its first line says where it listens: poll its log for it.
  int port = 0;
  const std::string marker = "listening on http://127.0.0.1:";
  for (const auto deadline = std::chrono::steady_clock::now() + kBound;
       port == 0 && std::chrono::steady_clock::now() < deadline;) {
    Result<std::string> text = ReadText(proxy_log);
    const size_t at = text.ok() ? text->find(marker) : std::string::npos;
    if (at != std::string::npos) port = std::atoi(text->c_str() + at + marker.size());
    if (port == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (port == 0) {
    Result<std::string> text = ReadText(proxy_log);
    return InternalError("mend proxy did not start: " + (text.ok() ? *text : std::string()));
  }

  ChaosRow row;
  row.faults = faults;
  int64_t client_retries = 0;
  for (int i = 0; i < requests; ++i) {
    const std::string expected = "answer-" + std::to_string(i) + " from the upstream";
    Json body = {{"model", "chaos-model"},
                 {"messages", {{{"role", "user"}, {"content", "question " + std::to_string(i)}}}}};
    if (streamed[i]) body["stream"] = true;
    bool done = false;
    for (int attempt = 0; attempt < 4 && !done; ++attempt) {
      httplib::Client client("127.0.0.1", port);
      client.set_read_timeout(std::chrono::seconds(30));
      Answer got = ParseAnswer(
          client.Post("/v1/chat/completions", {{"Authorization", "Bearer sk-chaos-client"}},
                      body.dump(), "application/json"),
          streamed[i]);
      if (got.finished && got.status == 200) {
        if (got.content != expected) {
          ++row.duplicated;
          row.problems.push_back("request " + std::to_string(i) + " got \"" + got.content +
                                 "\" as a finished answer");
        } else if (attempt < cuts[i]) {
          ++row.lost;
          row.problems.push_back("request " + std::to_string(i) +
                                 ": a stream cut upstream reached the client as finished");
        }
        done = true;
      } else {
        ++client_retries;
        Say(options, "request " + std::to_string(i) + " attempt " + std::to_string(attempt) +
                         ": status " + std::to_string(got.status) + ", not finished");
      }
    }
    if (!done) {
      ++row.lost;
      row.problems.push_back("request " + std::to_string(i) + " got no answer in 4 attempts");
    } else {
      ++row.runs_completed;
    }
  }
  MEND_RETURN_IF_ERROR(proxy->Kill(SIGTERM));
  MEND_ASSIGN_OR_RETURN(testing::ChildOutput stopped, proxy->Finish(kBound));
  if (!stopped.status.exited || stopped.status.code != 0) {
    Result<std::string> text = ReadText(proxy_log);
    row.problems.push_back("mend proxy did not stop cleanly on SIGTERM: " +
                           (text.ok() ? *text : std::string()));
    ++row.lost;
  }
  // Every scripted answer was asked for exactly once.
  MEND_ASSIGN_OR_RETURN(std::string log, ReadText(log_path));
  int64_t asked = 0;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("/v1/chat/completions") != std::string::npos) ++asked;
  }
  const int64_t scripted = static_cast<int64_t>(script.size());
  if (asked > scripted) {
    row.duplicated += asked - scripted;
    row.problems.push_back("the upstream was asked " + std::to_string(asked) + " times for " +
                           std::to_string(scripted) + " scripted answers");
  } else if (asked < scripted) {
    row.lost += scripted - asked;
    row.problems.push_back("only " + std::to_string(asked) + " of " + std::to_string(scripted) +
                           " scripted answers were asked for");
  }
  row.detail = std::to_string(requests) + " requests through `mend proxy`, " +
               std::to_string(faults) + " upstream faults (5xx, 429, dropped connections, slow " +
               "first bytes, streams cut midway); " + std::to_string(client_retries) +
               " client retries (after cut streams); the upstream asked " + std::to_string(asked) +
               " times for " + std::to_string(scripted) + " scripted answers";
  fake.process->Kill(SIGKILL).IgnoreError();
  return row;
}

}  // namespace mend::chaos
