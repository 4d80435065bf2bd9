#include "mend/base/edit_distance.h"

#include <gtest/gtest.h>

namespace mend {
namespace {

TEST(EditDistanceTest, CountsSingleByteEdits) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("model", "model"), 0u);
  EXPECT_EQ(EditDistance("modle", "model"), 2u);  // a transposition is two edits
  EXPECT_EQ(EditDistance("modl", "model"), 1u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("max_step", "max_steps"), 1u);
}

TEST(EditDistanceTest, IsSymmetric) {
  EXPECT_EQ(EditDistance("limits", "limts"), EditDistance("limts", "limits"));
  EXPECT_EQ(EditDistance("tool_options", "tools"), EditDistance("tools", "tool_options"));
}

}  // namespace
}  // namespace mend
