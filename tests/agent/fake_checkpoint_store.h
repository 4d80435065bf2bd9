#pragma once

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/store/checkpoint_store.h"

namespace mend::agent::testing {

// An in-memory CheckpointStore honouring the contract of checkpoint_store.h: epochs and fencing,
// leases with expiry, step numbering, history, forks. A holder id marked dead (MarkDead) does not
// block a claim, like a holder whose process is gone. Thread-safe.
class FakeCheckpointStore final : public store::CheckpointStore {
 public:
  explicit FakeCheckpointStore(Clock& clock, size_t history_limit = 50)
      : clock_(clock), history_limit_(history_limit) {}

  void MarkDead(const std::string& holder_id) {
    std::lock_guard<std::mutex> lock(mu_);
    dead_.insert(holder_id);
  }
  // Replaces the stored state of the newest checkpoint (to simulate a corrupt row).
  void CorruptState(const std::string& run_id, const std::string& state) {
    std::lock_guard<std::mutex> lock(mu_);
    runs_.at(run_id).checkpoints.back().state = state;
  }
  void CorruptMessage(const std::string& run_id, size_t index, const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    runs_.at(run_id).messages.at(index) = text;
  }

  Status CreateRun(const store::RunRecord& run) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (runs_.count(run.id) != 0) return AlreadyExistsError("run " + run.id + " exists");
    Entry e;
    e.record = run;
    e.record.step = 0;
    e.record.epoch = 0;
    e.record.lease_holder.reset();
    e.record.lease_expires_at.reset();
    runs_[run.id] = std::move(e);
    order_.push_back(run.id);
    return OkStatus();
  }
  Result<store::RunRecord> GetRun(const std::string& run_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return NotFoundError("no run " + run_id);
    return it->second.record;
  }
  Result<std::vector<store::RunRecord>> ListRuns(const store::ListOptions& options) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<store::RunRecord> out;
    for (const std::string& id : order_) {
      const store::RunRecord& r = runs_.at(id).record;
      if (options.unfinished_only && r.status == store::RunStatus::kCompleted) continue;
      out.push_back(r);
      if (options.limit != 0 && out.size() == options.limit) break;
    }
    return out;
  }
  Status DeleteRun(const std::string& run_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(Entry * e, Find(run_id));
    if (HeldByLive(*e)) return UnavailableError("run " + run_id + " is leased");
    runs_.erase(run_id);
    order_.erase(std::remove(order_.begin(), order_.end(), run_id), order_.end());
    return OkStatus();
  }

  Result<store::Lease> Claim(const std::string& run_id, const store::LeaseHolder& holder,
                             Duration ttl) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(Entry * e, Find(run_id));
    if (HeldByLive(*e)) return UnavailableError("run " + run_id + " is leased by a live holder");
    e->record.epoch++;
    e->record.lease_holder = holder;
    e->record.lease_expires_at = clock_.Now() + ttl;
    return LeaseOf(*e);
  }
  Result<store::Lease> Renew(const store::Lease& lease, Duration ttl) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(Entry * e, Fenced(lease));
    e->record.lease_expires_at = clock_.Now() + ttl;
    return LeaseOf(*e);
  }
  Status Release(const store::Lease& lease) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(Entry * e, Fenced(lease));
    e->record.lease_holder.reset();
    e->record.lease_expires_at.reset();
    return OkStatus();
  }

  Status Save(const store::Lease& lease, const store::Checkpoint& checkpoint,
              const store::RunUpdate& update) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(Entry * e, Fenced(lease));
    if (checkpoint.step != e->record.step + 1) {
      return FailedPreconditionError("step " + std::to_string(checkpoint.step) + " is not " +
                                     std::to_string(e->record.step + 1));
    }
    MEND_RETURN_IF_ERROR(CheckTransition(*e, update));
    e->messages.insert(e->messages.end(), checkpoint.new_messages.begin(),
                       checkpoint.new_messages.end());
    e->checkpoints.push_back(
        {checkpoint.step, e->messages.size(), checkpoint.state, checkpoint.created_at});
    if (e->checkpoints.size() > history_limit_) e->checkpoints.erase(e->checkpoints.begin());
    e->record.step = checkpoint.step;
    Apply(*e, update);
    return OkStatus();
  }
  Status Update(const store::Lease& lease, const store::RunUpdate& update) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(Entry * e, Fenced(lease));
    MEND_RETURN_IF_ERROR(CheckTransition(*e, update));
    Apply(*e, update);
    return OkStatus();
  }
  Status UpdateUnleased(const std::string& run_id, const store::RunUpdate& update) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(Entry * e, Find(run_id));
    MEND_RETURN_IF_ERROR(CheckTransition(*e, update));
    Apply(*e, update);
    return OkStatus();
  }

  Result<store::RunSnapshot> Load(const std::string& run_id, std::optional<int64_t> step) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(Entry * e, Find(run_id));
    const Cp* cp = nullptr;
    for (const Cp& c : e->checkpoints) {
      if (!step.has_value() || c.step == *step) cp = &c;
    }
    if (cp == nullptr) return NotFoundError("run " + run_id + " has no such checkpoint");
    store::RunSnapshot snap;
    snap.run = e->record;
    snap.step = cp->step;
    snap.messages.assign(e->messages.begin(), e->messages.begin() + cp->message_count);
    snap.state = cp->state;
    return snap;
  }
  Result<std::vector<store::CheckpointInfo>> History(const std::string& run_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(Entry * e, Find(run_id));
    std::vector<store::CheckpointInfo> out;
    for (const Cp& c : e->checkpoints) {
      out.push_back({c.step, static_cast<int64_t>(c.message_count), c.created_at});
    }
    return out;
  }
  Result<store::RunRecord> Fork(const std::string& run_id, int64_t step,
                                const std::string& new_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(Entry * src, Find(run_id));
    if (runs_.count(new_id) != 0) return AlreadyExistsError("run " + new_id + " exists");
    auto cp = std::find_if(src->checkpoints.begin(), src->checkpoints.end(),
                           [&](const Cp& c) { return c.step == step; });
    if (cp == src->checkpoints.end()) return NotFoundError("no checkpoint " + std::to_string(step));
    Entry e;
    e.record = src->record;
    e.record.id = new_id;
    e.record.status = store::RunStatus::kRunning;
    e.record.waiting = "";
    e.record.last_error.reset();
    e.record.parent_id = run_id;
    e.record.parent_step = step;
    e.record.step = step;
    e.record.epoch = 0;
    e.record.lease_holder.reset();
    e.record.lease_expires_at.reset();
    e.messages.assign(src->messages.begin(), src->messages.begin() + cp->message_count);
    e.checkpoints.push_back(*cp);
    runs_[new_id] = e;
    order_.push_back(new_id);
    return e.record;
  }

 private:
  struct Cp {
    int64_t step;
    size_t message_count;
    std::string state;
    Time created_at;
  };
  struct Entry {
    store::RunRecord record;
    std::vector<std::string> messages;
    std::vector<Cp> checkpoints;
  };

  Result<Entry*> Find(const std::string& run_id) {
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return NotFoundError("no run " + run_id);
    return &it->second;
  }
  Result<Entry*> Fenced(const store::Lease& lease) {
    MEND_ASSIGN_OR_RETURN(Entry * e, Find(lease.run_id));
    if (lease.epoch != e->record.epoch || !e->record.lease_holder.has_value()) {
      return AbortedError("stale lease of run " + lease.run_id);
    }
    return e;
  }
  bool HeldByLive(const Entry& e) const {
    if (!e.record.lease_holder.has_value()) return false;
    if (dead_.count(e.record.lease_holder->id) != 0) return false;
    return clock_.Now() < *e.record.lease_expires_at;
  }
  static Status CheckTransition(const Entry& e, const store::RunUpdate& update) {
    if (e.record.status == store::RunStatus::kCompleted && update.status.has_value() &&
        *update.status != store::RunStatus::kCompleted) {
      return FailedPreconditionError("run " + e.record.id + " is completed");
    }
    return OkStatus();
  }
  void Apply(Entry& e, const store::RunUpdate& u) {
    if (u.status) e.record.status = *u.status;
    if (u.waiting) e.record.waiting = *u.waiting;
    if (u.last_error) e.record.last_error = *u.last_error;
    if (u.attempts) e.record.attempts = *u.attempts;
    if (u.next_attempt_at) e.record.next_attempt_at = *u.next_attempt_at;
    if (u.metadata) e.record.metadata = *u.metadata;
    e.record.updated_at = clock_.Now();
  }
  static store::Lease LeaseOf(const Entry& e) {
    return {e.record.id, e.record.epoch, *e.record.lease_holder, *e.record.lease_expires_at};
  }

  Clock& clock_;
  const size_t history_limit_;
  std::mutex mu_;
  std::map<std::string, Entry> runs_;
  std::vector<std::string> order_;
  std::set<std::string> dead_;
};

}  // namespace mend::agent::testing
