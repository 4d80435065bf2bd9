#include "mend/base/base64.h"

#include <gtest/gtest.h>

#include <string>

namespace mend {
namespace {

TEST(Base64Test, EncodesWithPaddingAndDecodesBack) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  std::string back;
  ASSERT_TRUE(Base64Decode(Base64Encode(bytes), &back));
  EXPECT_EQ(back, bytes);
}

TEST(Base64Test, DecodesUrlSafeAndUnpaddedText) {
  std::string out;
  ASSERT_TRUE(Base64Decode("Zm8", &out));
  EXPECT_EQ(out, "fo");
  ASSERT_TRUE(Base64Decode("-_8=", &out));
  EXPECT_EQ(out, "\xfb\xff");
  ASSERT_TRUE(Base64Decode("+/8=", &out));
  EXPECT_EQ(out, "\xfb\xff");
}

TEST(Base64Test, RefusesWhatIsNotBase64) {
  std::string out;
  EXPECT_FALSE(Base64Decode("Zm9v!", &out));
  EXPECT_FALSE(Base64Decode("Z", &out));  // one digit carries no whole byte
  EXPECT_FALSE(Base64Decode("Zm 9v", &out));
}

}  // namespace
}  // namespace mend
