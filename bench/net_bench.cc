// GET /healthz while N connections hold half-sent request heads (slowloris): mend's HTTP server
// (mend/net/http_server.h) next to cpp-httplib's own fixed thread pool of 64, the design serve used
// before, measured in the same run. Also the memory a half-sent connection costs mend's server
// (resident set growth per connection: its thread's stack pages and its read buffer).
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mend/net/http_server.h"

namespace {

constexpr std::string_view kHalfHead = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

long RssKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

// A server on an ephemeral port with GET /healthz, listening on its own thread.
struct Running {
  std::unique_ptr<httplib::Server> server;
  std::thread thread;
  int port = 0;
  ~Running() {
    server->stop();
    thread.join();
  }
};

std::unique_ptr<Running> Serve(bool guarded) {
  auto running = std::make_unique<Running>();
  if (guarded) {
    mend::net::ConnectionLimits limits;
    limits.max_connections = 4096;
    limits.header_timeout = std::chrono::minutes(5);  // the half-sent heads stay for the run
    running->server = *mend::net::NewHttpServer(limits);
  } else {
    running->server = std::make_unique<httplib::Server>();
    running->server->new_task_queue = [] { return new httplib::ThreadPool(64); };
  }
  running->server->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok", "text/plain");
  });
  int listen_fd = -1;
  running->server->set_socket_options([&](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_fd = sock;
  });
  running->port = running->server->bind_to_any_port("127.0.0.1");
  ::listen(listen_fd, 4096);
  httplib::Server* server = running->server.get();
  running->thread = std::thread([server] { server->listen_after_bind(); });
  while (!server->is_running()) std::this_thread::yield();
  return running;
}

// Each iteration opens the half-sent connections (not timed), then times one GET /healthz on a
// new connection, then closes them: the pool's threads would otherwise time the attack out during
// the first request and serve the next ones at once.
void BM_HealthzUnderHalfSentHeads(benchmark::State& state) {
  const bool guarded = state.range(0) == 1;
  const int slow = static_cast<int>(state.range(1));
  std::unique_ptr<Running> running = Serve(guarded);
  long rss_growth = -1;
  size_t opened = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const long rss_before = RssKiB();
    std::vector<int> held;
    for (int i = 0; i < slow; ++i) {
      const int fd = Connect(running->port);
      if (fd < 0) break;
      ::send(fd, kHalfHead.data(), kHalfHead.size(), MSG_NOSIGNAL);
      held.push_back(fd);
    }
    opened = held.size();
    httplib::Client client("127.0.0.1", running->port);
    client.set_keep_alive(false);
    client.set_read_timeout(std::chrono::seconds(120));
    state.ResumeTiming();
    auto res = client.Get("/healthz");
    state.PauseTiming();
    if (!res || res->status != 200) state.SkipWithError("healthz failed");
    if (rss_growth < 0) rss_growth = RssKiB() - rss_before;
    for (int fd : held) ::close(fd);
    state.ResumeTiming();
  }
  state.counters["open_half_sent"] = static_cast<double>(opened);
  if (opened > 0) {
    state.counters["rss_KiB_per_conn"] =
        static_cast<double>(rss_growth) / static_cast<double>(opened);
  }
}

// guarded (1) or the fixed pool (0), then the half-sent connections held open. Past 64 half-sent
// connections a request to the pool waits for httplib's 5 s read timeout of those ahead of it, so
// its 1,000 is left out (about 80 s a request).
BENCHMARK(BM_HealthzUnderHalfSentHeads)
    ->ArgsProduct({{1}, {0, 100, 1000}})
    ->Args({0, 0})
    ->Args({0, 63})
    ->Args({0, 100})
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
