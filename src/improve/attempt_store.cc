// The local attempt store (the audit folders of one home) and the decisions taken through any
// store.
#include "mend/improve/attempt_store.h"

#include <mutex>
#include <string>
#include <utility>

#include "mend/base/home_layout.h"
#include "mend/base/time_format.h"
#include "mend/improve/audit.h"

namespace mend::improve {
namespace {

class LocalAttemptStore final : public AttemptStore {
 public:
  LocalAttemptStore(FileSystem& fs, std::string home) : fs_(fs), home_(std::move(home)) {}

  Status RecordAttempt(std::string_view attempt_id) override { return Locate(attempt_id).status(); }

  Status PutProposal(const Proposal& proposal) override {
    return WriteProposal(fs_, home_, proposal);
  }

  Result<Proposal> GetProposal(std::string_view attempt_id) override {
    return ReadProposal(fs_, home_, attempt_id);
  }

  Result<std::vector<AttemptSummary>> List() override { return ListAttempts(fs_, home_); }

  Result<Proposal> Decide(std::string_view attempt_id,
                          const std::function<Status(Proposal&)>& decide) override {
    // One process decides one proposal at a time; the folder has no lock between processes.
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(Proposal p, ReadProposal(fs_, home_, attempt_id));
    if (p.status != ProposalStatus::kQueued) {
      return FailedPreconditionError("proposal " + p.attempt_id + " is already " +
                                     std::string(ProposalStatusName(p.status)));
    }
    MEND_RETURN_IF_ERROR(decide(p));
    MEND_RETURN_IF_ERROR(WriteProposal(fs_, home_, p));
    return p;
  }

  Result<Location> Locate(std::string_view attempt_id) override {
    if (!IsValidAttemptId(attempt_id)) {
      return InvalidArgumentError("not an improve attempt id: " + std::string(attempt_id));
    }
    Location where;
    where.audit_dir = home::AttemptDir(home_, attempt_id);
    Result<FileInfo> info = fs_.Stat(where.audit_dir);
    if (!info.ok()) {
      if (info.status().code() == StatusCode::kNotFound) {
        return NotFoundError("no improve attempt named " + std::string(attempt_id));
      }
      return info.status();
    }
    where.here = true;
    return where;
  }

  Result<AttemptSummary> Summary(std::string_view attempt_id) override {
    return SummarizeAttempt(fs_, home_, attempt_id);
  }

 private:
  FileSystem& fs_;
  const std::string home_;
  std::mutex mu_;
};

}  // namespace

std::unique_ptr<AttemptStore> OpenLocalAttemptStore(FileSystem& fs, std::string home) {
  return std::make_unique<LocalAttemptStore>(fs, std::move(home));
}

Result<Proposal> ApplyProposal(FileSystem& fs, Clock& clock, AttemptStore& store,
                               std::string_view home, std::string_view attempt_id) {
  return store.Decide(attempt_id,
                      [&](Proposal& p) { return ApplyProposalFiles(fs, clock, home, p); });
}

Result<Proposal> RejectProposal(Clock& clock, AttemptStore& store, std::string_view attempt_id,
                                std::string reason) {
  return store.Decide(attempt_id, [&](Proposal& p) {
    p.status = ProposalStatus::kRejected;
    p.decided_at = FormatRfc3339Seconds(clock.Now());
    p.note = reason;
    return OkStatus();
  });
}

}  // namespace mend::improve
