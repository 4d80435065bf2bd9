// /api/v1/memory: search, recall, list, add, show and delete over a real server and fact store.
#include <gmock/gmock.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "memory/memory_section.h"
#include "mend/app/memory_hooks.h"
#include "mend/base/manual_clock.h"
#include "tests/server/server_fixture.h"
#include "tests/support/fake_llm_server.h"

namespace mend::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kLesson[] =
    "Before deploying the payments service, run the database migrations first.";
constexpr char kRelatedTask[] = "deploying the payments service, with its database migrations";
constexpr char kUnrelatedTask[] = "write a haiku about autumn leaves";
constexpr const char* kFillers[] = {
    "The team prefers tabs over spaces in Makefiles.",
    "Use the cluster named blue-7 for load tests.",
    "Release notes are written in the CHANGELOG file at the repository root.",
    "Unit tests must not sleep; use the manual clock instead.",
};
constexpr char kSecret[] = "sk-test-never-shown-4242";
constexpr char kToken[] = "serve-token-never-shown-77";

std::set<std::string> Keys(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

std::string Q(const std::string& value) { return httplib::detail::encode_query_param(value); }

const std::set<std::string> kFactKeys = {
    "id",     "content",    "category",      "tags",          "workspace",
    "source", "confidence", "created_at",    "last_accessed", "access_count",
    "helped", "hurt",       "superseded_by", "provenance"};

class MemoryApiTest : public ServerTest {
 protected:
  // Facts "fact-0".."fact-<n-1>", each `seconds_apart` newer than the one before.
  static std::vector<memory::Fact> Facts(int n, int seconds_apart) {
    std::vector<memory::Fact> facts;
    for (int i = 0; i < n; ++i) {
      memory::Fact fact;
      fact.id = "fact-" + std::to_string(i);
      fact.content = "imported fact number " + std::to_string(i);
      fact.source = "import";
      fact.created_at = fact.last_accessed =
          Time(std::chrono::seconds(1'700'000'000 + i * seconds_apart));
      facts.push_back(std::move(fact));
    }
    return facts;
  }

  // Adds the fillers and the lesson; returns the lesson's id.
  std::string AddMemory() {
    for (const char* filler : kFillers)
      EXPECT_EQ(Post("/api/v1/memory", {{"text", filler}}).status, 201);
    Reply added =
        Post("/api/v1/memory",
             {{"text", kLesson}, {"category", "lesson"}, {"tags", {"Deploy", " payments"}}});
    EXPECT_EQ(added.status, 201) << added.text;
    return added.body.value("fact_id", "");
  }

  void ExpectError(const Reply& reply, int status, const std::string& code) {
    EXPECT_EQ(reply.status, status) << reply.text;
    EXPECT_EQ(reply.body["error"]["code"], code) << reply.text;
  }
};

TEST_F(MemoryApiTest, AddWakesTheBackfillSoTheFactIsEmbeddedWithoutWaitingForItsPause) {
  // Virtual time never moves here: only the wake-up can make the backfill send the new fact.
  ManualClock clock;
  env_.clock = &clock;
  auto embeddings = testing::FakeLlmServer::Start();
  MEND_ASSERT_OK(embeddings);
  std::mutex mu;
  std::condition_variable cv;
  bool asked = false;
  (*embeddings)->SetRequestObserver([&](const testing::RecordedRequest& r) {
    if (r.body.find("Rotate the signing keys") == std::string::npos) return;
    std::lock_guard<std::mutex> lock(mu);
    asked = true;
    cv.notify_all();
  });
  StartServer({}, {}, {{"memory.embeddings.url", (*embeddings)->base_url()}});
  ASSERT_NE(runtime_->backfill, nullptr);
  runtime_->backfill->Start();
  clock.BlockUntilWaiters(1);  // nothing to embed yet: it waits out its idle pause
  EXPECT_EQ(Post("/api/v1/memory", {{"text", "Rotate the signing keys every quarter"}}).status,
            201);
  {
    std::unique_lock<std::mutex> lock(mu);
    // A bound against hanging only: without the wake-up the request never comes.
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return asked; }));
  }
  server_.reset();
  runtime_.reset();  // before `clock` goes away
}

TEST_F(MemoryApiTest, AddCreatesThenReinforces) {
  StartServer();
  Reply added = Post("/api/v1/memory", {{"text", "run the migrations first"}});
  ASSERT_EQ(added.status, 201) << added.text;
  EXPECT_EQ(Keys(added.body), (std::set<std::string>{"fact_id", "result"}));
  EXPECT_EQ(added.body["result"], "added");
  const std::string id = added.body["fact_id"];
  EXPECT_EQ(id.size(), 24u);

  Reply again = Post("/api/v1/memory", {{"text", "Run the migrations first"}});
  EXPECT_EQ(again.status, 200) << again.text;
  EXPECT_EQ(again.body["fact_id"], id);
  EXPECT_EQ(again.body["result"], "reinforced");
}

TEST_F(MemoryApiTest, AddKeepsCategoryTagsAndWorkspace) {
  StartServer();
  Reply added = Post("/api/v1/memory", {{"text", kLesson},
                                        {"category", "lesson"},
                                        {"tags", {"Deploy", " payments", "deploy"}},
                                        {"workspace", "/srv/app/../shop/"}});
  ASSERT_EQ(added.status, 201) << added.text;
  Reply fact = Get("/api/v1/memory/" + added.body["fact_id"].get<std::string>());
  ASSERT_EQ(fact.status, 200) << fact.text;
  EXPECT_EQ(fact.body["category"], "lesson");
  EXPECT_EQ(fact.body["tags"], (nlohmann::json{"deploy", "payments"}));
  EXPECT_EQ(fact.body["workspace"], "/srv/shop");
  EXPECT_EQ(fact.body["source"], "user");
}

TEST_F(MemoryApiTest, AddRefusesBadBodies) {
  StartServer();
  ExpectError(Post("/api/v1/memory", nlohmann::json::object()), 400, "INVALID_ARGUMENT");
  ExpectError(Post("/api/v1/memory", {{"text", 7}}), 400, "INVALID_ARGUMENT");
  ExpectError(Post("/api/v1/memory", {{"text", "   "}}), 400, "INVALID_ARGUMENT");
  ExpectError(Post("/api/v1/memory", {{"text", "x"}, {"category", 3}}), 400, "INVALID_ARGUMENT");
  ExpectError(Post("/api/v1/memory", {{"text", "x"}, {"tags", "a,b"}}), 400, "INVALID_ARGUMENT");
  ExpectError(Post("/api/v1/memory", {{"text", "x"}, {"tags", {"a", 2}}}), 400, "INVALID_ARGUMENT");
  Reply relative = Post("/api/v1/memory", {{"text", "x"}, {"workspace", "ws"}});
  ExpectError(relative, 400, "INVALID_ARGUMENT");
  EXPECT_THAT(relative.body["error"]["message"].get<std::string>(), HasSubstr("absolute"));
  ExpectError(Post("/api/v1/memory", {{"text", std::string(20 * 1024, 'x')}}), 400,
              "INVALID_ARGUMENT");
  auto not_json = client_->Post("/api/v1/memory", "{not json", "application/json");
  ASSERT_TRUE(not_json);
  EXPECT_EQ(not_json->status, 400);
  // Nothing of the refused bodies was stored.
  EXPECT_EQ(Get("/api/v1/memory").body["total"], 0);
}

TEST_F(MemoryApiTest, ShowHasEveryFieldWithHelpedAndHurt) {
  StartServer();
  const std::string id = AddMemory();
  // A run that received the fact and completed credits it.
  MEND_ASSERT_OK(runtime_->facts->RecordInjection("run-1", {id}));
  MEND_ASSERT_OK(runtime_->facts->RecordOutcome("run-1", /*completed=*/true));
  MEND_ASSERT_OK(runtime_->facts->RecordInjection("run-2", {id}));
  MEND_ASSERT_OK(runtime_->facts->RecordOutcome("run-2", /*completed=*/false));

  Reply fact = Get("/api/v1/memory/" + id);
  ASSERT_EQ(fact.status, 200) << fact.text;
  std::set<std::string> shown = kFactKeys;
  shown.insert({"came_from", "given_to"});
  EXPECT_EQ(Keys(fact.body), shown);
  EXPECT_EQ(fact.body["id"], id);
  EXPECT_EQ(fact.body["content"], kLesson);
  EXPECT_EQ(fact.body["helped"], 1);
  EXPECT_EQ(fact.body["hurt"], 1);
  EXPECT_TRUE(fact.body["superseded_by"].is_null());

  ExpectError(Get("/api/v1/memory/000000000000000000000000"), 404, "NOT_FOUND");
}

TEST_F(MemoryApiTest, DeleteRemovesTheFact) {
  StartServer();
  const std::string id = AddMemory();
  Reply removed = Delete("/api/v1/memory/" + id);
  ASSERT_EQ(removed.status, 200) << removed.text;
  EXPECT_EQ(removed.body, (nlohmann::json{{"id", id}, {"removed", true}}));
  ExpectError(Get("/api/v1/memory/" + id), 404, "NOT_FOUND");
  ExpectError(Delete("/api/v1/memory/" + id), 404, "NOT_FOUND");
  EXPECT_EQ(Get("/api/v1/memory").body["total"], 4);
}

TEST_F(MemoryApiTest, SearchIsTheRankingOfTheCli) {
  StartServer();
  const std::string id = AddMemory();
  Reply found = Get("/api/v1/memory/search?q=" + Q("payments migrations") + "&k=3");
  ASSERT_EQ(found.status, 200) << found.text;
  const nlohmann::json& results = found.body["results"];
  ASSERT_GE(results.size(), 1u);
  EXPECT_LE(results.size(), 3u);
  EXPECT_EQ(Keys(results[0]),
            (std::set<std::string>{"id", "score", "category", "tags", "content"}));
  EXPECT_EQ(results[0]["id"], id);
  // The same ranking `mend memory search` prints.
  auto hits = runtime_->retriever->Search("payments migrations", 3);
  MEND_ASSERT_OK(hits);
  ASSERT_EQ(hits->size(), results.size());
  for (size_t i = 0; i < hits->size(); ++i) EXPECT_EQ(results[i]["id"], (*hits)[i].fact.id);

  EXPECT_EQ(Get("/api/v1/memory/search?q=" + Q("payments") + "&k=1").body["results"].size(), 1u);
  // Hostile query text is just words.
  Reply hostile = Get("/api/v1/memory/search?q=" + Q("\"unbalanced (NEAR * content:x"));
  EXPECT_EQ(hostile.status, 200) << hostile.text;
}

TEST_F(MemoryApiTest, SearchRefusesBadParameters) {
  StartServer();
  ExpectError(Get("/api/v1/memory/search"), 400, "INVALID_ARGUMENT");
  ExpectError(Get("/api/v1/memory/search?q="), 400, "INVALID_ARGUMENT");
  ExpectError(Get("/api/v1/memory/search?q=x&k=0"), 400, "INVALID_ARGUMENT");
  ExpectError(Get("/api/v1/memory/search?q=x&k=1001"), 400, "INVALID_ARGUMENT");
  Reply words = Get("/api/v1/memory/search?q=x&k=ten");
  ExpectError(words, 400, "INVALID_ARGUMENT");
  EXPECT_THAT(words.body["error"]["message"].get<std::string>(), HasSubstr("k must be"));
}

TEST_F(MemoryApiTest, RecallIsExactlyWhatARunWouldGet) {
  StartServer();
  const std::string id = AddMemory();
  Reply recall = Get("/api/v1/memory/recall?task=" + Q(kRelatedTask));
  ASSERT_EQ(recall.status, 200) << recall.text;
  EXPECT_EQ(Keys(recall.body),
            (std::set<std::string>{"facts", "section", "workspace", "reason", "gate"}));
  ASSERT_GE(recall.body["facts"].size(), 1u);
  EXPECT_EQ(recall.body["facts"][0]["id"], id);
  EXPECT_EQ(Keys(recall.body["facts"][0]), (std::set<std::string>{"id", "category", "content"}));
  const std::string section = recall.body["section"];
  EXPECT_THAT(section, StartsWith(memory::kMemorySectionHeading));
  EXPECT_THAT(section, HasSubstr(std::string("- [lesson] ") + kLesson));
  EXPECT_TRUE(recall.body["reason"].is_null());
  // The pre-run hook's own function, for a run started from the server's directory.
  EXPECT_EQ(recall.body["workspace"], runtime_->caller_dir);
  auto run_gets = app::RecallForTask(*runtime_, kRelatedTask, runtime_->caller_dir);
  MEND_ASSERT_OK(run_gets);
  EXPECT_EQ(section, run_gets->section);

  Reply unrelated = Get("/api/v1/memory/recall?task=" + Q(kUnrelatedTask));
  ASSERT_EQ(unrelated.status, 200) << unrelated.text;
  EXPECT_TRUE(unrelated.body["facts"].empty());
  EXPECT_EQ(unrelated.body["section"], "");
  EXPECT_EQ(unrelated.body["reason"], "below the relevance gate");
  // The gate's figures, as `mend memory recall --json` gives them.
  EXPECT_EQ(Keys(unrelated.body["gate"]),
            (std::set<std::string>{"score", "needed", "coverage", "coverage_needed"}));
  EXPECT_LT(unrelated.body["gate"]["score"].get<double>(), unrelated.body["gate"]["needed"]);
}

TEST_F(MemoryApiTest, RecallIsScopedByWorkspace) {
  StartServer();
  for (const char* filler : kFillers)
    ASSERT_EQ(Post("/api/v1/memory", {{"text", filler}}).status, 201);
  ASSERT_EQ(Post("/api/v1/memory", {{"text", kLesson}, {"workspace", "/srv/shop"}}).status, 201);
  Reply there = Get("/api/v1/memory/recall?task=" + Q(kRelatedTask) + "&workspace=/srv/shop/");
  ASSERT_EQ(there.status, 200) << there.text;
  EXPECT_EQ(there.body["workspace"], "/srv/shop");
  EXPECT_THAT(there.body["section"].get<std::string>(), HasSubstr(kLesson));
  Reply elsewhere = Get("/api/v1/memory/recall?task=" + Q(kRelatedTask) + "&workspace=/srv/blog");
  EXPECT_THAT(elsewhere.body["section"].get<std::string>(), Not(HasSubstr(kLesson)));

  ExpectError(Get("/api/v1/memory/recall"), 400, "INVALID_ARGUMENT");
  ExpectError(Get("/api/v1/memory/recall?task=" + Q("   ")), 400, "INVALID_ARGUMENT");
  ExpectError(Get("/api/v1/memory/recall?task=x&workspace=relative/dir"), 400, "INVALID_ARGUMENT");
}

TEST_F(MemoryApiTest, RecallSaysWhyNothingIsInjected) {
  StartServer({}, {}, {{"memory.enabled", "false"}});
  Reply none = Get("/api/v1/memory/recall?task=" + Q(kRelatedTask));
  ASSERT_EQ(none.status, 200) << none.text;
  EXPECT_EQ(none.body["reason"], "memory.enabled is false");
}

TEST_F(MemoryApiTest, ListPagesNewestFirstWithAKeysetCursor) {
  StartServer();
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(Post("/api/v1/memory", {{"text", "fact number " + std::to_string(i)}}).status, 201);
  }
  std::vector<std::string> seen;
  std::string cursor;
  std::vector<int64_t> totals, more;
  for (int page = 0; page < 3; ++page) {
    Reply reply = Get("/api/v1/memory?limit=2" + (cursor.empty() ? "" : "&cursor=" + Q(cursor)));
    ASSERT_EQ(reply.status, 200) << reply.text;
    EXPECT_EQ(Keys(reply.body), (std::set<std::string>{"facts", "total", "more", "next"}));
    totals.push_back(reply.body["total"]);
    more.push_back(reply.body["more"]);
    for (const nlohmann::json& fact : reply.body["facts"]) {
      EXPECT_EQ(Keys(fact), kFactKeys);
      seen.push_back(fact["id"]);
    }
    if (page == 0) {
      // A fact added meanwhile is newer than the cursor: later pages do not shift.
      ASSERT_EQ(Post("/api/v1/memory", {{"text", "a late fact"}}).status, 201);
    }
    if (reply.body["next"].is_null()) break;
    cursor = reply.body["next"];
  }
  // The late fact counts in `total` but not in what follows the cursor.
  EXPECT_EQ(totals, (std::vector<int64_t>{5, 6, 6}));
  EXPECT_EQ(more, (std::vector<int64_t>{3, 1, 0}));
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 5u);
  // The whole list in one page is the same order.
  Reply all = Get("/api/v1/memory?limit=1000");
  ASSERT_EQ(all.body["facts"].size(), 6u);
  EXPECT_TRUE(all.body["next"].is_null());
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(all.body["facts"][i + 1]["id"], seen[i]);
}

TEST_F(MemoryApiTest, ListPagesFactsOfOneMillisecondWithoutLosingOne) {
  StartServer();
  // An import keeps the times it is given: five facts with the very same created_at.
  MEND_ASSERT_OK(runtime_->facts->Import(Facts(5, /*seconds_apart=*/0)));
  std::vector<std::string> seen;
  std::string cursor;
  do {
    Reply reply = Get("/api/v1/memory?limit=2" + (cursor.empty() ? "" : "&cursor=" + Q(cursor)));
    ASSERT_EQ(reply.status, 200) << reply.text;
    for (const nlohmann::json& fact : reply.body["facts"]) seen.push_back(fact["id"]);
    cursor = reply.body["next"].is_null() ? "" : reply.body["next"].get<std::string>();
  } while (!cursor.empty() && seen.size() < 10);
  Reply all = Get("/api/v1/memory");
  ASSERT_EQ(seen.size(), 5u);
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(all.body["facts"][i]["id"], seen[i]);
}

TEST_F(MemoryApiTest, ListPagesImportedFactsWithNanosecondsWithoutRepeatingOne) {
  StartServer();
  // Within one millisecond the store lists the later import first, whatever the nanoseconds say.
  std::vector<memory::Fact> facts = Facts(4, /*seconds_apart=*/0);
  for (int i = 0; i < 4; ++i) facts[i].created_at += std::chrono::microseconds(900 - 200 * i);
  MEND_ASSERT_OK(runtime_->facts->Import(facts));
  std::vector<std::string> seen;
  std::string cursor;
  do {
    Reply reply = Get("/api/v1/memory?limit=1" + (cursor.empty() ? "" : "&cursor=" + Q(cursor)));
    ASSERT_EQ(reply.status, 200) << reply.text;
    for (const nlohmann::json& fact : reply.body["facts"]) seen.push_back(fact["id"]);
    cursor = reply.body["next"].is_null() ? "" : reply.body["next"].get<std::string>();
  } while (!cursor.empty() && seen.size() < 10);
  EXPECT_THAT(seen, ::testing::ElementsAre("fact-3", "fact-2", "fact-1", "fact-0"));
}

TEST_F(MemoryApiTest, ListGoesOnWhenTheCursorsFactWasDeleted) {
  StartServer();
  MEND_ASSERT_OK(runtime_->facts->Import(Facts(4, /*seconds_apart=*/60)));
  Reply first = Get("/api/v1/memory?limit=2");
  ASSERT_EQ(first.body["facts"].size(), 2u);
  EXPECT_EQ(first.body["facts"][0]["id"], "fact-3");  // the newest
  const std::string cursor = first.body["next"];
  ASSERT_EQ(Delete("/api/v1/memory/fact-2").status, 200);
  Reply rest = Get("/api/v1/memory?limit=2&cursor=" + Q(cursor));
  ASSERT_EQ(rest.status, 200) << rest.text;
  EXPECT_EQ(rest.body["total"], 3);
  EXPECT_EQ(rest.body["more"], 0);
  ASSERT_EQ(rest.body["facts"].size(), 2u);
  EXPECT_EQ(rest.body["facts"][0]["id"], "fact-1");
  EXPECT_EQ(rest.body["facts"][1]["id"], "fact-0");
}

TEST_F(MemoryApiTest, ListFiltersAndRefusesBadParameters) {
  StartServer();
  AddMemory();
  Reply lessons = Get("/api/v1/memory?category=lesson");
  ASSERT_EQ(lessons.status, 200) << lessons.text;
  ASSERT_EQ(lessons.body["facts"].size(), 1u);
  EXPECT_EQ(lessons.body["facts"][0]["content"], kLesson);
  EXPECT_EQ(Get("/api/v1/memory?all=true").body["total"], 5);

  ExpectError(Get("/api/v1/memory?limit=0"), 400, "INVALID_ARGUMENT");
  ExpectError(Get("/api/v1/memory?limit=1001"), 400, "INVALID_ARGUMENT");
  ExpectError(Get("/api/v1/memory?cursor=nonsense"), 400, "INVALID_ARGUMENT");
  ExpectError(Get("/api/v1/memory?all=maybe"), 400, "INVALID_ARGUMENT");
}

TEST_F(MemoryApiTest, NoAnswerCarriesASecret) {
  ServerOptions options;
  options.token = kToken;
  StartServer({}, options, {{"provider.api_key", kSecret}});
  client_->set_bearer_token_auth(kToken);
  const std::string id = AddMemory();
  std::vector<Reply> replies = {
      Get("/api/v1/memory/search?q=" + Q(kSecret)),
      Get("/api/v1/memory/recall?task=" + Q(kRelatedTask)),
      Get("/api/v1/memory?all=true"),
      Get("/api/v1/memory/" + id),
      Get("/api/v1/memory/missing"),
      Post("/api/v1/memory", {{"text", 1}}),
      Delete("/api/v1/memory/" + id),
  };
  for (const Reply& reply : replies) {
    EXPECT_NE(reply.status, 0);
    EXPECT_NE(reply.status, 401);
    EXPECT_THAT(reply.text, Not(HasSubstr(kSecret)));
    EXPECT_THAT(reply.text, Not(HasSubstr(kToken)));
  }
}

}  // namespace
}  // namespace mend::server
