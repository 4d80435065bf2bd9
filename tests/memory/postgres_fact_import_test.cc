// The PostgreSQL fact store's bulk writes: an import (staged, then merged in one statement) leaves
// the same facts, index rows, statistics and retrieval as single adds and as SQLite's import; a
// batch of vectors is stored in one statement as one upsert after another would store it.
//
// Needs a server: MEND_TEST_POSTGRES_URL (scripts/with_postgres). Without it every test is skipped.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "memory/fact_rows.h"
#include "mend/base/manual_clock.h"
#include "mend/memory/fact_store.h"
#include "mend/memory/lexical.h"
#include "mend/memory/postgres_fact_store.h"
#include "mend/memory/retriever.h"
#include "tests/memory/fact_store_conformance.h"
#include "tests/memory/sqlite_fact_store_harness.h"
#include "tests/support/postgres_test_server.h"
#include "tests/support/status_matchers.h"

namespace mend::memory {
namespace {

using ::mend::memory::testing::ExpectKeptStatisticsMatchTheActiveFacts;
using ::mend::memory::testing::SqliteFactStoreHarness;
using ::mend::testing::FreshPostgresSchema;
using ::mend::testing::IsOk;
using ::mend::testing::IsOkAndHolds;
using ::mend::testing::kNoPostgresServer;
using ::mend::testing::PostgresTestUrl;
using ::mend::testing::RawPostgresExec;
using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// Every field of a fact, as one line, so two stores' facts compare in one assertion.
std::string Describe(const Fact& f) {
  std::ostringstream out;
  out << f.id << " | " << f.content << " | " << f.category << " | " << internal::JoinTags(f.tags)
      << " | " << f.workspace << " | " << f.source << " | " << f.confidence << " | "
      << f.created_at.time_since_epoch().count() << " | "
      << f.last_accessed.time_since_epoch().count() << " | " << f.access_count << " | " << f.helped
      << " | " << f.hurt << " | " << f.superseded_by << " | "
      << internal::EncodeEpisodes(f.provenance) << " | " << internal::EncodeAsWritten(f.as_written);
  return out.str();
}

std::vector<std::string> DescribeAll(FactStore& store) {
  std::vector<std::string> out;
  auto facts = store.List({.include_superseded = true});
  EXPECT_THAT(facts.status(), IsOk());
  if (facts.ok()) {
    for (const Fact& f : *facts) out.push_back(Describe(f));
  }
  return out;
}

// The words every test fact is made of, and some none holds.
const std::vector<std::string> kQueries = {
    "retry the database migration when the lock times out",
    "quote shell variables in deploy scripts",
    "pin the compiler version in ci images",
    "backups restore cold storage bucket",
    "event loop blocked by a slow handler",
    "zebra",
};

std::vector<std::string> QueryWords() {
  std::vector<std::string> words;
  for (const std::string& q : kQueries) {
    for (std::string& w : QueryTerms(q)) words.push_back(std::move(w));
  }
  return words;
}

class PostgresFactImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (PostgresTestUrl().empty()) GTEST_SKIP() << kNoPostgresServer;
  }
  void TearDown() override {
    stores_.clear();
    for (const std::string& schema : schemas_) {
      RawPostgresExec("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
    }
  }

  // A store in a schema of its own (null when it cannot be opened); `pool_size` 1 makes every
  // write reuse one connection.
  FactStore* OpenPostgres(int pool_size = 2) {
    schemas_.push_back(FreshPostgresSchema("mend_import"));
    PostgresFactStoreOptions options;
    options.url = PostgresTestUrl();
    options.schema = schemas_.back();
    options.pool_size = pool_size;
    return Keep(OpenPostgresFactStore(options, clock_));
  }

  FactStore* OpenSqlite() {
    sqlite_ = std::make_unique<SqliteFactStoreHarness>();
    return Keep(sqlite_->Open(clock_));
  }

  FactStore* Keep(Result<std::unique_ptr<FactStore>> store) {
    EXPECT_THAT(store.status(), IsOk());
    if (!store.ok()) return nullptr;
    stores_.push_back(std::move(store).value());
    return stores_.back().get();
  }

  // Writes, one at a time, facts of every kind a store holds: tags (one with keys that repeat),
  // workspaces, episodes, a reinforcement, a merged near duplicate and a superseded fact.
  void WriteOneAtATime(FactStore& store) {
    auto add = [&](NewFact fact) {
      clock_.Advance(std::chrono::seconds(1));
      Result<AddResult> added = store.Add(fact);
      EXPECT_THAT(added.status(), IsOk());
      return added.ok() ? added->id : "";
    };
    NewFact migration{"Retry the database migration when the lock times out",
                      "lesson",
                      {"database", "migrations"}};
    migration.episode = Episode{"upgrade the schema", "ERROR: lock timeout", clock_.Now()};
    add(migration);
    migration.episode = Episode{"add a column", "lock timeout again", clock_.Now()};
    add(migration);  // reinforced: a second episode
    add({"Always pin the compiler version in CI images to avoid surprise breaks",
         "lesson",
         {"ci", "compiler"},
         "alpha"});
    add({"Always pin the compiler version in CI images to avoid surprise breaks!",
         "lesson",
         {"images"},
         "alpha"});  // merged into the one before
    const std::string old_quote =
        add({"Quote variables in shell scripts", "lesson", {"bash"}, "beta"});
    const std::string new_quote = add(
        {"Quote shell variables in deploy scripts, always", "lesson", {"bash", "deploy"}, "beta"});
    EXPECT_THAT(store.Supersede(old_quote, new_quote), IsOk());
    add({"The nightly backup job writes to the cold storage bucket", "project", {"backups"}});
    add({"A slow handler blocks the event loop", "lesson", {"event-loop", "event", "Loop"}});
    add({"Prefers short answers", "preference"});
  }

  ManualClock clock_;
  std::vector<std::string> schemas_;
  std::unique_ptr<SqliteFactStoreHarness> sqlite_;
  std::vector<std::unique_ptr<FactStore>> stores_;
};

// Every fact of `store`, superseded ones too, in the order they were written.
std::vector<Fact> Export(FactStore& store) {
  auto facts = store.List({.include_superseded = true});
  EXPECT_THAT(facts.status(), IsOk());
  if (!facts.ok()) return {};
  std::vector<Fact> out = std::move(facts).value();
  std::reverse(out.begin(), out.end());  // List is newest first
  return out;
}

void ExpectSameSearches(FactStore& a, FactStore& b) {
  for (const std::string& q : kQueries) {
    for (const char* workspace : {"", "alpha", "beta"}) {
      auto want = a.SearchLexical(QueryTerms(q), 10, workspace);
      auto got = b.SearchLexical(QueryTerms(q), 10, workspace);
      ASSERT_THAT(want.status(), IsOk());
      ASSERT_THAT(got.status(), IsOk());
      ASSERT_EQ(got->size(), want->size()) << q << " in '" << workspace << "'";
      for (size_t i = 0; i < want->size(); ++i) {
        EXPECT_EQ((*got)[i].id, (*want)[i].id) << q;
        EXPECT_EQ((*got)[i].score, (*want)[i].score) << q;
        EXPECT_EQ((*got)[i].text, (*want)[i].text) << q;
      }
    }
  }
}

void ExpectSameTagsAndCounts(FactStore& a, FactStore& b) {
  const std::vector<std::string> keys = {"database", "migrations", "ci",      "compiler",
                                         "images",   "bash",       "deploy",  "loop",
                                         "event",    "event-loop", "backups", "none"};
  for (const char* workspace : {"", "alpha", "beta"}) {
    auto want = a.MatchTags(keys, workspace, 100);
    auto got = b.MatchTags(keys, workspace, 100);
    ASSERT_THAT(want.status(), IsOk());
    ASSERT_THAT(got.status(), IsOk());
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < want->size(); ++i) {
      EXPECT_EQ((*got)[i].key, (*want)[i].key);
      EXPECT_EQ((*got)[i].facts, (*want)[i].facts) << (*want)[i].key;
      EXPECT_EQ((*got)[i].ids, (*want)[i].ids) << (*want)[i].key;
    }
  }
  auto want = a.CountTerms(TermStatistics::QueryStems(QueryWords()));
  auto got = b.CountTerms(TermStatistics::QueryStems(QueryWords()));
  ASSERT_THAT(want.status(), IsOk());
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_EQ(got->documents, want->documents);
  EXPECT_EQ(got->words, want->words);
  EXPECT_EQ(got->tokens, want->tokens);
  ASSERT_EQ(got->stems.size(), want->stems.size());
  for (const auto& [stem, frequency] : want->stems) {
    ASSERT_TRUE(got->stems.contains(stem)) << stem;
    EXPECT_EQ(got->stems.at(stem).words, frequency.words) << stem;
    EXPECT_EQ(got->stems.at(stem).tokens, frequency.tokens) << stem;
  }
  EXPECT_THAT(b.Count(), IsOkAndHolds(*a.Count()));
}

TEST_F(PostgresFactImportTest, RetrievalAfterAnImportEqualsRetrievalAfterSingleAdds) {
  FactStore* written = OpenPostgres();
  FactStore* imported = OpenPostgres();
  ASSERT_NE(written, nullptr);
  ASSERT_NE(imported, nullptr);
  WriteOneAtATime(*written);

  auto counts = imported->Import(Export(*written));

  ASSERT_THAT(counts.status(), IsOk());
  EXPECT_EQ(counts->imported, 7);
  EXPECT_EQ(counts->skipped, 0);
  EXPECT_EQ(DescribeAll(*imported), DescribeAll(*written));
  ExpectSameSearches(*written, *imported);
  ExpectSameTagsAndCounts(*written, *imported);
  ExpectKeptStatisticsMatchTheActiveFacts(*imported);
  Retriever from_writes(written, &clock_, RetrieverOptions{});
  Retriever from_import(imported, &clock_, RetrieverOptions{});
  for (const std::string& q : kQueries) {
    auto want = from_writes.Retrieve({q});
    auto got = from_import.Retrieve({q});
    ASSERT_THAT(want.status(), IsOk());
    ASSERT_THAT(got.status(), IsOk());
    ASSERT_EQ(got->ranked.size(), want->ranked.size()) << q;
    for (size_t i = 0; i < want->ranked.size(); ++i) {
      EXPECT_EQ(got->ranked[i].fact.id, want->ranked[i].fact.id) << q;
      EXPECT_DOUBLE_EQ(got->ranked[i].score, want->ranked[i].score) << q;
    }
    EXPECT_EQ(got->section, want->section) << q;
  }
  // Vectors are asked for in the same order, for the same texts.
  auto want = written->MissingEmbeddings("m1", 100, 0);
  auto got = imported->MissingEmbeddings("m1", 100, 0);
  ASSERT_THAT(want.status(), IsOk());
  ASSERT_THAT(got.status(), IsOk());
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_EQ((*got)[i].id, (*want)[i].id);
    EXPECT_EQ((*got)[i].part, (*want)[i].part);
    EXPECT_EQ((*got)[i].text, (*want)[i].text);
  }
}

TEST_F(PostgresFactImportTest, AnImportAgreesWithSqlitesImport) {
  FactStore* written = OpenPostgres();
  FactStore* sqlite = OpenSqlite();
  FactStore* postgres = OpenPostgres();
  ASSERT_NE(written, nullptr);
  ASSERT_NE(sqlite, nullptr);
  ASSERT_NE(postgres, nullptr);
  WriteOneAtATime(*written);
  std::vector<Fact> facts = Export(*written);
  Fact repeated = facts[0];  // the same id again in one import: the first one stays
  repeated.content = "a different text under a repeated id";
  facts.push_back(repeated);
  Fact unusable = facts[1];
  unusable.id = " ";
  facts.push_back(unusable);
  // An id already present is skipped, whichever import brought it.
  ASSERT_THAT(sqlite->Import({facts[2]}).status(), IsOk());
  ASSERT_THAT(postgres->Import({facts[2]}).status(), IsOk());

  auto want = sqlite->Import(facts);
  auto got = postgres->Import(facts);

  ASSERT_THAT(want.status(), IsOk());
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_EQ(want->imported, 6);
  EXPECT_EQ(want->skipped, 2);
  EXPECT_THAT(want->unusable, SizeIs(1));
  EXPECT_EQ(got->imported, want->imported);
  EXPECT_EQ(got->skipped, want->skipped);
  EXPECT_EQ(got->unusable, want->unusable);
  EXPECT_EQ(DescribeAll(*postgres), DescribeAll(*sqlite));
  ExpectSameTagsAndCounts(*sqlite, *postgres);
  ExpectKeptStatisticsMatchTheActiveFacts(*postgres);
  for (const std::string& q : kQueries) {
    auto a = sqlite->SearchLexical(QueryTerms(q), 10, "");
    auto b = postgres->SearchLexical(QueryTerms(q), 10, "");
    ASSERT_THAT(a.status(), IsOk());
    ASSERT_THAT(b.status(), IsOk());
    std::set<std::string> want_ids, got_ids;
    for (const LexicalHit& hit : *a) want_ids.insert(hit.id);
    for (const LexicalHit& hit : *b) got_ids.insert(hit.id);
    EXPECT_EQ(got_ids, want_ids) << q;
  }
}

// Many facts over the words of kQueries, with tags, workspaces, episodes and superseded ones.
std::vector<Fact> ManyFacts(Time now, int n) {
  const std::vector<std::string> words = QueryWords();
  std::mt19937 rng(7);
  std::vector<Fact> facts;
  for (int i = 0; i < n; ++i) {
    Fact f;
    f.id = "many-" + std::to_string(i);
    for (int w = 0; w < 12; ++w) f.content += words[rng() % words.size()] + " ";
    f.content += "number " + std::to_string(i);
    f.tags = {words[rng() % words.size()], "group-" + std::to_string(i % 7)};
    f.workspace = i % 3 == 0 ? "alpha" : i % 3 == 1 ? "beta" : "";
    f.created_at = f.last_accessed = now;
    if (i % 5 == 0) f.provenance = {Episode{"task " + words[rng() % words.size()], "", now}};
    if (i % 50 == 0) f.superseded_by = "many-1";
    facts.push_back(std::move(f));
  }
  return facts;
}

TEST_F(PostgresFactImportTest, ALargeImportIndexesAsSmallImportsDo) {
  FactStore* large = OpenPostgres();
  FactStore* small = OpenPostgres();
  ASSERT_NE(large, nullptr);
  ASSERT_NE(small, nullptr);
  // Large enough for the search index's pending list; the small imports index row by row.
  const std::vector<Fact> facts = ManyFacts(clock_.Now(), 1200);

  ASSERT_THAT(large->Import(facts),
              IsOkAndHolds(::testing::Field(&FactStore::ImportCounts::imported, 1200)));
  for (size_t start = 0; start < facts.size(); start += 400) {
    const std::vector<Fact> part(facts.begin() + static_cast<std::ptrdiff_t>(start),
                                 facts.begin() + static_cast<std::ptrdiff_t>(start + 400));
    ASSERT_THAT(small->Import(part).status(), IsOk());
  }

  EXPECT_EQ(DescribeAll(*large), DescribeAll(*small));
  ExpectSameSearches(*small, *large);
  ExpectSameTagsAndCounts(*small, *large);
  ExpectKeptStatisticsMatchTheActiveFacts(*large);
}

TEST_F(PostgresFactImportTest, AnImportOfManySlicesKeepsTheOrderGiven) {
  FactStore* opened = OpenPostgres();
  ASSERT_NE(opened, nullptr);
  FactStore& store = *opened;
  // About 2.5 MiB with their search texts: the facts reach the server in several slices.
  std::vector<Fact> facts;
  std::string filler;
  while (filler.size() < 40 * 1024) filler += "deploy notes with \"quotes\" and back\\slashes ";
  for (int i = 0; i < 30; ++i) {
    Fact f;
    f.id = "bulk-" + std::to_string(i);
    f.content = "fact number " + std::to_string(i) + " " + filler;
    f.tags = {"bulk", "fact-" + std::to_string(i % 3)};
    f.created_at = f.last_accessed = clock_.Now();
    facts.push_back(f);
  }
  facts.push_back(facts[0]);  // skipped: the first is kept

  auto counts = store.Import(facts);

  ASSERT_THAT(counts.status(), IsOk());
  EXPECT_EQ(counts->imported, 30);
  EXPECT_EQ(counts->skipped, 1);
  auto listed = store.List({});
  ASSERT_THAT(listed.status(), IsOk());
  ASSERT_THAT(*listed, SizeIs(30));
  for (size_t i = 0; i < 30; ++i) {  // newest first: the last imported first
    EXPECT_EQ((*listed)[i].id, facts[29 - i].id);
    EXPECT_EQ((*listed)[i].content, facts[29 - i].content);
  }
  auto tagged = store.MatchTags({"bulk", "fact-1", "fact"}, "", 1000);
  ASSERT_THAT(tagged.status(), IsOk());
  ASSERT_THAT(*tagged, SizeIs(3));
  EXPECT_EQ((*tagged)[0].facts, 30);
  EXPECT_EQ((*tagged)[1].facts, 10);
  EXPECT_EQ((*tagged)[2].facts, 30);
  ASSERT_THAT((*tagged)[0].ids, SizeIs(30));
  EXPECT_EQ((*tagged)[0].ids.front(), "bulk-0");
  EXPECT_EQ((*tagged)[0].ids.back(), "bulk-29");
  auto hits = store.SearchLexical(QueryTerms("number 29"), 1, "");
  ASSERT_THAT(hits.status(), IsOk());
  ASSERT_THAT(*hits, SizeIs(1));
  EXPECT_EQ((*hits)[0].id, "bulk-29");
  ExpectKeptStatisticsMatchTheActiveFacts(store);
}

TEST_F(PostgresFactImportTest, AFailedImportWritesNothingAndTheNextOneWorks) {
  FactStore* opened = OpenPostgres(/*pool_size=*/1);
  ASSERT_NE(opened, nullptr);
  FactStore& store = *opened;
  Fact good;
  good.id = "good";
  good.content = "Restores are tested on the first Monday of every month";
  good.tags = {"backups"};
  Fact refused = good;
  refused.id = "bad \xff id";  // PostgreSQL's text takes no invalid UTF-8
  refused.content = "another fact";

  EXPECT_THAT(store.Import({good, refused}).status(), StatusIs(StatusCode::kInternal));

  EXPECT_THAT(store.Count(), IsOkAndHolds(0));
  EXPECT_THAT(store.MatchTags({"backups"}, "", 10),
              IsOkAndHolds(ElementsAre(::testing::Field(&TagMatch::facts, 0))));
  // The staging table went with the failed transaction, on the same connection.
  auto again = store.Import({good});
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_EQ(again->imported, 1);
  EXPECT_THAT(store.Count(), IsOkAndHolds(1));
  ExpectKeptStatisticsMatchTheActiveFacts(store);
}

TEST_F(PostgresFactImportTest, AnImportOfNothingNewWritesNothing) {
  FactStore* opened = OpenPostgres();
  ASSERT_NE(opened, nullptr);
  FactStore& store = *opened;
  Fact f;
  f.id = "once";
  f.content = "Caches expire after one hour";
  ASSERT_THAT(store.Import({f}).status(), IsOk());
  auto generation = store.Generation();
  ASSERT_THAT(generation.status(), IsOk());

  auto counts = store.Import({f, f});

  ASSERT_THAT(counts.status(), IsOk());
  EXPECT_EQ(counts->imported, 0);
  EXPECT_EQ(counts->skipped, 2);
  EXPECT_THAT(store.Generation(), IsOkAndHolds(*generation));
  EXPECT_THAT(store.Import({}),
              IsOkAndHolds(::testing::Field(&FactStore::ImportCounts::imported, 0)));
}

}  // namespace
}  // namespace mend::memory
