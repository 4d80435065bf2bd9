// fake_llm_server: the fake OpenAI/Anthropic server as a process, for end-to-end tests and
// benchmarks. Prints "listening on 127.0.0.1:<port>" once ready and serves until SIGTERM/SIGINT;
// with --announce, also one line per request as it arrives.
// Exit codes: 0 after a signal, 2 for bad options or an unreadable script, default, routes or log
// file, 1 when it cannot listen.

#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>

#include "tests/support/fake_llm_server.h"

namespace {

using mend::Result;
using mend::testing::FakeLlmServer;
using mend::testing::FakeResponse;
using mend::testing::FakeRoute;

struct Options {
  int port = 0;
  std::string script_path;
  std::string default_path;
  std::string routes_path;
  int latency_ms = 0;
  std::string api_key;
  std::string log_path;
  bool announce = false;
};

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return mend::NotFoundError("cannot read " + path);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// Adds the routes of the --routes file to `server`, in file order; errors name the file.
mend::Status AddRoutes(const Options& options, FakeLlmServer& server) {
  if (options.routes_path.empty()) return mend::OkStatus();
  MEND_ASSIGN_OR_RETURN(std::string text, ReadFile(options.routes_path));
  Result<std::vector<FakeRoute>> routes = mend::testing::ParseFakeRoutes(text);
  if (!routes.ok()) return routes.status().Annotate(options.routes_path);
  for (FakeRoute& route : *routes) {
    for (FakeResponse& response : route.responses) {
      if (response.latency.count() == 0)
        response.latency = std::chrono::milliseconds(options.latency_ms);
    }
    server.AddRoute(std::move(route));
  }
  return mend::OkStatus();
}

// Loads the routes, script and default response into `server`; errors name the file.
mend::Status Configure(const Options& options, FakeLlmServer& server) {
  MEND_RETURN_IF_ERROR(AddRoutes(options, server));
  std::chrono::milliseconds latency(options.latency_ms);
  if (!options.default_path.empty()) {
    MEND_ASSIGN_OR_RETURN(std::string text, ReadFile(options.default_path));
    Result<FakeResponse> response = mend::testing::ParseFakeResponse(text);
    if (!response.ok()) return response.status().Annotate(options.default_path);
    if (response->latency.count() == 0) response->latency = latency;
    server.SetDefault(*response);
  } else if (latency.count() > 0) {
    FakeResponse response;
    response.text = "ok";
    response.latency = latency;
    server.SetDefault(response);
  }
  if (options.script_path.empty()) return mend::OkStatus();
  MEND_ASSIGN_OR_RETURN(std::string text, ReadFile(options.script_path));
  auto script = mend::testing::ParseFakeScript(text);
  if (!script.ok()) return script.status().Annotate(options.script_path);
  for (FakeResponse& response : *script) {
    if (response.latency.count() == 0) response.latency = latency;
    server.Enqueue(std::move(response));
  }
  return mend::OkStatus();
}

// Reports every recorded request as it arrives, before its latency: one JSON line appended to the
// --log file, and with --announce one line "request <n> <method> <path>" on stdout (n from 1).
// Both are flushed per request, so a reader sees requests as they arrive.
mend::Status AttachObserver(const Options& options, FakeLlmServer& server) {
  if (options.log_path.empty() && !options.announce) return mend::OkStatus();
  std::shared_ptr<std::ofstream> log;
  if (!options.log_path.empty()) {
    log = std::make_shared<std::ofstream>(options.log_path, std::ios::app | std::ios::binary);
    if (!*log) return mend::NotFoundError("cannot open log " + options.log_path);
  }
  auto mu = std::make_shared<std::mutex>();
  auto count = std::make_shared<int64_t>(0);
  const bool announce = options.announce;
  server.SetRequestObserver(
      [log, mu, count, announce](const mend::testing::RecordedRequest& request) {
        std::lock_guard<std::mutex> lock(*mu);
        ++*count;
        if (log != nullptr) {
          *log << mend::testing::RecordedRequestToJsonLine(request) << '\n';
          log->flush();
        }
        if (announce) {
          std::cout << "request " << *count << ' ' << request.method << ' ' << request.path
                    << std::endl;
        }
      });
  return mend::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app("A fake OpenAI- and Anthropic-compatible LLM server for tests and benchmarks");
  app.add_option("--port", options.port, "port on 127.0.0.1 (0: any free port)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--script", options.script_path, "JSON array of scripted responses");
  app.add_option("--default", options.default_path,
                 "JSON response used when no route matches and the script is done");
  app.add_option("--routes", options.routes_path,
                 "JSON array of routes: a request containing a route's strings gets its "
                 "responses in turn, before the script");
  app.add_option("--latency-ms", options.latency_ms,
                 "delay before answers whose response sets no latency_ms")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--api-key", options.api_key, "require this bearer token or x-api-key");
  app.add_option("--log", options.log_path, "append recorded requests as JSON lines");
  app.add_flag("--announce", options.announce,
               "print \"request <n> <method> <path>\" on stdout as each request arrives");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "fake_llm_server: %s (see --help)\n", e.what());
    return 2;
  }

  // Signals are taken synchronously by this thread; server threads inherit the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  mend::testing::FakeLlmServerOptions server_options;
  server_options.port = options.port;
  auto server = FakeLlmServer::Start(server_options);
  if (!server.ok()) {
    std::cerr << "fake_llm_server: " << server.status() << std::endl;
    return 1;
  }
  mend::Status configured = Configure(options, **server);
  if (configured.ok()) configured = AttachObserver(options, **server);
  if (!configured.ok()) {
    std::cerr << "fake_llm_server: " << configured << std::endl;
    return 2;
  }
  if (!options.api_key.empty()) (*server)->RequireApiKey(options.api_key);

  std::cout << "listening on 127.0.0.1:" << (*server)->port() << std::endl;
  int received = 0;
  sigwait(&signals, &received);
  return 0;
}
