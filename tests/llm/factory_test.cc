#include "mend/llm/factory.h"

#include <gtest/gtest.h>

#include "mend/base/memory_file_system.h"
#include "tests/llm/llm_test_util.h"

namespace mend::llm {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

class FactoryTest : public ::testing::Test {
 protected:
  Env env() {
    Env e;
    e.fs = &fs_;
    return e;
  }
  MemoryFileSystem fs_;
};

TEST_F(FactoryTest, UnknownKindListsAcceptedValues) {
  ProviderOptions o;
  o.kind = "gemini";
  EXPECT_THAT(CreateProvider(o, env()),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("openai, anthropic, scripted")));
  EmbedderOptions e;
  e.kind = "word2vec";
  EXPECT_THAT(CreateEmbedder(e, env()),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("hashing, openai")));
}

TEST_F(FactoryTest, MissingRequiredOptions) {
  ProviderOptions o;
  o.kind = "openai";
  EXPECT_THAT(CreateProvider(o, env()), StatusIs(StatusCode::kInvalidArgument, HasSubstr("model")));
  o.kind = "scripted";
  EXPECT_THAT(CreateProvider(o, env()),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("script file")));
  EmbedderOptions e;
  e.kind = "openai";
  EXPECT_THAT(CreateEmbedder(e, env()), StatusIs(StatusCode::kInvalidArgument, HasSubstr("model")));
}

TEST_F(FactoryTest, ScriptedProviderWithPriceFile) {
  MEND_ASSERT_OK(
      WriteFileAtomically(fs_, "/script.json", R"([{"text": "hi", "input_tokens": 1000000}])"));
  MEND_ASSERT_OK(WriteFileAtomically(
      fs_, "/prices.json", R"({"my-model": {"input_per_mtok": 4, "output_per_mtok": 8}})"));
  ProviderOptions o;
  o.kind = "scripted";
  o.script_file = "/script.json";
  o.prices_file = "/prices.json";
  auto p = CreateProvider(o, env());
  MEND_ASSERT_OK(p);
  EXPECT_EQ((*p)->name(), "scripted");
  CompletionRequest r = test::UserAsks("q");
  r.model = "my-model";
  Result<Completion> c = (*p)->Complete(r);
  MEND_ASSERT_OK(c);
  EXPECT_DOUBLE_EQ(c->cost_usd, 4.0);
}

TEST_F(FactoryTest, BadPriceFileFailsCreation) {
  MEND_ASSERT_OK(WriteFileAtomically(fs_, "/prices.json", R"({"m": {"input_per_mtok": "x"}})"));
  ProviderOptions o;
  o.kind = "openai";
  o.model = "gpt-4o";
  o.prices_file = "/prices.json";
  EXPECT_THAT(CreateProvider(o, env()),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("/prices.json")));
  o.prices_file = "/absent.json";
  EXPECT_THAT(CreateProvider(o, env()), StatusIs(StatusCode::kNotFound));
}

TEST_F(FactoryTest, HashingEmbedder) {
  EmbedderOptions e;
  e.dimension = 32;
  auto emb = CreateEmbedder(e, env());
  MEND_ASSERT_OK(emb);
  EXPECT_EQ((*emb)->dimension(), 32);
  e.dimension = 0;
  EXPECT_THAT(CreateEmbedder(e, env()), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace mend::llm
