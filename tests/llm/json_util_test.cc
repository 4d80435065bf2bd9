#include "llm/json_util.h"

#include <gtest/gtest.h>

#include <string>

namespace mend::llm {
namespace {

TEST(LlmSanitizeUtf8Test, KeepsAsciiRunsAndValidSequencesAndReplacesEachBadByte) {
  EXPECT_EQ(SanitizeUtf8(""), "");
  EXPECT_EQ(SanitizeUtf8("plain ascii"), "plain ascii");
  EXPECT_EQ(SanitizeUtf8("caf\xC3\xA9 ok"), "caf\xC3\xA9 ok");
  EXPECT_EQ(SanitizeUtf8("a\xFF\xFE"
                         "b"),
            "a\xEF\xBF\xBD\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(SanitizeUtf8("\xC3"), "\xEF\xBF\xBD");  // a sequence cut short at the end
  const std::string long_ascii(10000, 'x');
  EXPECT_EQ(SanitizeUtf8(long_ascii + "\x80" + long_ascii),
            long_ascii + "\xEF\xBF\xBD" + long_ascii);
}

}  // namespace
}  // namespace mend::llm
