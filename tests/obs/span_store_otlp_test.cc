// observe.db as the OTLP exporter's durable copy: spans written to wait for export, marked
// exported or handed over, found again by any exporter, given up after the retention; and the
// version 3 migration that adds the state to an older file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "mend/obs/span_store.h"
#include "tests/obs/span_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::IsOkAndHolds;
using testing::At;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;
using testing::MakeSpan;

class SpanStoreOtlpTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = dir_ + "/observe.db";
    auto store = SpanStore::Open(path_);
    ASSERT_THAT(store, IsOk());
    store_ = std::move(store).value();
  }

  void Sql(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }

  static SpanKey Key(const SpanData& span) { return {span.context.trace_id, span.context.span_id}; }

  static std::vector<std::string> Names(const Result<std::vector<SpanData>>& spans) {
    std::vector<std::string> names;
    if (spans.ok()) {
      for (const SpanData& span : *spans) names.push_back(span.name);
    }
    return names;
  }

  std::string path_;
  std::unique_ptr<SpanStore> store_;
};

TEST_F(SpanStoreOtlpTest, OnlyEndedSpansOfAnExportingProcessWait) {
  SpanData snapshot = MakeSpan(1, 1, 0, "invoke_agent a", "r-1", 0, 0);
  snapshot.attributes.push_back({std::string(kInProgressAttribute), true});
  MEND_ASSERT_OK(store_->Write({snapshot}, 0, OtlpExport::kAwait));
  EXPECT_THAT(store_->UnexportedCount(), IsOkAndHolds(0));  // a snapshot is never exported
  MEND_ASSERT_OK(store_->Write(
      {MakeSpan(1, 1, 0, "invoke_agent a", "r-1", 0, 5), MakeSpan(1, 2, 1, "chat m", "r-1", 1, 2)},
      0, OtlpExport::kAwait));
  EXPECT_THAT(store_->UnexportedCount(), IsOkAndHolds(2));
  // Spans received over OTLP, or written by a process without an exporter, never wait.
  MEND_ASSERT_OK(store_->Write({MakeSpan(2, 1, 0, "foreign", "", 0, 5)}));
  EXPECT_THAT(store_->UnexportedCount(), IsOkAndHolds(2));
}

TEST_F(SpanStoreOtlpTest, HandedOverAndOrphanedSpansAreToBeSentUntilExported) {
  const SpanData handed = MakeSpan(1, 1, 0, "handed over", "r-1", 0, 10);
  const SpanData orphan = MakeSpan(1, 2, 1, "orphan", "r-1", 0, 20);
  const SpanData live = MakeSpan(1, 3, 1, "live", "r-1", 0, 100);
  MEND_ASSERT_OK(store_->Write({handed, orphan, live}, 0, OtlpExport::kAwait));
  // Spans still with their process are not anyone else's to send, until they are orphaned.
  EXPECT_THAT(Names(store_->SpansToExport(At(0), 10)), IsEmpty());
  EXPECT_THAT(store_->HandOver({Key(handed)}), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(Names(store_->SpansToExport(At(0), 10)), ElementsAre("handed over"));
  EXPECT_THAT(Names(store_->SpansToExport(At(50), 10)), ElementsAre("handed over", "orphan"));
  EXPECT_THAT(Names(store_->SpansToExport(At(50), 1)), ElementsAre("handed over"));

  EXPECT_THAT(store_->MarkExported({Key(handed), Key(orphan)}), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(Names(store_->SpansToExport(At(1000), 10)), ElementsAre("live"));
  // Marks for spans not stored yet, or no longer waiting, come back for a later try.
  const SpanData unwritten = MakeSpan(1, 4, 1, "unwritten", "r-1", 0, 5);
  EXPECT_THAT(store_->MarkExported({Key(unwritten), Key(handed)}),
              IsOkAndHolds(ElementsAre(Key(unwritten), Key(handed))));
  EXPECT_THAT(store_->HandOver({Key(unwritten)}), IsOkAndHolds(ElementsAre(Key(unwritten))));
  EXPECT_THAT(store_->UnexportedCount(), IsOkAndHolds(1));
}

TEST_F(SpanStoreOtlpTest, SpansOlderThanTheRetentionAreGivenUpAndCounted) {
  const SpanData old = MakeSpan(1, 1, 0, "old", "r-1", 0, 10);
  MEND_ASSERT_OK(store_->Write(
      {old, MakeSpan(1, 2, 1, "older", "r-1", 0, 5), MakeSpan(1, 3, 1, "new", "r-1", 0, 100)}, 0,
      OtlpExport::kAwait));
  MEND_ASSERT_OK(store_->HandOver({Key(old)}).status());  // handed over or not, both age out
  EXPECT_THAT(store_->ExpireUnexported(At(50)), IsOkAndHolds(2));
  EXPECT_THAT(store_->ExpireUnexported(At(50)), IsOkAndHolds(0));
  EXPECT_THAT(Names(store_->SpansToExport(At(1000), 10)), ElementsAre("new"));
  // The spans themselves stay in observe.db.
  EXPECT_THAT(store_->SpansOfTrace(old.context.trace_id), IsOkAndHolds(::testing::SizeIs(3)));
}

TEST_F(SpanStoreOtlpTest, AVersionTwoFileGainsTheStateAndItsSpansWaitForNothing) {
  MEND_ASSERT_OK(store_->Write({MakeSpan(1, 1, 0, "before", "r-1", 0, 5)}));
  store_.reset();
  Sql("DROP INDEX spans_otlp; ALTER TABLE spans DROP COLUMN otlp_state; "
      "UPDATE meta SET value = 2 WHERE key = 'schema_version'");
  EXPECT_THAT(SpanStore::ReadSchemaVersion(path_), IsOkAndHolds(2));
  auto reader = SpanStore::OpenReadOnly(path_);
  ASSERT_THAT(reader, IsOk());
  EXPECT_THAT((*reader)->ListRuns({}),
              IsOkAndHolds(Field(&RunTracePage::runs, ::testing::SizeIs(1))));
  reader->reset();

  auto migrated = SpanStore::Open(path_);
  ASSERT_THAT(migrated, IsOk());
  EXPECT_THAT(SpanStore::ReadSchemaVersion(path_), IsOkAndHolds(kSpanStoreSchemaVersion));
  EXPECT_EQ(kSpanStoreSchemaVersion, 3);
  EXPECT_THAT((*migrated)->UnexportedCount(), IsOkAndHolds(0));  // old spans are not resent
  MEND_ASSERT_OK(
      (*migrated)->Write({MakeSpan(1, 2, 1, "after", "r-1", 1, 2)}, 0, OtlpExport::kAwait));
  EXPECT_THAT((*migrated)->UnexportedCount(), IsOkAndHolds(1));
  migrated->reset();
  auto again = SpanStore::Open(path_);  // opening a current file changes nothing
  ASSERT_THAT(again, IsOk());
  EXPECT_THAT((*again)->UnexportedCount(), IsOkAndHolds(1));
}

}  // namespace
}  // namespace mend::obs
