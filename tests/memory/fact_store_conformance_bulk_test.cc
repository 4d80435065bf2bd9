// The FactStore conformance suite: a bulk import leaves the same facts, index rows, term
// statistics and retrieval as writing the facts one at a time, however many facts it holds and in
// however many pieces they come; and the comparisons it makes (import_comparison.h).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "memory/fact_rows.h"
#include "mend/memory/lexical.h"
#include "mend/memory/retriever.h"
#include "tests/memory/fact_store_conformance.h"
#include "tests/memory/import_comparison.h"
#include "tests/support/status_matchers.h"

namespace mend::memory::testing {

using ::mend::testing::IsOk;
using ::mend::testing::IsOkAndHolds;
using ::testing::SizeIs;

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

const std::vector<std::string> kImportQueries = {
    "retry the database migration when the lock times out",
    "quote shell variables in deploy scripts",
    "pin the compiler version in ci images",
    "backups restore cold storage bucket",
    "event loop blocked by a slow handler",
    "zebra",
};

namespace {

std::vector<std::string> QueryWords() {
  std::vector<std::string> words;
  for (const std::string& q : kImportQueries) {
    for (std::string& w : QueryTerms(q)) words.push_back(std::move(w));
  }
  return words;
}

}  // namespace

void WriteOneAtATime(FactStore& store, ManualClock& clock) {
  auto add = [&](NewFact fact) {
    clock.Advance(std::chrono::seconds(1));
    Result<AddResult> added = store.Add(fact);
    EXPECT_THAT(added.status(), IsOk());
    return added.ok() ? added->id : "";
  };
  NewFact migration{
      "Retry the database migration when the lock times out", "lesson", {"database", "migrations"}};
  migration.episode = Episode{"upgrade the schema", "ERROR: lock timeout", clock.Now()};
  add(migration);
  migration.episode = Episode{"add a column", "lock timeout again", clock.Now()};
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

std::vector<Fact> ExportInOrder(FactStore& store) {
  auto facts = store.List({.include_superseded = true});
  EXPECT_THAT(facts.status(), IsOk());
  if (!facts.ok()) return {};
  std::vector<Fact> out = std::move(facts).value();
  std::reverse(out.begin(), out.end());  // List is newest first
  return out;
}

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

void ExpectSameSearches(FactStore& want_store, FactStore& got_store) {
  for (const std::string& q : kImportQueries) {
    for (const char* workspace : {"", "alpha", "beta"}) {
      auto want = want_store.SearchLexical(QueryTerms(q), 10, workspace);
      auto got = got_store.SearchLexical(QueryTerms(q), 10, workspace);
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

namespace {

TEST_P(FactStoreBulkImportTest, RetrievalAfterAnImportEqualsRetrievalAfterSingleAdds) {
  FactStore& written = *store_;
  WriteOneAtATime(written, clock_);
  FactStore* imported = OpenAnother();
  ASSERT_NE(imported, nullptr);

  auto counts = imported->Import(ExportInOrder(written));

  ASSERT_THAT(counts.status(), IsOk());
  EXPECT_EQ(counts->imported, 7);
  EXPECT_EQ(counts->skipped, 0);
  EXPECT_EQ(DescribeAll(*imported), DescribeAll(written));
  ExpectSameSearches(written, *imported);
  ExpectSameTagsAndCounts(written, *imported);
  ExpectKeptStatisticsMatchTheActiveFacts(*imported);
  Retriever from_writes(&written, &clock_, RetrieverOptions{});
  Retriever from_import(imported, &clock_, RetrieverOptions{});
  for (const std::string& q : kImportQueries) {
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
  auto want = written.MissingEmbeddings("m1", 100, 0);
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

TEST_P(FactStoreBulkImportTest, ALargeImportIndexesAsSmallImportsDo) {
  FactStore& large = *store_;
  FactStore* small = OpenAnother();
  ASSERT_NE(small, nullptr);
  // Large enough for PostgreSQL's pending list and for FTS5 to write several segments, were it
  // to write one per statement; the small imports come a fact at a time.
  const std::vector<Fact> facts = ManyFacts(clock_.Now(), 1200);

  ASSERT_THAT(large.Import(facts),
              IsOkAndHolds(::testing::Field(&FactStore::ImportCounts::imported, 1200)));
  for (size_t start = 0; start < facts.size(); start += 400) {
    const std::vector<Fact> part(facts.begin() + static_cast<std::ptrdiff_t>(start),
                                 facts.begin() + static_cast<std::ptrdiff_t>(start + 400));
    ASSERT_THAT(small->Import(part).status(), IsOk());
  }
  for (size_t i = 0; i < 60; ++i) {  // and some a fact at a time, again: all skipped
    ASSERT_THAT(small->Import({facts[i * 20]}),
                IsOkAndHolds(::testing::Field(&FactStore::ImportCounts::skipped, 1)));
  }

  EXPECT_EQ(DescribeAll(large), DescribeAll(*small));
  ExpectSameSearches(*small, large);
  ExpectSameTagsAndCounts(*small, large);
  ExpectKeptStatisticsMatchTheActiveFacts(large);
}

TEST_P(FactStoreBulkImportTest, AnImportOfManySlicesKeepsTheOrderGiven) {
  FactStore& store = *store_;
  // About 2.5 MiB with their search texts: the facts reach a server in several slices.
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

TEST_P(FactStoreBulkImportTest, AnImportOfNothingNewWritesNothing) {
  FactStore& store = *store_;
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

TEST_P(FactStoreBulkImportTest, ImportsOneAfterAnotherSkipWhatTheEarlierOnesStored) {
  FactStore& store = *store_;
  const std::vector<Fact> facts = ManyFacts(clock_.Now(), 40);
  const std::vector<Fact> first(facts.begin(), facts.begin() + 25);
  const std::vector<Fact> second(facts.begin() + 15, facts.end());

  auto a = store.Import(first);
  auto b = store.Import(second);

  ASSERT_THAT(a.status(), IsOk());
  ASSERT_THAT(b.status(), IsOk());
  EXPECT_EQ(a->imported, 25);
  EXPECT_EQ(b->imported, 15);
  EXPECT_EQ(b->skipped, 10);
  EXPECT_THAT(store.Count(), IsOkAndHolds(39));  // many-0 is superseded
  FactStore* together = OpenAnother();
  ASSERT_NE(together, nullptr);
  ASSERT_THAT(together->Import(facts).status(), IsOk());
  EXPECT_EQ(DescribeAll(store), DescribeAll(*together));
  ExpectSameSearches(*together, store);
  ExpectSameTagsAndCounts(*together, store);
}

}  // namespace

}  // namespace mend::memory::testing
