#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/llm/llm_test_util.h"

namespace mend::llm {
namespace {

using ::mend::llm::test::ExpectNoSecret;
using ::mend::llm::test::kSecretKey;
using ::mend::llm::test::StartServer;
using ::mend::testing::FakeLlmServer;
using ::mend::testing::FakeResponse;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;
using Json = nlohmann::json;

class OpenAiEmbedderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = StartServer();
    ASSERT_NE(server_, nullptr);
    embedder_ = Make(0);
    ASSERT_NE(embedder_, nullptr);
  }

  std::unique_ptr<Embedder> Make(int dimension) {
    EmbedderOptions o;
    o.kind = "openai";
    o.model = "text-embedding-3-small";
    o.base_url = server_->base_url();
    o.api_key = kSecretKey;
    o.dimension = dimension;
    auto e = CreateEmbedder(o, Env{});
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? std::move(e).value() : nullptr;
  }

  std::unique_ptr<FakeLlmServer> server_;
  std::unique_ptr<Embedder> embedder_;
};

TEST_F(OpenAiEmbedderTest, EmbedsInInputOrder) {
  FakeResponse r;
  r.embeddings = {{1, 0, 0}, {0, 1, 0}};
  server_->Enqueue(r);
  auto v = embedder_->Embed({"first", "second"});
  MEND_ASSERT_OK(v);
  ASSERT_EQ(v->size(), 2u);
  EXPECT_EQ((*v)[0], (std::vector<float>{1, 0, 0}));
  EXPECT_EQ((*v)[1], (std::vector<float>{0, 1, 0}));
  EXPECT_EQ(embedder_->dimension(), 3);
  EXPECT_EQ(embedder_->model_id(), "openai:text-embedding-3-small");
  auto req = server_->requests().back();
  EXPECT_EQ(req.path, "/v1/embeddings");
  EXPECT_EQ(Json::parse(req.body)["input"], Json::array({"first", "second"}));
  EXPECT_EQ(Json::parse(req.body)["model"], "text-embedding-3-small");
}

TEST_F(OpenAiEmbedderTest, OrdersByIndexField) {
  FakeResponse r;
  r.raw_body = R"({"object":"list","data":[
      {"object":"embedding","index":1,"embedding":[0.0,2.0]},
      {"object":"embedding","index":0,"embedding":[1.0,0.0]}]})";
  server_->Enqueue(r);
  auto v = embedder_->Embed({"a", "b"});
  MEND_ASSERT_OK(v);
  EXPECT_EQ((*v)[0], (std::vector<float>{1, 0}));
  EXPECT_EQ((*v)[1], (std::vector<float>{0, 2}));
}

TEST_F(OpenAiEmbedderTest, DimensionMismatchIsABadResponse) {
  auto e = Make(16);
  FakeResponse r;
  r.embeddings = {{1, 0, 0}};
  server_->Enqueue(r);
  auto v = e->Embed({"x"});
  EXPECT_THAT(v, StatusIs(StatusCode::kUnavailable, HasSubstr("expected 16")));

  FakeResponse ragged;
  ragged.embeddings = {{1, 0}, {1, 0, 0}};
  server_->Enqueue(ragged);
  EXPECT_THAT(embedder_->Embed({"a", "b"}), StatusIs(StatusCode::kUnavailable));
}

TEST_F(OpenAiEmbedderTest, ErrorsFollowTheTaxonomy) {
  FakeResponse down;
  down.status = 500;
  auto v = embedder_->Embed({"x"});  // default response: works
  MEND_ASSERT_OK(v);
  server_->Enqueue(down);
  Result<std::vector<std::vector<float>>> e = embedder_->Embed({"x"});
  EXPECT_THAT(e, StatusIs(StatusCode::kUnavailable));
  ExpectNoSecret(e.status());
  FakeResponse missing;
  missing.raw_body = R"({"data":[]})";
  server_->Enqueue(missing);
  EXPECT_THAT(embedder_->Embed({"x"}), StatusIs(StatusCode::kUnavailable));
  server_->RequireApiKey("other");
  Result<std::vector<std::vector<float>>> auth = embedder_->Embed({"x"});
  EXPECT_THAT(auth, StatusIs(StatusCode::kUnauthenticated));
  ExpectNoSecret(auth.status());
}

TEST_F(OpenAiEmbedderTest, AsksForBase64AndDecodesLittleEndianFloats) {
  FakeResponse r;
  r.embeddings = {{1.5f, -0.25f, 3e-8f}, {0.0f, 1.0f, -2.0f}};
  server_->Enqueue(r);
  auto v = embedder_->Embed({"first", "second"});
  MEND_ASSERT_OK(v);
  EXPECT_EQ((*v)[0], (std::vector<float>{1.5f, -0.25f, 3e-8f}));
  EXPECT_EQ((*v)[1], (std::vector<float>{0.0f, 1.0f, -2.0f}));
  EXPECT_EQ(Json::parse(server_->requests().back().body)["encoding_format"], "base64");

  // What OpenAI sends for [1.0, -1.0]: 0x3f800000 and 0xbf800000, little-endian.
  FakeResponse raw;
  raw.raw_body = R"({"object":"list","data":[{"object":"embedding","index":0,
      "embedding":"AACAPwAAgL8="}]})";
  server_->Enqueue(raw);
  auto exact = Make(0)->Embed({"x"});
  MEND_ASSERT_OK(exact);
  EXPECT_EQ((*exact)[0], (std::vector<float>{1.0f, -1.0f}));

  FakeResponse bad;
  bad.raw_body = R"({"data":[{"index":0,"embedding":"AACAPwA"}]})";  // not whole floats
  server_->Enqueue(bad);
  EXPECT_THAT(Make(0)->Embed({"x"}), StatusIs(StatusCode::kUnavailable, HasSubstr("float32")));
}

TEST_F(OpenAiEmbedderTest, LongVectorsAndEscapedStringsAroundThemAreReadExactly) {
  std::vector<float> a(1536), b(1536);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(i) / 7.0f;
    b[i] = -static_cast<float>(i) * 3.5f;
  }
  FakeResponse r;
  r.embeddings = {a, b};
  server_->Enqueue(r);
  auto v = embedder_->Embed({"one", "two", "three"});
  MEND_ASSERT_OK(v);
  EXPECT_EQ((*v)[0], a);
  EXPECT_EQ((*v)[1], b);
  EXPECT_EQ((*v)[2], a);

  // A long string with escapes stays in the document; a marker an endpoint spells itself only
  // names one of its own long strings, and one naming none is a bad response.
  std::string long_text(300, 'q');
  FakeResponse odd;
  odd.raw_body = R"({"model":")" + long_text +
                 R"(\"quoted\"","data":[{"index":0,"embedding":"AACAPwAAgL8="}]})";
  server_->Enqueue(odd);
  auto e = Make(0)->Embed({"x"});
  MEND_ASSERT_OK(e);
  EXPECT_EQ((*e)[0], (std::vector<float>{1.0f, -1.0f}));
  FakeResponse forged;
  forged.raw_body = R"({"data":[{"index":0,"embedding":"\u00007"}]})";
  server_->Enqueue(forged);
  EXPECT_THAT(Make(0)->Embed({"x"}), StatusIs(StatusCode::kUnavailable, HasSubstr("unreadable")));
}

TEST_F(OpenAiEmbedderTest, AnEndpointRefusingBase64IsAskedForNumbersFromThenOn) {
  FakeResponse refused;
  refused.status = 400;
  refused.error_message = "unknown field encoding_format";
  server_->Enqueue(refused);
  auto v = embedder_->Embed({"x"});
  MEND_ASSERT_OK(v);
  EXPECT_EQ(v->at(0).size(), 8u);
  ASSERT_EQ(server_->request_count(), 2u);
  EXPECT_FALSE(Json::parse(server_->requests()[1].body).contains("encoding_format"));
  MEND_ASSERT_OK(embedder_->Embed({"y"}));
  ASSERT_EQ(server_->request_count(), 3u);
  EXPECT_FALSE(Json::parse(server_->requests()[2].body).contains("encoding_format"));
}

TEST_F(OpenAiEmbedderTest, ARequestRefusedEitherWayIsAnErrorAndBase64StaysOn) {
  FakeResponse refused;
  refused.status = 400;
  refused.error_message = "input too long";
  server_->Enqueue(refused);
  server_->Enqueue(refused);
  EXPECT_THAT(embedder_->Embed({"x"}), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(server_->request_count(), 2u);
  MEND_ASSERT_OK(embedder_->Embed({"y"}));
  EXPECT_EQ(Json::parse(server_->requests().back().body)["encoding_format"], "base64");
}

TEST_F(OpenAiEmbedderTest, EmptyInputNeedsNoRequest) {
  auto v = embedder_->Embed({});
  MEND_ASSERT_OK(v);
  EXPECT_TRUE(v->empty());
  EXPECT_EQ(server_->request_count(), 0u);
}

}  // namespace
}  // namespace mend::llm
