#include "mend/memory/retriever.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "memory/fusion.h"
#include "mend/base/manual_clock.h"
#include "mend/llm/scripted_provider.h"
#include "mend/memory/backfill.h"
#include "mend/memory/lexical.h"
#include "tests/support/status_matchers.h"

namespace mend::memory {
namespace {

using ::mend::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kNpmLesson[] =
    "LESSON: Building a JavaScript project that lives in a subfolder of a monorepo\n"
    "MISTAKE: Ran npm run build from the repository root, npm failed with ENOENT: no such file "
    "package.json\nCORRECTION: cd into the package folder (or use npm --prefix) and run npm ci "
    "first\nTRIGGER: error";
constexpr char kGitLesson[] =
    "LESSON: Committing from a fresh container or CI job\n"
    "MISTAKE: git commit failed with 'Please tell me who you are' because user.name and "
    "user.email were not set\nCORRECTION: set git config user.name and user.email for the "
    "repository before committing\nTRIGGER: error";

class RetrieverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mend_retriever_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    auto store = FactStore::Open(dir_ + "/mend.db", FactStoreOptions{&clock_});
    ASSERT_THAT(store.status(), IsOk());
    store_ = std::move(store).value();
    NewFact npm{kNpmLesson, "lesson", {"npm", "monorepo", "node"}};
    npm.episode = Episode{"Build the admin dashboard in packages/admin",
                          "ERROR: npm error enoent Could not read package.json", clock_.Now()};
    npm_id_ = Add(npm);
    git_id_ = Add({kGitLesson, "lesson", {"git", "ci", "identity"}});
    Add({"The billing service uses PostgreSQL 15 in production", "project", {"billing"}});
    Add({"Prefers tabs over spaces in Go code", "preference", {"go", "style"}});
    Add({"Staging for the shop runs on https://shop.staging.example", "project", {"shop"}});
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string Add(const NewFact& f) {
    Result<AddResult> r = store_->Add(f);
    EXPECT_THAT(r.status(), IsOk());
    return r.ok() ? r->id : "";
  }
  Retrieval Retrieve(Retriever& r, const std::string& task, const std::string& workspace = "") {
    auto got = r.Retrieve({task, "", workspace});
    EXPECT_THAT(got.status(), IsOk());
    return got.ok() ? *got : Retrieval{};
  }
  static std::vector<std::string> Ids(const std::vector<ScoredFact>& facts) {
    std::vector<std::string> ids;
    for (const ScoredFact& f : facts) ids.push_back(f.fact.id);
    return ids;
  }

  ManualClock clock_;
  std::string dir_;
  std::unique_ptr<FactStore> store_;
  std::string npm_id_;
  std::string git_id_;
};

TEST_F(RetrieverTest, RelatedTaskReceivesTheLessonUnderTheHeading) {
  Retriever retriever(store_.get(), &clock_, {});
  Retrieval r = Retrieve(retriever, "npm run build fails with ENOENT package.json in the monorepo");
  ASSERT_FALSE(r.gated);
  ASSERT_FALSE(r.selected.empty());
  EXPECT_EQ(r.selected[0].fact.id, npm_id_);
  EXPECT_THAT(r.section, ::testing::StartsWith("## Long-term Memory\n"));
  EXPECT_THAT(r.section, HasSubstr("- [lesson] LESSON: Building a JavaScript project"));
  EXPECT_EQ(r.ranked[0].fact.id, npm_id_);
}

TEST_F(RetrieverTest, UnrelatedTaskReceivesNothing) {
  Retriever retriever(store_.get(), &clock_, {});
  Retrieval r = Retrieve(retriever, "Write a haiku about autumn leaves");
  EXPECT_TRUE(r.gated);
  EXPECT_THAT(r.selected, IsEmpty());
  EXPECT_EQ(r.section, "");
}

TEST_F(RetrieverTest, PastTheGateUnrelatedFactsDoNotRideAlong) {
  Retriever retriever(store_.get(), &clock_, {});
  Retrieval r = Retrieve(retriever, "npm run build fails with ENOENT package.json in the monorepo");
  ASSERT_FALSE(r.gated);
  ASSERT_EQ(r.selected.size(), 1u);
  EXPECT_EQ(r.selected[0].fact.id, npm_id_);
  EXPECT_THAT(r.section, Not(HasSubstr("tabs over spaces")));
  EXPECT_GT(r.ranked.size(), 1u);  // the others are ranked, just not injected
}

TEST_F(RetrieverTest, EmptyTaskReceivesNothing) {
  Retriever retriever(store_.get(), &clock_, {});
  EXPECT_TRUE(Retrieve(retriever, "  \n ").gated);
}

TEST_F(RetrieverTest, ProvenanceFindsTheLessonOfASimilarEarlierTask) {
  Retriever retriever(store_.get(), &clock_, {});
  Retrieval r = Retrieve(retriever, "Build the admin dashboard under packages/admin again");
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_EQ(r.ranked[0].fact.id, npm_id_);
}

TEST_F(RetrieverTest, ErrorTextJoinsTheQuery) {
  Retriever retriever(store_.get(), &clock_, {});
  auto r = retriever.Retrieve({"commit the regenerated docs", "Please tell me who you are", ""});
  ASSERT_THAT(r.status(), IsOk());
  ASSERT_FALSE(r->ranked.empty());
  EXPECT_EQ(r->ranked[0].fact.id, git_id_);
}

TEST_F(RetrieverTest, HostileQueryTextIsJustText) {
  Retriever retriever(store_.get(), &clock_, {});
  for (const char* text : {"\"unbalanced (NEAR * content:x", "((((", "AND OR NOT", "^*"}) {
    EXPECT_THAT(retriever.Retrieve({text}).status(), IsOk()) << text;
    EXPECT_THAT(retriever.Search(text, 5).status(), IsOk()) << text;
  }
}

TEST_F(RetrieverTest, WorkspaceScopedFactsStayInTheirWorkspace) {
  NewFact scoped{"In the payments repo, run make proto before building", "project", {"proto"}};
  scoped.workspace = "/src/payments";
  std::string id = Add(scoped);
  Retriever retriever(store_.get(), &clock_, {});
  EXPECT_THAT(Ids(Retrieve(retriever, "run make proto before building", "/src/other").ranked),
              Not(::testing::Contains(id)));
  EXPECT_THAT(Ids(Retrieve(retriever, "run make proto before building", "/src/payments").ranked),
              ::testing::Contains(id));
}

TEST_F(RetrieverTest, NewAndSupersededFactsAreSeenWithoutRebuildingTheRetriever) {
  Retriever retriever(store_.get(), &clock_, {});
  EXPECT_TRUE(Retrieve(retriever, "rotate the kafka broker certificates").gated);
  std::string id =
      Add({"Rotate kafka broker certificates one broker at a time", "lesson", {"kafka", "tls"}});
  Retrieval r = Retrieve(retriever, "rotate the kafka broker certificates");
  ASSERT_FALSE(r.selected.empty());
  EXPECT_EQ(r.selected[0].fact.id, id);
  std::string newer =
      Add({"Kafka certificates rotate through the cert-manager operator now", "lesson", {"kafka"}});
  MEND_ASSERT_OK(store_->Supersede(id, newer));
  EXPECT_THAT(Ids(Retrieve(retriever, "rotate the kafka broker certificates").ranked),
              Not(::testing::Contains(id)));
}

TEST_F(RetrieverTest, UsefulnessMovesOtherwiseEqualFacts) {
  std::string a = Add({"Use the staging cluster alpha for load tests", "environment"});
  std::string b = Add({"Use the staging cluster bravo for load tests", "environment"});
  MEND_ASSERT_OK(store_->RecordInjection("r1", {a}));
  MEND_ASSERT_OK(store_->RecordInjection("r2", {a}));
  MEND_ASSERT_OK(store_->RecordOutcome("r1", false));
  MEND_ASSERT_OK(store_->RecordOutcome("r2", false));
  RetrieverOptions options;
  options.mmr_lambda = 1;
  Retriever retriever(store_.get(), &clock_, options);
  auto ranked = retriever.Search("staging cluster load tests", 2);
  ASSERT_THAT(ranked.status(), IsOk());
  ASSERT_EQ(ranked->size(), 2u);
  EXPECT_EQ((*ranked)[0].fact.id, b);
}

TEST_F(RetrieverTest, MaxFactsAndBudgetBoundTheSection) {
  RetrieverOptions options;
  options.max_facts = 1;
  Retriever one(store_.get(), &clock_, options);
  Retrieval r = Retrieve(one, "npm run build ENOENT package.json monorepo git commit identity");
  EXPECT_EQ(r.selected.size(), 1u);
  options.max_facts = 5;
  options.budget_chars = 30;
  Retriever tiny(store_.get(), &clock_, options);
  Retrieval t = Retrieve(tiny, "npm run build ENOENT package.json monorepo");
  EXPECT_THAT(t.selected, IsEmpty());
  EXPECT_EQ(t.section, "");
}

TEST_F(RetrieverTest, HydeTextJoinsTheQuery) {
  llm::ScriptedProvider provider({llm::ScriptedStep{
      "LESSON: committing in CI\nMISTAKE: git commit failed: Please tell me who you are, "
      "user.email not configured\nCORRECTION: git config user.name"}});
  RetrieverOptions options;
  options.hyde = true;
  Retriever retriever(store_.get(), &clock_, options, nullptr, &provider);
  Retrieval r = Retrieve(retriever, "Have the release bot record its changelog update");
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_EQ(r.ranked[0].fact.id, git_id_);
  EXPECT_THAT(r.hyde_text, HasSubstr("Please tell me who you are"));
  ASSERT_EQ(provider.requests().size(), 1u);
  EXPECT_EQ(provider.requests()[0].messages[0].content, HydeSystemPrompt());
  EXPECT_THAT(provider.requests()[0].messages[1].content,
              HasSubstr("TASK:\nHave the release bot record"));
}

TEST_F(RetrieverTest, HydeFailureDegradesToLexicalWithAWarning) {
  llm::ScriptedProvider provider({llm::ScriptedStep{"", {}, 0, 0, UnavailableError("down")}});
  RetrieverOptions options;
  options.hyde = true;
  Retriever retriever(store_.get(), &clock_, options, nullptr, &provider);
  std::vector<std::string> warnings;
  auto r = retriever.Retrieve({"npm run build ENOENT package.json monorepo"}, &warnings);
  ASSERT_THAT(r.status(), IsOk());
  ASSERT_FALSE(r->selected.empty());
  EXPECT_EQ(r->selected[0].fact.id, npm_id_);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("HyDE skipped"));
}

TEST_F(RetrieverTest, VectorsJoinOnceBackfilled) {
  llm::HashingEmbedder embedder(256);
  EmbeddingBackfill backfill(store_.get(), &embedder, &clock_);
  auto stored = backfill.RunOnce(1000);
  ASSERT_THAT(stored.status(), IsOk());
  EXPECT_EQ(*stored, 6);  // five contents and one episode
  EXPECT_THAT(backfill.RunOnce(1000), ::mend::testing::IsOkAndHolds(0));
  RetrieverOptions options;
  options.bm25_weight = 0;
  options.trigram_weight = 0;
  options.hint_weight = 0;
  Retriever retriever(store_.get(), &clock_, options, &embedder);
  auto ranked = retriever.Search("git commit user.email user.name", 3);
  ASSERT_THAT(ranked.status(), IsOk());
  ASSERT_FALSE(ranked->empty());
  EXPECT_EQ((*ranked)[0].fact.id, git_id_);
}

// A new user's memory: a handful of facts about one project, sharing most of their words.
constexpr const char* kFiveFacts[] = {
    "Deploy payments after running the database migrations",
    "Database migrations must run before the payments deploy",
    "Payments deploy checklist: migrations, then smoke tests",
    "Rotate the API keys of the payments service monthly",
    "The staging database is reset every night",
};
constexpr char kUnrelatedTask[] = "Write a haiku about autumn leaves";

class SmallMemoryTest : public RetrieverTest {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mend_small_memory_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    auto store = FactStore::Open(dir_ + "/mend.db", FactStoreOptions{&clock_});
    ASSERT_THAT(store.status(), IsOk());
    store_ = std::move(store).value();
  }
  std::vector<std::string> AddFive() {
    std::vector<std::string> ids;
    for (const char* text : kFiveFacts) ids.push_back(Add({text, "project"}));
    return ids;
  }
};

TEST_F(SmallMemoryTest, RecallOfAFactsOwnTextInjectsIt) {
  const std::vector<std::string> ids = AddFive();
  Retriever retriever(store_.get(), &clock_, {});
  Retrieval r = Retrieve(retriever, kFiveFacts[0]);
  EXPECT_FALSE(r.gated);
  EXPECT_THAT(Ids(r.selected), ::testing::Contains(ids[0]));
  EXPECT_THAT(Ids(r.selected), Not(::testing::Contains(ids[3])));
  EXPECT_THAT(r.section, HasSubstr(kFiveFacts[0]));
}

TEST_F(SmallMemoryTest, SharedWordsStillCountInTheRanking) {
  const std::vector<std::string> ids = AddFive();
  Retriever retriever(store_.get(), &clock_, {});
  auto ranked =
      retriever.Search("deploy the payments service; the database migrations have not run", 5);
  ASSERT_THAT(ranked.status(), IsOk());
  ASSERT_FALSE(ranked->empty());
  EXPECT_THAT((std::vector<std::string>{ids[0], ids[1], ids[2]}),
              ::testing::Contains((*ranked)[0].fact.id));
  EXPECT_NE((*ranked)[0].fact.id, ids[3]);  // the API-key fact only shares "payments service"
}

TEST_F(SmallMemoryTest, UnrelatedTaskReceivesNothing) {
  AddFive();
  Retriever retriever(store_.get(), &clock_, {});
  for (const char* task : {kUnrelatedTask, "Rename the CSS classes of the landing page",
                           "Rotate the logs of the web server"}) {
    Retrieval r = Retrieve(retriever, task);
    EXPECT_TRUE(r.gated) << task;
    EXPECT_THAT(r.selected, IsEmpty()) << task;
  }
}

TEST_F(SmallMemoryTest, ASingleFactMemoryWorks) {
  const std::string id = Add({kFiveFacts[0], "project"});
  Retriever retriever(store_.get(), &clock_, {});
  Retrieval r = Retrieve(retriever, "deploy the payments service after the migrations");
  ASSERT_EQ(r.selected.size(), 1u);
  EXPECT_EQ(r.selected[0].fact.id, id);
  EXPECT_EQ(Ids(r.ranked), std::vector<std::string>{id});
  EXPECT_TRUE(Retrieve(retriever, kUnrelatedTask).gated);
  EXPECT_TRUE(Retrieve(retriever, "deploy the frontend to the cdn").gated);  // one shared word
}

// Filler facts with a vocabulary of their own (seeded), so a memory reaches a realistic size.
std::vector<Fact> FillerFacts(size_t n, Time now) {
  const char* subjects[] = {"kafka",   "nginx",  "redis",  "terraform", "helm",  "grafana",
                            "webpack", "pytest", "gradle", "celery",    "vault", "istio"};
  const char* verbs[] = {"restarts",  "caches", "rotates",    "pins",   "mirrors",
                         "throttles", "shards", "compresses", "audits", "reloads"};
  const char* objects[] = {"certificates", "brokers",   "manifests", "dashboards", "bundles",
                           "fixtures",     "artifacts", "queues",    "secrets",    "sidecars"};
  std::mt19937 rng(7);
  std::vector<Fact> facts;
  for (size_t i = 0; i < n; ++i) {
    Fact f;
    f.content = std::string("The ") + subjects[rng() % 12] + " job " + verbs[rng() % 10] + " " +
                objects[rng() % 10] + " for team " + std::to_string(i % 97) + " in region r" +
                std::to_string(i);
    f.id = FactIdFor(f.content);
    f.category = "project";
    f.created_at = f.last_accessed = now;
    facts.push_back(std::move(f));
  }
  return facts;
}

TEST_F(RetrieverTest, WithOnlyBm25TheRankingIsFts5sWhileNoWordIsCommon) {
  MEND_ASSERT_OK(store_->Import(FillerFacts(40, clock_.Now())).status());
  // One snapshot fact in full sentences, one terse: FTS5 counts the stop words in a fact's
  // length, so the terse one, with fewer tokens, comes first for "snapshot".
  const std::string wordy =
      Add({"The snapshot is cleared when it is full and then it is warmed again from the disk",
           "project"});
  const std::string terse =
      Add({"Snapshot eviction policy tuned for latency budgets under heavy mixed load", "project"});
  RetrieverOptions bm25_only;
  bm25_only.trigram_weight = 0;
  bm25_only.hint_weight = 0;
  bm25_only.mmr_lambda = 1;
  Retriever retriever(store_.get(), &clock_, bm25_only);
  // Each of these words is in fewer than a third of the 47 facts.
  for (const std::string task :
       {"the kafka job restarts certificates and rotates secrets for npm", "clear the cache"}) {
    auto hits = store_->SearchLexical(QueryTerms(task), 100, "");
    ASSERT_THAT(hits.status(), IsOk());
    ASSERT_GE(hits->size(), 2u);
    std::vector<std::string> fts5_order;
    for (const LexicalHit& h : *hits) fts5_order.push_back(h.id);
    auto ranked = retriever.Search(task, fts5_order.size());
    ASSERT_THAT(ranked.status(), IsOk());
    EXPECT_EQ(Ids(*ranked), fts5_order) << task;
  }
  auto snapshot = retriever.Search("snapshot", 2);
  ASSERT_THAT(snapshot.status(), IsOk());
  EXPECT_EQ(Ids(*snapshot), (std::vector<std::string>{terse, wordy}));
}

TEST_F(SmallMemoryTest, RelevanceHoldsFromFiveFactsToThousands) {
  const std::vector<std::string> ids = AddFive();
  MEND_ASSERT_OK(store_->Import(FillerFacts(3000, clock_.Now())).status());
  Retriever retriever(store_.get(), &clock_, {});
  Retrieval related = Retrieve(retriever, kFiveFacts[0]);
  ASSERT_FALSE(related.gated);
  EXPECT_THAT(Ids(related.selected), ::testing::Contains(ids[0]));
  for (const char* task : {kUnrelatedTask, "Rename the CSS classes of the landing page"}) {
    Retrieval r = Retrieve(retriever, task);
    EXPECT_TRUE(r.gated) << task;
    EXPECT_THAT(r.selected, IsEmpty()) << task;
  }
}

// Search and Retrieve return one ranking: the same facts in the same order, diversification
// included, for every k.
TEST_F(RetrieverTest, SearchReturnsTheRankingRetrieveUses) {
  // A family of near-identical facts that MMR spreads out (imported: Add would merge them).
  std::vector<Fact> family;
  for (const char* team : {"payments", "billing", "ledger", "invoices"}) {
    Fact f;
    f.content = std::string("Run the database migrations before deploying the ") + team +
                " service to production";
    f.id = FactIdFor(f.content);
    f.category = "lesson";
    f.created_at = f.last_accessed = clock_.Now();
    family.push_back(std::move(f));
  }
  MEND_ASSERT_OK(store_->Import(family).status());
  const std::string other =
      Add({"Deploying to production needs a green smoke test run first", "lesson"});
  const std::string task = "deploy the payments service to production after the migrations";
  Retriever retriever(store_.get(), &clock_, {});
  const std::vector<std::string> ranked = Ids(Retrieve(retriever, task).ranked);
  ASSERT_GE(ranked.size(), 5u);
  auto searched = retriever.Search(task, 10);
  ASSERT_THAT(searched.status(), IsOk());
  EXPECT_EQ(Ids(*searched), ranked);
  auto three = retriever.Search(task, 3);
  ASSERT_THAT(three.status(), IsOk());
  EXPECT_EQ(Ids(*three), std::vector<std::string>(ranked.begin(), ranked.begin() + 3));
  auto many = retriever.Search(task, 200);
  ASSERT_THAT(many.status(), IsOk());
  const std::vector<std::string> all = Ids(*many);
  ASSERT_GE(all.size(), ranked.size());
  EXPECT_EQ(std::vector<std::string>(all.begin(), all.begin() + ranked.size()), ranked);
  // Diversification is part of that ranking: without it, the family comes before the other fact.
  RetrieverOptions plain;
  plain.mmr_lambda = 1;
  Retriever undiversified(store_.get(), &clock_, plain);
  auto fused = undiversified.Search(task, 10);
  ASSERT_THAT(fused.status(), IsOk());
  const std::vector<std::string> fused_ids = Ids(*fused);
  EXPECT_NE(fused_ids, ranked);
  EXPECT_LT(std::find(ranked.begin(), ranked.end(), other) - ranked.begin(),
            std::find(fused_ids.begin(), fused_ids.end(), other) - fused_ids.begin());
}

// Diversification is maximal marginal relevance over the trigram Jaccard of the facts' contents
// (TrigramJaccard), whatever their case, spacing or script.
TEST_F(RetrieverTest, DiversificationIsMmrOverTheContentsTrigramJaccard) {
  std::vector<Fact> family;
  for (const char* content :
       {"Run the database migrations before deploying the payments service",
        "RUN the  database\u00a0migrations before deploying the billing service",
        "Run the database migrations before deploying the ledger service \u2014 in production",
        "Führe die Datenbank-Migrationen vor dem Deployment des Payments-Service aus",
        "Deploying the payments service needs the database migrations run first\t(always)"}) {
    Fact f;
    f.content = content;
    f.id = FactIdFor(f.content);
    f.category = "lesson";
    f.created_at = f.last_accessed = clock_.Now();
    family.push_back(std::move(f));
  }
  MEND_ASSERT_OK(store_->Import(family).status());
  const std::string task = "deploy the payments service after the database migrations";
  RetrieverOptions plain;
  plain.mmr_lambda = 1;
  Retriever undiversified(store_.get(), &clock_, plain);
  auto head = undiversified.Search(task, 30);
  ASSERT_THAT(head.status(), IsOk());
  ASSERT_GE(head->size(), 6u);
  std::vector<double> relevance;
  for (const ScoredFact& s : *head) relevance.push_back(s.score / head->front().score);
  const RetrieverOptions defaults;
  const std::vector<size_t> order =
      SelectDiverse(relevance, 10, defaults.mmr_lambda, [&](size_t i, size_t j) {
        return TrigramJaccard((*head)[i].fact.content, (*head)[j].fact.content);
      });
  std::vector<std::string> expected;
  for (size_t i : order) expected.push_back((*head)[i].fact.id);
  Retriever retriever(store_.get(), &clock_, defaults);
  auto ranked = retriever.Search(task, 10);
  ASSERT_THAT(ranked.status(), IsOk());
  EXPECT_EQ(Ids(*ranked), expected);
  const size_t n = std::min<size_t>(10, head->size());
  EXPECT_NE(Ids(*ranked), Ids(std::vector<ScoredFact>(head->begin(), head->begin() + n)));
}

// The postings budget: FTS5 is asked for the rarest words first, so a budget too small for the
// common words still finds the fact that holds the rare one, and scores it with every word.
TEST_F(RetrieverTest, APostingsBudgetKeepsTheRareWordsAndScoresWithAll) {
  for (int i = 0; i < 30; ++i) {
    Add({"deploy the service number " + std::to_string(i) + " to production", "project"});
  }
  const std::string task = "deploy to production: npm run build fails with ENOENT package.json";
  Retriever unbounded(store_.get(), &clock_, {});
  RetrieverOptions tight;
  tight.max_postings = 1;
  Retriever budgeted(store_.get(), &clock_, tight);
  Retrieval all = Retrieve(unbounded, task);
  Retrieval some = Retrieve(budgeted, task);
  ASSERT_THAT(all.ranked, Not(IsEmpty()));
  ASSERT_THAT(some.ranked, Not(IsEmpty()));
  EXPECT_EQ(all.ranked.front().fact.id, npm_id_);
  EXPECT_EQ(some.ranked.front().fact.id, npm_id_);
  // The npm lesson is the only candidate FTS5 returns under the budget; its lexical evidence is
  // the same as with every word searched.
  EXPECT_EQ(some.ranked.size(), 1u);
  EXPECT_DOUBLE_EQ(some.gate_score, all.gate_score);
  EXPECT_EQ(some.selected.size(), 1u);
}

TEST(SearchedWordsTest, RarestFirstWithinTheBudgetInTheQuerysOrder) {
  const std::vector<std::string> docs_text = {"alpha beta", "alpha gamma", "alpha beta gamma",
                                              "delta alpha"};
  std::vector<std::vector<std::string_view>> docs;
  for (const std::string& d : docs_text) docs.push_back({d});
  auto stats = TermStatistics::Build(docs);
  const std::vector<std::string> words = {"alpha", "beta", "delta", "absent"};
  // alpha: 4 facts, beta: 2, delta: 1, absent: 0 (never asked: nothing holds it).
  EXPECT_EQ(SearchedWords(words, *stats, 100),
            (std::vector<std::string>{"alpha", "beta", "delta"}));
  EXPECT_EQ(SearchedWords(words, *stats, 3), (std::vector<std::string>{"beta", "delta"}));
  EXPECT_EQ(SearchedWords(words, *stats, 1), (std::vector<std::string>{"delta"}));
  EXPECT_EQ(SearchedWords(words, *stats, 0), (std::vector<std::string>{"delta"}));
  EXPECT_THAT(SearchedWords({"absent"}, *stats, 100), IsEmpty());
}

}  // namespace
}  // namespace mend::memory
