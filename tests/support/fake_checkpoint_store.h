#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/clock.h"
#include "mend/store/checkpoint_store.h"

namespace mend::testing {

// An in-memory CheckpointStore that passes the conformance suite of tests/store/ (it is
// instantiated there, so it keeps the contract of checkpoint_store.h): epochs and fencing, leases
// with expiry, orphaned holders on this host, the status machine, step numbering, history, forks.
// A holder on `local`'s host and boot whose pid `process_alive` reports gone does not block a
// claim, like SqliteStoreOptions::local/process_alive. Thread-safe.
class FakeCheckpointStore final : public store::CheckpointStore {
 public:
  using ProcessAlive = std::function<bool(int64_t pid)>;

  explicit FakeCheckpointStore(Clock& clock, store::LeaseHolder local = {},
                               ProcessAlive process_alive = nullptr, size_t history_limit = 50)
      : clock_(clock),
        local_(std::move(local)),
        process_alive_(std::move(process_alive)),
        history_limit_(history_limit) {}

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
    if (run.id.empty()) return InvalidArgumentError("a run needs an id");
    if (runs_.count(run.id) != 0) return AlreadyExistsError("run " + run.id + " exists");
    Entry e;
    e.record = run;
    e.record.step = 0;
    e.record.epoch = 0;
    e.record.lease_holder.reset();
    e.record.lease_expires_at.reset();
    e.record.created_at = clock_.Now();
    e.record.updated_at = e.record.created_at;
    runs_[run.id] = std::move(e);
    return OkStatus();
  }
  Result<store::RunRecord> GetRun(const std::string& run_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(Entry * e, Find(run_id));
    return e->record;
  }
  Result<std::vector<store::RunRecord>> ListRuns(const store::ListOptions& options) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<store::RunRecord> all;
    for (const auto& [id, e] : runs_) all.push_back(e.record);
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
      return a.created_at != b.created_at ? a.created_at < b.created_at : a.id < b.id;
    });
    std::vector<store::RunRecord> out;
    for (store::RunRecord& r : all) {
      if (options.unfinished_only && r.status == store::RunStatus::kCompleted) continue;
      if (options.limit != 0 && out.size() == options.limit) break;
      out.push_back(std::move(r));
    }
    return out;
  }
  Result<store::PendingPage> ListPending(const store::PendingQuery& query) override {
    MEND_RETURN_IF_ERROR(store::ValidatePendingQuery(query));
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<store::RunRecord> matching;
    for (const auto& [id, e] : runs_) {
      if (PendingMatches(e.record, query)) matching.push_back(e.record);
    }
    std::sort(matching.begin(), matching.end(), [](const auto& a, const auto& b) {
      return a.created_at != b.created_at ? a.created_at > b.created_at : a.id > b.id;
    });
    store::PendingPage page;
    page.total = static_cast<int64_t>(matching.size());
    auto it = std::find_if(matching.begin(), matching.end(), [&](const store::RunRecord& r) {
      if (!query.before.has_value()) return true;
      const store::RunCursor& c = *query.before;
      return r.created_at < c.created_at || (r.created_at == c.created_at && r.id < c.id);
    });
    for (; it != matching.end() && page.runs.size() < query.limit; ++it) page.runs.push_back(*it);
    page.more = static_cast<int64_t>(matching.end() - it);
    if (page.more > 0)
      page.next = store::RunCursor{page.runs.back().created_at, page.runs.back().id};
    return page;
  }
  Status DeleteRun(const std::string& run_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(Entry * e, Find(run_id));
    if (HeldByLive(*e)) return UnavailableError("run " + run_id + " is leased");
    runs_.erase(run_id);
    return OkStatus();
  }

  Result<store::Lease> Claim(const std::string& run_id, const store::LeaseHolder& holder,
                             Duration ttl) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(Entry * e, Find(run_id));
    if (e->record.status == store::RunStatus::kCompleted) {
      return FailedPreconditionError("run " + run_id + " is completed");
    }
    if (HeldByLive(*e)) {
      return UnavailableError("run " + run_id + " is leased by " + e->record.lease_holder->id);
    }
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
    if (e->record.status == store::RunStatus::kCompleted) {
      return FailedPreconditionError("run " + e->record.id + " is completed");
    }
    if (checkpoint.step != e->record.step + 1) {
      return FailedPreconditionError("step " + std::to_string(checkpoint.step) + " is not " +
                                     std::to_string(e->record.step + 1));
    }
    MEND_RETURN_IF_ERROR(CheckTransition(*e, update));
    e->messages.insert(e->messages.end(), checkpoint.new_messages.begin(),
                       checkpoint.new_messages.end());
    e->checkpoints.push_back({checkpoint.step, e->messages.size(), checkpoint.state, clock_.Now()});
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
    store::RunSnapshot snap;
    snap.run = e->record;
    if (!step.has_value() && e->checkpoints.empty()) return snap;  // before the first Save
    auto cp = std::find_if(e->checkpoints.begin(), e->checkpoints.end(), [&](const Cp& c) {
      return c.step == step.value_or(e->checkpoints.back().step);
    });
    if (cp == e->checkpoints.end()) {
      return NotFoundError("run " + run_id + " has no checkpoint " + std::to_string(*step));
    }
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
    e.record.created_at = clock_.Now();
    e.record.updated_at = e.record.created_at;
    e.messages.assign(src->messages.begin(), src->messages.begin() + cp->message_count);
    e.checkpoints.push_back(*cp);
    runs_[new_id] = e;
    return e.record;
  }
  Result<store::PruneReport> Prune(const store::PruneRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    store::PruneReport report;
    const bool whole = request.scope == store::PruneScope::kWholeRuns;
    for (auto it = runs_.begin(); it != runs_.end();) {
      Entry& e = it->second;
      // kHistory keeps the newest checkpoint; kWholeRuns removes them all and the messages.
      const size_t keep = whole || e.checkpoints.empty() ? 0 : 1;
      const size_t gone = e.checkpoints.size() - keep;
      if (!store::OldEnoughToPrune(e.record, request.cutoff) || HeldByLive(e) ||
          (!whole && gone == 0)) {
        ++it;
        continue;
      }
      report.runs += 1;
      report.checkpoints += static_cast<int64_t>(gone);
      for (size_t i = 0; i < gone; ++i) {
        report.bytes += static_cast<int64_t>(e.checkpoints[i].state.size());
      }
      if (whole) {
        report.runs_deleted += 1;
        report.messages += static_cast<int64_t>(e.messages.size());
        for (const std::string& m : e.messages) report.bytes += static_cast<int64_t>(m.size());
      }
      if (request.mode == store::PruneMode::kDryRun) {
        ++it;
      } else if (whole) {
        it = runs_.erase(it);
      } else {
        e.checkpoints.erase(e.checkpoints.begin(), e.checkpoints.end() - 1);
        ++it;
      }
    }
    return report;
  }

  // Kept in memory, as the SQL stores keep it in `meta`.
  Result<std::optional<store::RunCursor>> RecoveryCursor() override {
    std::lock_guard<std::mutex> lock(mu_);
    return recovery_cursor_;
  }
  Status SetRecoveryCursor(const std::optional<store::RunCursor>& cursor) override {
    std::lock_guard<std::mutex> lock(mu_);
    recovery_cursor_ = cursor;
    ++recovery_cursor_writes_;
    return OkStatus();
  }
  // How many times SetRecoveryCursor was called.
  int recovery_cursor_writes() {
    std::lock_guard<std::mutex> lock(mu_);
    return recovery_cursor_writes_;
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
  // The run of `lease` when the lease is current: its epoch, held, and not expired.
  Result<Entry*> Fenced(const store::Lease& lease) {
    MEND_ASSIGN_OR_RETURN(Entry * e, Find(lease.run_id));
    if (lease.epoch != e->record.epoch || !e->record.lease_holder.has_value() ||
        clock_.Now() >= *e->record.lease_expires_at) {
      return AbortedError("stale lease of run " + lease.run_id);
    }
    return e;
  }
  static bool PendingMatches(const store::RunRecord& r, const store::PendingQuery& query) {
    if (r.status == store::RunStatus::kCompleted && query.scope == store::RunScope::kUnfinished) {
      return false;
    }
    if (!query.agent.empty() && r.agent != query.agent) return false;
    return query.statuses.empty() || std::find(query.statuses.begin(), query.statuses.end(),
                                               r.status) != query.statuses.end();
  }
  bool HeldByLive(const Entry& e) const {
    if (!e.record.lease_holder.has_value()) return false;
    if (clock_.Now() >= *e.record.lease_expires_at) return false;
    const store::LeaseHolder& h = *e.record.lease_holder;
    bool this_host =
        !local_.boot_id.empty() && h.host == local_.host && h.boot_id == local_.boot_id;
    return !(this_host && process_alive_ != nullptr && !process_alive_(h.pid));
  }
  static Status CheckTransition(const Entry& e, const store::RunUpdate& update) {
    if (!update.status.has_value()) return OkStatus();
    return store::CheckRunTransition(e.record.status, *update.status);
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
  const store::LeaseHolder local_;
  const ProcessAlive process_alive_;
  const size_t history_limit_;
  std::mutex mu_;
  std::map<std::string, Entry> runs_;
  std::optional<store::RunCursor> recovery_cursor_;
  int recovery_cursor_writes_ = 0;
};

}  // namespace mend::testing
