// ListTraces' per-trace summaries (mend's runs and foreign spans alike), paging, late roots,
// replaced spans, the migration from schema version 1 and pruning.
#include <sqlite3.h>

#include <algorithm>

#include "mend/base/random.h"
#include "mend/obs/span_store.h"
#include "tests/obs/span_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using testing::At;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using testing::MakeSpan;

// The trace id MakeSpan gives trace `n`.
std::string TraceId(int n) {
  const std::string digits = std::to_string(n);
  return std::string(32 - digits.size(), '0') + digits;
}

// A span another program sent: no run, its service in service.name.
SpanData Foreign(int trace, int id, int parent, std::string name, std::string service,
                 int64_t start, int64_t end) {
  SpanData s = MakeSpan(trace, id, parent, std::move(name), "", start, end);
  if (!service.empty()) s.attributes = {{"service.name", std::move(service)}};
  return s;
}

std::vector<std::string> Ids(const TracePage& page) {
  std::vector<std::string> ids;
  for (const TraceSummary& t : page.traces) ids.push_back(t.trace_id);
  return ids;
}

class SpanStoreTracesTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = dir_ + "/observe.db";
    auto store = SpanStore::Open(path_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }

  void Sql(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }

  std::string path_;
  std::unique_ptr<SpanStore> store_;
};

TEST_F(SpanStoreTracesTest, ListsForeignTracesBesideMendRuns) {
  SpanData failed = Foreign(1, 2, 1, "tool.call 0", "planner", 11, 12);
  failed.status = SpanStatus::kError;
  MEND_ASSERT_OK(store_->Write({failed, Foreign(1, 3, 1, "tool.call 1", "planner", 12, 13),
                                Foreign(1, 1, 0, "agent.run", "planner", 10, 14)}));
  MEND_ASSERT_OK(store_->Write({MakeSpan(2, 2, 1, "chat m", "r-1", 21, 22),
                                MakeSpan(2, 1, 0, "invoke_agent helper", "r-1", 20, 30)}));

  Result<TracePage> page = store_->ListTraces({});
  ASSERT_THAT(page, IsOk());
  ASSERT_EQ(page->traces.size(), 2u);
  EXPECT_FALSE(page->next.has_value());
  TraceSummary mend_run{TraceId(2),
                        std::string(15, '0') + "1",
                        "invoke_agent helper",
                        true,
                        "mend",
                        "r-1",
                        At(20),
                        At(30),
                        2,
                        0};
  TraceSummary foreign{
      TraceId(1), std::string(15, '0') + "1", "agent.run", true, "planner", "", At(10), At(14), 3,
      1};
  EXPECT_EQ(page->traces[0], mend_run);
  EXPECT_EQ(page->traces[1], foreign);
  EXPECT_THAT(store_->GetTraceSummary(TraceId(1)), IsOkAndHolds(foreign));
  EXPECT_THAT(store_->GetTraceSummary(TraceId(9)), StatusIs(StatusCode::kNotFound));
}

TEST_F(SpanStoreTracesTest, ARootThatArrivesLateTakesOver) {
  // An SDK exports children first: until the root arrives the earliest span stands in for it.
  MEND_ASSERT_OK(store_->Write({Foreign(1, 3, 1, "child b", "", 12, 13)}));
  MEND_ASSERT_OK(store_->Write({Foreign(1, 2, 1, "child a", "svc-child", 11, 12)}));
  Result<TraceSummary> partial = store_->GetTraceSummary(TraceId(1));
  ASSERT_THAT(partial, IsOk());
  EXPECT_FALSE(partial->has_root);
  EXPECT_EQ(partial->root_name, "child a");
  EXPECT_EQ(partial->service_name, "svc-child");

  // A root wins over an earlier span that has a parent; an earlier root over a later one.
  MEND_ASSERT_OK(store_->Write({Foreign(1, 5, 0, "late root", "svc-root", 20, 21)}));
  MEND_ASSERT_OK(store_->Write({Foreign(1, 1, 0, "agent.run", "svc-root", 10, 14)}));
  Result<TraceSummary> whole = store_->GetTraceSummary(TraceId(1));
  ASSERT_THAT(whole, IsOk());
  EXPECT_TRUE(whole->has_root);
  EXPECT_EQ(whole->root_name, "agent.run");
  EXPECT_EQ(whole->service_name, "svc-root");
  EXPECT_EQ(whole->span_count, 4);
  EXPECT_EQ(whole->start, At(10));
  EXPECT_EQ(whole->end, At(21));
}

TEST_F(SpanStoreTracesTest, ServiceAndRunFallBackToOtherSpans) {
  // The root has neither; the smallest service and run id among the other spans are reported.
  MEND_ASSERT_OK(
      store_->Write({Foreign(1, 1, 0, "root", "", 0, 9), Foreign(1, 2, 1, "a", "zeta", 1, 2),
                     Foreign(1, 3, 1, "b", "alpha", 2, 3)}));
  SpanData run_span = MakeSpan(1, 4, 1, "c", "r-9", 3, 4);
  run_span.attributes = {{"service.name", std::string("worker")}};
  MEND_ASSERT_OK(store_->Write({run_span}));
  Result<TraceSummary> t = store_->GetTraceSummary(TraceId(1));
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->root_name, "root");
  EXPECT_EQ(t->service_name, "alpha");
  EXPECT_EQ(t->run_id, "r-9");
}

TEST_F(SpanStoreTracesTest, ReplacedSpanIsNotCountedTwice) {
  SpanData snapshot = Foreign(1, 1, 0, "root", "svc", 0, 0);
  MEND_ASSERT_OK(store_->Write({snapshot, Foreign(1, 2, 1, "child", "svc", 1, 2)}));
  SpanData ended = snapshot;
  ended.end = At(5);
  ended.status = SpanStatus::kError;
  MEND_ASSERT_OK(store_->Write({ended}));
  Result<TraceSummary> t = store_->GetTraceSummary(TraceId(1));
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->span_count, 2);
  EXPECT_EQ(t->error_count, 1);
  EXPECT_EQ(t->end, At(5));
}

TEST_F(SpanStoreTracesTest, PagesNewestFirstWithoutGapsOrRepeats) {
  // 25 traces, five of each start time, so the trace id breaks ties.
  std::vector<SpanData> spans;
  for (int i = 1; i <= 25; ++i) spans.push_back(Foreign(i, 1, 0, "t", "s", i / 5, 100));
  MEND_ASSERT_OK(store_->Write(spans));
  std::vector<std::string> seen;
  TraceQuery query;
  query.limit = 10;
  for (int pages = 0; pages < 3; ++pages) {
    Result<TracePage> page = store_->ListTraces(query);
    ASSERT_THAT(page, IsOk());
    for (const std::string& id : Ids(*page)) seen.push_back(id);
    EXPECT_EQ(page->next.has_value(), pages < 2);
    EXPECT_EQ(page->total, 25);
    EXPECT_EQ(page->more, 25 - static_cast<int64_t>(seen.size()));
    if (!page->next) break;
    // The cursor survives being handed out as text.
    Result<TraceCursor> cursor = ParseTraceCursor(FormatTraceCursor(*page->next));
    ASSERT_THAT(cursor, IsOkAndHolds(*page->next));
    query.before = *cursor;
  }
  std::vector<std::string> want;
  for (int i = 1; i <= 25; ++i) want.push_back(TraceId(i));
  std::sort(want.begin(), want.end(), [](const std::string& a, const std::string& b) {
    const int ia = std::stoi(a), ib = std::stoi(b);
    return ia / 5 != ib / 5 ? ia / 5 > ib / 5 : a > b;
  });
  EXPECT_EQ(seen, want);
}

TEST_F(SpanStoreTracesTest, BadPageSizeAndCursorAreInvalid) {
  EXPECT_THAT(store_->ListTraces({0, std::nullopt}), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->ListTraces({kMaxTracePageSize + 1, std::nullopt}),
              StatusIs(StatusCode::kInvalidArgument));
  const std::vector<std::string> bad_cursors = {
      "", "12", ":abc", "x:" + TraceId(1), "5:nothex", "5:" + TraceId(0)};
  for (const std::string& bad : bad_cursors) {
    EXPECT_THAT(ParseTraceCursor(bad), StatusIs(StatusCode::kInvalidArgument)) << bad;
  }
}

// Spans of several traces written in random batches give the same summaries as one batch.
TEST_F(SpanStoreTracesTest, BatchesAddUpToTheSameSummaries) {
  std::vector<SpanData> spans;
  for (int t = 1; t <= 4; ++t) {
    for (int id = 1; id <= 12; ++id) {
      SpanData s = Foreign(t, id, id == 1 ? 0 : 1, "s" + std::to_string(id),
                           id % 3 == 0 ? "svc" + std::to_string(id) : "", id, id + t);
      if (id % 4 == 0) s.status = SpanStatus::kError;
      if (id % 5 == 0) s.run_id = "run-" + std::to_string(id);
      spans.push_back(s);
    }
  }
  auto other = SpanStore::Open(dir_ + "/other.db");
  ASSERT_THAT(other, IsOk());
  MEND_ASSERT_OK((*other)->Write(spans));
  SeededRandom random(7);
  for (size_t i = spans.size() - 1; i > 0; --i) {
    std::swap(spans[i], spans[static_cast<size_t>(random.UniformInt(0, static_cast<int64_t>(i)))]);
  }
  for (size_t i = 0; i < spans.size();) {
    const size_t n = std::min(spans.size() - i, static_cast<size_t>(random.UniformInt(1, 7)));
    MEND_ASSERT_OK(store_->Write({spans.begin() + i, spans.begin() + i + n}));
    i += n;
  }
  Result<TracePage> one = (*other)->ListTraces({});
  ASSERT_THAT(one, IsOk());
  ASSERT_EQ(one->traces.size(), 4u);
  EXPECT_THAT(store_->ListTraces({}), IsOkAndHolds(Field(&TracePage::traces, one->traces)));
}

// A version 1 file (no traces table) is readable as before, its traces listed read-only as after
// a migration without writing the file; a read-write open migrates it and builds the trace list
// from the stored spans.
TEST_F(SpanStoreTracesTest, VersionOneFileIsMigrated) {
  MEND_ASSERT_OK(
      store_->Write({Foreign(1, 2, 1, "child", "svc", 1, 2), Foreign(1, 1, 0, "root", "svc", 0, 5),
                     MakeSpan(2, 1, 0, "invoke_agent x", "r-1", 10, 20)}));
  Result<TracePage> before = store_->ListTraces({});
  ASSERT_THAT(before, IsOk());
  store_.reset();
  Sql("DROP INDEX spans_otlp; ALTER TABLE spans DROP COLUMN otlp_state; DROP TABLE traces; "
      "UPDATE meta SET value = 1 WHERE key = 'schema_version'");

  auto reader = SpanStore::OpenReadOnly(path_);
  ASSERT_THAT(reader, IsOk());
  EXPECT_THAT((*reader)->ListRuns({}),
              IsOkAndHolds(Field(&RunTracePage::runs, ::testing::SizeIs(1))));
  EXPECT_THAT((*reader)->ListTraces({}), IsOkAndHolds(Field(&TracePage::traces, before->traces)));
  EXPECT_THAT((*reader)->UnexportedCount(), IsOkAndHolds(0));
  Result<SpanPruneResult> dry = (*reader)->DeleteEndedBefore(At(100), SpanStore::Mode::kDryRun);
  ASSERT_THAT(dry, IsOk());
  EXPECT_EQ(dry->traces, 2);
  reader->reset();
  EXPECT_THAT(SpanStore::ReadSchemaVersion(path_), IsOkAndHolds(1));  // the file is as it was

  auto migrated = SpanStore::Open(path_);
  ASSERT_THAT(migrated, IsOk());
  EXPECT_THAT((*migrated)->ListTraces({}), IsOkAndHolds(Field(&TracePage::traces, before->traces)));
  migrated->reset();
  auto again = SpanStore::OpenReadOnly(path_);
  ASSERT_THAT(again, IsOk());
  EXPECT_THAT((*again)->ListTraces({}), IsOkAndHolds(Field(&TracePage::traces, before->traces)));
}

TEST_F(SpanStoreTracesTest, PruneDropsEmptiedTracesAndRebuildsTheOthers) {
  MEND_ASSERT_OK(store_->Write(
      {Foreign(1, 1, 0, "old", "svc", 0, 5), Foreign(1, 2, 1, "old child", "svc", 1, 2)}));
  MEND_ASSERT_OK(store_->Write({Foreign(2, 1, 0, "across", "svc", 50, 200),
                                Foreign(2, 2, 1, "early", "svc", 60, 70),
                                Foreign(2, 3, 1, "late", "svc", 150, 160)}));
  MEND_ASSERT_OK(store_->Write({MakeSpan(3, 1, 0, "invoke_agent w", "waiting", 0, 5)}));
  Result<SpanPruneResult> dry =
      store_->DeleteEndedBefore(At(100), SpanStore::Mode::kDryRun, {"waiting"});
  ASSERT_THAT(dry, IsOk());
  EXPECT_EQ(dry->traces, 1);
  Result<SpanPruneResult> done =
      store_->DeleteEndedBefore(At(100), SpanStore::Mode::kDelete, {"waiting"});
  ASSERT_THAT(done, IsOk());
  EXPECT_EQ(done->spans, 3);
  EXPECT_EQ(done->traces, 1);
  EXPECT_THAT(store_->GetTraceSummary(TraceId(1)), StatusIs(StatusCode::kNotFound));
  Result<TraceSummary> across = store_->GetTraceSummary(TraceId(2));
  ASSERT_THAT(across, IsOk());
  EXPECT_EQ(across->span_count, 2);
  EXPECT_EQ(across->start, At(50));
  EXPECT_EQ(across->root_name, "across");
  EXPECT_THAT(store_->GetTraceSummary(TraceId(3)),
              IsOkAndHolds(Field(&TraceSummary::run_id, "waiting")));
  EXPECT_THAT(store_->ListTraces({}),
              IsOkAndHolds(Field(&TracePage::traces, ::testing::SizeIs(2))));
}

}  // namespace
}  // namespace mend::obs
