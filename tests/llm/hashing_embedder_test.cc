#include <gtest/gtest.h>

#include <cmath>

#include "mend/llm/embedder.h"
#include "tests/support/status_matchers.h"

namespace mend::llm {
namespace {

TEST(HashingEmbedderTest, DeterministicAndNormalised) {
  HashingEmbedder e(64);
  auto a = e.Embed({"The quick brown fox", "the QUICK brown fox!"});
  MEND_ASSERT_OK(a);
  ASSERT_EQ(a->size(), 2u);
  ASSERT_EQ((*a)[0].size(), 64u);
  EXPECT_EQ((*a)[0], (*a)[1]);  // case and punctuation do not matter
  EXPECT_EQ(HashingEmbedder(64).EmbedOne("The quick brown fox"), (*a)[0]);
  double norm = 0;
  for (float x : (*a)[0]) norm += static_cast<double>(x) * x;
  EXPECT_NEAR(norm, 1.0, 1e-5);
  EXPECT_EQ(e.dimension(), 64);
  EXPECT_EQ(e.model_id(), "hashing-64");
}

TEST(HashingEmbedderTest, EmptyTextIsZeroVector) {
  std::vector<float> v = HashingEmbedder(16).EmbedOne("  ...  ");
  EXPECT_EQ(v, std::vector<float>(16, 0.0f));
}

TEST(HashingEmbedderTest, RelatedSentencesAreCloserThanUnrelated) {
  HashingEmbedder e;
  auto v = e.Embed({"the database connection timed out while writing the checkpoint",
                    "writing the checkpoint failed because the database connection timed out",
                    "my cat enjoys sleeping on a sunny windowsill"});
  MEND_ASSERT_OK(v);
  double related = CosineSimilarity((*v)[0], (*v)[1]);
  double unrelated = CosineSimilarity((*v)[0], (*v)[2]);
  EXPECT_GT(related, 0.5);
  EXPECT_GT(related, unrelated + 0.3);
}

TEST(CosineSimilarityTest, EdgeCases) {
  EXPECT_EQ(CosineSimilarity({1, 0}, {1, 0, 0}), 0.0);
  EXPECT_EQ(CosineSimilarity({0, 0}, {1, 0}), 0.0);
  EXPECT_NEAR(CosineSimilarity({1, 2}, {2, 4}), 1.0, 1e-9);
}

}  // namespace
}  // namespace mend::llm
