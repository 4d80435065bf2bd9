// MCP's costs, each beside its reference measured in the same run (bench/run_mcp_bench):
//   - a tool call's round trip: a built-in tool (read_file), an MCP tool over stdio (mend's
//     client to fake_mcp_server's echo, and to the official filesystem server's read_text_file)
//     and over Streamable HTTP (to the official everything server's echo, and to `mend mcp serve
//     --http`'s search);
//   - a server's start (process, initialize, tools/list): fake_mcp_server and the filesystem
//     server;
//   - recall over `mend mcp serve` (stdio) on a home of FACTS facts beside ExplainRecall in
//     process on the same home.
// Every figure is p50 and p99 in milliseconds.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mend/agent/builtin_tools.h"
#include "mend/agent/tool_registry.h"
#include "mend/app/memory_view.h"
#include "mend/app/runtime.h"
#include "mend/base/config.h"
#include "mend/mcp/client.h"
#include "tests/e2e/child_process.h"
#include "tests/support/made_up_words.h"

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;
using mend::testing::MadeUpWords;

struct Options {
  std::string mend, fake, dir, node, filesystem, everything;
  int calls = 2000;
  int starts = 20;
  int facts = 100000;
  int recalls = 200;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "mcp_bench: %s\n", what.c_str());
  std::exit(1);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--mend")
      o.mend = next();
    else if (a == "--fake")
      o.fake = next();
    else if (a == "--dir")
      o.dir = next();
    else if (a == "--node")
      o.node = next();
    else if (a == "--filesystem")
      o.filesystem = next();
    else if (a == "--everything")
      o.everything = next();
    else if (a == "--calls")
      o.calls = std::stoi(next());
    else if (a == "--starts")
      o.starts = std::stoi(next());
    else if (a == "--facts")
      o.facts = std::stoi(next());
    else if (a == "--recalls")
      o.recalls = std::stoi(next());
    else
      Die("unknown argument " + a);
  }
  if (o.mend.empty() || o.fake.empty() || o.dir.empty()) Die("--mend, --fake and --dir are needed");
  // The servers run in --dir; the programs are named from anywhere.
  o.mend = std::filesystem::absolute(o.mend).string();
  o.fake = std::filesystem::absolute(o.fake).string();
  o.dir = std::filesystem::absolute(o.dir).string();
  return o;
}

double Ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

void Row(const std::string& what, const std::vector<double>& ms) {
  std::printf("%-62s %9.3f %9.3f  (n=%zu)\n", what.c_str(), Percentile(ms, 0.5),
              Percentile(ms, 0.99), ms.size());
}

std::unique_ptr<mend::mcp::Client> Connect(std::unique_ptr<mend::mcp::Transport> transport,
                                           const std::string& name) {
  mend::mcp::ClientOptions options;
  options.name = name;
  auto client = mend::mcp::Client::Connect(std::move(transport), options);
  if (!client.ok()) Die(name + ": " + client.status().ToString());
  return std::move(client).value();
}

std::unique_ptr<mend::mcp::Client> Stdio(std::vector<std::string> argv, const std::string& cwd,
                                         const std::string& name) {
  mend::mcp::StdioOptions stdio;
  stdio.argv = std::move(argv);
  stdio.cwd = cwd;
  auto transport = mend::mcp::MakeStdioTransport(std::move(stdio));
  if (!transport.ok()) Die(transport.status().ToString());
  return Connect(std::move(transport).value(), name);
}

std::unique_ptr<mend::mcp::Client> Http(const std::string& url, const std::string& name) {
  mend::mcp::HttpOptions http;
  http.url = url;
  auto transport = mend::mcp::MakeHttpTransport(http);
  if (!transport.ok()) Die(transport.status().ToString());
  return Connect(std::move(transport).value(), name);
}

std::vector<double> Calls(mend::mcp::Client& client, int n, const std::string& tool,
                          const json& args) {
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    const auto start = Clock::now();
    auto r = client.CallTool(tool, args, std::chrono::seconds(30));
    if (!r.ok() || r->is_error)
      Die(tool + ": " + (r.ok() ? r->result.dump() : r.status().ToString()));
    ms.push_back(Ms(start));
  }
  return ms;
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    Die("no free port");
  }
  close(fd);
  return ntohs(addr.sin_port);
}

// A child whose first stdout line containing `ready` says it listens.
std::unique_ptr<mend::testing::ChildProcess> Listening(const std::vector<std::string>& argv,
                                                       const std::vector<std::string>& env,
                                                       const std::string& ready,
                                                       std::string* line_out) {
  auto child = mend::testing::ChildProcess::Spawn(argv, env);
  if (!child.ok()) Die(child.status().ToString());
  for (;;) {
    auto line = (*child)->ReadStdoutLine(std::chrono::seconds(30));
    if (!line.ok()) Die(argv[0] + " did not start: " + line.status().ToString());
    if (line->find(ready) != std::string::npos) {
      *line_out = *line;
      return std::move(*child);
    }
  }
}

void ToolCalls(const Options& o, const std::vector<std::string>& env) {
  std::printf("\n%-62s %9s %9s\n", "tool call round trip (ms)", "p50", "p99");
  std::ofstream(o.dir + "/small.txt") << "a small file for read_file\n";
  mend::agent::ToolRegistry registry;
  auto read_file = mend::agent::MakeBuiltinTool("read_file");
  if (!read_file.ok() || !registry.Register(std::move(read_file).value()).ok()) Die("read_file");
  mend::agent::ToolContext ctx;
  ctx.workspace = o.dir;
  ctx.env = mend::Env::Default();
  std::vector<double> builtin;
  for (int i = 0; i < o.calls; ++i) {
    const auto start = Clock::now();
    auto r = registry.Invoke("read_file", R"({"path":"small.txt"})", ctx);
    if (r.is_error) Die("read_file: " + r.content);
    builtin.push_back(Ms(start));
  }
  Row("built-in read_file (reference)", builtin);

  auto fake = Stdio({o.fake}, o.dir, "fake");
  Row("MCP stdio: fake_mcp_server echo (C++)", Calls(*fake, o.calls, "echo", {{"text", "hi"}}));
  fake->Close();
  if (!o.node.empty()) {
    auto fs = Stdio({o.node, o.filesystem, o.dir}, o.dir, "fs");
    Row("MCP stdio: official filesystem server read_text_file (node)",
        Calls(*fs, o.calls, "read_text_file", {{"path", o.dir + "/small.txt"}}));
    fs->Close();
    const int port = FreePort();
    std::vector<std::string> every_env = env;
    every_env.push_back("PORT=" + std::to_string(port));
    std::string line;
    auto everything =
        Listening({"/bin/sh", "-c", "exec \"$0\" \"$1\" streamableHttp 2>&1", o.node, o.everything},
                  every_env, "listening on port", &line);
    auto http = Http("http://127.0.0.1:" + std::to_string(port) + "/mcp", "everything");
    Row("MCP HTTP: official everything server echo (node)",
        Calls(*http, o.calls, "echo", {{"message", "hi"}}));
    http->Close();
    (void)everything->Kill(SIGTERM);
    (void)everything->Finish(std::chrono::seconds(10));
  }
  std::string line;
  auto serve =
      Listening({o.mend, "--home", o.dir + "/home-empty", "mcp", "serve", "--http", "127.0.0.1:0"},
                env, "listening on", &line);
  auto mend_http = Http(line.substr(line.find("http://")), "mend");
  Row("MCP HTTP: mend mcp serve --http search (empty memory)",
      Calls(*mend_http, o.calls, "search", {{"query", "staging database"}}));
  mend_http->Close();
  (void)serve->Kill(SIGTERM);
  (void)serve->Finish(std::chrono::seconds(30));
}

void Starts(const Options& o) {
  std::printf("\n%-62s %9s %9s\n", "server start: process, initialize, tools/list (ms)", "p50",
              "p99");
  const auto measure = [&](const std::vector<std::string>& argv, const std::string& name) {
    std::vector<double> ms;
    for (int i = 0; i < o.starts; ++i) {
      const auto start = Clock::now();
      auto client = Stdio(argv, o.dir, name);
      if (!client->ListTools().ok()) Die(name + ": tools/list");
      ms.push_back(Ms(start));
      client->Close();
    }
    return ms;
  };
  Row("fake_mcp_server (C++)", measure({o.fake}, "fake"));
  if (!o.node.empty()) {
    Row("official filesystem server (node)", measure({o.node, o.filesystem, o.dir}, "fs"));
  }
}

void Recall(const Options& o, const std::vector<std::string>& env) {
  const std::string home = o.dir + "/home-facts";
  json facts = json::array();
  for (int i = 0; i < o.facts; ++i) {
    facts.push_back({{"id", "bench" + std::to_string(i)},
                     {"content", "LESSON: " + MadeUpWords(i, 10) +
                                     "\nCORRECTION: " + MadeUpWords(i + 7919, 12)},
                     {"category", i % 4 == 0 ? "lesson" : "fact"},
                     {"tags", {MadeUpWords(i + 104729, 1)}}});
  }
  const std::string file = o.dir + "/facts.json";
  std::ofstream(file) << facts.dump();
  auto imported = mend::testing::RunProcess({o.mend, "--home", home, "memory", "import", file}, env,
                                            std::chrono::minutes(20));
  if (!imported.ok() || imported->status.code != 0) Die("memory import failed");
  std::vector<std::string> tasks;
  for (int i = 0; i < o.recalls; ++i) tasks.push_back(MadeUpWords((i * 7919) % o.facts, 6));

  const std::string title = "recall on " + std::to_string(o.facts) + " facts (ms)";
  std::printf("\n%-62s %9s %9s\n", title.c_str(), "p50", "p99");
  {
    mend::ConfigSources sources;
    sources.flags["home"] = home;
    mend::Env env_default = mend::Env::Default();
    auto config = mend::LoadConfig(sources, *env_default.fs);
    if (!config.ok()) Die(config.status().ToString());
    mend::app::RuntimeOptions runtime_options;
    runtime_options.event_log = mend::app::EventLog::kNone;
    auto runtime = mend::app::OpenRuntime(*config, env_default, std::move(runtime_options));
    if (!runtime.ok()) Die(runtime.status().ToString());
    // Both sides get the same warm-up (the page cache, the retriever's indexes) first.
    for (size_t i = 0; i < std::min<size_t>(tasks.size(), 20); ++i) {
      (void)mend::app::ExplainRecall(**runtime, tasks[i], "");
    }
    std::vector<double> ms;
    for (const std::string& task : tasks) {
      const auto start = Clock::now();
      if (!mend::app::ExplainRecall(**runtime, task, "").ok()) Die("ExplainRecall");
      ms.push_back(Ms(start));
    }
    Row("ExplainRecall in process (reference)", ms);
  }
  auto client = Stdio({o.mend, "--home", home, "mcp", "serve"}, o.dir, "mend");
  for (size_t i = 0; i < std::min<size_t>(tasks.size(), 20); ++i) {
    (void)client->CallTool("recall", {{"task", tasks[i]}}, std::chrono::seconds(60));
  }
  std::vector<double> ms;
  for (const std::string& task : tasks) {
    const auto start = Clock::now();
    auto r = client->CallTool("recall", {{"task", task}}, std::chrono::seconds(60));
    if (!r.ok() || r->is_error) Die("recall over MCP");
    ms.push_back(Ms(start));
  }
  Row("mend mcp serve (stdio) recall", ms);
  client->Close();
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const Options o = Parse(argc, argv);
  std::filesystem::create_directories(o.dir);
  const std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=" + o.dir,
                                        "MEND_PROVIDER=scripted"};
  ToolCalls(o, env);
  Starts(o);
  Recall(o, env);
  return 0;
}
