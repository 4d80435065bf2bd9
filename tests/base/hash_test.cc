#include "mend/base/hash.h"

#include <gtest/gtest.h>

#include <string>

namespace mend {
namespace {

TEST(Sha256Test, EmptyStringMatchesKnownVector) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256Test, AbcMatchesKnownVector) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, RawDigestMatchesHex) {
  const Sha256Digest digest = Sha256("abc");
  EXPECT_EQ(digest[0], 0xba);
  EXPECT_EQ(digest[31], 0xad);
  EXPECT_EQ(HexEncode(std::string(digest.begin(), digest.end())), Sha256Hex("abc"));
}

TEST(Sha256Test, HashesEmbeddedNulBytes) {
  const std::string with_nul("a\0b", 3);
  EXPECT_NE(Sha256Hex(with_nul), Sha256Hex("a"));
  EXPECT_NE(Sha256Hex(with_nul), Sha256Hex("ab"));
}

TEST(HexEncodeTest, UsesLowercaseTwoDigitsPerByte) {
  EXPECT_EQ(HexEncode(std::string("\x00\x0f\xab\xff", 4)), "000fabff");
  EXPECT_EQ(HexEncode(""), "");
}

TEST(Crc32Test, CheckValueMatchesIeee) {
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(Crc32(""), 0u);
}

TEST(Crc32Test, IncrementalEqualsOneShotAtEverySplit) {
  const std::string data = "The quick brown fox jumps over the lazy dog";
  const std::uint32_t whole = Crc32(data);
  EXPECT_EQ(whole, 0x414FA339u);
  for (std::size_t split = 0; split <= data.size(); ++split) {
    const std::uint32_t crc =
        Crc32Extend(Crc32(data.substr(0, split)), std::string_view(data).substr(split));
    EXPECT_EQ(crc, whole) << "split at " << split;
  }
}

TEST(Crc32Test, ExtendingWithNothingKeepsTheValue) {
  EXPECT_EQ(Crc32Extend(0xCBF43926u, std::string_view()), 0xCBF43926u);
  EXPECT_EQ(Crc32Extend(0, "123456789"), 0xCBF43926u);
}

}  // namespace
}  // namespace mend

namespace mend {
namespace {

TEST(ConstantTimeEqualsTest, EqualOnlyForTheSameBytes) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("t0ken", "t0ken"));
  EXPECT_FALSE(ConstantTimeEquals("t0ken", "t0keN"));
  EXPECT_FALSE(ConstantTimeEquals("t0ken", "t0ke"));
  EXPECT_FALSE(ConstantTimeEquals("t0ke", "t0ken"));
  EXPECT_FALSE(ConstantTimeEquals("", "x"));
  EXPECT_FALSE(ConstantTimeEquals(std::string_view("a\0b", 3), std::string_view("a\0c", 3)));
}

}  // namespace
}  // namespace mend
