#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "mend/memory/lexical.h"

namespace mend::memory {
namespace {

using ::testing::IsEmpty;

std::vector<size_t> Docs(const std::vector<TrigramIndex::Hit>& hits) {
  std::vector<size_t> docs;
  for (const auto& hit : hits) docs.push_back(hit.doc);
  return docs;
}

TEST(TrigramIndexTest, RareSharedWordOutranksCommonTrigrams) {
  auto index = TrigramIndex::Build({
      {"the thing that the others then did there"},  // common trigrams only
      {"kubernetes pod was evicted"},                // shares the rare word
      {"nothing in common at all"},
  });
  auto hits = index->Search("the kubernetes deployment", 3);
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].doc, 1u);
  for (size_t i = 1; i < hits.size(); ++i) EXPECT_GE(hits[i - 1].score, hits[i].score);
}

TEST(TrigramIndexTest, IdenticalTextScoresOne) {
  auto index = TrigramIndex::Build({{"sqlite database is locked"}, {"retry with backoff"}});
  auto hits = index->Search("SQLite   database is LOCKED", 2);
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].doc, 0u);
  EXPECT_NEAR(hits[0].score, 1.0, 1e-5);
}

// Texts are read as the fact store's similarity reads them (internal::SortedTrigrams): whitespace
// of any script collapsed and trimmed, ASCII lower-cased; long texts as short ones.
TEST(TrigramIndexTest, TextsAreReadAsTheSimilarityReadsThem) {
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "Partition " + std::to_string(i) + " lags; ";
  auto index = TrigramIndex::Build({{"  Café\u00a0au\tlait \u3000 at NOON "}, {long_text}});
  auto cafe = index->Search("café au lait at noon", 2);
  ASSERT_FALSE(cafe.empty());
  EXPECT_EQ(cafe[0].doc, 0u);
  EXPECT_NEAR(cafe[0].score, 1.0, 1e-5);
  auto lags = index->Search(" " + long_text + "\n", 2);
  ASSERT_FALSE(lags.empty());
  EXPECT_EQ(lags[0].doc, 1u);
  EXPECT_NEAR(lags[0].score, 1.0, 1e-5);
}

TEST(TrigramIndexTest, DocumentScoresWithItsBestText) {
  auto index = TrigramIndex::Build({
      {"unrelated lesson text", "compile error in parser module"},  // second text matches
      {"parser"},
  });
  auto single = TrigramIndex::Build({{"compile error in parser module"}, {"parser"}});
  auto hits = index->Search("compile error in parser module", 2);
  auto expected = single->Search("compile error in parser module", 2);
  ASSERT_EQ(hits.size(), 2u);
  ASSERT_EQ(expected.size(), 2u);
  EXPECT_EQ(hits[0].doc, 0u);
  EXPECT_NEAR(hits[0].score, 1.0, 1e-5);
  EXPECT_NEAR(hits[0].score, expected[0].score, 1e-6);
  EXPECT_EQ(hits[1].doc, 1u);
}

TEST(TrigramIndexTest, EmptyQueryOrZeroKGivesNoHits) {
  auto index = TrigramIndex::Build({{"alpha"}, {"beta"}});
  EXPECT_THAT(index->Search("", 5), IsEmpty());
  EXPECT_THAT(index->Search("   \n\t ", 5), IsEmpty());
  EXPECT_THAT(index->Search("alpha", 0), IsEmpty());
}

TEST(TrigramIndexTest, OnlyDocumentsWithSharedTrigramsAreReturned) {
  auto index = TrigramIndex::Build({{"alpha"}, {"zzzz"}, {}});
  EXPECT_EQ(index->size(), 3u);
  EXPECT_EQ(Docs(index->Search("alpha", 10)), std::vector<size_t>{0});
  EXPECT_THAT(index->Search("qqqq", 10), IsEmpty());
}

TEST(TrigramIndexTest, CapsAtKAndBreaksTiesByDocument) {
  auto index = TrigramIndex::Build({{"same words"}, {"other"}, {"same words"}, {"same words"}});
  auto hits = index->Search("same words", 2);
  EXPECT_EQ(Docs(hits), (std::vector<size_t>{0, 2}));
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].score, hits[1].score);
}

TEST(TrigramIndexTest, RareQueryInLargeIndexRanksLikeSmallOne) {
  // Many documents and a query whose trigrams only three of them hold: the search visits few
  // postings, and must still take each document's best text and order ties by document.
  std::vector<std::vector<std::string>> docs;
  for (int i = 0; i < 1000; ++i) docs.push_back({"aaa bbb " + std::to_string(i)});
  docs.push_back({"aaa bbb", "kubernetes pod evicted"});
  docs.push_back({"kubernetes"});
  docs.push_back({"zzz", "kubernetes"});
  auto index = TrigramIndex::Build(docs);
  EXPECT_EQ(Docs(index->Search("Kubernetes", 5)), (std::vector<size_t>{1001, 1002, 1000}));
  auto top = index->Search("kubernetes", 2);
  EXPECT_EQ(Docs(top), (std::vector<size_t>{1001, 1002}));
  ASSERT_EQ(top.size(), 2u);
  EXPECT_NEAR(top[0].score, 1.0, 1e-5);
  EXPECT_EQ(top[0].score, top[1].score);
  // Scores from the previous query must not linger.
  EXPECT_EQ(Docs(index->Search("pod evicted", 5)), (std::vector<size_t>{1000}));
}

TEST(TrigramIndexTest, EmptyIndexFindsNothing) {
  auto index = TrigramIndex::Build({});
  EXPECT_EQ(index->size(), 0u);
  EXPECT_THAT(index->Search("anything", 3), IsEmpty());
}

TEST(TrigramIndexTest, RepeatedSearchesGiveTheSameAnswer) {
  // Search reuses scratch space between calls; leftovers must not leak into the next query.
  auto index = TrigramIndex::Build({{"alpha beta"}, {"beta gamma"}, {"gamma delta"}});
  auto first = index->Search("beta", 3);
  index->Search("gamma delta", 3);
  auto other = TrigramIndex::Build({{"beta"}});
  other->Search("beta", 1);
  auto again = index->Search("beta", 3);
  ASSERT_EQ(first.size(), again.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].doc, again[i].doc);
    EXPECT_EQ(first[i].score, again[i].score);
  }
}

TEST(TrigramIndexTest, ConcurrentSearchesAgree) {
  std::vector<std::vector<std::string>> docs;
  for (int i = 0; i < 200; ++i) docs.push_back({"document number " + std::to_string(i * 7919)});
  auto index = TrigramIndex::Build(docs);
  auto expected = index->Search("document number 4711", 5);
  std::vector<std::vector<TrigramIndex::Hit>> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) results[t] = index->Search("document number 4711", 5);
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_EQ(Docs(result), Docs(expected));
}

}  // namespace
}  // namespace mend::memory
