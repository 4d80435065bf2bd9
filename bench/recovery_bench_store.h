#pragma once

// A CheckpointStore that forwards to another and counts and times what recovery asks of it, so
// the recovery benchmark can split a tick into listing, store writes and the loop itself.
// Single-threaded use only (one Tick() at a time).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "mend/store/checkpoint_store.h"

namespace mend::bench {

class CountingStore final : public store::CheckpointStore {
 public:
  struct Counts {
    int64_t writes = 0;  // every call that changes the database
    double write_ms = 0;
    int64_t reads = 0;   // GetRun, Load, History
    double list_ms = 0;  // ListRuns, ListPending, ListRecoveryCandidates
    int64_t pages = 0;   // ListRecoveryCandidates
  };

  // `inner` must outlive this store.
  explicit CountingStore(store::CheckpointStore& inner) : inner_(inner) {}

  const Counts& counts() const { return counts_; }
  void Reset() { counts_ = Counts{}; }

  Status CreateRun(const store::RunRecord& run) override {
    return Write([&] { return inner_.CreateRun(run); });
  }
  Result<store::RunRecord> GetRun(const std::string& run_id) override {
    ++counts_.reads;
    return inner_.GetRun(run_id);
  }
  Result<std::vector<store::RunRecord>> ListRuns(const store::ListOptions& options) override {
    auto t0 = std::chrono::steady_clock::now();
    Result<std::vector<store::RunRecord>> runs = inner_.ListRuns(options);
    counts_.list_ms += Elapsed(t0);
    return runs;
  }
  Result<store::PendingPage> ListPending(const store::PendingQuery& query) override {
    auto t0 = std::chrono::steady_clock::now();
    Result<store::PendingPage> page = inner_.ListPending(query);
    counts_.list_ms += Elapsed(t0);
    return page;
  }
  Result<store::RecoveryPage> ListRecoveryCandidates(const store::RecoveryQuery& query) override {
    auto t0 = std::chrono::steady_clock::now();
    Result<store::RecoveryPage> page = inner_.ListRecoveryCandidates(query);
    counts_.list_ms += Elapsed(t0);
    ++counts_.pages;
    return page;
  }
  Status DeleteRun(const std::string& run_id) override {
    return Write([&] { return inner_.DeleteRun(run_id); });
  }
  Result<store::Lease> Claim(const std::string& run_id, const store::LeaseHolder& holder,
                             Duration ttl) override {
    return Write([&] { return inner_.Claim(run_id, holder, ttl); });
  }
  Result<store::Lease> Renew(const store::Lease& lease, Duration ttl) override {
    return Write([&] { return inner_.Renew(lease, ttl); });
  }
  Status Release(const store::Lease& lease) override {
    return Write([&] { return inner_.Release(lease); });
  }
  Status Save(const store::Lease& lease, const store::Checkpoint& checkpoint,
              const store::RunUpdate& update) override {
    return Write([&] { return inner_.Save(lease, checkpoint, update); });
  }
  Status Update(const store::Lease& lease, const store::RunUpdate& update) override {
    return Write([&] { return inner_.Update(lease, update); });
  }
  Status UpdateUnleased(const std::string& run_id, const store::RunUpdate& update) override {
    return Write([&] { return inner_.UpdateUnleased(run_id, update); });
  }
  Result<store::RunSnapshot> Load(const std::string& run_id, std::optional<int64_t> step) override {
    ++counts_.reads;
    return inner_.Load(run_id, step);
  }
  Result<std::vector<store::CheckpointInfo>> History(const std::string& run_id) override {
    ++counts_.reads;
    return inner_.History(run_id);
  }
  Result<store::RunRecord> Fork(const std::string& run_id, int64_t step,
                                const std::string& new_id) override {
    return Write([&] { return inner_.Fork(run_id, step, new_id); });
  }
  Result<store::PruneReport> Prune(const store::PruneRequest& request) override {
    return Write([&] { return inner_.Prune(request); });
  }

 private:
  static double Elapsed(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  template <typename F>
  std::invoke_result_t<F> Write(F&& f) {
    auto t0 = std::chrono::steady_clock::now();
    auto result = f();
    ++counts_.writes;
    counts_.write_ms += Elapsed(t0);
    return result;
  }

  store::CheckpointStore& inner_;
  Counts counts_;
};

}  // namespace mend::bench
