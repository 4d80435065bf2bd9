// The crash-and-resume scenario of `mend demo`. Everything is real except the model (scripted)
// and the crash: a store wrapper makes the first process "die" right after a checkpoint became
// durable, exactly where a kill -9 between two steps would leave the run.
#include "cli/demo_scenario.h"

#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>

#include "mend/app/improve_attempt.h"
#include "mend/app/lessons.h"
#include "mend/app/recovery.h"
#include "mend/app/runtime.h"
#include "mend/base/home_layout.h"
#include "mend/improve/failures.h"
#include "mend/improve/improve.h"
#include "mend/improve/proposal.h"
#include "mend/improve/split.h"
#include "mend/llm/prices.h"
#include "mend/llm/scripted_provider.h"
#include "mend/memory/fact_store.h"

namespace mend::cli {
namespace {

constexpr char kTask[] =
    "The nightly report job fails its checks: retries is out of range. Fix it.";
constexpr int kToolsBeforeCrash = 3;
constexpr size_t kFirstRunResponses = 5;

// A run that keeps guessing the wrong file name until the progress guard stops it: the failure
// Reflexion learns from.
constexpr char kFailingTask[] =
    "The nightly report job fails its checks: retries must be at most 5. Fix it.";
// What the scripted model answers when the lesson worker asks it for a lesson.
constexpr char kLessonReply[] =
    "<situation>Fixing a setting of the nightly report job</situation>\n"
    "<mistake>Guessed the file name settings.cfg and kept reading it after read_file said it does "
    "not exist</mistake>\n"
    "<correction>The nightly report job's settings live in settings.conf; read that file "
    "directly</correction>\n"
    "<tags>nightly-report, settings, read-file</tags>";
constexpr char kSimilarTask[] =
    "The nightly report job fails its checks again: timeout_seconds is out of range. Fix it.";
constexpr char kUnrelatedTask[] = "Write a haiku about autumn rain.";
constexpr char kLoopingTask[] = "Summarise the changes listed in CHANGELOG.md.";
constexpr char kOutageTask[] = "Check that settings.conf is valid.";
constexpr int kDemoModelRetries = 2;  // the default of provider.retries

// gpt-4o-mini is priced in the built-in table, so the demo shows a cost.
constexpr char kAgentToml[] =
    "name = \"demo-fixer\"\n"
    "model = \"gpt-4o-mini\"\n"
    "tools = [\"list_dir\", \"read_file\", \"edit_file\"]\n"
    "workspace = \"workspace\"\n"
    "\n[limits]\nmax_steps = 10\n";
constexpr char kInstructions[] =
    "You fix the configuration of a small project. Read before you edit, change only the wrong "
    "value, and answer with one sentence saying what you changed.\n";
constexpr char kSettings[] =
    "# Settings of the nightly report job.\n"
    "retries = -1\n"
    "timeout_seconds = 30\n";

llm::ScriptedStep Call(std::string id, std::string tool, std::string arguments, int64_t in,
                       int64_t out) {
  llm::ScriptedStep step;
  step.tool_calls.push_back({std::move(id), std::move(tool), std::move(arguments)});
  step.input_tokens = in;
  step.output_tokens = out;
  return step;
}

llm::ScriptedStep Answer(std::string text, int64_t in, int64_t out) {
  llm::ScriptedStep step;
  step.text = std::move(text);
  step.input_tokens = in;
  step.output_tokens = out;
  return step;
}

// Five model turns: a wrong file name (the tool fails), a look around, the right file, the edit,
// the answer. Each scripted response can be used only once, so a repeated turn would exhaust it.
// Then a run that fails, the lesson it teaches, three turns for the similar task and one for the
// unrelated one.
std::vector<llm::ScriptedStep> Script() {
  std::vector<llm::ScriptedStep> steps;
  steps.push_back(Call("call_1", "read_file", R"({"path":"settings.cfg"})", 210, 18));
  steps.push_back(Call("call_2", "list_dir", R"({})", 262, 12));
  steps.push_back(Call("call_3", "read_file", R"({"path":"settings.conf"})", 301, 17));
  steps.push_back(Call("call_4", "edit_file",
                       R"({"path":"settings.conf","old_string":"retries = -1",)"
                       R"("new_string":"retries = 3"})",
                       372, 41));
  steps.push_back(
      Answer("retries was -1, outside 0..10; I set it to 3 in settings.conf.", 430, 22));
  // The failing run: the same wrong guess six times; the progress guard stops it.
  for (int i = 1; i <= 6; ++i) {
    steps.push_back(Call("call_f" + std::to_string(i), "read_file", R"({"path":"settings.cfg"})",
                         190 + 20 * i, 16));
  }
  // The lesson worker's request, after the replay.
  steps.push_back(Answer(kLessonReply, 520, 70));
  // The similar task, with the lesson in its prompt: straight to the right file.
  steps.push_back(Call("call_5", "read_file", R"({"path":"settings.conf"})", 355, 17));
  steps.push_back(Call("call_6", "edit_file",
                       R"({"path":"settings.conf","old_string":"timeout_seconds = 0",)"
                       R"("new_string":"timeout_seconds = 30"})",
                       420, 44));
  steps.push_back(Answer("timeout_seconds was 0; I set it to 30 in settings.conf.", 470, 20));
  // The unrelated task.
  steps.push_back(
      Answer("Rain on maple leaves / the gutter hums a low tune / October exhales.", 120, 24));
  // A model that keeps asking for a file that does not exist: two failures, three denied
  // repeats, and the sixth ask stops the run.
  for (int i = 1; i <= 6; ++i) {
    steps.push_back(Call("call_g" + std::to_string(i), "read_file", R"({"path":"CHANGELOG.md"})",
                         150 + 20 * i, 15));
  }
  // A provider outage outlasts the next run's own retries (its first request and two more) and
  // fails it; the recovery loop's pass finds the model back.
  for (int i = 0; i < 1 + kDemoModelRetries; ++i) {
    llm::ScriptedStep outage;
    outage.error = UnavailableError("HTTP 503: the model service is overloaded");
    steps.push_back(std::move(outage));
  }
  steps.push_back(Answer("settings.conf is valid: retries = 3, timeout_seconds = 30.", 160, 18));
  return steps;
}

// Forwards to a provider owned elsewhere: the scripted "model service" outlives the process that
// crashes, like a real one would.
class BorrowedProvider final : public llm::LlmProvider {
 public:
  explicit BorrowedProvider(llm::LlmProvider& provider) : provider_(provider) {}
  Result<llm::Completion> Complete(const llm::CompletionRequest& request) override {
    return provider_.Complete(request);
  }
  std::string_view name() const override { return provider_.name(); }

 private:
  llm::LlmProvider& provider_;
};

// Watches the run's events: the narration, tool executions per call id, and the run's id.
class Narrator final : public obs::EventSink {
 public:
  explicit Narrator(DemoReport& report) : report_(report) {}
  void set_phase(std::string phase) {
    std::lock_guard<std::mutex> lock(mu_);
    phase_ = std::move(phase);
  }
  int executions() const {
    std::lock_guard<std::mutex> lock(mu_);
    int total = 0;
    for (const auto& [id, n] : report_.tool_executions) total += n;
    return total;
  }
  Status Write(const obs::Event& event) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string call_id = Field(event, "call_id");
    if (phase_ == "learn") {
      if (event.type() == "heal.action" && Field(event, "action") == "stop") {
        Say("progress guard stops the run: " + Field(event, "reason"));
      } else if (event.type() == "tool.failed") {
        // The guard's hint follows the error on a line of its own; the narration keeps the error.
        const std::string error = Field(event, "error");
        Say("tool " + Field(event, "tool") + " failed: " + error.substr(0, error.find('\n')));
      }
      return OkStatus();
    }
    if (phase_ == "memory") {
      // The later runs are reported by LearnAndRecall; only their failures are counted here.
      if (event.type() == "tool.failed") ++report_.similar_tool_failures;
      return OkStatus();
    }
    if (phase_ == "heal") {
      if (event.type() == "model.retry") {
        ++report_.outage_retries;
      } else if (event.type() == "heal.action") {
        report_.heal_actions.push_back(Field(event, "action") + ": " + Field(event, "reason"));
      } else if (event.type() == "tool.called") {
        ++report_.looping_tool_executions;
      }
      return OkStatus();
    }
    if (event.type() == "run.started") {
      report_.run_id = Field(event, "run");
      Say("run " + report_.run_id + " started: " + Field(event, "task"));
    } else if (event.type() == "step.completed") {
      Say("checkpoint saved after model turn " + Field(event, "step"));
    } else if (event.type() == "tool.called") {
      ++report_.tool_executions[call_id];
      Say("tool " + Field(event, "tool") + " runs (call " + call_id + ")");
    } else if (event.type() == "tool.failed") {
      ++report_.tool_failures;
      Say("tool " + Field(event, "tool") + " failed: " + Field(event, "error") +
          " -> the error goes back to the model, which corrects itself");
    }
    return OkStatus();
  }

 private:
  static std::string Field(const obs::Event& event, std::string_view key) {
    std::optional<std::string_view> json = event.Find(key);
    if (!json.has_value()) return "";
    nlohmann::json value = nlohmann::json::parse(*json, nullptr, false);
    return value.is_string() ? value.get<std::string>() : std::string(*json);
  }
  void Say(std::string text) { report_.events.push_back({phase_, std::move(text)}); }

  mutable std::mutex mu_;
  DemoReport& report_;
  std::string phase_ = "run";
};

// A store whose process "dies" right after the first checkpoint saved once `crash_now()` holds:
// the checkpoint is durable, the lease is given up as a dead process's would be, and every later
// write fails as if nobody were left to make it.
class CrashingStore final : public store::CheckpointStore {
 public:
  CrashingStore(std::unique_ptr<store::CheckpointStore> inner, std::function<bool()> crash_now)
      : inner_(std::move(inner)), crash_now_(std::move(crash_now)) {}
  bool crashed() const { return crashed_; }

  Status CreateRun(const store::RunRecord& run) override { return inner_->CreateRun(run); }
  Result<store::RunRecord> GetRun(const std::string& id) override { return inner_->GetRun(id); }
  Result<std::vector<store::RunRecord>> ListRuns(const store::ListOptions& o) override {
    return inner_->ListRuns(o);
  }
  Result<store::PendingPage> ListPending(const store::PendingQuery& q) override {
    return inner_->ListPending(q);
  }
  Result<store::RecoveryPage> ListRecoveryCandidates(const store::RecoveryQuery& q) override {
    return inner_->ListRecoveryCandidates(q);
  }
  Status DeleteRun(const std::string& id) override { return Gone(inner_->DeleteRun(id)); }
  Result<store::Lease> Claim(const std::string& id, const store::LeaseHolder& holder,
                             Duration ttl) override {
    if (crashed_) return Dead();
    return inner_->Claim(id, holder, ttl);
  }
  Result<store::Lease> Renew(const store::Lease& lease, Duration ttl) override {
    if (crashed_) return Dead();
    return inner_->Renew(lease, ttl);
  }
  Status Release(const store::Lease& lease) override { return Gone(inner_->Release(lease)); }
  Status Save(const store::Lease& lease, const store::Checkpoint& checkpoint,
              const store::RunUpdate& update) override {
    if (crashed_) return Dead();
    MEND_RETURN_IF_ERROR(inner_->Save(lease, checkpoint, update));
    if (!crash_now_()) return OkStatus();
    crashed_ = true;
    inner_->Release(lease).IgnoreError();  // on one host a dead holder's lease is free at once
    return Dead();
  }
  Status Update(const store::Lease& lease, const store::RunUpdate& update) override {
    return Gone(inner_->Update(lease, update));
  }
  Status UpdateUnleased(const std::string& id, const store::RunUpdate& update) override {
    return Gone(inner_->UpdateUnleased(id, update));
  }
  Result<store::RunSnapshot> Load(const std::string& id, std::optional<int64_t> step) override {
    return inner_->Load(id, step);
  }
  Result<std::vector<store::CheckpointInfo>> History(const std::string& id) override {
    return inner_->History(id);
  }
  Result<store::RunRecord> Fork(const std::string& id, int64_t step,
                                const std::string& new_id) override {
    return inner_->Fork(id, step, new_id);
  }
  Result<store::PruneReport> Prune(const store::PruneRequest& r) override {
    return inner_->Prune(r);
  }

 private:
  static Status Dead() { return UnavailableError("simulated crash: the process is gone"); }
  // Writes after the crash never happen; before it they go through.
  Status Gone(Status inner) { return crashed_ ? Dead() : inner; }

  std::unique_ptr<store::CheckpointStore> inner_;
  std::function<bool()> crash_now_;
  bool crashed_ = false;
};

Status WriteAgentFolder(FileSystem& fs, const std::string& dir) {
  MEND_RETURN_IF_ERROR(fs.CreateDirs(JoinPath(dir, "workspace")));
  MEND_RETURN_IF_ERROR(WriteFileAtomically(fs, JoinPath(dir, "agent.toml"), kAgentToml));
  MEND_RETURN_IF_ERROR(WriteFileAtomically(fs, JoinPath(dir, "instructions.md"), kInstructions));
  return WriteFileAtomically(fs, JoinPath(dir, "workspace/settings.conf"), kSettings);
}

struct Scenario {
  Scenario(Config c, Env e, std::shared_ptr<const llm::PriceTable> prices)
      : config(std::move(c)), env(e), provider(Script(), std::move(prices)) {}

  Config config;
  Env env;
  llm::ScriptedProvider provider;
  std::shared_ptr<Narrator> narrator;
  DemoReport report;
};

Result<std::unique_ptr<app::Runtime>> OpenProcess(Scenario& s) {
  app::RuntimeOptions options;
  options.provider = std::make_unique<BorrowedProvider>(s.provider);
  options.holder_prefix = "demo";
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime,
                        app::OpenRuntime(s.config, s.env, std::move(options)));
  runtime->events->Subscribe(s.narrator);
  return runtime;
}

// The first process: runs until the simulated crash.
Status RunUntilCrash(Scenario& s) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenProcess(s));
  Narrator& narrator = *s.narrator;
  auto store = std::make_unique<CrashingStore>(std::move(runtime->store), [&narrator] {
    return narrator.executions() >= kToolsBeforeCrash;
  });
  CrashingStore& crashing = *store;
  runtime->store = std::move(store);
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        app::OpenAgent(*runtime, s.report.agent_dir));
  Result<agent::RunResult> result = agent->Send(kTask);
  if (!crashing.crashed()) return InternalError("the demo run did not reach its simulated crash");
  s.report.requests_before_crash = s.provider.requests().size();
  (void)result;  // the run's error is the crash itself
  return OkStatus();
}

// The second process: sees the interrupted run and resumes it.
Status ResumeAfterCrash(Scenario& s) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenProcess(s));
  MEND_ASSIGN_OR_RETURN(store::RunRecord run, app::FindRun(*runtime, s.report.run_id));
  s.report.crash_step = run.step;
  s.report.status_after_crash = std::string(store::RunStatusName(run.status));
  s.narrator->set_phase("resume");
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        app::OpenAgent(*runtime, s.report.agent_dir));
  MEND_ASSIGN_OR_RETURN(s.report.final, agent->Resume(s.report.run_id));
  s.report.requests_after_resume = s.provider.requests().size() - s.report.requests_before_crash;
  return OkStatus();
}

// The section under "## Long-term Memory" in a request's system prompt ("" when absent).
std::string MemorySection(const llm::CompletionRequest& request) {
  if (request.messages.empty() || request.messages[0].role != llm::Role::kSystem) return "";
  const std::string& prompt = request.messages[0].content;
  size_t start = prompt.find("## Long-term Memory");
  if (start == std::string::npos) return "";
  size_t end = prompt.find("\n## ", start + 1);
  std::string section = prompt.substr(start, end == std::string::npos ? end : end - start);
  while (!section.empty() && section.back() == '\n') section.pop_back();
  return section;
}

// A third process: a run fails, its reflexion hook writes a lesson job to the WAL, and the process
// ends before any lesson worker ran (as a kill -9 right after the run would leave it).
Status FailAndEnqueue(Scenario& s) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenProcess(s));
  s.narrator->set_phase("learn");
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        app::OpenAgent(*runtime, s.report.agent_dir));
  if (runtime->lessons.queue == nullptr) return runtime->lessons.unavailable;
  s.report.failing_task = kFailingTask;
  MEND_ASSIGN_OR_RETURN(s.report.failing, agent->Send(kFailingTask));
  MEND_ASSIGN_OR_RETURN(std::vector<lessonq::Job> pending, runtime->lessons.queue->Pending());
  for (const lessonq::Job& job : pending) {
    if (job.request.task == kFailingTask) s.report.lesson_job_id = job.id;
  }
  if (s.report.lesson_job_id.empty()) {
    return InternalError("the failed demo run left no lesson job in the WAL");
  }
  return OkStatus();
}

// A fourth process replays the WAL and its lesson worker stores the lesson; a similar task
// receives it, an unrelated task receives nothing.
Status LearnAndRecall(Scenario& s) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenProcess(s));
  s.narrator->set_phase("memory");
  MEND_RETURN_IF_ERROR(app::StartLessonWorkers(*runtime));
  MEND_ASSIGN_OR_RETURN(s.report.lesson_drain,
                        runtime->lessons.queue->DrainNow(std::chrono::seconds(30)));
  MEND_RETURN_IF_ERROR(app::StopLessonWorkers(*runtime, std::chrono::seconds(30)));
  memory::ListOptions lessons;
  lessons.category = "lesson";
  MEND_ASSIGN_OR_RETURN(std::vector<memory::Fact> facts, runtime->facts->List(lessons));
  for (const memory::Fact& fact : facts) {
    for (const memory::Episode& episode : fact.provenance) {
      if (episode.task != kFailingTask) continue;
      s.report.lesson_id = fact.id;
      s.report.lesson = fact.content;
    }
  }
  if (s.report.lesson_id.empty()) return InternalError("the lesson worker stored no lesson");
  MEND_RETURN_IF_ERROR(WriteFileAtomically(
      *s.env.fs, JoinPath(s.report.agent_dir, "workspace/settings.conf"),
      "# Settings of the nightly report job.\nretries = 3\ntimeout_seconds = 0\n"));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        app::OpenAgent(*runtime, s.report.agent_dir));
  size_t first = s.provider.requests().size();
  s.report.similar_task = kSimilarTask;
  MEND_ASSIGN_OR_RETURN(s.report.similar, agent->Send(kSimilarTask));
  std::vector<llm::CompletionRequest> requests = s.provider.requests();
  if (requests.size() <= first) return InternalError("the similar task made no model request");
  s.report.similar_section = MemorySection(requests[first]);
  size_t second = requests.size();
  s.report.unrelated_task = kUnrelatedTask;
  MEND_ASSIGN_OR_RETURN(s.report.unrelated, agent->Send(kUnrelatedTask));
  requests = s.provider.requests();
  if (requests.size() <= second) return InternalError("the unrelated task made no model request");
  s.report.unrelated_received_memory = !MemorySection(requests[second]).empty();
  MEND_ASSIGN_OR_RETURN(memory::Fact stored, runtime->facts->Get(s.report.lesson_id));
  s.report.lesson_helped = stored.helped;
  return OkStatus();
}

// A fourth process: the progress guard stops a looping run, then a run fails in a provider
// outage and one pass of the recovery loop brings it back (and leaves the stopped run alone).
Status HealStory(Scenario& s) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenProcess(s));
  s.narrator->set_phase("heal");
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        app::OpenAgent(*runtime, s.report.agent_dir));
  s.report.looping_task = kLoopingTask;
  MEND_ASSIGN_OR_RETURN(s.report.looping, agent->Send(kLoopingTask));
  s.report.outage_task = kOutageTask;
  MEND_ASSIGN_OR_RETURN(s.report.outage_failed, agent->Send(kOutageTask));
  app::RuntimeRunDriver driver(*runtime);
  heal::RecoveryOptions options = app::RecoveryOptionsFor(*runtime);
  options.driver = &driver;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<heal::Recovery> recovery,
                        heal::Recovery::Create(std::move(options)));
  MEND_ASSIGN_OR_RETURN(s.report.recovery, recovery->Tick());
  MEND_ASSIGN_OR_RETURN(store::RunRecord back,
                        runtime->store->GetRun(s.report.outage_failed.run_id));
  s.report.outage_final = back.status;
  return OkStatus();
}

// The sentence the demo's editor adds to the instructions, and the one the demo's model follows.
constexpr char kStopSentence[] =
    "When a file you need does not exist, say so in one sentence and stop; never read it again.";
constexpr char kHaikuTask[] = "Write a haiku about autumn rain.";
constexpr char kEditorReply[] =
    "<file path=\"instructions.md\">\n"
    "You fix the configuration of a small project. Read before you edit, change only the wrong "
    "value, and answer with one sentence saying what you changed.\n"
    "When a file you need does not exist, say so in one sentence and stop; never read it again.\n"
    "</file>\n"
    "<rationale>\n"
    "Both failed runs kept reading a file that does not exist until the progress guard stopped "
    "them; the instructions never said what to do when a file is missing.\n"
    "</rationale>\n";

// The model of the improve story: it behaves as its instructions (the system prompt) say, so a
// candidate's text changes what it does. Without kStopSentence it keeps reading the file the task
// names; with it, it stops and says the file is missing. A haiku task gets a haiku either way.
// Stateless, so concurrent runs are deterministic. Costs follow gpt-4o-mini's price.
class InstructionFollowingModel final : public llm::LlmProvider {
 public:
  explicit InstructionFollowingModel(std::shared_ptr<const llm::PriceTable> prices)
      : prices_(std::move(prices)) {}
  Result<llm::Completion> Complete(const llm::CompletionRequest& request) override {
    std::string system;
    std::string task;
    bool tool_failed = false;
    for (const llm::Message& m : request.messages) {
      if (m.role == llm::Role::kSystem) system += m.content;
      if (m.role == llm::Role::kUser && task.empty()) task = m.content;
      if (m.role == llm::Role::kTool) tool_failed = tool_failed || m.is_error;
    }
    llm::Completion c;
    c.model = "gpt-4o-mini";
    c.usage = {static_cast<int64_t>(system.size() / 4 + 60), 25};
    c.usage_reported = true;
    if (task.find("haiku") != std::string::npos) {
      c.text = "Rain on the maple / each leaf lets go of the sky / puddles keep the red";
    } else if (tool_failed && system.find(kStopSentence) != std::string::npos) {
      c.text = "The file the task needs does not exist, so there is nothing to do.";
    } else {
      const std::string file =
          task.find("CHANGELOG") != std::string::npos ? "CHANGELOG.md" : "settings.cfg";
      c.tool_calls.push_back({"call-" + std::to_string(request.messages.size()), "read_file",
                              "{\"path\":\"" + file + "\"}"});
      c.finish_reason = llm::FinishReason::kToolCalls;
    }
    c.cost_usd = prices_->CostUsd(c.model, c.usage);
    return c;
  }
  std::string_view name() const override { return "demo-model"; }

 private:
  std::shared_ptr<const llm::PriceTable> prices_;
};

// The editor of the improve story: one scripted reply.
class DemoEditor final : public llm::LlmProvider {
 public:
  Result<llm::Completion> Complete(const llm::CompletionRequest&) override {
    llm::Completion c;
    c.text = kEditorReply;
    return c;
  }
  std::string_view name() const override { return "demo-editor"; }
};

// A fifth process: improve. The two runs the progress guard stopped become cases (from the store
// and observe.db), a hand-written haiku case joins them and is held out, the editor proposes an
// instruction fix and the gates judge it on 2 runs per case and arm, in shadow mode.
Status ImproveStory(Scenario& s, std::shared_ptr<const llm::PriceTable> prices) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenProcess(s));
  improve::FailureOptions failure_options;
  failure_options.agent_dir = s.report.agent_dir;
  MEND_ASSIGN_OR_RETURN(improve::FailureCases failures,
                        improve::CasesFromFailures(*runtime->store, nullptr, failure_options));
  if (failures.cases.empty()) return InternalError("improve found no failed run to learn from");
  MEND_ASSIGN_OR_RETURN(agent::AgentSpec spec,
                        agent::LoadAgentFolder(*s.env.fs, s.report.agent_dir));
  app::ImproveRequest request;
  request.agent_dir = s.report.agent_dir;
  for (const improve::FailureCase& f : failures.cases) {
    request.cases.push_back(f.c);
    request.failure_reports[f.c.id] = f.report;
  }
  request.cases.push_back({"haiku", kHaikuTask, "", {}, {"by-hand"}});
  for (const improve::Case& c : request.cases) {
    s.report.improve_cases.push_back(c.id + ": " + c.task);
  }
  // One case in three held out; the seed is chosen so that the haiku case is the held-out one
  // (every failure then teaches the editor something).
  request.held_out_fraction = 1.0 / static_cast<double>(request.cases.size());
  for (std::uint64_t seed = 1;; ++seed) {
    improve::Split split = improve::SplitCases(request.cases, request.held_out_fraction, seed);
    if (split.held_out.size() == 1 && split.held_out[0].id == "haiku") {
      request.seed = seed;
      break;
    }
  }
  s.report.improve_held_out = "haiku";
  DemoEditor editor;
  InstructionFollowingModel model(std::move(prices));
  request.editor = &editor;
  request.model = &model;
  request.candidates = 1;
  request.rounds = 1;
  request.repeats = 2;
  request.concurrency = 2;
  // The bare agent is judged: the model, not a hook, decides how a run goes.
  request.hooks = app::EvaluationHooks::kNone;
  // Passes a run that completed: the failures stopped without an answer.
  request.check_command = {"/bin/sh", "-c",
                           "if grep -q '\"status\":\"completed\"'; then echo '{\"pass\":true}'; "
                           "else echo '{\"pass\":false}'; fi"};
  MEND_ASSIGN_OR_RETURN(app::ImproveAttempt attempt,
                        app::RunImproveAttempt(*runtime, spec, request));
  const improve::ImproveReport& report = attempt.report;
  s.report.improve_attempt = report.attempt_id;
  s.report.improve_outcome = improve::GateOutcomeName(report.result.decision.outcome);
  s.report.improve_card = report.card;
  s.report.improve_runs = report.runs;
  return OkStatus();
}

}  // namespace

Result<DemoReport> RunDemoScenario(const std::string& home) {
  FileSystem& fs = *PosixFileSystem::Default();
  ConfigSources sources;
  sources.flags["home"] = home;
  // The outage run's retries pause a moment, not the seconds a real run waits.
  sources.flags["provider.retries"] = std::to_string(kDemoModelRetries);
  sources.flags["provider.retry_delay"] = "10ms";
  MEND_ASSIGN_OR_RETURN(Config config, LoadConfig(sources, fs));
  Env env = Env::Default();
  env.fs = &fs;
  auto prices = std::make_shared<const llm::PriceTable>(llm::PriceTable::Defaults());
  auto scenario = std::make_unique<Scenario>(std::move(config), env, prices);
  Scenario& s = *scenario;
  s.narrator = std::make_shared<Narrator>(s.report);
  s.report.home = home;
  s.report.agent_dir = home::DemoAgentDir(home);
  s.report.scripted_responses = kFirstRunResponses;
  MEND_RETURN_IF_ERROR(WriteAgentFolder(fs, s.report.agent_dir));
  MEND_RETURN_IF_ERROR(RunUntilCrash(s));
  MEND_RETURN_IF_ERROR(ResumeAfterCrash(s));
  MEND_RETURN_IF_ERROR(FailAndEnqueue(s));
  MEND_RETURN_IF_ERROR(LearnAndRecall(s));
  MEND_RETURN_IF_ERROR(HealStory(s));
  MEND_RETURN_IF_ERROR(ImproveStory(s, prices));
  return std::move(s.report);
}

}  // namespace mend::cli
