#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "mend/agent/agent.h"
#include "mend/base/manual_clock.h"
#include "mend/base/random.h"
#include "mend/llm/provider.h"
#include "mend/obs/events.h"
#include "mend/store/sqlite_store.h"
#include "tests/support/fake_checkpoint_store.h"

namespace mend::agent::testing {

using ::mend::testing::FakeCheckpointStore;

// A model that answers by position in the conversation: turn k (the number of assistant messages
// already in the request) gets turns[k]. Asking the same turn again yields the same answer, so a
// resumed run sees a consistent model; requests per turn are counted. Thread-safe.
class TurnProvider final : public llm::LlmProvider {
 public:
  explicit TurnProvider(std::vector<Result<llm::Completion>> turns) : turns_(std::move(turns)) {}

  Result<llm::Completion> Complete(const llm::CompletionRequest& request) override {
    size_t turn = 0;
    for (const llm::Message& m : request.messages) turn += m.role == llm::Role::kAssistant;
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(request);
    asked_[turn]++;
    if (turn >= turns_.size()) return FailedPreconditionError("no turn " + std::to_string(turn));
    return turns_[turn];
  }
  std::string_view name() const override { return "turns"; }

  int asked(size_t turn) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = asked_.find(turn);
    return it == asked_.end() ? 0 : it->second;
  }
  std::vector<llm::CompletionRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  void SetTurn(size_t turn, Result<llm::Completion> answer) {
    std::lock_guard<std::mutex> lock(mu_);
    turns_.at(turn) = std::move(answer);
  }

 private:
  mutable std::mutex mu_;
  std::vector<Result<llm::Completion>> turns_;
  std::map<size_t, int> asked_;
  std::vector<llm::CompletionRequest> requests_;
};

inline llm::Completion Answer(std::string text, int64_t in = 10, int64_t out = 5,
                              double cost = 0.001) {
  llm::Completion c;
  c.text = std::move(text);
  c.usage = {in, out};
  c.usage_reported = true;
  c.cost_usd = cost;
  return c;
}

inline llm::Completion Calls(std::vector<llm::ToolCall> calls, double cost = 0.001) {
  llm::Completion c = Answer("", 10, 5, cost);
  c.tool_calls = std::move(calls);
  c.finish_reason = llm::FinishReason::kToolCalls;
  return c;
}

// The shared log of a RecordingTool: every call id it executed, in order.
struct CallLog {
  std::mutex mu;
  std::vector<std::string> call_ids;
  std::vector<std::string> arguments;

  int Count(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu);
    int n = 0;
    for (const auto& c : call_ids) n += c == id;
    return n;
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return call_ids.size();
  }
};

// A tool with a visible side effect (the log) and a result derived from its arguments. `on_call`
// (optional) runs inside Execute, e.g. to move a ManualClock or steal the lease.
class RecordingTool final : public Tool {
 public:
  RecordingTool(std::string name, std::shared_ptr<CallLog> log, bool requires_approval = false)
      : log_(std::move(log)) {
    spec_.name = std::move(name);
    spec_.description = "records its calls";
    spec_.requires_approval = requires_approval;
  }
  const ToolSpec& spec() const override { return spec_; }
  Result<ToolResult> Execute(std::string_view arguments, const ToolContext& ctx) override {
    {
      std::lock_guard<std::mutex> lock(log_->mu);
      log_->call_ids.push_back(ctx.call_id);
      log_->arguments.emplace_back(arguments);
    }
    if (on_call) on_call();
    // A tool that waits gives up when the run is stopping, as an MCP call does.
    if (interrupt_on_stop && ctx.stop != nullptr && ctx.stop->load()) {
      ToolResult interrupted = ToolResult::Error("cancelled: the run stopped");
      interrupted.interrupted = true;
      return interrupted;
    }
    if (!output.empty()) return ToolResult::Ok(output);
    return ToolResult::Ok(spec_.name + " did " + std::string(arguments));
  }

  std::function<void()> on_call;
  std::string output;              // when set, the result content
  bool interrupt_on_stop = false;  // ToolResult::interrupted once ctx.stop reads true

 private:
  ToolSpec spec_;
  std::shared_ptr<CallLog> log_;
};

// How the simulated process death relates to the Save it happens at.
enum class CrashPoint {
  kBeforeSave,  // the Save never reached the store
  kAfterSave,   // the Save is durable, but the process died before learning it
};

// Forwards to a store until Save number `crash_at` (1-based); from then on the "process" is dead
// and every call fails with kInternal.
class CrashingStore final : public store::CheckpointStore {
 public:
  CrashingStore(store::CheckpointStore& inner, int crash_at, CrashPoint point)
      : inner_(inner), crash_at_(crash_at), point_(point) {}

  int saves() const { return saves_; }
  bool crashed() const { return dead_; }
  // The process also dies when it is about to record the run as failed (that Update never
  // reaches the store).
  void CrashWhenRecordingFailure() { crash_on_failure_ = true; }

  Status Save(const store::Lease& lease, const store::Checkpoint& cp,
              const store::RunUpdate& update) override {
    if (dead_) return Dead();
    if (++saves_ == crash_at_) {
      dead_ = true;
      if (point_ == CrashPoint::kAfterSave) inner_.Save(lease, cp, update).IgnoreError();
      return Dead();
    }
    return inner_.Save(lease, cp, update);
  }
  Status CreateRun(const store::RunRecord& run) override {
    return dead_ ? Dead() : inner_.CreateRun(run);
  }
  Result<store::RunRecord> GetRun(const std::string& id) override {
    if (dead_) return Dead();
    return inner_.GetRun(id);
  }
  Result<std::vector<store::RunRecord>> ListRuns(const store::ListOptions& o) override {
    if (dead_) return Dead();
    return inner_.ListRuns(o);
  }
  Result<store::PendingPage> ListPending(const store::PendingQuery& q) override {
    if (dead_) return Dead();
    return inner_.ListPending(q);
  }
  Result<store::RecoveryPage> ListRecoveryCandidates(const store::RecoveryQuery& q) override {
    if (dead_) return Dead();
    return inner_.ListRecoveryCandidates(q);
  }
  Status DeleteRun(const std::string& id) override { return dead_ ? Dead() : inner_.DeleteRun(id); }
  Result<store::Lease> Claim(const std::string& id, const store::LeaseHolder& h,
                             Duration ttl) override {
    if (dead_) return Dead();
    return inner_.Claim(id, h, ttl);
  }
  Result<store::Lease> Renew(const store::Lease& l, Duration ttl) override {
    if (dead_) return Dead();
    return inner_.Renew(l, ttl);
  }
  Status Release(const store::Lease& l) override { return dead_ ? Dead() : inner_.Release(l); }
  Status Update(const store::Lease& l, const store::RunUpdate& u) override {
    if (!dead_ && crash_on_failure_ && u.status == store::RunStatus::kFailed) dead_ = true;
    return dead_ ? Dead() : inner_.Update(l, u);
  }
  Status UpdateUnleased(const std::string& id, const store::RunUpdate& u) override {
    return dead_ ? Dead() : inner_.UpdateUnleased(id, u);
  }
  Result<store::RunSnapshot> Load(const std::string& id, std::optional<int64_t> step) override {
    if (dead_) return Dead();
    return inner_.Load(id, step);
  }
  Result<std::vector<store::CheckpointInfo>> History(const std::string& id) override {
    if (dead_) return Dead();
    return inner_.History(id);
  }
  Result<store::RunRecord> Fork(const std::string& id, int64_t step,
                                const std::string& new_id) override {
    if (dead_) return Dead();
    return inner_.Fork(id, step, new_id);
  }
  Result<store::PruneReport> Prune(const store::PruneRequest& r) override {
    if (dead_) return Dead();
    return inner_.Prune(r);
  }

 private:
  static Status Dead() { return InternalError("simulated crash"); }

  store::CheckpointStore& inner_;
  const int crash_at_;
  const CrashPoint point_;
  int saves_ = 0;
  bool dead_ = false;
  bool crash_on_failure_ = false;
};

// Which CheckpointStore a Harness runs on.
enum class StoreKind { kFake, kSqlite };

inline std::string StoreKindName(const ::testing::TestParamInfo<StoreKind>& info) {
  return info.param == StoreKind::kFake ? "Fake" : "Sqlite";
}

// Clock, randomness, store and event capture for one test. Every lease holder of the test (see
// Options) is a process on the store's host; MarkDead(holder) makes that process gone, so its
// lease no longer blocks a claim. The SQLite store lives in a fresh temporary file per Harness.
struct Harness {
  explicit Harness(StoreKind kind = StoreKind::kFake) : owned_store(OpenStore(kind)) {
    bus.Subscribe(sink);
  }
  ~Harness() {
    owned_store.reset();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  static AgentSpec Spec() {
    AgentSpec spec;
    spec.dir = "agents/helper";
    spec.name = "helper";
    spec.instructions = "You help.";
    return spec;
  }

  // The lease identity of holder `id`: a process on this host with its own pid.
  static store::LeaseHolder Holder(const std::string& id) {
    int64_t pid = 1000;
    for (char c : id) pid = pid * 31 + static_cast<unsigned char>(c);
    return {id, kLocal.host, kLocal.boot_id, pid};
  }
  // The process of holder `id` is gone: its lease no longer blocks a claim.
  void MarkDead(const std::string& holder) {
    std::lock_guard<std::mutex> lock(dead_mu);
    dead_pids.insert(Holder(holder).pid);
  }

  AgentOptions Options(llm::LlmProvider& provider, const std::string& holder = "A",
                       store::CheckpointStore* over = nullptr) {
    AgentOptions o;
    o.env.clock = &clock;
    o.env.random = &random;
    o.provider = &provider;
    o.store = over != nullptr ? over : &store;
    o.events = &bus;
    o.holder = Holder(holder);
    // The clock is manual, so a retry's pause would wait for a test that does not advance it;
    // tests of the retries (agent_model_retry_test.cc) turn them on.
    o.model_retry.retries = 0;
    return o;
  }

  std::vector<std::string> EventTypes() const {
    std::vector<std::string> types;
    for (const obs::Event& e : sink->events()) types.push_back(e.type());
    return types;
  }

  static inline const store::LeaseHolder kLocal{"test", "host-a", "boot-1", 1};

  ManualClock clock;
  SeededRandom random{42};
  std::mutex dead_mu;
  std::set<int64_t> dead_pids;
  std::string dir;                      // the SQLite store's temporary directory
  FakeCheckpointStore* fake = nullptr;  // the store when it is the fake, else null
  std::unique_ptr<store::CheckpointStore> owned_store;
  store::CheckpointStore& store = *owned_store;
  obs::EventBus bus{clock};
  std::shared_ptr<obs::MemorySink> sink = std::make_shared<obs::MemorySink>();
  std::shared_ptr<CallLog> log = std::make_shared<CallLog>();

 private:
  std::unique_ptr<store::CheckpointStore> OpenStore(StoreKind kind) {
    auto alive = [this](int64_t pid) {
      std::lock_guard<std::mutex> lock(dead_mu);
      return dead_pids.count(pid) == 0;
    };
    if (kind == StoreKind::kSqlite) {
      std::string pattern = ::testing::TempDir() + "mend_agent_XXXXXX";
      if (mkdtemp(pattern.data()) != nullptr) dir = pattern;
      store::SqliteStoreOptions options;
      options.path = dir + "/mend.db";
      options.local = kLocal;
      options.process_alive = alive;
      auto opened = store::OpenSqliteStore(options, clock);
      EXPECT_TRUE(opened.ok()) << opened.status();
      if (opened.ok()) return std::move(opened).value();
    }
    // The fake, also when SQLite failed to open (the test has failed already).
    auto fake_store = std::make_unique<FakeCheckpointStore>(clock, kLocal, alive);
    fake = fake_store.get();
    return fake_store;
  }
};

inline llm::ToolCall Call(std::string id, std::string name, std::string args) {
  return {std::move(id), std::move(name), std::move(args)};
}

}  // namespace mend::agent::testing
