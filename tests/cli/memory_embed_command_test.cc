// `mend memory import | add | embed | stats | search` with an embeddings endpoint: the project's
// fake OpenAI-compatible server, over real HTTP.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/memory_command.h"
#include "tests/cli/cli_home_test.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/status_matchers.h"

namespace mend::cli {
namespace {

using ::mend::testing::FakeLlmServer;
using ::mend::testing::FakeResponse;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kModel[] = "openai:text-embedding-3-small";

// Occurrences of `needle` in `text`.
size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

class MemoryEmbedCommandTest : public CliHomeTest {
 protected:
  void SetUp() override {
    CliHomeTest::SetUp();
    auto server = FakeLlmServer::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(server).value();
    env_["MEND_EMBEDDINGS_URL"] = server_->base_url();
    env_["MEND_EMBEDDINGS_BATCH"] = "64";
    env_["MEND_EMBEDDINGS_RETRY_DELAY"] = "0s";
    // One request at a time, so the server answers the batches in order (the scripted failures
    // hit the batch they are meant for). ImportWithConcurrentRequests uses the default.
    env_["MEND_EMBEDDINGS_CONCURRENCY"] = "1";
  }

  // A chatcli-format file of `n` facts with ids f0000..., numbered from `first`.
  std::string FactsFile(int n, int first = 0) {
    nlohmann::json facts = nlohmann::json::array();
    for (int i = first; i < first + n; ++i) {
      char id[32];
      std::snprintf(id, sizeof(id), "f%023d", i);
      facts.push_back({{"id", id},
                       {"content", "fact " + std::to_string(i) + " on deploy step " +
                                       std::to_string(i * 7919 % 100003)},
                       {"category", i % 4 == 0 ? "lesson" : "general"},
                       {"created_at", "2026-01-01T00:00:00Z"},
                       {"last_accessed", "2026-01-01T00:00:00Z"},
                       {"access_count", 0},
                       {"score", 0},
                       {"provenance", "user"}});
    }
    const std::string path = dir_ + "/facts-" + std::to_string(first) + ".json";
    Write(path, facts.dump());
    return path;
  }

  // The number of texts of each embeddings request the server received.
  std::vector<size_t> Batches() const {
    std::vector<size_t> sizes;
    for (const auto& r : server_->requests()) {
      if (r.path != "/v1/embeddings") continue;
      nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
      sizes.push_back(body.is_object() ? body["input"].size() : 0);
    }
    return sizes;
  }

  // The configured model's entry of `memory stats --json`.
  nlohmann::json Coverage(const std::string& model = kModel) {
    EXPECT_EQ(Mend({"memory", "stats", "--json"}), 0) << err();
    const nlohmann::json stats = Json();
    for (const nlohmann::json& e : stats["embeddings"]) {
      if (e["model"] == model) return e;
    }
    ADD_FAILURE() << "no model " << model << " in " << out();
    return {};
  }

  std::unique_ptr<FakeLlmServer> server_;
};

TEST_F(MemoryEmbedCommandTest, ImportEmbedsEveryFactInBatchesOfTheConfiguredSize) {
  env_["MEND_EMBEDDINGS_BATCH"] = "100";
  ASSERT_EQ(Mend({"memory", "import", FactsFile(1000), "--json"}), 0) << err();
  EXPECT_EQ(Json()["imported"], 1000);
  EXPECT_EQ(Json()["embedded"], 1000);
  EXPECT_EQ(Json()["not_embedded"], 0);
  EXPECT_EQ(err(), "");
  EXPECT_EQ(Batches(), std::vector<size_t>(10, 100));
  nlohmann::json coverage = Coverage();
  EXPECT_EQ(coverage["with_vectors"], 1000);
  EXPECT_EQ(coverage["without_vectors"], 0);
  EXPECT_EQ(coverage["dimension"], 8);
  EXPECT_EQ(coverage["configured"], true);
  EXPECT_EQ(Json()["facts"], 1000);
  // Searching a covered store warns of nothing.
  ASSERT_EQ(Mend({"memory", "search", "deploy", "step", "--json"}), 0) << err();
  EXPECT_EQ(err(), "");
}

TEST_F(MemoryEmbedCommandTest, ImportWithConcurrentRequestsSendsEveryTextOnce) {
  env_.erase("MEND_EMBEDDINGS_CONCURRENCY");  // the default, 4
  ASSERT_EQ(Mend({"memory", "import", FactsFile(1000), "--json"}), 0) << err();
  EXPECT_EQ(Json()["embedded"], 1000);
  std::vector<size_t> batches = Batches();
  std::sort(batches.begin(), batches.end());
  std::vector<size_t> expected(15, 64);
  expected.insert(expected.begin(), 40);
  EXPECT_EQ(batches, expected);
  EXPECT_EQ(Coverage()["with_vectors"], 1000);
}

TEST_F(MemoryEmbedCommandTest, EndpointDownLosesNoFactAndEmbedCompletesThemLater) {
  server_.reset();  // nothing listens at the configured address now
  ASSERT_EQ(Mend({"memory", "import", FactsFile(200)}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("imported 200"));
  EXPECT_THAT(out(), HasSubstr("embedded 0, not embedded 200"));
  EXPECT_EQ(Count(err(), "\n"), 1u) << err();
  EXPECT_THAT(err(), HasSubstr("warning: 200 facts have no vector for " + std::string(kModel)));
  EXPECT_THAT(err(), HasSubstr("/v1/embeddings"));
  EXPECT_THAT(err(), HasSubstr("mend memory embed"));
  ASSERT_EQ(Mend({"memory", "list", "--json"}), 0) << err();
  EXPECT_EQ(Json()["facts"].size(), 200u);

  auto server = FakeLlmServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  server_ = std::move(server).value();
  env_["MEND_EMBEDDINGS_URL"] = server_->base_url();
  ASSERT_EQ(Mend({"memory", "embed", "--json"}), 0) << err();
  EXPECT_EQ(Json()["embedded"], 200);
  EXPECT_EQ(Json()["not_embedded"], 0);
  EXPECT_EQ(Json()["texts"], 200);
  EXPECT_EQ(Json()["requests"], 4);
  EXPECT_EQ(Batches(), (std::vector<size_t>{64, 64, 64, 8}));
  ASSERT_EQ(Mend({"memory", "embed"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("embedded 0 facts"));
  EXPECT_EQ(server_->request_count(), 4u);  // the second run sent nothing
  EXPECT_EQ(Coverage()["with_vectors"], 200);
}

TEST_F(MemoryEmbedCommandTest, AnEndpointFailingHalfwayKeepsWhatWasEmbeddedAndEmbedFinishes) {
  for (int i = 0; i < 3; ++i) server_->Enqueue(FakeResponse{});
  FakeResponse failure;
  failure.status = 500;
  failure.error_message = "the embeddings backend is overloaded";
  for (int i = 0; i < 4; ++i) server_->Enqueue(failure);  // memory.embeddings.max_attempts
  ASSERT_EQ(Mend({"memory", "import", FactsFile(300), "--json"}), 0) << err();
  EXPECT_EQ(Json()["imported"], 300);
  EXPECT_EQ(Json()["embedded"], 192);
  EXPECT_EQ(Json()["not_embedded"], 108);
  EXPECT_EQ(Batches(), (std::vector<size_t>{64, 64, 64, 64, 64, 64, 64}));
  EXPECT_THAT(err(), HasSubstr("warning: 108 facts have no vector"));
  EXPECT_THAT(err(), HasSubstr("overloaded"));
  nlohmann::json coverage = Coverage();
  EXPECT_EQ(coverage["with_vectors"], 192);
  EXPECT_EQ(coverage["without_vectors"], 108);

  server_->ClearRequests();
  ASSERT_EQ(Mend({"memory", "embed", "--json"}), 0) << err();
  EXPECT_EQ(Json()["embedded"], 108);
  EXPECT_EQ(Batches(), (std::vector<size_t>{64, 44}));
  EXPECT_EQ(Coverage()["without_vectors"], 0);
}

TEST_F(MemoryEmbedCommandTest, EmbedThatCannotFinishFailsWithTheCountAndTheCause) {
  env_["MEND_EMBEDDINGS_API_KEY"] = "sk-test-0123456789abcdefSECRET";
  server_->RequireApiKey("another-key");
  ASSERT_EQ(Mend({"memory", "import", FactsFile(10)}), 0) << err();
  EXPECT_THAT(err(), HasSubstr("warning: 10 facts have no vector"));
  EXPECT_THAT(err(), Not(HasSubstr("SECRET")));
  EXPECT_EQ(server_->request_count(), 1u);  // a refused key is not retried
  EXPECT_EQ(Mend({"memory", "embed", "--json"}), 1);
  EXPECT_EQ(Json()["embedded"], 0);
  EXPECT_EQ(Json()["not_embedded"], 10);
  EXPECT_THAT(err(), HasSubstr("10 facts still have no vector"));
  EXPECT_THAT(err(), HasSubstr("401"));
  EXPECT_THAT(err(), Not(HasSubstr("SECRET")));
  EXPECT_EQ(Count(err(), "mend:"), 1u) << err();
}

TEST_F(MemoryEmbedCommandTest, SearchAndRecallOnAPartlyEmbeddedStoreWarnOnceOnStderrOnly) {
  ASSERT_EQ(Mend({"memory", "import", FactsFile(5)}), 0) << err();
  const std::string url = env_["MEND_EMBEDDINGS_URL"];
  env_["MEND_EMBEDDINGS_URL"] = "http://127.0.0.1:9";  // closed: the next facts get no vector
  ASSERT_EQ(Mend({"memory", "import", FactsFile(3, 100)}), 0) << err();
  env_["MEND_EMBEDDINGS_URL"] = url;

  ASSERT_EQ(Mend({"memory", "search", "deploy", "step", "--json"}), 0) << err();
  const nlohmann::json results = Json();
  ASSERT_TRUE(results.is_object()) << out();
  EXPECT_EQ(JsonKeys(results), (std::set<std::string>{"results"}));
  EXPECT_FALSE(results["results"].empty());
  EXPECT_THAT(out(), Not(HasSubstr("warning")));
  EXPECT_EQ(Count(err(), "\n"), 1u) << err();
  EXPECT_THAT(err(), HasSubstr("warning: 3 of 8 facts have no vector for " + std::string(kModel)));
  EXPECT_THAT(err(), HasSubstr("mend memory embed"));

  ASSERT_EQ(Mend({"memory", "search", "deploy", "step"}), 0) << err();
  EXPECT_THAT(out(), Not(HasSubstr("warning")));
  EXPECT_EQ(Count(err(), "warning"), 1u) << err();

  ASSERT_EQ(Mend({"memory", "recall", "deploy step 7919", "--json"}), 0) << err();
  EXPECT_TRUE(Json().is_object()) << out();
  EXPECT_THAT(out(), Not(HasSubstr("warning")));
  EXPECT_EQ(Count(err(), "warning"), 1u) << err();

  ASSERT_EQ(Mend({"memory", "embed"}), 0) << err();
  ASSERT_EQ(Mend({"memory", "search", "deploy", "step"}), 0) << err();
  EXPECT_EQ(err(), "");
}

TEST_F(MemoryEmbedCommandTest, AnotherModelEmbedsEverythingAgainAndKeepsTheOldVectors) {
  ASSERT_EQ(Mend({"memory", "import", FactsFile(70)}), 0) << err();
  server_->ClearRequests();
  ASSERT_EQ(Mend({"memory", "embed", "--model", "text-embedding-3-large", "--json"}), 0) << err();
  EXPECT_EQ(Json()["model"], "openai:text-embedding-3-large");
  EXPECT_EQ(Json()["embedded"], 70);
  EXPECT_EQ(Batches(), (std::vector<size_t>{64, 6}));
  for (const auto& r : server_->requests()) {
    EXPECT_EQ(nlohmann::json::parse(r.body)["model"], "text-embedding-3-large");
  }
  EXPECT_EQ(Coverage()["with_vectors"], 70);
  EXPECT_EQ(Coverage("openai:text-embedding-3-large")["with_vectors"], 70);
  EXPECT_EQ(Coverage("openai:text-embedding-3-large")["configured"], false);

  // Switching the configuration to the new model: covered already, nothing to send or warn about.
  env_["MEND_EMBEDDINGS_MODEL"] = "text-embedding-3-large";
  server_->ClearRequests();
  ASSERT_EQ(Mend({"memory", "embed", "--json"}), 0) << err();
  EXPECT_EQ(Json()["embedded"], 0);
  EXPECT_EQ(Batches().size(), 0u);
  ASSERT_EQ(Mend({"memory", "search", "deploy"}), 0) << err();
  EXPECT_EQ(err(), "");
  EXPECT_EQ(Batches(), (std::vector<size_t>{1}));  // the query's own vector
}

TEST_F(MemoryEmbedCommandTest, AddEmbedsTheFactItWrote) {
  ASSERT_EQ(Mend({"memory", "add", "Run the migrations before deploying", "--json"}), 0) << err();
  EXPECT_EQ(Json()["result"], "added");
  EXPECT_EQ(Json()["embedded"], 1);
  EXPECT_EQ(Json()["not_embedded"], 0);
  EXPECT_EQ(Batches(), (std::vector<size_t>{1}));
  // The same text again reinforces the fact: it has its vector already.
  ASSERT_EQ(Mend({"memory", "add", "Run the migrations before deploying", "--json"}), 0) << err();
  EXPECT_EQ(Json()["result"], "reinforced");
  EXPECT_EQ(Json()["embedded"], 0);
  EXPECT_EQ(Batches().size(), 1u);
}

TEST_F(MemoryEmbedCommandTest, StatsShowsCategoriesAndCoverage) {
  ASSERT_EQ(Mend({"memory", "import", FactsFile(8)}), 0) << err();
  ASSERT_EQ(Mend({"memory", "stats", "--json"}), 0) << err();
  const nlohmann::json stats = Json();
  EXPECT_EQ(stats["facts"], 8);
  EXPECT_EQ(stats["superseded"], 0);
  EXPECT_EQ(stats["categories"], nlohmann::json::parse(R"([{"category":"general","facts":6},
                                      {"category":"lesson","facts":2}])"));
  ASSERT_EQ(Mend({"memory", "stats"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("facts: 8 active, 0 superseded"));
  EXPECT_THAT(out(), HasSubstr(std::string(kModel) + " *"));
  EXPECT_THAT(out(), HasSubstr("WITHOUT VECTORS"));

  env_.erase("MEND_EMBEDDINGS_URL");
  ASSERT_EQ(Mend({"memory", "stats"}), 0) << err();
  EXPECT_THAT(out(), Not(HasSubstr(" *")));  // no configured model, the stored vectors listed
  EXPECT_THAT(out(), HasSubstr(kModel));
  EXPECT_EQ(Mend({"memory", "embed"}), 1);
  EXPECT_THAT(err(), HasSubstr("memory.embeddings.url"));
}

TEST(EmbedProgressTextTest, SaysFactsDoneOfTotalAndTheRate) {
  memory::EmbedProgress p;
  p.facts_done = 640;
  p.facts_total = 3041;
  p.texts = 1280;
  EXPECT_EQ(memory_cli::EmbedProgressText(p, std::chrono::milliseconds(500)),
            "embedding: 640/3041 facts, 2560 texts/s");
  p.retries = 2;
  EXPECT_EQ(memory_cli::EmbedProgressText(p, Duration::zero()),
            "embedding: 640/3041 facts, 2 retried");
}

}  // namespace
}  // namespace mend::cli
