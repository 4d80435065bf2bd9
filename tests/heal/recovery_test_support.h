#pragma once

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/heal/recovery.h"
#include "mend/obs/events.h"
#include "tests/support/fake_checkpoint_store.h"

namespace mend::heal::testing {

using ::mend::testing::FakeCheckpointStore;

// One scripted outcome of FakeDriver::Resume.
struct Outcome {
  enum class Kind { kComplete, kFail, kWait, kLeased, kError, kStopped };
  Kind kind = Kind::kComplete;
  store::RunError error;       // kFail: the run's new last error
  bool progress = false;       // a checkpoint is saved before the outcome
  Status status = OkStatus();  // kError: what Resume returns
};

inline store::RunError ProviderDown() {
  return {"UNAVAILABLE", "openai HTTP 503: overloaded", "transient", true};
}
inline store::RunError RateLimited() {
  return {"RESOURCE_EXHAUSTED", "openai HTTP 429: slow down", "transient", true};
}
inline store::RunError AuthFailed() {
  return {"UNAUTHENTICATED", "openai HTTP 401: invalid key", "auth", false};
}
// A retryable failure that is not the provider's.
inline store::RunError ToolBroke() {
  return {"ABORTED", "the workspace was busy", "transient", true};
}
inline store::RunError NoProgress() {
  return {"MEND_RUN_NO_PROGRESS", "the tool keeps failing", "permanent", false};
}

inline Outcome Complete() { return {}; }
inline Outcome Fail(store::RunError e, bool progress = false) {
  return {Outcome::Kind::kFail, std::move(e), progress, OkStatus()};
}
inline Outcome Wait() { return {Outcome::Kind::kWait, {}, false, OkStatus()}; }
inline Outcome Leased() { return {Outcome::Kind::kLeased, {}, false, OkStatus()}; }
// The process is shutting down: the attempt stopped at a checkpoint, the run still running.
inline Outcome Stopped() { return {Outcome::Kind::kStopped, {}, true, OkStatus()}; }
inline Outcome Broken(Status s) { return {Outcome::Kind::kError, {}, false, std::move(s)}; }

// A RunDriver whose Resume plays scripted outcomes per run (then the run's fallback, then the
// driver's default) and applies them to the store the way an agent would. Records every call.
// Thread-safe.
class FakeDriver final : public RunDriver {
 public:
  explicit FakeDriver(store::CheckpointStore& store) : store_(store) {}

  void Script(const std::string& run_id, std::vector<Outcome> outcomes) {
    std::lock_guard<std::mutex> lock(mu_);
    for (Outcome& o : outcomes) scripts_[run_id].push_back(std::move(o));
  }
  void Always(const std::string& run_id, Outcome outcome) {
    std::lock_guard<std::mutex> lock(mu_);
    fallback_[run_id] = std::move(outcome);
  }
  void SetDefault(Outcome outcome) {
    std::lock_guard<std::mutex> lock(mu_);
    default_ = std::move(outcome);
  }

  Result<agent::RunResult> Resume(const store::RunRecord& run) override {
    Outcome o = Next(run.id);
    switch (o.kind) {
      case Outcome::Kind::kLeased:
        return UnavailableError("run " + run.id + " is leased by replica-b");
      case Outcome::Kind::kError:
        return o.status;
      default:
        break;
    }
    MEND_RETURN_IF_ERROR(Apply(run.id, o));
    agent::RunResult r;
    r.run_id = run.id;
    r.status = o.kind == Outcome::Kind::kComplete  ? store::RunStatus::kCompleted
               : o.kind == Outcome::Kind::kWait    ? store::RunStatus::kWaiting
               : o.kind == Outcome::Kind::kStopped ? store::RunStatus::kRunning
                                                   : store::RunStatus::kFailed;
    if (o.kind == Outcome::Kind::kFail) r.error = o.error;
    if (o.kind == Outcome::Kind::kWait) r.waiting = "approval";
    return r;
  }

  Status ForkWithNote(const store::RunRecord& run, const std::string& new_id,
                      const std::string& note) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      forks_.push_back(new_id);
      notes_[new_id] = note;
    }
    store::RunRecord fork = run;  // attempts copied on purpose: recovery must reset them
    fork.id = new_id;
    fork.status = store::RunStatus::kRunning;
    fork.last_error.reset();
    fork.next_attempt_at.reset();
    fork.parent_id = run.id;
    return store_.CreateRun(fork);
  }

  std::vector<std::string> calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  int CallsOf(const std::string& run_id) const {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const std::string& c : calls_) n += c == run_id;
    return n;
  }
  std::vector<std::string> forks() const {
    std::lock_guard<std::mutex> lock(mu_);
    return forks_;
  }
  std::string NoteOf(const std::string& fork_id) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = notes_.find(fork_id);
    return it == notes_.end() ? "" : it->second;
  }
  // Blocks until Resume was called `n` times in all (a real wait, no sleeping).
  void WaitForCalls(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    called_.wait(lock, [&] { return calls_.size() >= n; });
  }

 private:
  Outcome Next(const std::string& run_id) {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(run_id);
    called_.notify_all();
    auto& script = scripts_[run_id];
    if (!script.empty()) {
      Outcome o = script.front();
      script.pop_front();
      return o;
    }
    auto it = fallback_.find(run_id);
    return it != fallback_.end() ? it->second : default_;
  }

  Status Apply(const std::string& run_id, const Outcome& o) {
    MEND_ASSIGN_OR_RETURN(store::RunRecord run, store_.GetRun(run_id));
    if (run.status != store::RunStatus::kRunning) {
      store::RunUpdate to_running;
      to_running.status = store::RunStatus::kRunning;
      MEND_RETURN_IF_ERROR(store_.UpdateUnleased(run_id, to_running));
    }
    if (o.progress) {
      store::LeaseHolder holder{"driver", "host", "", 1};
      MEND_ASSIGN_OR_RETURN(store::Lease lease,
                            store_.Claim(run_id, holder, std::chrono::seconds(30)));
      store::Checkpoint cp;
      cp.step = run.step + 1;
      cp.new_messages = {"{}"};
      cp.state = "{}";
      MEND_RETURN_IF_ERROR(store_.Save(lease, cp, {}));
      MEND_RETURN_IF_ERROR(store_.Release(lease));
    }
    store::RunUpdate end;
    if (o.kind == Outcome::Kind::kComplete) end.status = store::RunStatus::kCompleted;
    if (o.kind == Outcome::Kind::kFail) {
      end.status = store::RunStatus::kFailed;
      end.last_error = std::optional<store::RunError>(o.error);
    }
    if (o.kind == Outcome::Kind::kWait) {
      end.status = store::RunStatus::kWaiting;
      end.waiting = "approval";
    }
    return store_.UpdateUnleased(run_id, end);
  }

  store::CheckpointStore& store_;
  mutable std::mutex mu_;
  std::condition_variable called_;
  std::map<std::string, std::deque<Outcome>> scripts_;
  std::map<std::string, Outcome> fallback_;
  Outcome default_;
  std::vector<std::string> calls_;
  std::vector<std::string> forks_;
  std::map<std::string, std::string> notes_;
};

// Clock, store, driver, events and callback records for one test.
class RecoveryFixture : public ::testing::Test {
 protected:
  RecoveryFixture() { bus.Subscribe(sink); }

  RecoveryOptions Options() {
    RecoveryOptions o;
    o.store = &store;
    o.driver = &driver;
    o.clock = &clock;
    o.events = &bus;
    o.on_recovered = [this](const std::string& id) { Record(recovered, id); };
    o.on_quarantined = [this](const std::string& id) { Record(quarantined, id); };
    o.on_outage = [this](const OutageChange& change) {
      std::lock_guard<std::mutex> lock(mu);
      outages.push_back(change.in_outage);
      outage_changes.push_back(change);
    };
    o.on_error = [this](const Status& s) {
      std::lock_guard<std::mutex> lock(mu);
      errors.push_back(s);
    };
    return o;
  }
  std::unique_ptr<Recovery> Make(RecoveryOptions o) {
    auto r = Recovery::Create(std::move(o));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? std::move(r).value() : nullptr;
  }

  // A run in `status` (an interrupted one by default) with `error` as its last error.
  void AddRun(const std::string& id, store::RunStatus status = store::RunStatus::kRunning,
              std::optional<store::RunError> error = std::nullopt, int64_t attempts = 0) {
    store::RunRecord r;
    r.id = id;
    r.agent = "helper";
    r.task = "task of " + id;
    r.status = status;
    r.last_error = std::move(error);
    r.attempts = attempts;
    r.metadata = R"({"kind":"send"})";
    if (status == store::RunStatus::kWaiting) r.waiting = "approval";
    ASSERT_TRUE(store.CreateRun(r).ok());
  }
  store::RunRecord Get(const std::string& id) {
    auto r = store.GetRun(id);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : store::RunRecord{};
  }
  TickReport MustTick(Recovery& recovery) {
    auto report = recovery.Tick();
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : TickReport{};
  }
  std::vector<std::string> EventTypes() const {
    std::vector<std::string> types;
    for (const obs::Event& e : sink->events()) types.push_back(e.type());
    return types;
  }
  int CountEvents(const std::string& type) const {
    int n = 0;
    for (const obs::Event& e : sink->events()) n += e.type() == type;
    return n;
  }

  ManualClock clock;
  FakeCheckpointStore store{clock};
  FakeDriver driver{store};
  obs::EventBus bus{clock};
  std::shared_ptr<obs::MemorySink> sink = std::make_shared<obs::MemorySink>();

  std::mutex mu;
  std::vector<std::string> recovered;
  std::vector<std::string> quarantined;
  std::vector<bool> outages;
  std::vector<OutageChange> outage_changes;
  std::vector<Status> errors;

 private:
  void Record(std::vector<std::string>& list, const std::string& id) {
    std::lock_guard<std::mutex> lock(mu);
    list.push_back(id);
  }
};

}  // namespace mend::heal::testing
