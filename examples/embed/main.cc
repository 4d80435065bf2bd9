// A program that uses mend as a library: it opens a home, runs an agent whose run fails, lets the
// lesson worker turn that failure into a lesson, runs a similar task that the provider interrupts,
// and brings that run back with one pass of the recovery loop. It prints the lesson it learned.
//
//   embed AGENT_DIR
//
// The configuration comes from the environment and $MEND_HOME/config.toml as for the `mend`
// command (docs/configuration.md): MEND_HOME, MEND_PROVIDER, MEND_MODEL, MEND_API_KEY, ...
// examples/embed/README.md shows a run with a scripted model.
#include <mend/mend.h>

#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <string>

extern char** environ;

namespace {

constexpr char kFailingTask[] = "What is the timeout of the nightly report job?";
constexpr char kSimilarTask[] = "How many retries does the nightly report job make?";

int Fail(const mend::Status& status) {
  std::cerr << "embed: " << status.ToString() << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: embed AGENT_DIR\n";
    return 2;
  }
  const std::string agent_dir = argv[1];

  mend::ConfigSources sources;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const size_t eq = text.find('=');
    if (eq != std::string::npos) sources.env.emplace(text.substr(0, eq), text.substr(eq + 1));
  }
  const mend::Env env = mend::Env::Default();
  mend::Result<mend::Config> config = mend::LoadConfig(sources, *env.fs);
  if (!config.ok()) return Fail(config.status());

  // The runtime owns the store, the event log, long-term memory and the lesson queue of the home.
  mend::Result<std::unique_ptr<mend::app::Runtime>> opened = mend::app::OpenRuntime(*config, env);
  if (!opened.ok()) return Fail(opened.status());
  mend::app::Runtime& runtime = **opened;

  {
    // A run that keeps reading a file that does not exist: the progress guard stops it, and its
    // reflexion hook writes a lesson job to the durable queue.
    mend::Result<std::unique_ptr<mend::agent::Agent>> agent =
        mend::app::OpenAgent(runtime, agent_dir);
    if (!agent.ok()) return Fail(agent.status());
    mend::Result<mend::agent::RunResult> run = (*agent)->Send(kFailingTask);
    if (!run.ok()) return Fail(run.status());
    std::cout << "run " << run->run_id << ": " << mend::store::RunStatusName(run->status);
    if (run->error.has_value()) std::cout << " (" << run->error->code << ")";
    std::cout << "\n";
  }

  // The lesson worker asks the model what went wrong and stores the answer as a lesson.
  if (mend::Status started = mend::app::StartLessonWorkers(runtime); !started.ok()) {
    return Fail(started);
  }
  mend::Result<mend::lessonq::DrainReport> drained =
      runtime.lessons.queue->DrainNow(std::chrono::seconds(30));
  if (!drained.ok()) return Fail(drained.status());
  if (mend::Status stopped = mend::app::StopLessonWorkers(runtime, std::chrono::seconds(30));
      !stopped.ok()) {
    return Fail(stopped);
  }
  mend::memory::ListOptions lessons;
  lessons.category = "lesson";
  mend::Result<std::vector<mend::memory::Fact>> facts = runtime.facts->List(lessons);
  if (!facts.ok()) return Fail(facts.status());
  for (const mend::memory::Fact& fact : *facts) std::cout << "lesson " << fact.content << "\n";

  std::string interrupted;
  {
    // A similar task: its prompt carries the lesson. The provider fails it with an outage.
    mend::Result<std::unique_ptr<mend::agent::Agent>> agent =
        mend::app::OpenAgent(runtime, agent_dir);
    if (!agent.ok()) return Fail(agent.status());
    mend::Result<mend::agent::RunResult> run = (*agent)->Send(kSimilarTask);
    if (!run.ok()) return Fail(run.status());
    interrupted = run->run_id;
    std::cout << "run " << run->run_id << ": " << mend::store::RunStatusName(run->status) << "\n";
  }

  // One pass of the recovery loop resumes it from its last checkpoint.
  mend::app::RuntimeRunDriver driver(runtime);
  mend::heal::RecoveryOptions options = mend::app::RecoveryOptionsFor(runtime);
  options.driver = &driver;
  mend::Result<std::unique_ptr<mend::heal::Recovery>> recovery =
      mend::heal::Recovery::Create(std::move(options));
  if (!recovery.ok()) return Fail(recovery.status());
  mend::Result<mend::heal::TickReport> tick = (*recovery)->Tick();
  if (!tick.ok()) return Fail(tick.status());
  mend::Result<mend::store::RunRecord> back = runtime.store->GetRun(interrupted);
  if (!back.ok()) return Fail(back.status());
  std::cout << "recovered " << interrupted << ": " << mend::store::RunStatusName(back->status)
            << "\n";
  return back->status == mend::store::RunStatus::kCompleted ? 0 : 1;
}
