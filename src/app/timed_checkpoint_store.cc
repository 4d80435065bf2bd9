// Checkpoint save latency: a decorator, so every store implementation is measured the same way.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/runtime_metrics_internal.h"

namespace mend::app::internal {
namespace {

class TimedCheckpointStore final : public store::CheckpointStore {
 public:
  TimedCheckpointStore(std::unique_ptr<store::CheckpointStore> inner, RuntimeMetrics& metrics,
                       Clock& clock)
      : inner_(std::move(inner)), metrics_(metrics), clock_(clock) {}

  Status Save(const store::Lease& lease, const store::Checkpoint& checkpoint,
              const store::RunUpdate& update) override {
    const Time start = clock_.Now();
    Status saved = inner_->Save(lease, checkpoint, update);
    metrics_.RecordCheckpointSave(clock_.Now() - start, saved);
    return saved;
  }

  Status CreateRun(const store::RunRecord& run) override { return inner_->CreateRun(run); }
  Result<store::RunRecord> GetRun(const std::string& run_id) override {
    return inner_->GetRun(run_id);
  }
  Result<std::vector<store::RunRecord>> ListRuns(const store::ListOptions& options) override {
    return inner_->ListRuns(options);
  }
  Result<store::PendingPage> ListPending(const store::PendingQuery& query) override {
    return inner_->ListPending(query);
  }
  Result<store::RecoveryPage> ListRecoveryCandidates(const store::RecoveryQuery& query) override {
    return inner_->ListRecoveryCandidates(query);
  }
  Result<std::optional<store::RunCursor>> RecoveryCursor() override {
    return inner_->RecoveryCursor();
  }
  Status SetRecoveryCursor(const std::optional<store::RunCursor>& cursor) override {
    return inner_->SetRecoveryCursor(cursor);
  }
  Status DeleteRun(const std::string& run_id) override { return inner_->DeleteRun(run_id); }
  Result<store::Lease> Claim(const std::string& run_id, const store::LeaseHolder& holder,
                             Duration ttl) override {
    return inner_->Claim(run_id, holder, ttl);
  }
  Result<store::Lease> Renew(const store::Lease& lease, Duration ttl) override {
    return inner_->Renew(lease, ttl);
  }
  Status Release(const store::Lease& lease) override { return inner_->Release(lease); }
  Status Update(const store::Lease& lease, const store::RunUpdate& update) override {
    return inner_->Update(lease, update);
  }
  Status UpdateUnleased(const std::string& run_id, const store::RunUpdate& update) override {
    return inner_->UpdateUnleased(run_id, update);
  }
  Result<store::RunSnapshot> Load(const std::string& run_id, std::optional<int64_t> step) override {
    return inner_->Load(run_id, step);
  }
  Result<std::vector<store::CheckpointState>> LatestStates(
      const std::vector<std::string>& run_ids) override {
    return inner_->LatestStates(run_ids);
  }
  Result<std::vector<store::CheckpointInfo>> History(const std::string& run_id) override {
    return inner_->History(run_id);
  }
  Result<store::RunRecord> Fork(const std::string& run_id, int64_t step,
                                const std::string& new_id) override {
    return inner_->Fork(run_id, step, new_id);
  }
  Result<store::PruneReport> Prune(const store::PruneRequest& request) override {
    return inner_->Prune(request);
  }

 private:
  std::unique_ptr<store::CheckpointStore> inner_;
  RuntimeMetrics& metrics_;
  Clock& clock_;
};

}  // namespace

std::unique_ptr<store::CheckpointStore> TimeCheckpointSaves(
    std::unique_ptr<store::CheckpointStore> inner, RuntimeMetrics& metrics, Clock& clock) {
  return std::make_unique<TimedCheckpointStore>(std::move(inner), metrics, clock);
}

}  // namespace mend::app::internal
