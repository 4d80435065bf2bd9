// What the fact store keeps beside the facts for retrieval: term statistics and tag keys, which
// must always equal what counting the active facts from scratch gives.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/memory/fact_store.h"
#include "mend/memory/lexical.h"
#include "tests/support/status_matchers.h"

namespace mend::memory {
namespace {

using ::mend::testing::IsOk;
using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// Words the facts below use, a stop word, and words no fact holds.
const std::vector<std::string> kWords = {
    "quote", "variables", "shell",  "scripts", "bash",   "rename",  "photos",     "directory",
    "retry", "backoff",   "python", "event",   "loop",   "asyncio", "migrations", "migrate",
    "the",   "absent",    "zebra",  "timeout", "sqlite", "locked",  "database",   "run"};

class FactStoreIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mend_fact_index_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/mend.db";
    Reopen();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Reopen() {
    store_.reset();
    auto store = FactStore::Open(path_, FactStoreOptions{&clock_});
    ASSERT_THAT(store.status(), IsOk());
    store_ = std::move(store).value();
  }
  AddResult MustAdd(NewFact fact) {
    Result<AddResult> r = store_->Add(fact);
    EXPECT_THAT(r.status(), IsOk());
    return r.ok() ? *r : AddResult{};
  }
  void Sql(const char* sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }

  // The statistics counted from scratch over the active facts, as TermStatistics::Build counts
  // them, against those the store kept: the same idfs for every word and the same match of texts
  // (which also compares the average lengths).
  void ExpectStatisticsOfTheActiveFacts() {
    auto facts = store_->List({});
    ASSERT_THAT(facts.status(), IsOk());
    std::vector<std::vector<std::string>> texts;
    for (const Fact& f : *facts) {
      std::vector<std::string>& t = texts.emplace_back();
      t.push_back(f.content);
      for (const std::string& tag : f.tags) t.push_back(tag);
      for (const Episode& e : f.provenance) {
        t.push_back(e.outcome.empty() ? e.task : e.task + "\n" + e.outcome);
      }
    }
    std::vector<std::vector<std::string_view>> docs;
    for (const auto& t : texts) docs.emplace_back(t.begin(), t.end());
    std::unique_ptr<TermStatistics> expected = TermStatistics::Build(docs);

    auto counts = store_->CountTerms(TermStatistics::QueryStems(kWords));
    ASSERT_THAT(counts.status(), IsOk());
    std::unique_ptr<TermStatistics> kept = TermStatistics::FromCounts(*counts);
    EXPECT_EQ(kept->documents(), expected->documents());
    const auto want = expected->Query(kWords);
    const auto got = kept->Query(kWords);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].term, want[i].term);
      EXPECT_THAT(got[i].idf, DoubleEq(want[i].idf)) << want[i].term;
      EXPECT_THAT(got[i].fts_idf, DoubleEq(want[i].fts_idf)) << want[i].term;
    }
    for (const char* text : {"Quote variables in shell scripts, always quote them",
                             "retry with backoff when the database is locked", "zebra"}) {
      const LexicalMatch a = expected->Match(want, text);
      const LexicalMatch b = kept->Match(got, text);
      EXPECT_THAT(b.fts_bm25, DoubleEq(a.fts_bm25)) << text;
      EXPECT_THAT(b.bm25, DoubleEq(a.bm25)) << text;
      EXPECT_THAT(b.coverage, DoubleEq(a.coverage)) << text;
      EXPECT_EQ(b.matched, a.matched) << text;
    }
  }

  // The ids MatchTags gives for `key` (every workspace, no budget).
  std::vector<std::string> Tagged(const std::string& key, const std::string& workspace = "") {
    auto matches = store_->MatchTags({key}, workspace, 1000);
    EXPECT_THAT(matches.status(), IsOk());
    if (!matches.ok() || matches->size() != 1) return {"<error>"};
    return (*matches)[0].ids;
  }

  ManualClock clock_;
  std::string dir_;
  std::string path_;
  std::unique_ptr<FactStore> store_;
};

TEST_F(FactStoreIndexTest, EmptyMemoryHasNoDocumentsAndNoStems) {
  auto counts = store_->CountTerms({"quot", "bash"});
  ASSERT_THAT(counts.status(), IsOk());
  EXPECT_EQ(counts->documents, 0u);
  EXPECT_EQ(counts->words, 0u);
  EXPECT_EQ(counts->tokens, 0u);
  EXPECT_THAT(counts->stems, IsEmpty());
}

TEST_F(FactStoreIndexTest, TermStatisticsFollowEveryWrite) {
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

TEST_F(FactStoreIndexTest, TagKeysFollowWritesAndWorkspaces) {
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
}

TEST_F(FactStoreIndexTest, MatchTagsReadsTheRarestKeysWithinTheBudget) {
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

TEST_F(FactStoreIndexTest, AVersionOneFileIsCountedWhenOpened) {
  NewFact quote{"Quote variables in shell scripts", "lesson", {"bash"}};
  quote.episode = Episode{"rename photos", "not a directory", clock_.Now()};
  AddResult a = MustAdd(quote);
  AddResult b = MustAdd({"Retry with backoff when the database is locked", "lesson", {"sqlite"}});
  MustAdd({"The event loop blocks", "lesson", {"python"}});
  MEND_ASSERT_OK(store_->Supersede(b.id, a.id));
  store_.reset();
  // What version 1 had: no statistics, no tag keys.
  Sql("DROP TABLE fact_terms; DROP TABLE fact_tag_keys; ALTER TABLE facts DROP COLUMN as_written; "
      "DELETE FROM meta WHERE key IN ('memory.documents', 'memory.words', 'memory.tokens'); "
      "UPDATE meta SET value = '1' WHERE key = 'memory.schema_version'");
  Reopen();
  ExpectStatisticsOfTheActiveFacts();
  EXPECT_THAT(Tagged("bash"), ElementsAre(a.id));
  EXPECT_THAT(Tagged("sqlite"), IsEmpty());  // superseded
  // Counted once: opening it again changes nothing.
  Reopen();
  ExpectStatisticsOfTheActiveFacts();
}

TEST_F(FactStoreIndexTest, MissingTotalsAreDataLoss) {
  MustAdd({"alpha"});
  store_.reset();
  Sql("DELETE FROM meta WHERE key = 'memory.words'");
  Reopen();
  EXPECT_THAT(store_->CountTerms({"alpha"}).status(),
              ::mend::testing::StatusIs(StatusCode::kDataLoss));
}

}  // namespace
}  // namespace mend::memory
