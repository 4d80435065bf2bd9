// `mend memory search` and `mend memory recall` through the real `mend` executable: the order a
// person sees in `search` is the order runs get (`recall` shows what a run receives), and a small
// memory works.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

using ::testing::Contains;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kTask[] = "run the database migrations before deploying a service to production";

class MemorySearchE2eTest : public E2eTest {
 protected:
  // `mend --home <dir>/home --json args...`; its stdout parsed (null when it is not JSON).
  nlohmann::json MendJson(const std::vector<std::string>& args) { return E2eTest::MendJson(args); }

  static std::vector<std::string> Ids(const nlohmann::json& list) {
    std::vector<std::string> ids;
    if (!list.is_array()) return ids;
    for (const nlohmann::json& item : list) ids.push_back(item.value("id", ""));
    return ids;
  }
};

TEST_F(MemorySearchE2eTest, SearchAndRecallAgreeOnOrder) {
  // A family of near-identical lessons (imported, so they are not merged) and one other lesson:
  // diversification moves the other one up, in the ranking runs get and so in `search`.
  nlohmann::json facts = nlohmann::json::array();
  for (const char* team : {"payments", "billing", "ledger", "invoices"}) {
    facts.push_back({{"content", std::string("Run the database migrations before deploying the ") +
                                     team + " service to production"},
                     {"category", "lesson"}});
  }
  facts.push_back({{"content",
                    "Production deploys of a service wait for its smoke tests and its database "
                    "migrations"},
                   {"category", "lesson"}});
  facts.push_back({{"content", "The team prefers tabs over spaces in Makefiles."}});
  auto file = dir_->WriteFile("memory_index.json", facts.dump());
  MEND_ASSERT_OK(file);
  EXPECT_EQ(
      MendJson({"memory", "import", *file}),
      (nlohmann::json{{"imported", 6}, {"skipped", 0}, {"unusable", nlohmann::json::array()}}));

  const std::vector<std::string> searched =
      Ids(MendJson({"memory", "search", kTask, "-k", "10"})["results"]);
  const std::vector<std::string> injected = Ids(MendJson({"memory", "recall", kTask})["facts"]);
  ASSERT_GE(injected.size(), 3u);
  // What a run receives is the search ranking with the facts that lack evidence of their own
  // left out: the same facts in the same order.
  std::vector<std::string> searched_and_injected;
  for (const std::string& id : searched) {
    if (std::find(injected.begin(), injected.end(), id) != injected.end()) {
      searched_and_injected.push_back(id);
    }
  }
  EXPECT_EQ(searched_and_injected, injected);
  // Both start with the same fact, and a shorter search is a prefix of the longer one.
  EXPECT_EQ(searched.front(), injected.front());
  const std::vector<std::string> top3 =
      Ids(MendJson({"memory", "search", kTask, "-k", "3"})["results"]);
  EXPECT_EQ(top3, std::vector<std::string>(searched.begin(), searched.begin() + 3));
}

TEST_F(MemorySearchE2eTest, ASmallMemoryRecallsAFactFromItsOwnText) {
  const std::vector<std::string> texts = {
      "Deploy payments after running the database migrations",
      "Database migrations must run before the payments deploy",
      "Payments deploy checklist: migrations, then smoke tests",
      "Rotate the API keys of the payments service monthly",
      "The staging database is reset every night",
  };
  std::vector<std::string> ids;
  for (const std::string& text : texts) ids.push_back(MendJson({"memory", "add", text})["id"]);

  const nlohmann::json recall = MendJson({"memory", "recall", texts[0]});
  EXPECT_THAT(Ids(recall["facts"]), Contains(ids[0]));
  EXPECT_THAT(Ids(recall["facts"]), Not(Contains(ids[3])));
  EXPECT_TRUE(recall["reason"].is_null());

  const std::vector<std::string> searched = Ids(
      MendJson({"memory", "search",
                "deploy the payments service; the database migrations have not run"})["results"]);
  ASSERT_FALSE(searched.empty());
  EXPECT_NE(searched.front(), ids[3]);

  const nlohmann::json unrelated =
      MendJson({"memory", "recall", "write a haiku about autumn leaves"});
  EXPECT_THAT(unrelated["facts"], IsEmpty());
  EXPECT_EQ(unrelated["reason"], "below the relevance gate");
}

}  // namespace
}  // namespace mend::testing
