// The CheckpointStore conformance suite, part two: leases, fencing, forks, listing, concurrency.

#include <chrono>
#include <thread>

#include "tests/store/checkpoint_store_conformance.h"
#include "tests/support/status_matchers.h"

namespace mend::store::testing {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const LeaseHolder kOther{"other", "host-a", "boot-1", 4242};

TEST_P(CheckpointStoreConformanceTest, ClaimBumpsTheEpochAndRecordsTheHolder) {
  MakeRun("r1");
  Lease first = MustClaim("r1");
  EXPECT_EQ(first.epoch, 1);
  EXPECT_EQ(first.run_id, "r1");
  EXPECT_EQ(first.expires_at, clock_.Now() + seconds(30));
  Result<RunRecord> run = store_->GetRun("r1");
  MEND_ASSERT_OK(run);
  EXPECT_EQ(run->epoch, 1);
  ASSERT_TRUE(run->lease_holder.has_value());
  EXPECT_EQ(run->lease_holder->id, "me");
  EXPECT_EQ(run->lease_holder->pid, 100);
  EXPECT_EQ(run->lease_expires_at, first.expires_at);
  MEND_ASSERT_OK(store_->Release(first));
  EXPECT_FALSE(store_->GetRun("r1")->lease_holder.has_value());
  EXPECT_EQ(MustClaim("r1").epoch, 2);
}

TEST_P(CheckpointStoreConformanceTest, SecondClaimByALiveHolderIsUnavailable) {
  MakeRun("r1");
  MustClaim("r1", kOther);
  EXPECT_THAT(store_->Claim("r1", local_, seconds(30)),
              StatusIs(StatusCode::kUnavailable, HasSubstr("other")));
  EXPECT_THAT(store_->Claim("r1", kOther, seconds(30)), StatusIs(StatusCode::kUnavailable));
  EXPECT_EQ(store_->GetRun("r1")->epoch, 1);
}

TEST_P(CheckpointStoreConformanceTest, ClaimAfterTtlExpiryFencesTheOldLease) {
  MakeRun("r1");
  Lease old_lease = MustClaim("r1", kOther);
  MEND_ASSERT_OK(store_->Save(old_lease, Cp(1, {"m1"}, "s1"), {}));
  clock_.Advance(seconds(31));
  Lease fresh = MustClaim("r1");
  EXPECT_EQ(fresh.epoch, 2);
  EXPECT_THAT(store_->Save(old_lease, Cp(2, {"stale"}, "x"), {}), StatusIs(StatusCode::kAborted));
  EXPECT_THAT(store_->Update(old_lease, RunUpdate{}), StatusIs(StatusCode::kAborted));
  EXPECT_THAT(store_->Renew(old_lease, seconds(30)), StatusIs(StatusCode::kAborted));
  EXPECT_THAT(store_->Release(old_lease), StatusIs(StatusCode::kAborted));
  MEND_ASSERT_OK(store_->Save(fresh, Cp(2, {"m2"}, "s2"), {}));
  EXPECT_THAT(store_->Load("r1")->messages, ElementsAre("m1", "m2"));
}

TEST_P(CheckpointStoreConformanceTest, AnExpiredLeaseCannotWriteEvenUnclaimed) {
  MakeRun("r1");
  Lease lease = MustClaim("r1");
  clock_.Advance(seconds(30));
  EXPECT_THAT(store_->Save(lease, Cp(1, {"m"}, "s"), {}), StatusIs(StatusCode::kAborted));
  EXPECT_THAT(store_->Renew(lease, seconds(30)), StatusIs(StatusCode::kAborted));
  EXPECT_EQ(store_->GetRun("r1")->step, 0);
}

TEST_P(CheckpointStoreConformanceTest, RenewExtendsTheLease) {
  MakeRun("r1");
  Lease lease = MustClaim("r1");
  clock_.Advance(seconds(20));
  Result<Lease> renewed = store_->Renew(lease, seconds(30));
  MEND_ASSERT_OK(renewed);
  EXPECT_EQ(renewed->epoch, lease.epoch);
  EXPECT_EQ(renewed->expires_at, clock_.Now() + seconds(30));
  clock_.Advance(seconds(20));  // 40 s after the claim: alive only thanks to the renewal
  MEND_EXPECT_OK(store_->Save(*renewed, Cp(1, {"m"}, "s"), {}));
  EXPECT_THAT(store_->Claim("r1", kOther, seconds(30)), StatusIs(StatusCode::kUnavailable));
}

TEST_P(CheckpointStoreConformanceTest, ReleaseThenClaimFencesTheReleasedLease) {
  MakeRun("r1");
  Lease lease = MustClaim("r1");
  MEND_ASSERT_OK(store_->Release(lease));
  EXPECT_THAT(store_->Save(lease, Cp(1, {"m"}, "s"), {}), StatusIs(StatusCode::kAborted));
  Lease other = MustClaim("r1", kOther);
  EXPECT_EQ(other.epoch, 2);
  EXPECT_THAT(store_->Save(lease, Cp(1, {"m"}, "s"), {}), StatusIs(StatusCode::kAborted));
  MEND_EXPECT_OK(store_->Save(other, Cp(1, {"m"}, "s"), {}));
}

TEST_P(CheckpointStoreConformanceTest, LeaseOfAGoneProcessOnThisHostIsFreeAtOnce) {
  MakeRun("r1");
  MustClaim("r1", kOther);
  EXPECT_THAT(store_->Claim("r1", local_, seconds(30)), StatusIs(StatusCode::kUnavailable));
  MarkDead(kOther.pid);
  Result<Lease> lease = store_->Claim("r1", local_, seconds(30));
  MEND_ASSERT_OK(lease);
  EXPECT_EQ(lease->epoch, 2);
}

TEST_P(CheckpointStoreConformanceTest, LeaseOfAnotherHostOrBootWaitsForItsTtl) {
  MakeRun("r1");
  MakeRun("r2");
  LeaseHolder remote{"remote", "host-b", "boot-1", 4242};
  LeaseHolder before_reboot{"old", "host-a", "boot-0", 4242};
  MustClaim("r1", remote);
  MustClaim("r2", before_reboot);
  MarkDead(4242);  // a pid on this host says nothing about other hosts or boots
  EXPECT_THAT(store_->Claim("r1", local_, seconds(30)), StatusIs(StatusCode::kUnavailable));
  EXPECT_THAT(store_->Claim("r2", local_, seconds(30)), StatusIs(StatusCode::kUnavailable));
  clock_.Advance(seconds(30));
  MEND_EXPECT_OK(store_->Claim("r1", local_, seconds(30)));
  MEND_EXPECT_OK(store_->Claim("r2", local_, seconds(30)));
}

TEST_P(CheckpointStoreConformanceTest, DeleteIsRefusedWhileLeased) {
  MakeRun("r1");
  Lease lease = MustClaim("r1", kOther);
  EXPECT_THAT(store_->DeleteRun("r1"), StatusIs(StatusCode::kUnavailable));
  clock_.Advance(seconds(31));
  MEND_EXPECT_OK(store_->DeleteRun("r1"));
  EXPECT_THAT(store_->Save(lease, Cp(1, {}, ""), {}), StatusIs(StatusCode::kNotFound));
}

TEST_P(CheckpointStoreConformanceTest, ForkCopiesTheConversationUpToTheStep) {
  MakeRun("r1", "the task");
  Lease lease = MustClaim("r1");
  MEND_ASSERT_OK(store_->Save(lease, Cp(1, {"u1", "a1"}, "s1"), {}));
  MEND_ASSERT_OK(store_->Save(lease, Cp(2, {"t2"}, "s2"), {}));
  MEND_ASSERT_OK(store_->Save(lease, Cp(3, {"a3"}, "s3"), {}));
  clock_.Advance(seconds(1));
  Result<RunRecord> fork = store_->Fork("r1", 2, "r1.heal");
  MEND_ASSERT_OK(fork);
  EXPECT_EQ(fork->id, "r1.heal");
  EXPECT_EQ(fork->parent_id, "r1");
  EXPECT_EQ(fork->parent_step, 2);
  EXPECT_EQ(fork->step, 2);
  EXPECT_EQ(fork->status, RunStatus::kRunning);
  EXPECT_EQ(fork->task, "the task");
  EXPECT_EQ(fork->created_at, clock_.Now());
  Result<RunRecord> stored = store_->GetRun("r1.heal");
  MEND_ASSERT_OK(stored);
  EXPECT_FALSE(stored->lease_holder.has_value());
  EXPECT_EQ(stored->parent_id, "r1");
  Result<RunSnapshot> snap = store_->Load("r1.heal");
  MEND_ASSERT_OK(snap);
  EXPECT_EQ(snap->step, 2);
  EXPECT_EQ(snap->state, "s2");
  EXPECT_THAT(snap->messages, ElementsAre("u1", "a1", "t2"));
  EXPECT_THAT(*store_->History("r1.heal"), ::testing::SizeIs(1));
  Lease fork_lease = MustClaim("r1.heal");
  MEND_ASSERT_OK(store_->Save(fork_lease, Cp(3, {"b3"}, "f3"), {}));
  EXPECT_THAT(store_->Load("r1.heal")->messages, ElementsAre("u1", "a1", "t2", "b3"));
  EXPECT_THAT(store_->Load("r1")->messages, ElementsAre("u1", "a1", "t2", "a3"));
  EXPECT_THAT(store_->Fork("r1", 1, "r1.heal"), StatusIs(StatusCode::kAlreadyExists));
  EXPECT_THAT(store_->Fork("r1", 9, "r1.b"), StatusIs(StatusCode::kNotFound));
}

TEST_P(CheckpointStoreConformanceTest, UpdatesChangeOnlyTheGivenFields) {
  MakeRun("r1");
  Lease lease = MustClaim("r1");
  MEND_ASSERT_OK(store_->Save(lease, Cp(1, {"m"}, "s"), {}));
  RunUpdate wait;
  wait.status = RunStatus::kWaiting;
  wait.waiting = "approval";
  wait.metadata = R"({"k":1})";
  MEND_ASSERT_OK(store_->Update(lease, wait));
  RunUpdate bookkeeping;
  bookkeeping.attempts = 3;
  bookkeeping.next_attempt_at = clock_.Now() + seconds(60);
  MEND_ASSERT_OK(store_->UpdateUnleased("r1", bookkeeping));  // works while another holds it
  Result<RunRecord> run = store_->GetRun("r1");
  MEND_ASSERT_OK(run);
  EXPECT_EQ(run->status, RunStatus::kWaiting);
  EXPECT_EQ(run->waiting, "approval");
  EXPECT_EQ(run->metadata, R"({"k":1})");
  EXPECT_EQ(run->attempts, 3);
  EXPECT_EQ(run->next_attempt_at, clock_.Now() + seconds(60));
  EXPECT_EQ(run->step, 1);
  EXPECT_EQ(run->epoch, lease.epoch);
  EXPECT_TRUE(run->lease_holder.has_value());
  RunUpdate clear;
  clear.next_attempt_at = std::optional<Time>();
  clear.waiting = "";
  MEND_ASSERT_OK(store_->UpdateUnleased("r1", clear));
  EXPECT_FALSE(store_->GetRun("r1")->next_attempt_at.has_value());
  EXPECT_EQ(store_->GetRun("r1")->attempts, 3);
  EXPECT_THAT(store_->Load("r1")->messages, ElementsAre("m"));
}

std::vector<std::string> Ids(const std::vector<RunRecord>& runs) {
  std::vector<std::string> ids;
  for (const RunRecord& r : runs) ids.push_back(r.id);
  return ids;
}

TEST_P(CheckpointStoreConformanceTest, ListRunsOrdersByCreationAndFiltersFinished) {
  MakeRun("c");
  clock_.Advance(seconds(1));
  MakeRun("b");
  MakeRun("a");  // same instant as b: ordered by id
  clock_.Advance(seconds(1));
  MakeRun("d");
  Lease lease = MustClaim("a");
  RunUpdate done;
  done.status = RunStatus::kCompleted;
  MEND_ASSERT_OK(store_->Update(lease, done));
  ListOptions all;
  all.unfinished_only = false;
  EXPECT_THAT(Ids(*store_->ListRuns(all)), ElementsAre("c", "a", "b", "d"));
  EXPECT_THAT(Ids(*store_->ListRuns(ListOptions{})), ElementsAre("c", "b", "d"));
  ListOptions two;
  two.limit = 2;
  EXPECT_THAT(Ids(*store_->ListRuns(two)), ElementsAre("c", "b"));
  RunUpdate failed;
  failed.status = RunStatus::kFailed;
  failed.attempts = 2;
  failed.last_error = RunError{"UNAVAILABLE", "down", "transient", true};
  MEND_ASSERT_OK(store_->UpdateUnleased("d", failed));
  Result<std::vector<RunRecord>> pending = store_->ListRuns(ListOptions{});
  MEND_ASSERT_OK(pending);
  ASSERT_EQ(pending->size(), 3u);
  EXPECT_EQ((*pending)[2].status, RunStatus::kFailed);
  EXPECT_EQ((*pending)[2].attempts, 2);
  EXPECT_EQ((*pending)[2].last_error->code, "UNAVAILABLE");
}

TEST_P(CheckpointStoreConformanceTest, ConcurrentSavesOnDifferentRuns) {
  constexpr int kThreads = 8;
  constexpr int kSteps = 50;
  std::vector<Lease> leases;
  for (int t = 0; t < kThreads; ++t) {
    MakeRun("r" + std::to_string(t));
    leases.push_back(MustClaim("r" + std::to_string(t)));
  }
  std::vector<std::thread> threads;
  std::vector<Status> failures(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int step = 1; step <= kSteps && failures[t].ok(); ++step) {
        failures[t] = store_->Save(leases[t], Cp(step, {std::to_string(step)}, "s"), {});
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    MEND_EXPECT_OK(failures[t]);
    Result<RunSnapshot> snap = store_->Load("r" + std::to_string(t));
    MEND_ASSERT_OK(snap);
    EXPECT_EQ(snap->step, kSteps);
    ASSERT_EQ(snap->messages.size(), static_cast<size_t>(kSteps));
    EXPECT_EQ(snap->messages.back(), std::to_string(kSteps));
  }
}

}  // namespace
}  // namespace mend::store::testing
