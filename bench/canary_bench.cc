// What a canary costs a run (docs/improve.md, "Canary"): a one-turn run of an agent folder through
// app::OpenAgent and Agent::Send on the embedded defaults (SQLite in a fresh home, an in-process
// model that answers at once), with and without a running canary of a proposal on that folder.
//
//   open+run    OpenAgent then Send, per run: a canaried folder also reads its running canary,
//               loads the proposal's files over the folder and opens a second Agent;
//   run         Send on an Agent opened once: a canaried run also records its outcome;
//   report      app::ReadCanary (both arms' sums and the rule's decision) after all those runs.
//
// Every figure is the median of --reps repetitions of --runs runs. Output: one `name value` line
// per figure, for bench/run_canary_bench.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mend/agent/agent.h"
#include "mend/app/canary.h"
#include "mend/app/runtime.h"
#include "mend/base/config.h"
#include "mend/base/env.h"
#include "mend/base/file_system.h"
#include "mend/base/home_layout.h"
#include "mend/improve/proposal.h"
#include "mend/llm/provider.h"

namespace mend {
namespace {

constexpr char kProposal[] = "imp-20261207T120000-0b0b0b0b";

void Die(const std::string& what) {
  std::fprintf(stderr, "canary_bench: %s\n", what.c_str());
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

// Answers every request at once, with usage, so the run's own work is what is timed.
class InstantModel final : public llm::LlmProvider {
 public:
  Result<llm::Completion> Complete(const llm::CompletionRequest&) override {
    llm::Completion c;
    c.text = "done";
    c.usage.input_tokens = 20;
    c.usage.output_tokens = 2;
    return c;
  }
  std::string_view name() const override { return "instant"; }
};

class ModelRef final : public llm::LlmProvider {
 public:
  explicit ModelRef(llm::LlmProvider& model) : model_(model) {}
  Result<llm::Completion> Complete(const llm::CompletionRequest& r) override {
    return model_.Complete(r);
  }
  std::string_view name() const override { return model_.name(); }

 private:
  llm::LlmProvider& model_;
};

struct Bench {
  std::string dir;
  Env env = Env::Default();
  InstantModel model;
  std::unique_ptr<app::Runtime> runtime;
  std::string agent_dir;
  int next_run = 0;

  void Open() {
    ConfigSources sources;
    sources.flags["home"] = dir + "/home";
    Config config = Must(LoadConfig(sources, *env.fs), "config");
    app::RuntimeOptions options;
    options.event_log = app::EventLog::kNone;
    options.provider = std::make_unique<ModelRef>(model);
    runtime = Must(app::OpenRuntime(config, env, std::move(options)), "runtime");
  }

  // `n` runs; each opens its Agent when `open_each`, else one Agent serves them all. Seconds.
  double Runs(int n, bool open_each) {
    std::unique_ptr<agent::Agent> shared;
    if (!open_each) shared = Must(app::OpenAgent(*runtime, agent_dir), "open agent");
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      std::unique_ptr<agent::Agent> own;
      if (open_each) own = Must(app::OpenAgent(*runtime, agent_dir), "open agent");
      agent::SendOptions options;
      options.run_id = "run-" + std::to_string(next_run++);
      Must((open_each ? own : shared)->Send("write the summary", options), "send");
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

}  // namespace
}  // namespace mend

int main(int argc, char** argv) {
  using namespace mend;
  int reps = 5;
  int runs = 200;
  std::string parent = std::filesystem::temp_directory_path().string();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--reps") {
      reps = std::max(1, std::atoi(argv[i + 1]));
    } else if (flag == "--runs") {
      runs = std::max(10, std::atoi(argv[i + 1]));
    } else if (flag == "--dir") {
      parent = argv[i + 1];
    } else {
      Die("usage: mend_canary_bench [--reps N] [--runs N] [--dir PARENT]");
    }
  }
  Bench b;
  std::string pattern = parent + "/canary-bench-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) Die("mkdtemp under " + parent);
  b.dir = pattern;
  b.agent_dir = b.dir + "/agent";
  Must(b.env.fs->CreateDirs(b.agent_dir), "agent dir");
  Must(
      WriteFileAtomically(*b.env.fs, b.agent_dir + "/agent.toml", "name = \"bench\"\ntools = []\n"),
      "agent.toml");
  Must(WriteFileAtomically(*b.env.fs, b.agent_dir + "/instructions.md", "Answer briefly.\n"),
       "instructions");
  b.Open();

  auto measure = [&](bool open_each) {
    std::vector<double> per_run;
    for (int r = 0; r < reps; ++r) per_run.push_back(b.Runs(runs, open_each) / runs);
    return Median(per_run) * 1e3;
  };
  const double plain_open = measure(true);
  const double plain_run = measure(false);

  // A queued proposal of new instructions, canaried on half of the new runs, by hand.
  Must(b.env.fs->CreateDirs(home::AttemptDir(b.runtime->home, kProposal)), "attempt dir");
  improve::AgentText base;
  base.instructions = "Answer briefly.\n";
  improve::AgentText after;
  after.instructions = "Answer briefly, and name what changed.\n";
  improve::AttemptStore* attempts = Must(b.runtime->Attempts(), "attempt store");
  Must(attempts->PutProposal(
           improve::MakeProposal(kProposal, b.agent_dir, base, after, b.env.clock->Now())),
       "proposal");
  Must(app::StartCanary(*b.runtime, kProposal, 50, /*auto_decide=*/false).status(), "canary");
  const double canary_open = measure(true);
  const double canary_run = measure(false);

  std::vector<double> report;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    Must(app::ReadCanary(*b.runtime, kProposal).status(), "report");
    report.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const app::CanaryReport last = Must(app::ReadCanary(*b.runtime, kProposal), "report");

  std::printf("reps %d\nruns %d\n", reps, runs);
  std::printf("plain_open_ms %.4f\nplain_run_ms %.4f\n", plain_open, plain_run);
  std::printf("canary_open_ms %.4f\ncanary_run_ms %.4f\n", canary_open, canary_run);
  std::printf("report_ms %.4f\nreport_outcomes %lld\n", Median(report) * 1e3,
              static_cast<long long>(last.baseline.outcomes.runs + last.proposal.outcomes.runs));
  b.runtime.reset();
  std::filesystem::remove_all(b.dir);
  return 0;
}
