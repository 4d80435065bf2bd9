#include "mend/base/sha256_hasher.h"

#include <gtest/gtest.h>

#include <string>

#include "mend/base/hash.h"

namespace mend {
namespace {

TEST(Sha256HasherTest, PiecesGiveTheDigestOfTheWhole) {
  Sha256Hasher hasher;
  EXPECT_EQ(hasher.FinishHex(), Sha256Hex(""));
  hasher.Update("ab");
  hasher.Update("");
  hasher.Update("c");
  EXPECT_EQ(hasher.FinishHex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Finishing starts over.
  const std::string big(3 << 20, 'x');
  hasher.Update(std::string_view(big).substr(0, 1 << 20));
  hasher.Update(std::string_view(big).substr(1 << 20));
  EXPECT_EQ(hasher.Finish(), Sha256(big));
}

TEST(Sha256HasherTest, AMovedHasherKeepsItsState) {
  Sha256Hasher first;
  first.Update("a");
  Sha256Hasher second = std::move(first);
  second.Update("bc");
  EXPECT_EQ(second.FinishHex(), Sha256Hex("abc"));
}

}  // namespace
}  // namespace mend
