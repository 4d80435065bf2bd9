// The FactStore conformance suite: which facts a run was given, with their scores, and the runs a
// fact was given to, with each run's outcome (docs/memory.md, "Tables").

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "tests/memory/fact_store_conformance.h"
#include "tests/support/status_matchers.h"

namespace mend::memory::testing {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::IsOkAndHolds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST_P(FactStoreConformanceTest, ARunsInjectionsKeepTheirScoresOrderAndOutcome) {
  AddResult a = MustAdd({"alpha fact"});
  AddResult b = MustAdd({"beta fact"});
  const Time at = clock_.Now();
  MEND_ASSERT_OK(store_->RecordInjection("run-1", {{a.id, 0.75}, {b.id}}));
  // A fact recorded again for the same run keeps its first score.
  MEND_ASSERT_OK(store_->RecordInjection("run-1", {{a.id, 0.1}}));
  EXPECT_THAT(store_->InjectionsOfRun("run-1"),
              IsOkAndHolds(ElementsAre(Injection{"run-1", a.id, at, 0.75, std::nullopt},
                                       Injection{"run-1", b.id, at, std::nullopt, std::nullopt})));
  MEND_ASSERT_OK(store_->RecordOutcome("run-1", false));
  EXPECT_THAT(store_->InjectionsOfRun("run-1"),
              IsOkAndHolds(ElementsAre(Injection{"run-1", a.id, at, 0.75, false},
                                       Injection{"run-1", b.id, at, std::nullopt, false})));
  EXPECT_THAT(store_->InjectionsOfRun("run-9"), IsOkAndHolds(IsEmpty()));
}

TEST_P(FactStoreConformanceTest, AFactsRunsAreNewestFirstWithinTheLimit) {
  AddResult a = MustAdd({"alpha fact"});
  AddResult b = MustAdd({"beta fact"});
  const Time first = clock_.Now();
  MEND_ASSERT_OK(store_->RecordInjection("run-1", {{a.id, 1.5}}));
  MEND_ASSERT_OK(store_->RecordInjection("run-2", {{a.id, 0.5}, {b.id, 2.0}}));
  clock_.Advance(std::chrono::seconds(5));
  const Time later = clock_.Now();
  MEND_ASSERT_OK(store_->RecordInjection("run-3", {a.id}));
  MEND_ASSERT_OK(store_->RecordOutcome("run-1", true));
  MEND_ASSERT_OK(store_->RecordOutcome("run-2", false));

  // Newest first; two recorded at the same time, the later recorded first.
  EXPECT_THAT(store_->InjectionsOfFact(a.id, 10),
              IsOkAndHolds(ElementsAre(Injection{"run-3", a.id, later, std::nullopt, std::nullopt},
                                       Injection{"run-2", a.id, first, 0.5, false},
                                       Injection{"run-1", a.id, first, 1.5, true})));
  auto bounded = store_->InjectionsOfFact(a.id, 2);
  ASSERT_THAT(bounded.status(), IsOk());
  ASSERT_EQ(bounded->size(), 2u);
  EXPECT_EQ((*bounded)[0].run_id, "run-3");
  EXPECT_EQ((*bounded)[1].run_id, "run-2");
  EXPECT_THAT(store_->InjectionsOfFact(a.id, 0), IsOkAndHolds(::testing::SizeIs(3)));
  EXPECT_THAT(store_->InjectionsOfFact(b.id, 10),
              IsOkAndHolds(ElementsAre(Injection{"run-2", b.id, first, 2.0, false})));
  EXPECT_THAT(store_->InjectionsOfFact("no-such-fact", 10), IsOkAndHolds(IsEmpty()));
}

TEST_P(FactStoreConformanceTest, AnEpisodeKeepsTheRunItCameFrom) {
  NewFact lesson{"Quote variables in shell scripts", "lesson"};
  lesson.episode = Episode{"rename photos", "not a directory", clock_.Now(), "run-7"};
  AddResult a = MustAdd(lesson);
  NewFact unknown{"Retry when the database is locked", "lesson"};
  unknown.episode = Episode{"copy logs", "locked", clock_.Now()};
  AddResult b = MustAdd(unknown);
  auto fa = store_->Get(a.id);
  auto fb = store_->Get(b.id);
  ASSERT_THAT(fa.status(), IsOk());
  ASSERT_THAT(fb.status(), IsOk());
  ASSERT_EQ(fa->provenance.size(), 1u);
  EXPECT_EQ(fa->provenance[0].run_id, "run-7");
  ASSERT_EQ(fb->provenance.size(), 1u);
  EXPECT_EQ(fb->provenance[0].run_id, "");
}

}  // namespace
}  // namespace mend::memory::testing
