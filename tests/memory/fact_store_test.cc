#include "mend/memory/fact_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mend/base/json.h"
#include "mend/base/manual_clock.h"
#include "mend/base/time_format.h"
#include "mend/memory/chatcli_format.h"
#include "mend/memory/lexical.h"
#include "tests/support/status_matchers.h"

namespace mend::memory {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

class FactStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mend_facts_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/mend.db";
    Reopen();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Reopen() {
    store_.reset();
    auto store = FactStore::Open(path_, FactStoreOptions{&clock_});
    ASSERT_THAT(store.status(), IsOk());
    store_ = std::move(store).value();
  }
  AddResult MustAdd(NewFact fact) {
    Result<AddResult> r = store_->Add(fact);
    EXPECT_THAT(r.status(), IsOk());
    return r.ok() ? *r : AddResult{};
  }
  std::vector<std::string> Search(const std::string& text, const std::string& workspace = "") {
    auto hits = store_->SearchLexical(BuildFtsQuery(QueryTerms(text)), 10, workspace);
    EXPECT_THAT(hits.status(), IsOk());
    std::vector<std::string> ids;
    if (hits.ok()) {
      for (const LexicalHit& h : *hits) ids.push_back(h.id);
    }
    return ids;
  }

  ManualClock clock_;
  std::string dir_;
  std::string path_;
  std::unique_ptr<FactStore> store_;
};

TEST(FactIdTest, IsFirstTwelveBytesOfSha256OfLowerCasedTrimmedContent) {
  EXPECT_EQ(FactIdFor("Use tabs in Go files"), "33175f622f51ec0abd82757e");
  EXPECT_EQ(FactIdFor("  USE TABS in Go files  \n"), "33175f622f51ec0abd82757e");
  // Non-ASCII letters are lower-cased as Go's strings.ToLower does: sha256("ação ñ σ привет").
  EXPECT_EQ(FactIdFor("AÇÃO Ñ Σ ПРИВЕТ"), "e6ff0588cdc98c9639769a0d");
  EXPECT_EQ(FactIdFor("ação ñ σ привет"), "e6ff0588cdc98c9639769a0d");
}

TEST(TrigramJaccardTest, IdenticalDifferentAndCaseInsensitive) {
  EXPECT_DOUBLE_EQ(TrigramJaccard("abc def", "ABC  def"), 1.0);
  EXPECT_LT(TrigramJaccard("kubernetes pods", "sqlite locking"), 0.1);
  double near = TrigramJaccard("Run npm install before npm run build in the frontend folder",
                               "Run npm install before npm run build in the frontend folder.");
  EXPECT_GE(near, 0.9);
  EXPECT_LT(near, 1.0);
}

TEST_F(FactStoreTest, AddThenGetKeepsEveryField) {
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

TEST_F(FactStoreTest, GetUnknownIsNotFound) {
  EXPECT_THAT(store_->Get("000000000000000000000000").status(),
              StatusIs(StatusCode::kNotFound, HasSubstr("no fact")));
}

TEST_F(FactStoreTest, ExactDuplicateReinforcesAndAddsTheEpisode) {
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

TEST_F(FactStoreTest, SameEpisodeTwiceIsKeptOnce) {
  NewFact f{"Quote file names with spaces", "lesson"};
  f.episode = Episode{"rename files", "No such file", clock_.Now()};
  MustAdd(f);
  MustAdd(f);
  auto got = store_->Get(FactIdFor(f.content));
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_THAT(got->provenance, SizeIs(1));
  EXPECT_EQ(got->access_count, 1);
}

TEST_F(FactStoreTest, NearDuplicateInSameCategoryMerges) {
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

TEST_F(FactStoreTest, RejectsBadFactsWithoutWriting) {
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

TEST_F(FactStoreTest, ListIsNewestFirstAndHidesSupersededUnlessAsked) {
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

TEST_F(FactStoreTest, SupersedeAndRemoveNeedExistingFacts) {
  AddResult a = MustAdd({"alpha fact"});
  EXPECT_THAT(store_->Supersede(a.id, "nope"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(store_->Supersede("nope", a.id), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(store_->Supersede(a.id, a.id), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->Remove("nope"), StatusIs(StatusCode::kNotFound));
  MEND_ASSERT_OK(store_->Remove(a.id));
  EXPECT_THAT(store_->Get(a.id).status(), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(Search("alpha"), IsEmpty());
}

TEST_F(FactStoreTest, LexicalSearchUsesContentTagsAndProvenance) {
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

TEST_F(FactStoreTest, HostileQueryTextNeverBreaksSearch) {
  MustAdd({"NEAR the parenthesis (and quotes \") live * here"});
  for (const char* text : {"\"unbalanced", "(((", "NEAR(a b)", "*", "content:x", "a AND OR NOT b",
                           "^start", "\"\"\"", "-minus", "col:umn \"x\" NEAR/3 y"}) {
    auto hits = store_->SearchLexical(BuildFtsQuery(QueryTerms(text)), 5, "");
    EXPECT_THAT(hits.status(), IsOk()) << text;
  }
  EXPECT_THAT(Search("parenthesis NEAR"), SizeIs(1));
  auto empty = store_->SearchLexical("", 5, "");
  ASSERT_THAT(empty.status(), IsOk());
  EXPECT_THAT(*empty, IsEmpty());
}

TEST_F(FactStoreTest, WorkspaceScopesSearch) {
  NewFact scoped{"deploy with the blue green script", "project"};
  scoped.workspace = "/work/a";
  AddResult a = MustAdd(scoped);
  AddResult global = MustAdd({"deploy only on weekdays", "preference"});
  EXPECT_THAT(Search("deploy", "/work/a"), ::testing::UnorderedElementsAre(a.id, global.id));
  EXPECT_THAT(Search("deploy", "/work/b"), ElementsAre(global.id));
  EXPECT_THAT(Search("deploy", ""), SizeIs(2));
}

TEST_F(FactStoreTest, InjectionAndOutcomeMoveCountersOncePerRun) {
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

TEST_F(FactStoreTest, ImportKeepsIdsLeavesOutUnusableFactsAndCountsSkips) {
  Fact one;
  one.id = "chatcli-id-1";
  one.content = "imported one";
  one.category = "project";
  one.created_at = one.last_accessed = clock_.Now();
  Fact two = one;
  two.id = "chatcli-id-2";
  two.content = "imported two";
  Fact empty = one;
  empty.id = "chatcli-id-3";
  empty.content = " ";
  Fact no_id = one;
  no_id.id = "";
  Fact bad_utf8 = one;
  bad_utf8.id = "chatcli-id-4";
  bad_utf8.content = "bad \xff byte";
  Fact unsure = one;
  unsure.id = "chatcli-id-5";
  unsure.confidence = 0;

  auto counts = store_->Import({one, empty, two, no_id, bad_utf8, unsure});

  ASSERT_THAT(counts.status(), IsOk());
  EXPECT_EQ(counts->imported, 2);
  EXPECT_EQ(counts->skipped, 0);
  EXPECT_THAT(
      counts->unusable,
      ElementsAre(UnusableFact{1, "chatcli-id-3", "a fact needs some content"},
                  UnusableFact{3, "", "empty id"},
                  UnusableFact{4, "chatcli-id-4", "a fact must be valid UTF-8"},
                  UnusableFact{5, "chatcli-id-5", "confidence must be in (0, 1], got 0.000000"}));
  EXPECT_THAT(store_->Count(), IsOkAndHolds(2));
  auto again = store_->Import({one, two});
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_EQ(again->imported, 0);
  EXPECT_EQ(again->skipped, 2);
  EXPECT_THAT(again->unusable, IsEmpty());
  EXPECT_THAT(store_->Get("chatcli-id-1").status(), IsOk());
}

TEST_F(FactStoreTest, ImportKeepsAFactOfTwentyKibWhole) {
  Fact big;
  big.id = "big";
  big.content = "deployment notes " + std::string(20 * 1024, 'x');
  Fact over = big;
  over.id = "over";
  over.content = std::string(kMaxImportedFactBytes + 1, 'y');

  auto counts = store_->Import({big, over});

  ASSERT_THAT(counts.status(), IsOk());
  EXPECT_EQ(counts->imported, 1);
  ASSERT_THAT(counts->unusable, SizeIs(1));
  EXPECT_EQ(counts->unusable[0].id, "over");
  EXPECT_THAT(counts->unusable[0].reason, HasSubstr("at most 131072 bytes"));
  auto got = store_->Get("big");
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_EQ(got->content, big.content);
  EXPECT_THAT(Search("deployment notes"), ElementsAre("big"));
  // Add keeps its own limit.
  EXPECT_THAT(store_->Add({big.content}).status(), StatusIs(StatusCode::kInvalidArgument));
  // Its vector is taken over what a fact of mend's own may hold.
  auto work = store_->MissingEmbeddings("m1", 10);
  ASSERT_THAT(work.status(), IsOk());
  ASSERT_THAT(*work, SizeIs(1));
  EXPECT_EQ((*work)[0].text, big.content.substr(0, kMaxFactBytes));
}

constexpr char kChatcliFile[] = R"([
  {
    "id": "aaaaaaaaaaaaaaaaaaaaaaaa",
    "content": "Deploy with make release",
    "category": "project",
    "tags": ["Deploy", "deploy", "CI/CD", "Deploy"],
    "created_at": "2026-03-01T10:00:00.123456789+02:00",
    "last_accessed": "2026-03-02T07:15:30.100000001Z",
    "access_count": 2,
    "score": 0,
    "provenance": "correction"
  },
  {
    "id": "bbbbbbbbbbbbbbbbbbbbbbbb",
    "content": "Prefers short answers",
    "category": "preference",
    "created_at": "2026-01-05T23:59:59.999999999-08:00",
    "last_accessed": "2026-01-06T00:00:00Z",
    "access_count": 0,
    "score": 0,
    "provenance": "user"
  },
  {
    "id": "cccccccccccccccccccccccc",
    "content": "Answers in English",
    "category": "preference",
    "tags": ["lang"],
    "created_at": "2026-01-07T08:00:00.5Z",
    "last_accessed": "2026-01-07T08:00:00.5Z",
    "access_count": 0,
    "score": 0,
    "provenance": "extraction"
  }
])";

// The fields chatcli wrote, in the export of `facts`, compared as their JSON text.
void ExpectChatcliFieldsAsWritten(const std::vector<Fact>& facts, const std::string& original) {
  Result<nlohmann::json> exported = ParseJson(ExportChatcliJson(facts));
  Result<nlohmann::json> want = ParseJson(original);
  ASSERT_TRUE(exported.ok() && want.ok());
  ASSERT_EQ(exported->size(), want->size());
  for (const nlohmann::json& w : *want) {
    const nlohmann::json* got = nullptr;
    for (const nlohmann::json& e : *exported) {
      if (e["id"] == w["id"]) got = &e;
    }
    ASSERT_NE(got, nullptr) << w["id"];
    for (const char* key : {"content", "category", "tags", "created_at", "last_accessed",
                            "access_count", "provenance"}) {
      EXPECT_EQ(got->contains(key), w.contains(key)) << w["id"] << " " << key;
      if (w.contains(key)) {
        EXPECT_EQ((*got)[key].dump(), w[key].dump()) << w["id"] << " " << key;
      }
    }
  }
}

TEST_F(FactStoreTest, ImportThenExportKeepsWhatChatcliWrote) {
  Result<ChatcliImport> parsed = ParseChatcliJson(kChatcliFile, clock_.Now());
  ASSERT_THAT(parsed.status(), IsOk());
  auto counts = store_->Import(parsed->facts);
  ASSERT_THAT(counts.status(), IsOk());
  EXPECT_EQ(counts->imported, 3);
  Reopen();

  auto all = store_->List({.include_superseded = true});
  ASSERT_THAT(all.status(), IsOk());
  ExpectChatcliFieldsAsWritten(*all, kChatcliFile);
  // Matching sees the normalised tags; the times are whole.
  auto deploy = store_->Get("aaaaaaaaaaaaaaaaaaaaaaaa");
  ASSERT_THAT(deploy.status(), IsOk());
  EXPECT_THAT(deploy->tags, ElementsAre("deploy", "ci/cd"));
  EXPECT_EQ(FormatRfc3339(deploy->created_at), "2026-03-01T08:00:00.123456789Z");
  auto matches = store_->MatchTags({"deploy"}, "", 10);
  ASSERT_THAT(matches.status(), IsOk());
  ASSERT_THAT(*matches, SizeIs(1));
  EXPECT_THAT((*matches)[0].ids, ElementsAre("aaaaaaaaaaaaaaaaaaaaaaaa"));
}

TEST_F(FactStoreTest, FactsGivenInMemoryKeepTheirTagsAndNanosecondsToo) {
  Fact f;
  f.id = "given";
  f.content = "given in memory";
  f.tags = {"Ops", "ops", " Linux "};
  Result<Time> t = ParseRfc3339("2026-02-03T04:05:06.000000789Z");
  ASSERT_THAT(t.status(), IsOk());
  f.created_at = f.last_accessed = *t;
  ASSERT_THAT(store_->Import({f}).status(), IsOk());

  auto got = store_->Get("given");
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_THAT(got->tags, ElementsAre("ops", "linux"));
  EXPECT_THAT(got->as_written.tags, ElementsAre("Ops", "ops", " Linux "));
  EXPECT_EQ(got->created_at, *t);
  EXPECT_EQ(got->last_accessed, *t);
}

TEST_F(FactStoreTest, ReinforcingAnImportedFactKeepsItsTagsAsWrittenAndMovesLastAccessed) {
  Result<ChatcliImport> parsed = ParseChatcliJson(kChatcliFile, clock_.Now());
  ASSERT_THAT(parsed.status(), IsOk());
  ASSERT_THAT(store_->Import(parsed->facts).status(), IsOk());
  NewFact again{"Deploy with make release", "project", {"Release", "deploy"}};

  MustAdd(again);

  auto got = store_->Get("aaaaaaaaaaaaaaaaaaaaaaaa");
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_THAT(got->tags, ElementsAre("deploy", "ci/cd", "release"));
  Result<nlohmann::json> exported = ParseJson(ExportChatcliJson({*got}));
  ASSERT_THAT(exported.status(), IsOk());
  EXPECT_EQ((*exported)[0]["tags"],
            (nlohmann::json{"Deploy", "deploy", "CI/CD", "Deploy", "release"}));
  EXPECT_EQ((*exported)[0]["last_accessed"], FormatRfc3339(clock_.Now()));
  EXPECT_EQ((*exported)[0]["created_at"], "2026-03-01T10:00:00.123456789+02:00");
  EXPECT_EQ((*exported)[0]["provenance"], "correction");
}

TEST_F(FactStoreTest, AVersionTwoFileGainsTheWrittenColumn) {
  AddResult a = MustAdd({"alpha fact", "general", {"one"}});
  store_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "ALTER TABLE facts DROP COLUMN as_written; "
                         "UPDATE meta SET value = '2' WHERE key = 'memory.schema_version'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);

  Reopen();

  auto got = store_->Get(a.id);
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_THAT(got->tags, ElementsAre("one"));
  EXPECT_TRUE(got->as_written.empty());
  Result<ChatcliImport> parsed = ParseChatcliJson(kChatcliFile, clock_.Now());
  ASSERT_THAT(parsed.status(), IsOk());
  ASSERT_THAT(store_->Import(parsed->facts).status(), IsOk());
  Reopen();
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'memory.schema_version'", -1,
                               &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "3");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  auto deploy = store_->Get("aaaaaaaaaaaaaaaaaaaaaaaa");
  ASSERT_THAT(deploy.status(), IsOk());
  EXPECT_EQ(deploy->as_written.provenance, "correction");
}

TEST_F(FactStoreTest, GenerationMovesOnTextChangesOnly) {
  auto g0 = store_->Generation();
  ASSERT_THAT(g0.status(), IsOk());
  AddResult a = MustAdd({"alpha fact"});
  auto g1 = store_->Generation();
  ASSERT_THAT(g1.status(), IsOk());
  EXPECT_GT(*g1, *g0);
  MEND_ASSERT_OK(store_->RecordInjection("run-1", {a.id}));
  EXPECT_THAT(store_->Generation(), IsOkAndHolds(*g1));
}

TEST_F(FactStoreTest, EmbeddingsArePerModelAndPartAndBackfillFindsTheGaps) {
  NewFact f{"Quote variables in shell scripts", "lesson", {"bash"}};
  f.episode = Episode{"rename photos", "not a directory", clock_.Now()};
  AddResult a = MustAdd(f);
  AddResult b = MustAdd({"beta fact"});
  auto missing = store_->MissingEmbeddings("m1", 10);
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
  auto still = store_->MissingEmbeddings("m1", 10);
  ASSERT_THAT(still.status(), IsOk());
  ASSERT_THAT(*still, SizeIs(1));
  EXPECT_EQ((*still)[0].id, b.id);
  EXPECT_THAT(store_->MissingEmbeddings("m2", 10), IsOkAndHolds(SizeIs(3)));
  auto vectors = store_->Embeddings("m1");
  ASSERT_THAT(vectors.status(), IsOk());
  ASSERT_THAT(*vectors, SizeIs(2));
  EXPECT_EQ((*vectors)[0].vector, (std::vector<float>{0.5f, -1.25f}));
  EXPECT_THAT(store_->Embeddings("m2"), IsOkAndHolds(IsEmpty()));
  MEND_ASSERT_OK(store_->Remove(a.id));
  EXPECT_THAT(store_->Embeddings("m1"), IsOkAndHolds(IsEmpty()));
}

TEST_F(FactStoreTest, SurvivesReopen) {
  AddResult a = MustAdd({"durable fact"});
  Reopen();
  EXPECT_THAT(store_->Get(a.id).status(), IsOk());
  EXPECT_THAT(Search("durable"), ElementsAre(a.id));
}

TEST_F(FactStoreTest, NewerSchemaIsRefusedWithAClearMessage) {
  store_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'memory.schema_version'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EXPECT_THAT(FactStore::Open(path_, FactStoreOptions{&clock_}).status(),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("newer mend")));
}

TEST_F(FactStoreTest, ForeignFileIsDataLoss) {
  store_.reset();
  std::string foreign = dir_ + "/not_a_db";
  std::ofstream(foreign) << std::string(4096, 'z');
  EXPECT_THAT(FactStore::Open(foreign, FactStoreOptions{&clock_}).status(),
              StatusIs(StatusCode::kDataLoss));
}

}  // namespace
}  // namespace mend::memory
