// `mend proxy`'s added latency (docs/proxy.md, "Performance"), in one run against one fake
// upstream that answers at once (the fake LLM server, in this process): a 1 KB non-streamed chat
// completion and the time to the first streamed event, sent directly to the upstream, through
// `mend proxy` with memory off, through `mend proxy` with memory on over FACTS facts (every
// request a new conversation, so every request recalls), and through the Portkey gateway; one
// client at a time and CONCURRENCY at once. Then STREAMS streams held open through the proxy at
// once, with its resident memory. Usage:
//   mend_proxy_bench MEND_BINARY WORK_DIR [--requests N] [--concurrency C] [--facts N]
//                    [--streams N] [--node PATH --portkey DIR]
// bench/run_proxy_bench builds and runs it.
#include <httplib.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/child_process.h"
#include "tests/support/fake_llm_server.h"

namespace {

using Clock = std::chrono::steady_clock;
using mend::testing::ChildProcess;
using Json = nlohmann::json;

struct Options {
  std::string mend;
  std::string dir;
  int requests = 2000;
  int concurrency = 64;
  int facts = 10000;
  int streams = 1000;
  std::string node;
  std::string portkey;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "proxy_bench: %s\n", what.c_str());
  std::exit(1);
}

// A target: where requests go and the headers they need there.
struct Target {
  std::string name;
  int port = 0;
  std::string prefix;  // path prefix before /chat/completions
  httplib::Headers headers;
};

// Pseudo-words used as text is (a few everywhere, most rare: a power law over their ranks), so
// the facts' and the tasks' term statistics resemble real ones.
class Words {
 public:
  explicit Words(size_t size) {
    const char* consonants = "bcdfghklmnprstvz";
    const char* vowels = "aeiou";
    for (const char* w :
         {"the", "to",   "a",    "and", "of",   "in",   "is",  "it",  "for",   "that",
          "on",  "with", "when", "if",  "then", "from", "not", "run", "fails", "check"}) {
      words_.push_back(w);
    }
    uint64_t state = 42;
    while (words_.size() < size) {
      std::string w;
      const int syllables = 2 + static_cast<int>(Next(state) % 3);
      for (int i = 0; i < syllables; ++i) {
        w += consonants[Next(state) % 16];
        w += vowels[Next(state) % 5];
      }
      words_.push_back(w);
    }
  }
  // `n` words drawn from `seed`.
  std::string Text(uint64_t seed, int n) const {
    std::string out;
    for (int i = 0; i < n; ++i) {
      const double u = static_cast<double>(Next(seed) >> 11) / static_cast<double>(1ULL << 53);
      const size_t rank = static_cast<size_t>(std::pow(static_cast<double>(words_.size()), u)) - 1;
      if (!out.empty()) out += ' ';
      out += words_[std::min(rank, words_.size() - 1)];
    }
    return out;
  }

 private:
  static uint64_t Next(uint64_t& state) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state ^ (state >> 29);
  }
  std::vector<std::string> words_;
};

const Words& Vocabulary() {
  static const Words words(20000);
  return words;
}

// The system prompt of every request: an agent's instructions of about 700 bytes.
const std::string& Instructions() {
  static const std::string text =
      "You are an operations agent for a fleet of web services. You diagnose failing deploys, "
      "read logs and configuration, and fix what you can with the tools you are given. Before "
      "you change anything, read the current state; after a change, check that it took effect. "
      "Prefer small, reversible steps. When a tool fails, read its error and change the call "
      "instead of repeating it. When you cannot finish, say what blocks you and what you "
      "tried. Keep answers short: what you found, what you changed, and what is left. Never "
      "print secrets, tokens or keys, even when a file you read holds them. Ask before you "
      "restart a service that serves traffic, and never delete data without a backup.";
  return text;
}

// A chat request of about 1 KB whose task (the user message, and so the conversation) is new for
// every `i`: the instructions and a task of 20 to 40 words.
std::string ChatBody(int i, bool stream) {
  Json body = {{"model", "gpt-4o-mini"},
               {"messages",
                {{{"role", "system"}, {"content", Instructions()}},
                 {{"role", "user"},
                  {"content", "Task " + std::to_string(i) + ": " +
                                  Vocabulary().Text(static_cast<uint64_t>(i) * 2654435761ULL,
                                                    20 + i % 21)}}}}};
  if (stream) {
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
  }
  return body.dump();
}

// A port nothing listens on now (the gateway takes its port as a flag).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    Die("no free port");
  }
  close(fd);
  return ntohs(addr.sin_port);
}

std::unique_ptr<ChildProcess> StartMendProxy(const Options& o, const std::string& home,
                                             int upstream_port, bool memory, int* port) {
  std::vector<std::string> env = {
      "PATH=/usr/bin:/bin",
      "HOME=" + o.dir,
      "MEND_PROVIDER=openai",
      "MEND_MODEL=gpt-4o-mini",
      "MEND_BASE_URL=http://127.0.0.1:" + std::to_string(upstream_port),
      "MEND_API_KEY=sk-bench",
      std::string("MEND_MEMORY_ENABLED=") + (memory ? "true" : "false")};
  auto child =
      ChildProcess::Spawn({o.mend, "--home", home, "proxy", "--listen", "127.0.0.1:0"}, env);
  if (!child.ok()) Die("mend proxy: " + child.status().ToString());
  auto line = (*child)->ReadStdoutLine(std::chrono::seconds(30));
  std::smatch match;
  if (!line.ok() || !std::regex_search(*line, match, std::regex(":([0-9]+)/"))) {
    Die("mend proxy did not say where it listens");
  }
  *port = std::stoi(match[1].str());
  return std::move(*child);
}

void ImportFacts(const Options& o, const std::string& home, int count) {
  Json facts = Json::array();
  for (int i = 0; i < count; ++i) {
    const uint64_t seed = 1'000'003ULL * static_cast<uint64_t>(i + 1);
    const Words& w = Vocabulary();
    facts.push_back(
        {{"id", "bench" + std::to_string(i)},
         {"content", "LESSON: " + w.Text(seed, 12) + "\nMISTAKE: " + w.Text(seed + 1, 16) +
                         "\nCORRECTION: " + w.Text(seed + 2, 14) + "\nTRIGGER: error"},
         {"category", i % 4 == 0 ? "lesson" : "fact"},
         {"tags", {w.Text(seed + 3, 1), w.Text(seed + 4, 1)}}});
  }
  const std::string file = o.dir + "/facts.json";
  std::ofstream(file) << facts.dump();
  auto out = mend::testing::RunProcess(
      {o.mend, "--home", home, "memory", "import", file},
      {"PATH=/usr/bin:/bin", "HOME=" + o.dir, "MEND_PROVIDER=scripted"}, std::chrono::minutes(5));
  if (!out.ok() || out->status.code != 0) {
    Die("memory import: " + (out.ok() ? out->err : out.status().ToString()));
  }
}

void WaitUntilAnswers(int port, const httplib::Headers& headers, const std::string& prefix) {
  for (int i = 0; i < 300; ++i) {
    httplib::Client client("127.0.0.1", port);
    if (auto r = client.Get((prefix + "/models").c_str(), headers); r && r->status < 500) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  Die("port " + std::to_string(port) + " never answered");
}

struct Sample {
  std::vector<double> ms;
  int errors = 0;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t at = std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5));
  return v[at];
}

// One request on `client`; its latency to the whole reply (non-streamed) or to the first bytes
// of the body (streamed), in ms; negative on failure.
double Once(httplib::Client& client, const Target& t, int i, bool stream) {
  const std::string body = ChatBody(i, stream);
  const auto start = Clock::now();
  if (!stream) {
    auto r =
        client.Post((t.prefix + "/chat/completions").c_str(), t.headers, body, "application/json");
    if (!r || r->status != 200) return -1;
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  }
  double first = -1;
  std::string received;
  httplib::Request req;
  req.method = "POST";
  req.path = t.prefix + "/chat/completions";
  req.headers = t.headers;
  req.body = body;
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (first < 0) first = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    received.append(data, n);
    return true;
  };
  auto r = client.send(req);
  if (!r || r->status != 200 || received.find("[DONE]") == std::string::npos) return -1;
  return first;
}

Sample Run(const Target& t, int total, int clients, bool stream, int offset) {
  std::vector<Sample> per(clients);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", t.port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(std::chrono::seconds(30));
      for (int i = c; i < total; i += clients) {
        const double ms = Once(client, t, offset + i, stream);
        if (ms < 0) {
          ++per[c].errors;
        } else {
          per[c].ms.push_back(ms);
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  Sample all;
  for (Sample& s : per) {
    all.ms.insert(all.ms.end(), s.ms.begin(), s.ms.end());
    all.errors += s.errors;
  }
  return all;
}

int64_t ResidentKiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return -1;
}

// STREAMS streams through `t` held open at once (the upstream pauses each after its first event),
// then released. Prints errors and the proxy's resident memory.
void HoldStreams(mend::testing::FakeLlmServer& upstream, const Target& t, pid_t proxy_pid,
                 int streams) {
  mend::testing::FakeResponse paused;
  paused.text = "a streamed answer held open by the upstream";
  paused.pause_after_events = 1;
  upstream.SetDefault(paused);
  const int64_t before = ResidentKiB(proxy_pid);
  std::atomic<int> first_events{0}, errors{0}, done{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < streams; ++i) {
    threads.emplace_back([&, i] {
      httplib::Client client("127.0.0.1", t.port);
      client.set_read_timeout(std::chrono::seconds(120));
      bool counted = false;
      std::string received;
      httplib::Request req;
      req.method = "POST";
      req.path = t.prefix + "/chat/completions";
      req.headers = t.headers;
      req.body = ChatBody(1'000'000 + i, true);
      req.set_header("Content-Type", "application/json");
      req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
        received.append(data, n);
        if (!counted && received.find("\n\n") != std::string::npos) {
          counted = true;
          ++first_events;
        }
        return true;
      };
      auto r = client.send(req);
      if (!r || r->status != 200 || received.find("[DONE]") == std::string::npos) {
        ++errors;
      } else {
        ++done;
      }
    });
  }
  const bool all_paused = upstream.WaitForPausedStreams(streams, std::chrono::minutes(2));
  for (int i = 0; i < 1200 && first_events.load() < streams; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const int64_t holding = ResidentKiB(proxy_pid);
  const int open_at_peak = first_events.load();
  upstream.ResumeStreams();
  for (std::thread& th : threads) th.join();
  const int64_t after = ResidentKiB(proxy_pid);
  std::printf(
      "\n%d streams held open at once through mend proxy: %s, %d had their first event while "
      "held, %d completed, %d errors\n",
      streams, all_paused ? "all reached the upstream" : "NOT all reached the upstream",
      open_at_peak, done.load(), errors.load());
  std::printf(
      "mend proxy resident memory: %.1f MiB before, %.1f MiB holding them (%.1f KiB per "
      "stream), %.1f MiB after\n",
      before / 1024.0, holding / 1024.0,
      streams > 0 ? static_cast<double>(holding - before) / streams : 0.0, after / 1024.0);
  mend::testing::FakeResponse ok;
  ok.text = "ok";
  upstream.SetDefault(ok);
}

Options Parse(int argc, char** argv) {
  if (argc < 3) Die("usage: mend_proxy_bench MEND_BINARY WORK_DIR [flags]");
  Options o;
  o.mend = argv[1];
  o.dir = argv[2];
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--requests")
      o.requests = std::stoi(value);
    else if (flag == "--concurrency")
      o.concurrency = std::stoi(value);
    else if (flag == "--facts")
      o.facts = std::stoi(value);
    else if (flag == "--streams")
      o.streams = std::stoi(value);
    else if (flag == "--node")
      o.node = value;
    else if (flag == "--portkey")
      o.portkey = value;
    else
      Die("unknown flag " + flag);
  }
  return o;
}

void PrintRow(const std::string& name, const Sample& s, const Sample& direct) {
  const double p50 = Percentile(s.ms, 0.5);
  const double p99 = Percentile(s.ms, 0.99);
  std::printf("%-34s %9.3f %9.3f %12.3f %12.3f %7d\n", name.c_str(), p50, p99,
              p50 - Percentile(direct.ms, 0.5), p99 - Percentile(direct.ms, 0.99), s.errors);
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const Options o = Parse(argc, argv);
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);
  std::filesystem::create_directories(o.dir);

  mend::testing::FakeLlmServerOptions fake_options;
  fake_options.worker_threads = o.streams + 2 * o.concurrency + 16;
  auto upstream = mend::testing::FakeLlmServer::Start(fake_options);
  if (!upstream.ok()) Die("fake upstream: " + upstream.status().ToString());
  mend::testing::FakeLlmServer& fake = **upstream;
  const int fake_port = fake.port();
  mend::testing::FakeResponse ok;
  ok.text = "ok";
  fake.SetDefault(ok);

  std::printf(
      "mend proxy benchmark: %d requests per measurement, %d concurrent clients, %d facts\n",
      o.requests, o.concurrency, o.facts);
  const std::string home_off = o.dir + "/home-off";
  const std::string home_on = o.dir + "/home-on";
  std::filesystem::remove_all(home_off);
  std::filesystem::remove_all(home_on);
  ImportFacts(o, home_on, o.facts);

  std::vector<Target> targets;
  targets.push_back({"direct to the upstream", fake_port, "/v1", {}});
  int off_port = 0, on_port = 0;
  auto proxy_off = StartMendProxy(o, home_off, fake_port, /*memory=*/false, &off_port);
  auto proxy_on = StartMendProxy(o, home_on, fake_port, /*memory=*/true, &on_port);
  targets.push_back({"mend proxy, memory off", off_port, "/v1", {}});
  targets.push_back(
      {"mend proxy, memory on (" + std::to_string(o.facts) + " facts)", on_port, "/v1", {}});
  std::unique_ptr<ChildProcess> portkey;
  if (!o.node.empty() && !o.portkey.empty()) {
    const int port = FreePort();
    // Its log goes to a file: a pipe nobody reads would stall it once full.
    const std::string command =
        "exec " + mend::testing::ShellQuote(o.node) + " " +
        mend::testing::ShellQuote(o.portkey +
                                  "/node_modules/@portkey-ai/gateway/build/start-server.js") +
        " --port=" + std::to_string(port) + " --headless > " +
        mend::testing::ShellQuote(o.dir + "/portkey.log") + " 2>&1";
    auto child = ChildProcess::Spawn({"/bin/sh", "-c", command},
                                     {"PATH=/usr/bin:/bin", "HOME=" + o.dir}, o.portkey);
    if (!child.ok()) Die("portkey: " + child.status().ToString());
    portkey = std::move(*child);
    httplib::Headers headers = {
        {"x-portkey-provider", "openai"},
        {"x-portkey-custom-host", "http://127.0.0.1:" + std::to_string(fake_port) + "/v1"},
        {"Authorization", "Bearer sk-bench"}};
    WaitUntilAnswers(port, headers, "/v1");
    targets.push_back({"Portkey gateway 1.15.2", port, "/v1", headers});
  }
  for (const Target& t : targets) {
    Sample warm = Run(t, 300, 4, false, 0);
    if (warm.errors > 0) Die(t.name + ": warm-up requests failed");
    (void)Run(t, 100, 4, true, 0);
  }

  int offset = 10'000;
  for (const bool stream : {false, true}) {
    for (const int clients : {1, o.concurrency}) {
      std::printf("\n%s, %s\n",
                  stream ? "time to the first streamed event (ms)"
                         : "1 KB non-streamed chat completion, whole reply (ms)",
                  clients == 1 ? "one client at a time"
                               : (std::to_string(clients) + " concurrent clients").c_str());
      std::printf("%-34s %9s %9s %12s %12s %7s\n", "path", "p50", "p99", "added p50", "added p99",
                  "errors");
      std::vector<Sample> samples;
      // Interleaved, so that a slower phase of the machine hits every target alike.
      const int rounds = 5;
      samples.resize(targets.size());
      for (int round = 0; round < rounds; ++round) {
        for (size_t k = 0; k < targets.size(); ++k) {
          Sample s = Run(targets[k], o.requests / rounds, clients, stream, offset);
          offset += o.requests;
          samples[k].ms.insert(samples[k].ms.end(), s.ms.begin(), s.ms.end());
          samples[k].errors += s.errors;
        }
      }
      for (size_t k = 0; k < targets.size(); ++k) PrintRow(targets[k].name, samples[k], samples[0]);
    }
  }
  if (o.streams > 0) HoldStreams(fake, targets[1], proxy_off->pid(), o.streams);
  (void)proxy_off->Kill(SIGTERM);
  (void)proxy_on->Kill(SIGTERM);
  if (portkey != nullptr) (void)portkey->Kill(SIGTERM);
  (void)proxy_off->Finish(std::chrono::seconds(60));
  (void)proxy_on->Finish(std::chrono::seconds(60));
  return 0;
}
