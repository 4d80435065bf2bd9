#include "mend/llm/prices.h"

#include <gtest/gtest.h>

#include "mend/base/memory_file_system.h"
#include "tests/support/status_matchers.h"

namespace mend::llm {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

TEST(PriceTableTest, ExactAndLongestPrefixLookup) {
  PriceTable t = PriceTable::Defaults();
  ASSERT_TRUE(t.Find("gpt-4o").has_value());
  EXPECT_DOUBLE_EQ(t.Find("gpt-4o")->input_per_mtok, 2.50);
  EXPECT_DOUBLE_EQ(t.Find("gpt-4o-2024-08-06")->output_per_mtok, 10.00);
  // "gpt-4o-mini-..." must find gpt-4o-mini, not the shorter gpt-4o.
  EXPECT_DOUBLE_EQ(t.Find("gpt-4o-mini-2024-07-18")->input_per_mtok, 0.15);
  EXPECT_DOUBLE_EQ(t.Find("claude-sonnet-4-20250514")->output_per_mtok, 15.00);
  EXPECT_DOUBLE_EQ(t.Find("openai/gpt-4.1-mini")->input_per_mtok, 0.40);
  EXPECT_FALSE(t.Find("llama3.2:1b").has_value());
  EXPECT_FALSE(t.Find("").has_value());
}

TEST(PriceTableTest, CostOfUsage) {
  PriceTable t = PriceTable::Defaults();
  EXPECT_DOUBLE_EQ(t.CostUsd("gpt-4o", Usage{1'000'000, 1'000'000}), 12.50);
  EXPECT_DOUBLE_EQ(t.CostUsd("claude-opus-4-1", Usage{1000, 2000}),
                   (1000 * 15.0 + 2000 * 75.0) / 1e6);
  EXPECT_DOUBLE_EQ(t.CostUsd("unknown-model", Usage{1000, 1000}), 0.0);
}

TEST(PriceTableTest, MergeJsonOverridesAndAdds) {
  PriceTable t = PriceTable::Defaults();
  MEND_ASSERT_OK(t.MergeJson(R"({"gpt-4o": {"input_per_mtok": 1, "output_per_mtok": 2},
                                 "llama3": {"input_per_mtok": 0, "output_per_mtok": 0.5}})"));
  EXPECT_DOUBLE_EQ(t.Find("gpt-4o")->input_per_mtok, 1.0);
  EXPECT_DOUBLE_EQ(t.Find("llama3:8b")->output_per_mtok, 0.5);
  EXPECT_DOUBLE_EQ(t.Find("gpt-4o-mini")->input_per_mtok, 0.15);  // untouched default
}

TEST(PriceTableTest, InvalidJsonNamesModelAndKeyAndMergesNothing) {
  PriceTable t = PriceTable::Defaults();
  size_t before = t.size();
  EXPECT_THAT(t.MergeJson(R"({"new-model": {"input_per_mtok": 1, "output_per_mtok": 1},
                              "gpt-4o": {"input_per_mtok": -1, "output_per_mtok": 2}})"),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("\"gpt-4o\": \"input_per_mtok\" must be a non-negative number")));
  EXPECT_THAT(t.MergeJson(R"({"m": {"input_per_mtok": 1}})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("missing \"output_per_mtok\"")));
  EXPECT_THAT(t.MergeJson(R"({"m": 3})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("\"m\"")));
  EXPECT_THAT(t.MergeJson("[1,2]"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(t.MergeJson("{not json"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(t.size(), before);
  EXPECT_DOUBLE_EQ(t.Find("gpt-4o")->input_per_mtok, 2.50);
}

TEST(LoadPriceFileTest, MergesFileOverDefaults) {
  MemoryFileSystem fs;
  MEND_ASSERT_OK(WriteFileAtomically(
      fs, "/prices.json", R"({"gpt-4o": {"input_per_mtok": 5, "output_per_mtok": 20}})"));
  Result<PriceTable> t = LoadPriceFile(fs, "/prices.json");
  MEND_ASSERT_OK(t);
  EXPECT_DOUBLE_EQ(t->Find("gpt-4o")->input_per_mtok, 5.0);
  EXPECT_TRUE(t->Find("claude-opus-4").has_value());
}

TEST(LoadPriceFileTest, MissingAndInvalidFiles) {
  MemoryFileSystem fs;
  EXPECT_THAT(LoadPriceFile(fs, "/nope.json"),
              StatusIs(StatusCode::kNotFound, HasSubstr("/nope.json")));
  MEND_ASSERT_OK(WriteFileAtomically(fs, "/bad.json", R"({"x": {"input_per_mtok": "cheap"}})"));
  EXPECT_THAT(LoadPriceFile(fs, "/bad.json"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("/bad.json")));
}

}  // namespace
}  // namespace mend::llm
