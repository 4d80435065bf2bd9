// The FactStore conformance suite: what the store keeps beside the facts for retrieval, term
// statistics and tag keys, which must always equal what counting the active facts from scratch
// gives.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/memory/fact_store_conformance.h"
#include "tests/support/status_matchers.h"

namespace mend::memory::testing {
namespace {

using ::mend::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

TEST_P(FactStoreConformanceTest, EmptyMemoryHasNoDocumentsAndNoStems) {
  auto counts = store_->CountTerms({"quot", "bash"});
  ASSERT_THAT(counts.status(), IsOk());
  EXPECT_EQ(counts->documents, 0u);
  EXPECT_EQ(counts->words, 0u);
  EXPECT_EQ(counts->tokens, 0u);
  EXPECT_THAT(counts->stems, IsEmpty());
}

TEST_P(FactStoreConformanceTest, TermStatisticsFollowEveryWrite) {
  NewFact quote{"Quote variables in shell scripts", "lesson", {"bash", "shell-scripts"}};
  quote.episode = Episode{"rename photos", "not a directory", clock_.Now()};
  AddResult a = MustAdd(quote);
  AddResult b = MustAdd({"Retry with backoff when the database is locked", "lesson", {"sqlite"}});
  MustAdd({"The event loop blocks when asyncio runs a sync call", "lesson", {"python"}});
  ExpectStatisticsOfTheActiveFacts();

  // The same content again, with a new tag and a new episode: the fact's text grows.
  NewFact again = quote;
  again.tags = {"quoting"};
  again.episode = Episode{"migrate the photos folder", "timeout", clock_.Now()};
  EXPECT_EQ(MustAdd(again).kind, AddResult::Kind::kReinforced);
  ExpectStatisticsOfTheActiveFacts();

  // A near duplicate merges into the same fact.
  NewFact near{"Retry with backoff when the database is locked!", "lesson", {"retry"}};
  EXPECT_EQ(MustAdd(near).kind, AddResult::Kind::kMerged);
  ExpectStatisticsOfTheActiveFacts();

  // Imported facts count, a superseded one does not.
  Fact imported;
  imported.id = "imported-1";
  imported.content = "Run migrations before the tests";
  imported.tags = {"migrations"};
  Fact hidden;
  hidden.id = "imported-2";
  hidden.content = "zebra crossing timeout";
  hidden.superseded_by = "imported-1";
  ASSERT_THAT(store_->Import({imported, hidden}).status(), IsOk());
  ExpectStatisticsOfTheActiveFacts();

  MEND_ASSERT_OK(store_->Supersede(b.id, "imported-1"));
  ExpectStatisticsOfTheActiveFacts();
  // Superseding it twice, or removing it after, takes nothing away a second time.
  MEND_ASSERT_OK(store_->Supersede(b.id, a.id));
  MEND_ASSERT_OK(store_->Remove(b.id));
  ExpectStatisticsOfTheActiveFacts();
  MEND_ASSERT_OK(store_->Remove(a.id));
  ExpectStatisticsOfTheActiveFacts();
  // An exact duplicate of a superseded fact reinforces it and stays out of the statistics.
  AddResult zebra = MustAdd({"zebra crossing at the timeout", "general"});
  MEND_ASSERT_OK(store_->Supersede(zebra.id, "imported-1"));
  ExpectStatisticsOfTheActiveFacts();
  NewFact hidden_again{"zebra crossing at the timeout", "general", {"zebra"}};
  hidden_again.episode = Episode{"cross the road", "", clock_.Now()};
  EXPECT_EQ(MustAdd(hidden_again).kind, AddResult::Kind::kReinforced);
  ExpectStatisticsOfTheActiveFacts();

  Reopen();
  ExpectStatisticsOfTheActiveFacts();
}

TEST_P(FactStoreConformanceTest, TagKeysFollowWritesAndWorkspaces) {
  AddResult a = MustAdd({"alpha", "general", {"event-loop", "Python"}, "ws-a"});
  AddResult b = MustAdd({"beta", "general", {"python"}, "ws-b"});
  AddResult g = MustAdd({"gamma", "general", {"python"}});
  EXPECT_THAT(Tagged("event"), ElementsAre(a.id));
  EXPECT_THAT(Tagged("loop"), ElementsAre(a.id));
  EXPECT_THAT(Tagged("event-loop"), ElementsAre(a.id));
  EXPECT_THAT(Tagged("python"), ElementsAre(a.id, b.id, g.id));
  EXPECT_THAT(Tagged("python", "ws-a"), ElementsAre(a.id, g.id));
  EXPECT_THAT(Tagged("absent"), IsEmpty());

  auto matches = store_->MatchTags({"python", "absent"}, "ws-b", 1000);
  ASSERT_THAT(matches.status(), IsOk());
  ASSERT_EQ(matches->size(), 2u);
  EXPECT_EQ((*matches)[0].key, "python");
  EXPECT_EQ((*matches)[0].facts, 3);  // counted in every workspace
  EXPECT_THAT((*matches)[0].ids, ElementsAre(b.id, g.id));
  EXPECT_EQ((*matches)[1].facts, 0);

  // A tag added by a reinforcing write is found; superseded and removed facts are not.
  MustAdd({"beta", "general", {"asyncio"}, "ws-b"});
  EXPECT_THAT(Tagged("asyncio"), ElementsAre(b.id));
  MEND_ASSERT_OK(store_->Supersede(a.id, b.id));
  EXPECT_THAT(Tagged("event"), IsEmpty());
  MEND_ASSERT_OK(store_->Remove(g.id));
  EXPECT_THAT(Tagged("python"), ElementsAre(b.id));
  // The counts follow too.
  auto counted = store_->MatchTags({"python", "event", "asyncio"}, "", 1000);
  ASSERT_THAT(counted.status(), IsOk());
  ASSERT_EQ(counted->size(), 3u);
  EXPECT_EQ((*counted)[0].facts, 1);
  EXPECT_EQ((*counted)[1].facts, 0);
  EXPECT_EQ((*counted)[2].facts, 1);
}

TEST_P(FactStoreConformanceTest, MatchTagsReadsTheRarestKeysWithinTheBudget) {
  std::vector<std::string> common;
  for (int i = 0; i < 5; ++i) {
    common.push_back(MustAdd({"common fact " + std::to_string(i), "general", {"common"}}).id);
  }
  AddResult rare = MustAdd({"rare fact", "general", {"rare", "common"}});
  common.push_back(rare.id);
  auto matches = store_->MatchTags({"common", "rare"}, "", 3);
  ASSERT_THAT(matches.status(), IsOk());
  ASSERT_EQ(matches->size(), 2u);
  EXPECT_EQ((*matches)[0].facts, 6);
  EXPECT_THAT((*matches)[0].ids, IsEmpty());  // over the budget
  EXPECT_EQ((*matches)[1].facts, 1);
  EXPECT_THAT((*matches)[1].ids, ElementsAre(rare.id));

  matches = store_->MatchTags({"common", "rare"}, "", 7);
  ASSERT_THAT(matches.status(), IsOk());
  EXPECT_THAT((*matches)[0].ids, UnorderedElementsAre(common[0], common[1], common[2], common[3],
                                                      common[4], common[5]));
}

}  // namespace
}  // namespace mend::memory::testing
