// LeaseStateOf: the rule Claim applies, read without claiming, so `pending`, `show` and the API
// can say that a `running` run is interrupted.
#include "mend/store/lease_state.h"

#include <gtest/gtest.h>

#include <memory>

#include "mend/base/manual_clock.h"
#include "mend/store/checkpoint_store.h"
#include "tests/support/fake_checkpoint_store.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using std::chrono::seconds;

const LeaseHolder kLocal{"mend-1@host-a", "host-a", "boot-1", 1};

bool AliveExcept4242(int64_t pid) { return pid != 4242; }

RunRecord Held(const LeaseHolder& holder, Time expires_at) {
  RunRecord run;
  run.id = "r1";
  run.lease_holder = holder;
  run.lease_expires_at = expires_at;
  return run;
}

TEST(LeaseStateTest, ALeaseIsLiveUntilItExpires) {
  ManualClock clock;
  const LeaseHolder elsewhere{"replica-b", "host-b", "boot-9", 4242};
  const RunRecord run = Held(elsewhere, clock.Now() + seconds(30));
  EXPECT_EQ(LeaseStateOf(run, clock.Now(), kLocal, AliveExcept4242), LeaseState::kLive);
  clock.Advance(seconds(29));
  EXPECT_EQ(LeaseStateOf(run, clock.Now(), kLocal, AliveExcept4242), LeaseState::kLive);
  clock.Advance(seconds(1));
  EXPECT_EQ(LeaseStateOf(run, clock.Now(), kLocal, AliveExcept4242), LeaseState::kExpired);
}

TEST(LeaseStateTest, AHolderOnThisHostWhoseProcessIsGoneIsGoneAtOnce) {
  ManualClock clock;
  const LeaseHolder dead{"mend-4242@host-a", "host-a", "boot-1", 4242};
  const LeaseHolder alive{"mend-7@host-a", "host-a", "boot-1", 7};
  EXPECT_EQ(
      LeaseStateOf(Held(dead, clock.Now() + seconds(30)), clock.Now(), kLocal, AliveExcept4242),
      LeaseState::kHolderGone);
  // Gone wins over expired: it says why.
  EXPECT_EQ(
      LeaseStateOf(Held(dead, clock.Now() - seconds(1)), clock.Now(), kLocal, AliveExcept4242),
      LeaseState::kHolderGone);
  EXPECT_EQ(
      LeaseStateOf(Held(alive, clock.Now() + seconds(30)), clock.Now(), kLocal, AliveExcept4242),
      LeaseState::kLive);
  // Another boot of this host, or no boot id of our own: only the expiry can tell.
  const LeaseHolder before_reboot{"mend-4242@host-a", "host-a", "boot-0", 4242};
  EXPECT_EQ(LeaseStateOf(Held(before_reboot, clock.Now() + seconds(30)), clock.Now(), kLocal,
                         AliveExcept4242),
            LeaseState::kLive);
  LeaseHolder no_boot_id = kLocal;
  no_boot_id.boot_id.clear();
  EXPECT_EQ(
      LeaseStateOf(Held(dead, clock.Now() + seconds(30)), clock.Now(), no_boot_id, AliveExcept4242),
      LeaseState::kLive);
}

TEST(LeaseStateTest, ARunWithoutALeaseHasNone) {
  ManualClock clock;
  RunRecord run;
  run.id = "r1";
  EXPECT_EQ(LeaseStateOf(run, clock.Now(), kLocal, AliveExcept4242), LeaseState::kNone);
  EXPECT_EQ(LeaseStateName(LeaseState::kHolderGone), "holder_gone");
  EXPECT_EQ(LeaseStateName(LeaseState::kExpired), "expired");
}

// What LeaseStateOf says is what a claim finds: a run it calls live cannot be claimed, any other
// can.
TEST(LeaseStateTest, AgreesWithClaim) {
  ManualClock clock;
  testing::FakeCheckpointStore store(clock);
  RunRecord record;
  record.id = "r1";
  record.agent = "a";
  MEND_ASSERT_OK(store.CreateRun(record));
  const LeaseHolder elsewhere{"replica-b", "host-b", "boot-9", 4242};
  MEND_ASSERT_OK(store.Claim("r1", elsewhere, seconds(30)));
  Result<RunRecord> run = store.GetRun("r1");
  MEND_ASSERT_OK(run);
  EXPECT_EQ(LeaseStateOf(*run, clock.Now(), kLocal, AliveExcept4242), LeaseState::kLive);
  EXPECT_THAT(store.Claim("r1", kLocal, seconds(30)), testing::StatusIs(StatusCode::kUnavailable));
  clock.Advance(seconds(30));
  EXPECT_EQ(LeaseStateOf(*run, clock.Now(), kLocal, AliveExcept4242), LeaseState::kExpired);
  MEND_EXPECT_OK(store.Claim("r1", kLocal, seconds(30)));
}

}  // namespace
}  // namespace mend::store
