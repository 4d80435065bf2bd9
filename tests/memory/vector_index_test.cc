#include "memory/vector_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/status_matchers.h"

namespace mend::memory {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Ids(const std::vector<VectorIndex::Hit>& hits) {
  std::vector<std::string> ids;
  for (const auto& hit : hits) ids.push_back(hit.id);
  return ids;
}

std::vector<VectorIndex::Entry> RandomEntries(size_t n, size_t dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<VectorIndex::Entry> entries;
  for (size_t i = 0; i < n; ++i) {
    VectorIndex::Entry entry{"id" + std::to_string(i), std::vector<float>(dim)};
    for (float& x : entry.vector) x = uniform(rng);
    entries.push_back(std::move(entry));
  }
  return entries;
}

TEST(VectorIndexTest, ExactTopKByCosine) {
  auto index = VectorIndex::Build(
      {{"east", {1, 0}}, {"north", {0, 5}}, {"northeast", {3, 3}}, {"west", {-2, 0}}});
  MEND_ASSERT_OK(index.status());
  EXPECT_FALSE((*index)->approximate());
  EXPECT_EQ((*index)->size(), 4u);
  auto hits = (*index)->Search({2, 0.1f}, 3);
  EXPECT_THAT(Ids(hits), ElementsAre("east", "northeast", "north"));
  EXPECT_NEAR(hits[0].similarity, 2 / std::sqrt(4.01), 1e-6);
  EXPECT_NEAR(hits[1].similarity, 2.1 / std::sqrt(4.01) / std::sqrt(2), 1e-6);
}

TEST(VectorIndexTest, IdWithSeveralPartsCountsOnceWithBestSimilarity) {
  auto index = VectorIndex::Build(
      {{"fact", {1, 0}}, {"fact", {0.6f, 0.8f}}, {"other", {0.8f, 0.6f}}, {"fact", {-1, 0}}});
  MEND_ASSERT_OK(index.status());
  EXPECT_EQ((*index)->size(), 4u);
  auto hits = (*index)->Search({1, 0}, 5);
  ASSERT_THAT(Ids(hits), ElementsAre("fact", "other"));
  EXPECT_NEAR(hits[0].similarity, 1.0, 1e-6);
  EXPECT_NEAR(hits[1].similarity, 0.8, 1e-6);
}

TEST(VectorIndexTest, TiesAreOrderedById) {
  auto index = VectorIndex::Build({{"b", {1, 0}}, {"a", {2, 0}}, {"c", {0, 1}}});
  MEND_ASSERT_OK(index.status());
  EXPECT_THAT(Ids((*index)->Search({1, 0}, 2)), ElementsAre("a", "b"));
}

TEST(VectorIndexTest, MismatchedDimensionIsInvalidArgument) {
  EXPECT_THAT(VectorIndex::Build({{"a", {1, 0}}, {"b", {1, 0, 0}}}).status(),
              StatusIs(StatusCode::kInvalidArgument));
}

TEST(VectorIndexTest, NonFiniteComponentIsInvalidArgument) {
  EXPECT_THAT(VectorIndex::Build({{"a", {1, NAN}}}).status(),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(VectorIndex::Build({{"a", {INFINITY, 0}}}).status(),
              StatusIs(StatusCode::kInvalidArgument));
}

TEST(VectorIndexTest, BadQueriesGiveNoHits) {
  auto index = VectorIndex::Build({{"a", {1, 0}}, {"b", {0, 1}}});
  MEND_ASSERT_OK(index.status());
  EXPECT_THAT((*index)->Search({0, 0}, 3), IsEmpty());
  EXPECT_THAT((*index)->Search({1, 0, 0}, 3), IsEmpty());
  EXPECT_THAT((*index)->Search({}, 3), IsEmpty());
  EXPECT_THAT((*index)->Search({NAN, 1}, 3), IsEmpty());
  EXPECT_THAT((*index)->Search({1, 0}, 0), IsEmpty());
}

TEST(VectorIndexTest, EmptyIndexFindsNothing) {
  auto index = VectorIndex::Build({});
  MEND_ASSERT_OK(index.status());
  EXPECT_EQ((*index)->size(), 0u);
  EXPECT_THAT((*index)->Search({1, 0}, 3), IsEmpty());
}

TEST(VectorIndexTest, ZeroVectorEntryIsSimilarToNothing) {
  auto index = VectorIndex::Build({{"zero", {0, 0}}, {"a", {1, 0}}});
  MEND_ASSERT_OK(index.status());
  auto hits = (*index)->Search({1, 0}, 2);
  ASSERT_THAT(Ids(hits), ElementsAre("a", "zero"));
  EXPECT_EQ(hits[1].similarity, 0.0);
}

// Builds both indexes once for the suite: the graph over 2000 vectors is the slow part.
class HnswVectorIndexTest : public ::testing::Test {
 protected:
  static constexpr size_t kDim = 32;
  static void SetUpTestSuite() {
    entries_ = new std::vector<VectorIndex::Entry>(RandomEntries(2000, kDim, 42));
    auto exact = VectorIndex::Build(*entries_, /*exact_limit=*/1000000);
    auto approx = VectorIndex::Build(*entries_, /*exact_limit=*/50);
    if (exact.ok()) exact_ = std::move(*exact).release();
    if (approx.ok()) approx_ = std::move(*approx).release();
  }
  static void TearDownTestSuite() {
    delete entries_;
    delete exact_;
    delete approx_;
  }
  void SetUp() override {
    ASSERT_NE(exact_, nullptr);
    ASSERT_NE(approx_, nullptr);
  }

  static inline std::vector<VectorIndex::Entry>* entries_ = nullptr;
  static inline VectorIndex* exact_ = nullptr;
  static inline VectorIndex* approx_ = nullptr;
};

TEST_F(HnswVectorIndexTest, UsesTheGraphAboveTheLimit) {
  EXPECT_FALSE(exact_->approximate());
  EXPECT_TRUE(approx_->approximate());
  EXPECT_EQ(approx_->size(), 2000u);
}

TEST_F(HnswVectorIndexTest, StoredVectorFindsItself) {
  for (size_t i = 0; i < entries_->size(); i += 97) {
    auto hits = approx_->Search((*entries_)[i].vector, 1);
    ASSERT_EQ(hits.size(), 1u);
    EXPECT_EQ(hits[0].id, (*entries_)[i].id);
    EXPECT_NEAR(hits[0].similarity, 1.0, 1e-5);
  }
}

TEST_F(HnswVectorIndexTest, RecallAtTenAgainstExactScan) {
  auto queries = RandomEntries(50, kDim, 7);
  size_t found = 0;
  for (const auto& query : queries) {
    auto truth = Ids(exact_->Search(query.vector, 10));
    auto approx = Ids(approx_->Search(query.vector, 10));
    ASSERT_EQ(truth.size(), 10u);
    ASSERT_EQ(approx.size(), 10u);
    std::set<std::string> truth_set(truth.begin(), truth.end());
    for (const auto& id : approx) found += truth_set.count(id);
  }
  EXPECT_GE(static_cast<double>(found) / (10.0 * queries.size()), 0.9);
}

TEST_F(HnswVectorIndexTest, ConcurrentSearchesAgree) {
  auto expected = Ids(approx_->Search((*entries_)[5].vector, 10));
  std::vector<std::vector<std::string>> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) results[t] = Ids(approx_->Search((*entries_)[5].vector, 10));
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_EQ(result, expected);
}

TEST(HnswVectorIndexPartsTest, ReturnsKDistinctIdsWhenPartsCrowdTheNeighbourhood) {
  // 100 ids with 20 nearly identical parts each: the nearest entries of any query are mostly
  // parts of the same few ids, so the search has to widen to find 10 distinct ones.
  std::mt19937 rng(3);
  std::normal_distribution<float> noise(0.0f, 0.001f);
  auto centres = RandomEntries(100, 16, 11);
  std::vector<VectorIndex::Entry> entries;
  for (const auto& centre : centres) {
    for (int part = 0; part < 20; ++part) {
      VectorIndex::Entry entry = centre;
      for (float& x : entry.vector) x += noise(rng);
      entries.push_back(std::move(entry));
    }
  }
  auto index = VectorIndex::Build(entries, /*exact_limit=*/50);
  MEND_ASSERT_OK(index.status());
  ASSERT_TRUE((*index)->approximate());
  auto hits = (*index)->Search(centres[0].vector, 10);
  ASSERT_EQ(hits.size(), 10u);
  std::set<std::string> distinct;
  for (const auto& hit : hits) distinct.insert(hit.id);
  EXPECT_EQ(distinct.size(), 10u);
  EXPECT_EQ(hits[0].id, centres[0].id);
}

}  // namespace
}  // namespace mend::memory
