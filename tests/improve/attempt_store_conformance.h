#pragma once

// The AttemptStore conformance suite: what every attempt store does (improve/attempt_store.h).
// Each store's test file instantiates AttemptStoreConformanceTest with a harness that opens it;
// mend_improve_test runs it on the local store, mend_improve_postgres_test on PostgreSQL.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "mend/base/file_system.h"
#include "mend/base/manual_clock.h"
#include "mend/base/memory_file_system.h"
#include "mend/base/result.h"
#include "mend/improve/attempt_store.h"
#include "mend/improve/audit.h"
#include "mend/improve/gates.h"
#include "tests/support/status_matchers.h"

namespace mend::improve::testing {

// Opens a store of one kind. Stores opened by one harness share what a deployment shares (the
// database); each is given its own file system and home, as a host is.
class AttemptStoreHarness {
 public:
  virtual ~AttemptStoreHarness() = default;
  virtual Result<std::unique_ptr<AttemptStore>> Open(FileSystem& fs, const std::string& home,
                                                     const std::string& host) = 0;
};

struct AttemptStoreParam {
  std::string name;
  // Null when the store cannot be tested here (the test is skipped).
  std::function<std::unique_ptr<AttemptStoreHarness>()> make;
};

inline constexpr char kId[] = "imp-20250102T030405-0a1b2c3d";
inline constexpr char kLaterId[] = "imp-20250103T000000-00000000";
inline constexpr char kHome[] = "/home";

// One host: its file system, an agent folder and an attempt store.
struct Host {
  MemoryFileSystem fs;
  std::unique_ptr<AttemptStore> store;
};

inline void PrintTo(const AttemptStoreParam& param, std::ostream* os) { *os << param.name; }

class AttemptStoreConformanceTest : public ::testing::TestWithParam<AttemptStoreParam> {
 protected:
  void SetUp() override {
    harness_ = GetParam().make();
    if (harness_ == nullptr) GTEST_SKIP() << "this store cannot be tested here";
    base_.instructions = "old\n";
    base_.skills["skills/a.md"] = "skill a\n";
    after_ = base_;
    after_.instructions = "new\n";
  }

  // A host with the agent folder as the attempt started from.
  std::unique_ptr<Host> NewHost(const std::string& name) {
    auto host = std::make_unique<Host>();
    EXPECT_TRUE(host->fs.CreateDirs("/agent/skills").ok());
    EXPECT_TRUE(WriteFileAtomically(host->fs, "/agent/instructions.md", "old\n").ok());
    EXPECT_TRUE(WriteFileAtomically(host->fs, "/agent/skills/a.md", "skill a\n").ok());
    Result<std::unique_ptr<AttemptStore>> store = harness_->Open(host->fs, kHome, name);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (store.ok()) host->store = *std::move(store);
    return host;
  }

  // An audit folder of `id` on `host` that came to `outcome`.
  void WriteAttempt(Host& host, const std::string& id, GateOutcome outcome) {
    Result<AuditFolder> folder = AuditFolder::Create(host.fs, kHome, id);
    ASSERT_TRUE(folder.ok()) << folder.status().ToString();
    MEND_ASSERT_OK(folder->WriteInputs(MakeAuditInputs("/agent", "old\n", {}, {}, {})));
    GateDecision decision;
    decision.outcome = outcome;
    decision.reason = "because";
    MEND_ASSERT_OK(folder->WriteDecision(1, decision));
  }

  // An attempt of `host` with a queued proposal, recorded as improve records it.
  Proposal Propose(Host& host, const std::string& id) {
    WriteAttempt(host, id, GateOutcome::kProposal);
    EXPECT_TRUE(host.store->RecordAttempt(id).ok());
    Proposal p = MakeProposal(id, "/agent", base_, after_, clock_.Now());
    Status put = host.store->PutProposal(p);
    EXPECT_TRUE(put.ok()) << put.ToString();
    return p;
  }

  std::unique_ptr<AttemptStoreHarness> harness_;
  ManualClock clock_;
  AgentText base_;
  AgentText after_;
};

inline std::string AttemptStoreParamName(const ::testing::TestParamInfo<AttemptStoreParam>& info) {
  return info.param.name;
}

}  // namespace mend::improve::testing
