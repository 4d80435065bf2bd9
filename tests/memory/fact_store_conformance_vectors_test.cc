// The conformance suite: vectors stored in batches, the listing of missing parts, coverage per
// model and the counts of `mend memory stats`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/memory/fact_store_conformance.h"
#include "tests/support/status_matchers.h"

namespace mend::memory::testing {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::SizeIs;

// (id, part) of each item, for comparing listings.
std::vector<std::pair<std::string, int>> Parts(const std::vector<EmbeddingWork>& work) {
  std::vector<std::pair<std::string, int>> out;
  for (const EmbeddingWork& w : work) out.emplace_back(w.id, w.part);
  return out;
}

TEST_P(FactStoreConformanceTest, PutEmbeddingsStoresABatchAndSkipsFactsThatAreGone) {
  AddResult a = MustAdd({"alpha fact about deploys"});
  AddResult b = MustAdd({"beta fact about backups"});
  auto v0 = store_->VectorGeneration();
  ASSERT_THAT(v0.status(), IsOk());
  EXPECT_THAT(
      store_->PutEmbeddings(
          {{a.id, 0, {1.0f, 0.0f}, ""}, {"gone", 0, {0.0f, 1.0f}, ""}, {b.id, 0, {0.5f, 0.5f}, ""}},
          "m1"),
      IsOkAndHolds(2));
  EXPECT_THAT(store_->VectorGeneration(), IsOkAndHolds(::testing::Gt(*v0)));
  EXPECT_THAT(store_->Embeddings("m1"), IsOkAndHolds(SizeIs(2)));
  EXPECT_THAT(store_->MissingEmbeddings("m1", 10, 0), IsOkAndHolds(IsEmpty()));
  // An empty vector refuses the whole batch.
  EXPECT_THAT(store_->PutEmbeddings({{a.id, 0, {1.0f}, ""}, {b.id, 0, {}, ""}}, "m2"),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->Embeddings("m2"), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(store_->PutEmbeddings({}, "m2"), IsOkAndHolds(0));
}

TEST_P(FactStoreConformanceTest, MissingEmbeddingsGoesOnFromAPositionAndMarksTheLastPartOfAFact) {
  NewFact with_episodes{"Quote variables in shell scripts", "lesson", {"bash"}};
  with_episodes.episode = Episode{"rename photos", "not a directory", clock_.Now()};
  AddResult a = MustAdd(with_episodes);
  with_episodes.episode = Episode{"copy logs", "word splitting", clock_.Now()};
  ASSERT_EQ(MustAdd(with_episodes).id, a.id);  // reinforced: a second episode
  AddResult b = MustAdd({"beta fact"});
  AddResult c = MustAdd({"gamma fact"});

  auto first = store_->MissingEmbeddings("m1", 2, 0);
  ASSERT_THAT(first.status(), IsOk());
  EXPECT_THAT(Parts(*first), ElementsAre(Pair(a.id, 0), Pair(a.id, 1)));
  EXPECT_FALSE((*first)[1].completes_fact);  // part 2 did not fit
  const int64_t from = first->back().position;
  EXPECT_GT(from, 0);
  MEND_ASSERT_OK(store_->PutEmbeddings({{a.id, 0, {1.0f}, ""}, {a.id, 1, {1.0f}, ""}}, "m1"));

  auto next = store_->MissingEmbeddings("m1", 2, from);
  ASSERT_THAT(next.status(), IsOk());
  EXPECT_THAT(Parts(*next), ElementsAre(Pair(a.id, 2), Pair(b.id, 0)));
  EXPECT_TRUE((*next)[0].completes_fact);
  EXPECT_TRUE((*next)[1].completes_fact);
  EXPECT_EQ((*next)[0].position, from);
  EXPECT_GT((*next)[1].position, from);

  // Starting past a fact leaves it out, even with parts missing.
  auto rest = store_->MissingEmbeddings("m1", 10, (*next)[1].position + 1);
  ASSERT_THAT(rest.status(), IsOk());
  EXPECT_THAT(Parts(*rest), ElementsAre(Pair(c.id, 0)));
  EXPECT_THAT(store_->MissingEmbeddings("m1", 0, 0), IsOkAndHolds(IsEmpty()));
}

TEST_P(FactStoreConformanceTest, MissingEmbeddingsOfListsOnlyTheActiveFactsAskedFor) {
  AddResult a = MustAdd({"alpha fact about deploys"});
  AddResult b = MustAdd({"beta fact about backups"});
  AddResult c = MustAdd({"gamma fact about caches"});
  AddResult d = MustAdd({"delta fact about disks"});
  MEND_ASSERT_OK(store_->Supersede(c.id, d.id));
  MEND_ASSERT_OK(store_->PutEmbedding({b.id, 0, {1.0f}}, "m1"));
  auto work = store_->MissingEmbeddingsOf("m1", {d.id, "absent", a.id, b.id, c.id, d.id});
  ASSERT_THAT(work.status(), IsOk());
  EXPECT_THAT(Parts(*work), ElementsAre(Pair(d.id, 0), Pair(a.id, 0)));
  EXPECT_TRUE((*work)[0].completes_fact);
  EXPECT_EQ((*work)[1].text, "alpha fact about deploys");
  EXPECT_THAT(store_->MissingEmbeddingsOf("m2", {b.id}), IsOkAndHolds(SizeIs(1)));
  EXPECT_THAT(store_->MissingEmbeddingsOf("m1", {}), IsOkAndHolds(IsEmpty()));
}

TEST_P(FactStoreConformanceTest, CoverageCountsFactsWithEveryPartPerModel) {
  NewFact lesson{"Quote variables in shell scripts", "lesson", {"bash"}};
  lesson.episode = Episode{"rename photos", "not a directory", clock_.Now()};
  AddResult a = MustAdd(lesson);
  AddResult b = MustAdd({"beta fact"});
  AddResult c = MustAdd({"gamma fact"});
  AddResult old = MustAdd({"an old fact about tabs"});
  MEND_ASSERT_OK(store_->PutEmbeddings({{a.id, 0, {1.0f, 0.0f, 0.0f}, ""},  // part 1 missing
                                        {b.id, 0, {0.0f, 1.0f, 0.0f}, ""},
                                        {old.id, 0, {0.0f, 0.0f, 1.0f}, ""}},
                                       "m-b"));
  MEND_ASSERT_OK(store_->PutEmbedding({c.id, 0, {1.0f, 0.0f}}, "m-a"));
  MEND_ASSERT_OK(store_->Supersede(old.id, c.id));

  auto coverage = store_->Coverage("m-c");
  ASSERT_THAT(coverage.status(), IsOk());
  ASSERT_THAT(*coverage, SizeIs(3));
  EXPECT_EQ((*coverage)[0].model_id, "m-a");
  EXPECT_EQ((*coverage)[0].covered, 1);
  EXPECT_EQ((*coverage)[0].uncovered, 2);
  EXPECT_EQ((*coverage)[0].dimension, 2);
  EXPECT_EQ((*coverage)[1].model_id, "m-b");
  EXPECT_EQ((*coverage)[1].covered, 1);  // b; a lacks its episode, old is superseded
  EXPECT_EQ((*coverage)[1].uncovered, 2);
  EXPECT_EQ((*coverage)[1].dimension, 3);
  EXPECT_EQ((*coverage)[2].model_id, "m-c");  // asked for, no vectors yet
  EXPECT_EQ((*coverage)[2].covered, 0);
  EXPECT_EQ((*coverage)[2].uncovered, 3);
  EXPECT_EQ((*coverage)[2].dimension, 0);

  MEND_ASSERT_OK(store_->PutEmbedding({a.id, 1, {1.0f, 1.0f, 0.0f}}, "m-b"));
  auto after = store_->Coverage("");
  ASSERT_THAT(after.status(), IsOk());
  ASSERT_THAT(*after, SizeIs(2));
  EXPECT_EQ((*after)[1].covered, 2);
  EXPECT_EQ((*after)[1].uncovered, 1);
}

TEST_P(FactStoreConformanceTest, CoverageOfAnEmptyStore) {
  auto coverage = store_->Coverage("m1");
  ASSERT_THAT(coverage.status(), IsOk());
  ASSERT_THAT(*coverage, SizeIs(1));
  EXPECT_EQ((*coverage)[0].covered, 0);
  EXPECT_EQ((*coverage)[0].uncovered, 0);
  EXPECT_THAT(store_->Coverage(""), IsOkAndHolds(IsEmpty()));
}

TEST_P(FactStoreConformanceTest, CountFactsByCategory) {
  AddResult a = MustAdd({"alpha fact", "lesson", {}});
  MustAdd({"beta fact", "lesson", {}});
  MustAdd({"gamma fact", "preference", {}});
  AddResult d = MustAdd({"delta fact", "general", {}});
  MustAdd({"epsilon fact", "zeta", {}});
  MEND_ASSERT_OK(store_->Supersede(d.id, a.id));
  auto counts = store_->CountFacts();
  ASSERT_THAT(counts.status(), IsOk());
  EXPECT_EQ(counts->active, 4);
  EXPECT_EQ(counts->superseded, 1);
  EXPECT_THAT(counts->categories,
              ElementsAre(Pair("lesson", 2), Pair("preference", 1), Pair("zeta", 1)));
}

}  // namespace
}  // namespace mend::memory::testing
