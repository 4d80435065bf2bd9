// The FactStore conformance suite (instantiated per implementation, e.g. in fact_store_test.cc):
// the fixture's helpers and the tests of adding, reading, listing, searching and counting facts.

#include "tests/memory/fact_store_conformance.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mend/memory/lexical.h"
#include "tests/support/status_matchers.h"

namespace mend::memory::testing {

using ::mend::testing::IsOk;
using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

void FactStoreConformanceTest::SetUp() {
  harness_ = GetParam().make_harness();
  if (IsSkipped()) return;  // the backend is not available here (e.g. no server)
  ASSERT_NE(harness_, nullptr);
  Reopen();
}

void FactStoreConformanceTest::TearDown() {
  store_.reset();
  harness_.reset();
}

void FactStoreConformanceTest::Reopen() {
  store_.reset();
  Result<std::unique_ptr<FactStore>> store = harness_->Open(clock_);
  ASSERT_THAT(store.status(), IsOk());
  store_ = std::move(store).value();
}

AddResult FactStoreConformanceTest::MustAdd(NewFact fact) {
  Result<AddResult> r = store_->Add(fact);
  EXPECT_THAT(r.status(), IsOk());
  return r.ok() ? *r : AddResult{};
}

std::vector<std::string> FactStoreConformanceTest::Search(const std::string& text,
                                                          const std::string& workspace) {
  auto hits = store_->SearchLexical(QueryTerms(text), 10, workspace);
  EXPECT_THAT(hits.status(), IsOk());
  std::vector<std::string> ids;
  if (hits.ok()) {
    for (const LexicalHit& h : *hits) ids.push_back(h.id);
  }
  return ids;
}

std::vector<std::string> FactStoreConformanceTest::Tagged(const std::string& key,
                                                          const std::string& workspace) {
  auto matches = store_->MatchTags({key}, workspace, 1000);
  EXPECT_THAT(matches.status(), IsOk());
  if (!matches.ok() || matches->size() != 1) return {"<error>"};
  return (*matches)[0].ids;
}

// Words the facts of the tests use, a stop word, and words no fact holds.
const std::vector<std::string> kWords = {
    "quote", "variables", "shell",  "scripts", "bash",   "rename",  "photos",     "directory",
    "retry", "backoff",   "python", "event",   "loop",   "asyncio", "migrations", "migrate",
    "the",   "absent",    "zebra",  "timeout", "sqlite", "locked",  "database",   "run"};

void ExpectKeptStatisticsMatchTheActiveFacts(FactStore& store) {
  auto facts = store.List({});
  ASSERT_THAT(facts.status(), IsOk());
  std::vector<std::vector<std::string>> texts;
  for (const Fact& f : *facts) {
    std::vector<std::string>& t = texts.emplace_back();
    t.push_back(f.content);
    for (const std::string& tag : f.tags) t.push_back(tag);
    for (const Episode& e : f.provenance) {
      t.push_back(e.outcome.empty() ? e.task : e.task + "\n" + e.outcome);
    }
  }
  std::vector<std::vector<std::string_view>> docs;
  for (const auto& t : texts) docs.emplace_back(t.begin(), t.end());
  std::unique_ptr<TermStatistics> expected = TermStatistics::Build(docs);

  auto counts = store.CountTerms(TermStatistics::QueryStems(kWords));
  ASSERT_THAT(counts.status(), IsOk());
  std::unique_ptr<TermStatistics> kept = TermStatistics::FromCounts(*counts);
  EXPECT_EQ(kept->documents(), expected->documents());
  const auto want = expected->Query(kWords);
  const auto got = kept->Query(kWords);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].term, want[i].term);
    EXPECT_THAT(got[i].idf, DoubleEq(want[i].idf)) << want[i].term;
    EXPECT_THAT(got[i].fts_idf, DoubleEq(want[i].fts_idf)) << want[i].term;
  }
  for (const char* text : {"Quote variables in shell scripts, always quote them",
                           "retry with backoff when the database is locked", "zebra"}) {
    const LexicalMatch a = expected->Match(want, text);
    const LexicalMatch b = kept->Match(got, text);
    EXPECT_THAT(b.fts_bm25, DoubleEq(a.fts_bm25)) << text;
    EXPECT_THAT(b.bm25, DoubleEq(a.bm25)) << text;
    EXPECT_THAT(b.coverage, DoubleEq(a.coverage)) << text;
    EXPECT_EQ(b.matched, a.matched) << text;
  }
}

namespace {

TEST_P(FactStoreConformanceTest, AddThenGetKeepsEveryField) {
  NewFact f;
  f.content = "  Prefer tabs in Go files  ";
  f.category = "Preference";
  f.tags = {"Go", " style ", "go", ""};
  f.workspace = "/src/app";
  f.source = "user";
  f.confidence = 0.8;
  f.episode = Episode{"format the code", "gofmt changed 3 files", clock_.Now()};
  AddResult r = MustAdd(f);
  EXPECT_EQ(r.kind, AddResult::Kind::kAdded);
  EXPECT_EQ(r.id, FactIdFor("Prefer tabs in Go files"));
  auto got = store_->Get(r.id);
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_EQ(got->content, "Prefer tabs in Go files");
  EXPECT_EQ(got->category, "preference");
  EXPECT_THAT(got->tags, ElementsAre("go", "style"));
  EXPECT_EQ(got->workspace, "/src/app");
  EXPECT_DOUBLE_EQ(got->confidence, 0.8);
  EXPECT_EQ(got->created_at, clock_.Now());
  EXPECT_EQ(got->access_count, 0);
  ASSERT_THAT(got->provenance, SizeIs(1));
  EXPECT_EQ(got->provenance[0].task, "format the code");
  EXPECT_EQ(got->provenance[0].outcome, "gofmt changed 3 files");
  EXPECT_TRUE(got->superseded_by.empty());
}

TEST_P(FactStoreConformanceTest, GetUnknownIsNotFound) {
  EXPECT_THAT(store_->Get("000000000000000000000000").status(),
              StatusIs(StatusCode::kNotFound, HasSubstr("no fact")));
}

TEST_P(FactStoreConformanceTest, ContentWithANulByteIsRefusedAndOtherRawBytesAreKeptReadable) {
  EXPECT_THAT(store_->Add({std::string("before\0after", 12)}).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("NUL")));
  // Tags, workspace, source and episodes may come from tool output as raw bytes: a NUL or an
  // invalid byte becomes U+FFFD, the same on every store.
  NewFact fact;
  fact.content = "Raw bytes in the fields around a fact";
  fact.tags = {std::string("ta\0g", 4), "b\xff"};
  fact.workspace = std::string("/w\0s", 4);
  fact.source = "tool\xfe";
  fact.episode = Episode{std::string("task \0 one", 10), "out\xc3", clock_.Now()};
  const AddResult added = MustAdd(fact);
  auto got = store_->Get(added.id);
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_THAT(got->tags, ElementsAre("ta\xEF\xBF\xBDg", "b\xEF\xBF\xBD"));
  EXPECT_EQ(got->workspace, "/w\xEF\xBF\xBDs");
  EXPECT_EQ(got->source, "tool\xEF\xBF\xBD");
  ASSERT_THAT(got->provenance, SizeIs(1));
  EXPECT_EQ(got->provenance[0].task, "task \xEF\xBF\xBD one");
  EXPECT_EQ(got->provenance[0].outcome, "out\xEF\xBF\xBD");
  ExpectStatisticsOfTheActiveFacts();
}

TEST_P(FactStoreConformanceTest, GetManyKeepsTheOrderGivenAndLeavesOutAbsentIds) {
  const AddResult a = MustAdd({"Tabs are eight columns wide in the kernel tree"});
  const AddResult b = MustAdd({"The billing service retries webhooks three times"});
  auto got = store_->GetMany({b.id, "000000000000000000000000", a.id, b.id});
  ASSERT_THAT(got.status(), IsOk());
  ASSERT_THAT(*got, SizeIs(3));
  EXPECT_EQ((*got)[0].id, b.id);
  EXPECT_EQ((*got)[1].id, a.id);
  EXPECT_EQ((*got)[1].content, "Tabs are eight columns wide in the kernel tree");
  EXPECT_EQ((*got)[2].id, b.id);
  auto none = store_->GetMany({});
  ASSERT_THAT(none.status(), IsOk());
  EXPECT_THAT(*none, IsEmpty());
}

TEST_P(FactStoreConformanceTest, ExactDuplicateReinforcesAndAddsTheEpisode) {
  NewFact f{"Run npm ci in the frontend folder", "lesson", {"npm"}};
  f.episode = Episode{"build the frontend", "ERROR: missing package.json", clock_.Now()};
  AddResult first = MustAdd(f);
  clock_.Advance(std::chrono::hours(1));
  f.content = "run NPM ci in the frontend folder ";
  f.tags = {"node"};
  f.episode = Episode{"build the admin ui", "ERROR: ENOENT", clock_.Now()};
  AddResult second = MustAdd(f);
  EXPECT_EQ(second.kind, AddResult::Kind::kReinforced);
  EXPECT_EQ(second.id, first.id);
  auto got = store_->Get(first.id);
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_EQ(got->content, "Run npm ci in the frontend folder");
  EXPECT_EQ(got->access_count, 1);
  EXPECT_EQ(got->last_accessed, clock_.Now());
  EXPECT_THAT(got->tags, ElementsAre("npm", "node"));
  ASSERT_THAT(got->provenance, SizeIs(2));
  EXPECT_EQ(got->provenance[1].task, "build the admin ui");
  EXPECT_THAT(store_->Count(), IsOkAndHolds(1));
}

TEST_P(FactStoreConformanceTest, SameEpisodeTwiceIsKeptOnce) {
  NewFact f{"Quote file names with spaces", "lesson"};
  f.episode = Episode{"rename files", "No such file", clock_.Now()};
  MustAdd(f);
  MustAdd(f);
  auto got = store_->Get(FactIdFor(f.content));
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_THAT(got->provenance, SizeIs(1));
  EXPECT_EQ(got->access_count, 1);
}

TEST_P(FactStoreConformanceTest, NearDuplicateInSameCategoryMerges) {
  AddResult first =
      MustAdd({"Run npm install before npm run build in the frontend folder", "lesson"});
  AddResult near =
      MustAdd({"Run npm install before npm run build in the frontend folder.", "lesson"});
  EXPECT_EQ(near.kind, AddResult::Kind::kMerged);
  EXPECT_EQ(near.id, first.id);
  AddResult other_category =
      MustAdd({"Run npm install before npm run build in the frontend folder!", "preference"});
  EXPECT_EQ(other_category.kind, AddResult::Kind::kAdded);
  AddResult different = MustAdd({"Run npm test before pushing to the release branch", "lesson"});
  EXPECT_EQ(different.kind, AddResult::Kind::kAdded);
  EXPECT_THAT(store_->Count(), IsOkAndHolds(3));
}

TEST_P(FactStoreConformanceTest, RejectsBadFactsWithoutWriting) {
  EXPECT_THAT(store_->Add({"   \n\t"}).status(), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->Add({std::string(kMaxFactBytes + 1, 'x')}).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("at most")));
  EXPECT_THAT(store_->Add({"bad \xff byte"}).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("UTF-8")));
  NewFact f{"ok"};
  f.confidence = 0;
  EXPECT_THAT(store_->Add(f).status(), StatusIs(StatusCode::kInvalidArgument));
  f.confidence = 1.5;
  EXPECT_THAT(store_->Add(f).status(), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->Count(), IsOkAndHolds(0));
  EXPECT_THAT(store_->Add({std::string(kMaxFactBytes, 'y')}).status(), IsOk());
}

TEST_P(FactStoreConformanceTest, ListIsNewestFirstAndHidesSupersededUnlessAsked) {
  AddResult a = MustAdd({"alpha fact", "general"});
  clock_.Advance(std::chrono::seconds(1));
  AddResult b = MustAdd({"beta fact", "lesson"});
  clock_.Advance(std::chrono::seconds(1));
  AddResult c = MustAdd({"gamma fact", "lesson"});
  MEND_ASSERT_OK(store_->Supersede(a.id, c.id));
  auto active = store_->List({});
  ASSERT_THAT(active.status(), IsOk());
  ASSERT_THAT(*active, SizeIs(2));
  EXPECT_EQ((*active)[0].id, c.id);
  EXPECT_EQ((*active)[1].id, b.id);
  auto all = store_->List({.include_superseded = true});
  ASSERT_THAT(all.status(), IsOk());
  ASSERT_THAT(*all, SizeIs(3));
  EXPECT_EQ((*all)[2].superseded_by, c.id);
  auto lessons = store_->List({.category = "LESSON", .limit = 1});
  ASSERT_THAT(lessons.status(), IsOk());
  ASSERT_THAT(*lessons, SizeIs(1));
  EXPECT_EQ((*lessons)[0].id, c.id);
  EXPECT_THAT(Search("alpha"), IsEmpty());
}

TEST_P(FactStoreConformanceTest, SupersedeAndRemoveNeedExistingFacts) {
  AddResult a = MustAdd({"alpha fact"});
  EXPECT_THAT(store_->Supersede(a.id, "nope"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(store_->Supersede("nope", a.id), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(store_->Supersede(a.id, a.id), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->Remove("nope"), StatusIs(StatusCode::kNotFound));
  MEND_ASSERT_OK(store_->Remove(a.id));
  EXPECT_THAT(store_->Get(a.id).status(), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(Search("alpha"), IsEmpty());
}

TEST_P(FactStoreConformanceTest, LexicalSearchUsesContentTagsAndProvenance) {
  NewFact lesson{"Quote variables in shell scripts", "lesson", {"bash"}};
  lesson.episode =
      Episode{"rename the holiday photos", "mv: target 'Photos' is not a directory", clock_.Now()};
  AddResult a = MustAdd(lesson);
  AddResult b = MustAdd({"Use ripgrep instead of grep -r", "preference", {"search"}});
  EXPECT_THAT(Search("quote variables"), ElementsAre(a.id));
  EXPECT_THAT(Search("bash"), ElementsAre(a.id));
  EXPECT_THAT(Search("holiday photos renaming"), ElementsAre(a.id));
  EXPECT_THAT(Search("searching with ripgrep"), ElementsAre(b.id));
}

TEST_P(FactStoreConformanceTest, HostileQueryTextNeverBreaksSearch) {
  MustAdd({"NEAR the parenthesis (and quotes \") live * here"});
  for (const char* text : {"\"unbalanced", "(((", "NEAR(a b)", "*", "content:x", "a AND OR NOT b",
                           "^start", "\"\"\"", "-minus", "col:umn \"x\" NEAR/3 y"}) {
    auto hits = store_->SearchLexical(QueryTerms(text), 5, "");
    EXPECT_THAT(hits.status(), IsOk()) << text;
  }
  EXPECT_THAT(Search("parenthesis NEAR"), SizeIs(1));
  auto empty = store_->SearchLexical({}, 5, "");
  ASSERT_THAT(empty.status(), IsOk());
  EXPECT_THAT(*empty, IsEmpty());
}

TEST_P(FactStoreConformanceTest, WorkspaceScopesSearch) {
  NewFact scoped{"deploy with the blue green script", "project"};
  scoped.workspace = "/work/a";
  AddResult a = MustAdd(scoped);
  AddResult global = MustAdd({"deploy only on weekdays", "preference"});
  EXPECT_THAT(Search("deploy", "/work/a"), ::testing::UnorderedElementsAre(a.id, global.id));
  EXPECT_THAT(Search("deploy", "/work/b"), ElementsAre(global.id));
  EXPECT_THAT(Search("deploy", ""), SizeIs(2));
}

TEST_P(FactStoreConformanceTest, InjectionAndOutcomeMoveCountersOncePerRun) {
  AddResult a = MustAdd({"alpha fact"});
  AddResult b = MustAdd({"beta fact"});
  MEND_ASSERT_OK(store_->RecordInjection("run-1", {a.id, b.id}));
  MEND_ASSERT_OK(store_->RecordInjection("run-2", {a.id}));
  EXPECT_THAT(store_->InjectedInto("run-1"), IsOkAndHolds(ElementsAre(a.id, b.id)));
  EXPECT_THAT(store_->InjectedInto("run-9"), IsOkAndHolds(IsEmpty()));
  MEND_ASSERT_OK(store_->RecordOutcome("run-1", true));
  MEND_ASSERT_OK(store_->RecordOutcome("run-1", true));
  MEND_ASSERT_OK(store_->RecordOutcome("run-2", false));
  MEND_ASSERT_OK(store_->RecordOutcome("run-9", false));
  auto fa = store_->Get(a.id);
  auto fb = store_->Get(b.id);
  ASSERT_THAT(fa.status(), IsOk());
  ASSERT_THAT(fb.status(), IsOk());
  EXPECT_EQ(fa->helped, 1);
  EXPECT_EQ(fa->hurt, 1);
  EXPECT_EQ(fa->access_count, 2);
  EXPECT_EQ(fb->helped, 1);
  EXPECT_EQ(fb->hurt, 0);
}

TEST_P(FactStoreConformanceTest, GenerationMovesOnTextChangesOnly) {
  auto g0 = store_->Generation();
  ASSERT_THAT(g0.status(), IsOk());
  AddResult a = MustAdd({"alpha fact"});
  auto g1 = store_->Generation();
  ASSERT_THAT(g1.status(), IsOk());
  EXPECT_GT(*g1, *g0);
  MEND_ASSERT_OK(store_->RecordInjection("run-1", {a.id}));
  EXPECT_THAT(store_->Generation(), IsOkAndHolds(*g1));
}

TEST_P(FactStoreConformanceTest, EmbeddingsArePerModelAndPartAndBackfillFindsTheGaps) {
  NewFact f{"Quote variables in shell scripts", "lesson", {"bash"}};
  f.episode = Episode{"rename photos", "not a directory", clock_.Now()};
  AddResult a = MustAdd(f);
  AddResult b = MustAdd({"beta fact"});
  auto missing = store_->MissingEmbeddings("m1", 10, 0);
  ASSERT_THAT(missing.status(), IsOk());
  ASSERT_THAT(*missing, SizeIs(3));
  EXPECT_EQ((*missing)[0].id, a.id);
  EXPECT_EQ((*missing)[0].part, 0);
  EXPECT_EQ((*missing)[0].text, "Quote variables in shell scripts\nbash");
  EXPECT_EQ((*missing)[1].part, 1);
  EXPECT_EQ((*missing)[1].text, "rename photos\nnot a directory");
  auto v0 = store_->VectorGeneration();
  ASSERT_THAT(v0.status(), IsOk());
  MEND_ASSERT_OK(store_->PutEmbedding({a.id, 0, {0.5f, -1.25f}}, "m1"));
  MEND_ASSERT_OK(store_->PutEmbedding({a.id, 1, {1.0f, 0.0f}}, "m1"));
  EXPECT_THAT(store_->VectorGeneration(), IsOkAndHolds(*v0 + 2));
  EXPECT_THAT(store_->PutEmbedding({"nope", 0, {1.0f}}, "m1"), StatusIs(StatusCode::kNotFound));
  auto still = store_->MissingEmbeddings("m1", 10, 0);
  ASSERT_THAT(still.status(), IsOk());
  ASSERT_THAT(*still, SizeIs(1));
  EXPECT_EQ((*still)[0].id, b.id);
  EXPECT_THAT(store_->MissingEmbeddings("m2", 10, 0), IsOkAndHolds(SizeIs(3)));
  auto vectors = store_->Embeddings("m1");
  ASSERT_THAT(vectors.status(), IsOk());
  ASSERT_THAT(*vectors, SizeIs(2));
  EXPECT_EQ((*vectors)[0].vector, (std::vector<float>{0.5f, -1.25f}));
  EXPECT_THAT(store_->Embeddings("m2"), IsOkAndHolds(IsEmpty()));
  MEND_ASSERT_OK(store_->Remove(a.id));
  EXPECT_THAT(store_->Embeddings("m1"), IsOkAndHolds(IsEmpty()));
}

TEST_P(FactStoreConformanceTest, SurvivesReopen) {
  AddResult a = MustAdd({"durable fact"});
  Reopen();
  EXPECT_THAT(store_->Get(a.id).status(), IsOk());
  EXPECT_THAT(Search("durable"), ElementsAre(a.id));
}

}  // namespace
}  // namespace mend::memory::testing
