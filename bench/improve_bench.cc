// Candidate evaluation speed (improve::EvaluateArm, docs/improve.md "Scenario suite and
// benchmark"): one arm is 8 cases × 2 repeats = 16 runs of a one-turn agent against the in-process
// fake OpenAI-compatible server, each checked by `cat >/dev/null; echo '{"pass":true}'`.
//
//   throughput  runs per second of EvaluateArm at model latency 0 ms and 200 ms, concurrency 1
//               and 8; the speed-up of 8 over 1 is printed beside the ideal 8×.
//   overhead    EvaluateArm's time per run (concurrency 1, 0 ms) minus the reference: a plain
//               agent::Agent::Send of the same task through the same provider and server, on a
//               SQLite store, without copies, shadow hook or check. Its parts are timed alone too:
//               the check process (RunSubprocess with a run's JSON on stdin, beside the same
//               command through a bare posix_spawn + waitpid) and the copies of the agent folder
//               and an empty workspace (CopyTree, then RemoveTree).
//
// Every figure is the median of --reps repetitions (200 ms: at least 2). Output: one `name value`
// line per figure, for bench/run_improve_bench.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "improve/evaluate_tree.h"
#include "mend/agent/agent.h"
#include "mend/agent/agent_spec.h"
#include "mend/base/env.h"
#include "mend/base/subprocess.h"
#include "mend/improve/evaluate.h"
#include "mend/llm/factory.h"
#include "mend/store/sqlite_store.h"
#include "tests/support/fake_llm_server.h"

extern char** environ;

namespace mend {
namespace {

constexpr int kCases = 8;
constexpr int kRepeats = 2;
constexpr int kRunsPerArm = kCases * kRepeats;
constexpr char kCheck[] = R"(cat >/dev/null; echo '{"pass":true}')";

void Die(const std::string& what) {
  std::fprintf(stderr, "improve_bench: %s\n", what.c_str());
  std::exit(1);
}

template <typename T>
T Must(Result<T> r, const char* what) {
  if (!r.ok()) Die(std::string(what) + ": " + r.status().ToString());
  return std::move(r).value();
}

void Must(const Status& s, const char* what) {
  if (!s.ok()) Die(std::string(what) + ": " + s.ToString());
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F>
double SecondsOf(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void WriteText(const std::filesystem::path& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size() ||
      std::fclose(f) != 0) {
    Die("cannot write " + path.string());
  }
}

struct Bench {
  std::filesystem::path dir;
  std::unique_ptr<testing::FakeLlmServer> server;
  std::unique_ptr<llm::LlmProvider> provider;
  std::vector<improve::Case> cases;
  improve::AgentText text;
  std::vector<double> single_runs_s;  // every run of EvaluateOnce(1), in seconds

  void SetLatency(std::chrono::milliseconds latency) {
    testing::FakeResponse answer;
    answer.text = "Hello, guest.";
    answer.latency = latency;
    server->SetDefault(answer);
  }

  // Seconds of one EvaluateArm over every case; dies unless every run completed and passed.
  double EvaluateOnce(int concurrency) {
    improve::EvaluateOptions options;
    options.env = Env::Default();
    options.provider = provider.get();
    options.agent_dir = (dir / "agent").string();
    options.scratch_dir = (dir / "scratch").string();
    options.check_command = {"/bin/sh", "-c", kCheck};
    options.repeats = kRepeats;
    options.concurrency = concurrency;
    // With one run at a time, the gaps between finished runs are the runs' own durations.
    auto last = std::chrono::steady_clock::now();
    options.on_run = [&](const improve::CaseRun&) {
      if (concurrency != 1) return;
      const auto now = std::chrono::steady_clock::now();
      single_runs_s.push_back(std::chrono::duration<double>(now - last).count());
      last = now;
    };
    Result<improve::ArmRuns> arm = improve::ArmRuns{};
    const double seconds = SecondsOf([&] { arm = improve::EvaluateArm(text, cases, options); });
    Must(arm.status(), "EvaluateArm");
    for (const auto& runs : arm->cases) {
      for (const improve::CaseRun& run : runs) {
        if (run.status != "completed" || !run.check.pass) {
          Die("run " + run.run_id + " ended " + run.status + " " + run.error + " " +
              run.check.error);
        }
      }
    }
    return seconds;
  }

  double RunsPerSecond(int concurrency, int reps) {
    std::vector<double> rates;
    for (int r = 0; r < reps; ++r) rates.push_back(kRunsPerArm / EvaluateOnce(concurrency));
    return Median(rates);
  }
};

// The reference: the same tasks sent by one plain Agent on a SQLite store.
class PlainSender {
 public:
  explicit PlainSender(Bench& bench) : bench_(bench) {
    Env env = Env::Default();
    store::SqliteStoreOptions store_options;
    store_options.path = (bench.dir / "plain.db").string();
    store_ = Must(store::OpenSqliteStore(store_options, *env.clock), "open store");
    std::filesystem::create_directories(bench.dir / "plain-workspace");
    agent::AgentOptions options;
    options.env = env;
    options.provider = bench.provider.get();
    options.store = store_.get();
    options.holder = store::LeaseHolder{"improve-bench", "", "", 0};
    options.workspace = (bench.dir / "plain-workspace").string();
    options.caller_dir = options.workspace;
    agent::AgentSpec spec =
        Must(agent::LoadAgentFolder(*env.fs, (bench.dir / "agent").string()), "load agent");
    agent_ = Must(agent::Agent::Create(std::move(spec), std::move(options)), "create agent");
  }

  // Seconds to send every case's task kRepeats times, one after the other.
  double SendAll() {
    return SecondsOf([&] {
      for (const improve::Case& c : bench_.cases) {
        for (int k = 0; k < kRepeats; ++k) {
          agent::SendOptions send;
          send.run_id = "plain-" + std::to_string(next_id_++);
          agent::RunResult result = Must(agent_->Send(c.task, send), "send");
          if (result.status != store::RunStatus::kCompleted) Die("a plain run did not complete");
        }
      }
    });
  }

 private:
  Bench& bench_;
  std::unique_ptr<store::CheckpointStore> store_;
  std::unique_ptr<agent::Agent> agent_;
  int next_id_ = 0;
};

// The check process alone, with stdin the size of a one-turn run's JSON: seconds per check.
double CheckSeconds(const Bench& bench, int reps) {
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", kCheck};
  options.cwd = bench.dir.string();
  options.stdin_data = std::string(900, 'x');
  std::vector<double> per_run;
  for (int r = 0; r < reps; ++r) {
    per_run.push_back(SecondsOf([&] {
                        for (int i = 0; i < kRunsPerArm; ++i) {
                          Must(RunSubprocess(options), "check");
                        }
                      }) /
                      kRunsPerArm);
  }
  return Median(per_run);
}

// The reference for the check: the same command with the same stdin through a bare posix_spawn,
// a blocking write, a read to EOF and waitpid; seconds per check.
double BareCheckSeconds(const Bench& bench, int reps) {
  const std::string input(900, 'x');
  auto once = [&] {
    int in[2];
    int out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0) Die("pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addclose(&actions, in[1]);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    posix_spawn_file_actions_addchdir_np(&actions, bench.dir.c_str());
    const char* args[] = {"/bin/sh", "-c", kCheck, nullptr};
    pid_t pid = 0;
    if (::posix_spawn(&pid, args[0], &actions, nullptr, const_cast<char**>(args), environ) != 0) {
      Die("posix_spawn");
    }
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    if (::write(in[1], input.data(), input.size()) != static_cast<ssize_t>(input.size())) {
      Die("write");
    }
    ::close(in[1]);
    char buf[256];
    while (::read(out[0], buf, sizeof buf) > 0) {
    }
    ::close(out[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
  };
  std::vector<double> per_run;
  for (int r = 0; r < reps; ++r) {
    per_run.push_back(SecondsOf([&] {
                        for (int i = 0; i < kRunsPerArm; ++i) once();
                      }) /
                      kRunsPerArm);
  }
  return Median(per_run);
}

// A run's copies alone: the agent folder and an empty workspace, created and removed.
double CopySeconds(const Bench& bench, int reps) {
  Env env = Env::Default();
  const std::string copy = (bench.dir / "copy").string();
  std::vector<double> per_run;
  for (int r = 0; r < reps; ++r) {
    per_run.push_back(SecondsOf([&] {
                        for (int i = 0; i < kRunsPerArm; ++i) {
                          Must(improve::internal::CopyTree(*env.fs, (bench.dir / "agent").string(),
                                                           copy + "/agent"),
                               "copy");
                          Must(env.fs->CreateDirs(copy + "/workspace"), "workspace");
                          Must(improve::internal::RemoveTree(copy), "remove");
                        }
                      }) /
                      kRunsPerArm);
  }
  return Median(per_run);
}

int Main(int argc, char** argv) {
  int reps = 5;
  std::string parent = ".";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--reps") {
      reps = std::atoi(argv[i + 1]);
    } else if (flag == "--dir") {
      parent = argv[i + 1];
    } else {
      Die("unknown flag " + flag + " (known: --reps N, --dir DIR)");
    }
  }
  if (reps < 1) Die("--reps must be at least 1");

  Bench bench;
  std::string templ = parent + "/improve-bench-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) Die("mkdtemp in " + parent);
  bench.dir = std::filesystem::absolute(templ);
  std::filesystem::create_directories(bench.dir / "agent");
  WriteText(bench.dir / "agent/agent.toml",
            "name = \"greeter\"\nmodel = \"gpt-4o-mini\"\ntools = []\n");
  WriteText(bench.dir / "agent/instructions.md", "You greet hotel guests in one sentence.\n");
  bench.text = Must(improve::ReadAgentText(*Env::Default().fs, (bench.dir / "agent").string()),
                    "read agent");
  for (int i = 0; i < kCases; ++i) {
    improve::Case c;
    c.id = "guest-" + std::to_string(i);
    c.task = "Greet guest number " + std::to_string(i) + ".";
    bench.cases.push_back(c);
  }
  bench.server = Must(testing::FakeLlmServer::Start(), "start fake server");
  llm::ProviderOptions provider;
  provider.kind = "openai";
  provider.model = "gpt-4o-mini";
  provider.base_url = bench.server->base_url();
  provider.api_key = "sk-bench";
  bench.provider = Must(llm::CreateProvider(provider, Env::Default()), "provider");

  bench.SetLatency(std::chrono::milliseconds(0));
  bench.EvaluateOnce(8);  // warm-up: page cache, connections, the shell
  std::printf("runs_per_arm %d\nreps %d\n", kRunsPerArm, reps);
  // Concurrency 1 and the plain reference alternate, so a change in the machine's load while the
  // benchmark runs touches both alike.
  PlainSender plain(bench);
  plain.SendAll();  // warm-up
  std::vector<double> evaluate_s;
  std::vector<double> plain_s;
  for (int r = 0; r < reps; ++r) {
    evaluate_s.push_back(bench.EvaluateOnce(1) / kRunsPerArm);
    plain_s.push_back(plain.SendAll() / kRunsPerArm);
  }
  std::printf("rate_0ms_c1 %.2f\n", 1.0 / Median(evaluate_s));
  std::printf("rate_0ms_c8 %.2f\n", bench.RunsPerSecond(8, reps));
  std::printf("evaluate_run_ms %.3f\n", Median(evaluate_s) * 1e3);
  std::printf("plain_send_ms %.3f\n", Median(plain_s) * 1e3);
  // RunSubprocess looks for the check's exit every 50 ms while its pipes are quiet, so a run whose
  // check exits just after closing its output waits up to that long: count them.
  const auto slow = std::count_if(bench.single_runs_s.begin(), bench.single_runs_s.end(),
                                  [](double s) { return s >= 0.045; });
  std::printf("single_runs %zu\nsingle_runs_over_45ms %td\n", bench.single_runs_s.size(), slow);
  std::printf("single_run_max_ms %.3f\n",
              *std::max_element(bench.single_runs_s.begin(), bench.single_runs_s.end()) * 1e3);
  std::printf("check_ms %.3f\n", CheckSeconds(bench, reps) * 1e3);
  std::printf("bare_check_ms %.3f\n", BareCheckSeconds(bench, reps) * 1e3);
  std::printf("copy_ms %.3f\n", CopySeconds(bench, reps) * 1e3);

  bench.SetLatency(std::chrono::milliseconds(200));
  const int slow_reps = std::max(2, reps / 2);
  std::printf("slow_reps %d\n", slow_reps);
  std::printf("rate_200ms_c1 %.2f\n", bench.RunsPerSecond(1, slow_reps));
  std::printf("plain_rate_200ms %.2f\n", kRunsPerArm / plain.SendAll());
  std::printf("rate_200ms_c8 %.2f\n", bench.RunsPerSecond(8, slow_reps));

  bench.provider.reset();
  bench.server.reset();
  std::error_code error;
  std::filesystem::remove_all(bench.dir, error);
  return 0;
}

}  // namespace
}  // namespace mend

int main(int argc, char** argv) { return mend::Main(argc, argv); }
