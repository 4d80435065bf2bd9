// What the SQLite fact store keeps beside the facts for retrieval, when the file comes from an
// older schema or lost part of it. (What every FactStore keeps is in the conformance suite.)

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/memory/fact_store.h"
#include "tests/memory/fact_store_conformance.h"
#include "tests/memory/sqlite_fact_store_harness.h"
#include "tests/support/status_matchers.h"

namespace mend::memory {
namespace {

using ::mend::memory::testing::SqliteFactStoreHarness;
using ::mend::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class FactStoreIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = harness_.path();
    Reopen();
  }
  void TearDown() override { store_.reset(); }
  void Reopen() {
    store_.reset();
    auto store = harness_.Open(clock_);
    ASSERT_THAT(store.status(), IsOk());
    store_ = std::move(store).value();
  }
  AddResult MustAdd(NewFact fact) {
    Result<AddResult> r = store_->Add(fact);
    EXPECT_THAT(r.status(), IsOk());
    return r.ok() ? *r : AddResult{};
  }
  void Sql(const char* sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  void ExpectStatisticsOfTheActiveFacts() {
    testing::ExpectKeptStatisticsMatchTheActiveFacts(*store_);
  }
  // The ids MatchTags gives for `key` (every workspace, no budget).
  std::vector<std::string> Tagged(const std::string& key, const std::string& workspace = "") {
    auto matches = store_->MatchTags({key}, workspace, 1000);
    EXPECT_THAT(matches.status(), IsOk());
    if (!matches.ok() || matches->size() != 1) return {"<error>"};
    return (*matches)[0].ids;
  }

  ManualClock clock_;
  SqliteFactStoreHarness harness_;
  std::string path_;
  std::unique_ptr<FactStore> store_;
};

TEST_F(FactStoreIndexTest, AVersionOneFileIsCountedWhenOpened) {
  NewFact quote{"Quote variables in shell scripts", "lesson", {"bash"}};
  quote.episode = Episode{"rename photos", "not a directory", clock_.Now()};
  AddResult a = MustAdd(quote);
  AddResult b = MustAdd({"Retry with backoff when the database is locked", "lesson", {"sqlite"}});
  MustAdd({"The event loop blocks", "lesson", {"python"}});
  MEND_ASSERT_OK(store_->Supersede(b.id, a.id));
  store_.reset();
  // What version 1 had: no statistics, no tag keys.
  Sql("DROP TABLE fact_terms; DROP TABLE fact_tag_keys; ALTER TABLE facts DROP COLUMN as_written; "
      "DROP INDEX fact_injections_fact; ALTER TABLE fact_injections DROP COLUMN score; "
      "DELETE FROM meta WHERE key IN ('memory.documents', 'memory.words', 'memory.tokens'); "
      "UPDATE meta SET value = '1' WHERE key = 'memory.schema_version'");
  Reopen();
  ExpectStatisticsOfTheActiveFacts();
  EXPECT_THAT(Tagged("bash"), ElementsAre(a.id));
  EXPECT_THAT(Tagged("sqlite"), IsEmpty());  // superseded
  // Counted once: opening it again changes nothing.
  Reopen();
  ExpectStatisticsOfTheActiveFacts();
}

TEST_F(FactStoreIndexTest, MissingTotalsAreDataLoss) {
  MustAdd({"alpha"});
  store_.reset();
  Sql("DELETE FROM meta WHERE key = 'memory.words'");
  Reopen();
  EXPECT_THAT(store_->CountTerms({"alpha"}).status(),
              ::mend::testing::StatusIs(StatusCode::kDataLoss));
}

}  // namespace
}  // namespace mend::memory
