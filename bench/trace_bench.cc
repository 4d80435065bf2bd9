// What tracing costs a run, measured on a scripted 1,000-step run (999 model turns with one cheap
// tool call each, then a final answer) driven by agent::Agent on a real SQLite checkpoint store;
// bench/run_trace_bench prints the figures.
//
//   off        AgentOptions.tracer = nullptr
//   on         a Tracer with a BatchSpanWriter writing observe.db (as the runtime wires it)
//   on+otlp    the same plus an OtlpExporter whose collector accepts connections in the kernel's
//              backlog and never answers
//
// The three are alternated (rotating their order) in one process, `--reps` times each; the wall
// time of a run is Send() until it returns (the writer's background flush is timed apart). Then
// `mend traces RUN_ID` and `mend show RUN_ID` (the reference) are timed on the real binary given
// with `--mend`, against the same home. Output: one `name value` line per figure. `--only off`
// (`on`, `otlp`) runs that mode alone, for a profiler, and prints nothing.
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mend/agent/agent.h"
#include "mend/agent/tool.h"
#include "mend/base/clock.h"
#include "mend/base/random.h"
#include "mend/llm/provider.h"
#include "mend/obs/otlp.h"
#include "mend/obs/span_store.h"
#include "mend/obs/span_writer.h"
#include "mend/obs/trace.h"
#include "mend/store/sqlite_store.h"

extern char** environ;

namespace mend {
namespace {

constexpr int kSteps = 1000;  // model turns: 999 with a tool call, then the answer

void Die(const std::string& what) {
  std::fprintf(stderr, "trace_bench: %s\n", what.c_str());
  std::exit(1);
}

// Answers by position: turn k (assistant messages already in the request) calls the tool, the
// last turn answers. Stateless, so every run sees the same script.
class ScriptedProvider final : public llm::LlmProvider {
 public:
  Result<llm::Completion> Complete(const llm::CompletionRequest& request) override {
    int turn = 0;
    for (const llm::Message& m : request.messages) turn += m.role == llm::Role::kAssistant;
    llm::Completion c;
    c.usage = {120, 8};
    c.usage_reported = true;
    c.cost_usd = 0;
    if (turn + 1 >= kSteps) {
      c.text = "done";
      return c;
    }
    const std::string n = std::to_string(turn);
    c.tool_calls.push_back({"call_" + n, "noop", "{\"i\":" + n + "}"});
    c.finish_reason = llm::FinishReason::kToolCalls;
    return c;
  }
  std::string_view name() const override { return "scripted"; }
};

class NoopTool final : public agent::Tool {
 public:
  NoopTool() {
    spec_.name = "noop";
    spec_.description = "does nothing";
  }
  const agent::ToolSpec& spec() const override { return spec_; }
  Result<agent::ToolResult> Execute(std::string_view, const agent::ToolContext&) override {
    return agent::ToolResult::Ok("ok");
  }

 private:
  agent::ToolSpec spec_;
};

// A loopback socket that listens but never accepts: connections complete in the backlog, requests
// are never read or answered.
class Blackhole {
 public:
  Blackhole() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      Die("blackhole socket");
    }
    port_ = ntohs(addr.sin_port);
  }
  ~Blackhole() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// CPU time of the calling thread: what the run's thread itself spent, apart from background
// threads (the writer, the exporter) competing for the cores.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

enum class Mode { kOff, kOn, kOnOtlp };

struct Bench {
  std::string home;
  std::unique_ptr<store::CheckpointStore> store;
  std::shared_ptr<obs::SpanStore> spans;
  ScriptedProvider provider;
  SeededRandom random{7};
  Blackhole hole;
  int runs = 0;
  uint64_t otlp_dropped = 0;
  std::vector<double> flush_s;  // the writer's tail after Send returned (on, on+otlp)
  double last_cpu_s = 0;        // CPU time of the run's own thread during the last Send

  // One 1,000-step run; returns Send's wall time and the run id in `run_id`.
  double Run(Mode mode, std::string& run_id) {
    std::unique_ptr<obs::Tracer> tracer;
    std::shared_ptr<obs::BatchSpanWriter> writer;
    std::shared_ptr<obs::OtlpExporter> exporter;
    if (mode != Mode::kOff) {
      tracer = std::make_unique<obs::Tracer>(
          obs::TracerOptions{.clock = SystemClock::Default(), .random = &random});
      writer = std::make_shared<obs::BatchSpanWriter>(
          spans, obs::BatchSpanWriterOptions{.clock = SystemClock::Default()});
      tracer->AddProcessor(writer);
    }
    if (mode == Mode::kOnOtlp) {
      obs::OtlpExporterOptions o;
      o.url = "http://127.0.0.1:" + std::to_string(hole.port()) + "/v1/traces";
      o.transport = obs::NewCurlOtlpTransport();
      o.clock = SystemClock::Default();
      o.random = &random;
      o.resource = obs::MakeOtlpResource("bench", "bench-host");
      auto created = obs::OtlpExporter::Create(std::move(o));
      if (!created.ok()) Die(created.status().ToString());
      exporter = std::move(created).value();
      tracer->AddProcessor(exporter);
    }
    agent::AgentSpec spec;
    spec.dir = home + "/agents/bench";
    spec.name = "bench";
    spec.instructions = "You run a scripted benchmark.";
    spec.limits.max_steps = kSteps + 1;
    spec.limits.max_cost_usd = 1e9;
    spec.limits.max_wall = std::chrono::hours(24);
    agent::AgentOptions options;
    options.env = Env::Default();
    options.env.random = &random;
    options.provider = &provider;
    options.store = store.get();
    options.tracer = tracer.get();
    options.holder = {"bench", "bench-host", "", static_cast<int64_t>(::getpid())};
    options.caller_dir = home;
    options.extra_tools.push_back(std::make_shared<NoopTool>());
    auto agent = agent::Agent::Create(std::move(spec), std::move(options));
    if (!agent.ok()) Die(agent.status().ToString());

    agent::SendOptions send;
    send.run_id = "bench-" + std::to_string(++runs);
    const double cpu0 = ThreadCpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    Result<agent::RunResult> result = (*agent)->Send("Run the script.", send);
    const double wall = Seconds(std::chrono::steady_clock::now() - t0);
    last_cpu_s = ThreadCpuSeconds() - cpu0;
    if (!result.ok()) Die(result.status().ToString());
    if (result->status != store::RunStatus::kCompleted || result->steps != kSteps) {
      Die("run " + result->run_id + " ended after " + std::to_string(result->steps) + " steps");
    }
    run_id = result->run_id;
    if (tracer != nullptr) {
      const auto f0 = std::chrono::steady_clock::now();
      if (!writer->Flush(std::chrono::minutes(1)).ok() || writer->dropped() != 0) {
        Die("observe.db writer dropped spans");
      }
      flush_s.push_back(Seconds(std::chrono::steady_clock::now() - f0));
    }
    if (exporter != nullptr) {
      exporter->Shutdown(std::chrono::milliseconds(0));
      otlp_dropped += exporter->spans_dropped();
    }
    return wall;
  }
};

// Runs `argv` with stdout and stderr on /dev/null; its wall time in seconds.
double TimeCommand(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
    Die("cannot start " + args[0]);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  const double s = Seconds(std::chrono::steady_clock::now() - t0);
  posix_spawn_file_actions_destroy(&actions);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Die(args[0] + " " + args[3] + " failed");
  return s;
}

}  // namespace
}  // namespace mend

int main(int argc, char** argv) {
  using namespace mend;
  int reps = 5;
  int cli_reps = 7;
  std::string mend_binary;
  std::string only;  // "off", "on" or "otlp": runs of that mode only, for a profiler
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--reps") {
      reps = std::atoi(argv[i + 1]);
    } else if (flag == "--cli-reps") {
      cli_reps = std::atoi(argv[i + 1]);
    } else if (flag == "--mend") {
      mend_binary = argv[i + 1];
    } else if (flag == "--only") {
      only = argv[i + 1];
    } else {
      Die("unknown flag " + flag);
    }
  }
  if (reps < 1 || cli_reps < 1) Die("--reps and --cli-reps must be at least 1");

  std::string pattern = (std::filesystem::current_path() / "trace-bench-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) Die("mkdtemp");
  Bench bench;
  bench.home = pattern;
  store::SqliteStoreOptions store_options;
  store_options.path = bench.home + "/mend.db";
  store_options.local = {"bench", "bench-host", "", static_cast<int64_t>(::getpid())};
  auto opened = store::OpenSqliteStore(store_options, *SystemClock::Default());
  if (!opened.ok()) Die(opened.status().ToString());
  bench.store = std::move(opened).value();
  auto spans = obs::SpanStore::Open(bench.home + "/observe.db");
  if (!spans.ok()) Die(spans.status().ToString());
  bench.spans = std::move(spans).value();

  std::string run_id, traced_run;
  // Warm-up (caches, statement preparation, file growth); its run is the one `mend traces` reads.
  bench.Run(only == "off" ? Mode::kOff : Mode::kOn, traced_run);
  std::vector<double> off, on, otlp, off_cpu, on_cpu;
  const Mode order[] = {Mode::kOff, Mode::kOn, Mode::kOnOtlp};
  for (int r = 0; r < reps; ++r) {
    for (int k = 0; k < 3; ++k) {
      const Mode mode = order[(r + k) % 3];
      if (!only.empty() && only != (mode == Mode::kOff ? "off" : mode == Mode::kOn ? "on" : "otlp"))
        continue;
      const double s = bench.Run(mode, run_id);
      (mode == Mode::kOff ? off : mode == Mode::kOn ? on : otlp).push_back(s);
      if (mode != Mode::kOnOtlp)
        (mode == Mode::kOff ? off_cpu : on_cpu).push_back(bench.last_cpu_s);
      std::fprintf(stderr, "rep %d %s %.3f s\n", r,
                   mode == Mode::kOff  ? "off"
                   : mode == Mode::kOn ? "on"
                                       : "on+otlp",
                   s);
    }
  }
  if (!only.empty()) {
    std::filesystem::remove_all(bench.home);
    return 0;
  }
  std::printf("steps %d\n", kSteps);
  std::printf("reps %d\n", reps);
  std::printf("off_s %.4f\n", Median(off));
  std::printf("on_s %.4f\n", Median(on));
  std::printf("on_otlp_s %.4f\n", Median(otlp));
  for (const auto& [name, v] : {std::pair{"off", &off}, {"on", &on}, {"on_otlp", &otlp}}) {
    std::printf("%s_min_s %.4f\n", name, *std::min_element(v->begin(), v->end()));
    std::printf("%s_max_s %.4f\n", name, *std::max_element(v->begin(), v->end()));
  }
  std::printf("off_cpu_s %.4f\n", Median(off_cpu));
  std::printf("on_cpu_s %.4f\n", Median(on_cpu));
  std::printf("flush_tail_s %.4f\n", Median(bench.flush_s));
  std::printf("otlp_dropped %llu\n", static_cast<unsigned long long>(bench.otlp_dropped));
  auto summary = bench.spans->RunSummary(traced_run);
  if (!summary.ok()) Die(summary.status().ToString());
  std::printf(
      "spans_per_run %lld\n",
      static_cast<long long>(summary->attempts + summary->model_turns + summary->tool_calls));

  if (!mend_binary.empty()) {
    bench.spans.reset();
    bench.store.reset();
    std::vector<double> traces, show;
    for (int r = 0; r < cli_reps; ++r) {
      traces.push_back(TimeCommand({mend_binary, "--home", bench.home, "traces", traced_run}));
      show.push_back(TimeCommand({mend_binary, "--home", bench.home, "show", traced_run}));
    }
    std::printf("traces_ms %.1f\n", Median(traces) * 1e3);
    std::printf("show_ms %.1f\n", Median(show) * 1e3);
  }
  std::filesystem::remove_all(bench.home);
  return 0;
}
