// The FactStore conformance suite: importing facts, the unusable ones among them, and the round
// trip of what another program wrote (tags, provenance and times as written).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mend/base/json.h"
#include "mend/base/time_format.h"
#include "mend/memory/chatcli_format.h"
#include "tests/memory/fact_store_conformance.h"
#include "tests/support/status_matchers.h"

namespace mend::memory::testing {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

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

TEST_P(FactStoreConformanceTest, ImportKeepsIdsLeavesOutUnusableFactsAndCountsSkips) {
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

TEST_P(FactStoreConformanceTest, ImportKeepsAFactOfTwentyKibWhole) {
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
  auto work = store_->MissingEmbeddings("m1", 10, 0);
  ASSERT_THAT(work.status(), IsOk());
  ASSERT_THAT(*work, SizeIs(1));
  EXPECT_EQ((*work)[0].text, big.content.substr(0, kMaxFactBytes));
}

TEST_P(FactStoreConformanceTest, ImportThenExportKeepsWhatChatcliWrote) {
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

TEST_P(FactStoreConformanceTest, FactsGivenInMemoryKeepTheirTagsAndNanosecondsToo) {
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

TEST_P(FactStoreConformanceTest,
       ReinforcingAnImportedFactKeepsItsTagsAsWrittenAndMovesLastAccessed) {
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

}  // namespace
}  // namespace mend::memory::testing
