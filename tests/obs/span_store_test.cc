#include "mend/obs/span_store.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cmath>
#include <limits>

#include "tests/obs/span_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using testing::At;
using testing::MakeSpan;

class SpanStoreTest : public testing::TempDirTest {
 protected:
  std::unique_ptr<SpanStore> OpenStore() {
    Result<std::unique_ptr<SpanStore>> store = SpanStore::Open(dir_ + "/home/observe.db");
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }
};

SpanData RichSpan() {
  SpanData span = MakeSpan(7, 2, 1, "chat gpt-x", "run-1", 10, 12);
  span.kind = SpanKind::kClient;
  span.status = SpanStatus::kError;
  span.status_message = "rate limited \xE2\x9C\x93";
  span.context.flags = 0;
  span.start += std::chrono::nanoseconds(123456789);
  span.attributes = {{"gen_ai.operation.name", std::string("chat")},
                     {"gen_ai.usage.input_tokens", int64_t{100}},
                     {"mend.cost_usd", 0.25},
                     {"whole.double", 3.0},
                     {"nan", std::numeric_limits<double>::infinity()},
                     {"flag", true},
                     {"text", std::string("a\"b\\\n\xE2\x9C\x93")},
                     {"negzero", -0.0},
                     {"gen_ai.response.finish_reasons", std::vector<std::string>{"stop", "len"}},
                     {"big", int64_t{-9007199254740993}}};
  span.events = {{"heal.action", At(11), {{"heal.action", std::string("deny")}}},
                 {"empty", At(11) + std::chrono::nanoseconds(5), {}}};
  span.links = {{{std::string(32, 'a'), std::string(16, 'b'), 1}, {{"k", int64_t{1}}}}};
  return span;
}

TEST_F(SpanStoreTest, RoundTripGivesBackEqualSpans) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const SpanData rich = RichSpan();
  const SpanData root = MakeSpan(7, 1, 0, "invoke_agent a", "run-1", 9, 13);
  MEND_ASSERT_OK(store->Write({rich, root}));
  Result<std::vector<SpanData>> spans = store->SpansOfTrace(rich.context.trace_id);
  ASSERT_TRUE(spans.ok()) << spans.status().ToString();
  ASSERT_EQ(spans->size(), 2u);
  EXPECT_EQ((*spans)[0], root);  // ordered by start
  EXPECT_EQ((*spans)[1], rich);
  // The double 3.0 stays a double, the integer stays an integer.
  EXPECT_TRUE(std::holds_alternative<double>((*spans)[1].attributes[3].value));
  EXPECT_THAT(store->SpansOfTrace(std::string(32, 'f')), IsOkAndHolds(::testing::IsEmpty()));
}

// One batch whose spans shrink and grow, with strings needing escapes in keys and values in any
// position: each span reads back as written (no text of a previous span's columns is left over),
// and invalid UTF-8 reads back with U+FFFD in place of the bad byte.
TEST_F(SpanStoreTest, BatchOfMixedSpansRoundTrips) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::vector<SpanData> spans;
  for (int i = 0; i < 6; ++i) {
    SpanData span = MakeSpan(3, i + 1, 0, "execute_tool t", "run-m", 10 + i, 11 + i);
    for (int k = 0; k < (i % 2 == 0 ? 9 : 1); ++k) {
      span.attributes.push_back({"key." + std::to_string(k), std::string(k * 7, 'v')});
    }
    if (i == 2) span.attributes.push_back({"tab\tkey", std::string("end\x01")});
    if (i == 3) span.events = {{"heal.action", At(12), {{"q\"", std::string("\\")}}}};
    spans.push_back(std::move(span));
  }
  SpanData bad = MakeSpan(3, 9, 0, "execute_tool t", "run-m", 20, 21);
  bad.attributes = {{"bytes", std::string("a\xFF"
                                          "b")}};
  MEND_ASSERT_OK(store->Write({spans[0], spans[1], spans[2], spans[3], spans[4], spans[5], bad}));
  Result<std::vector<SpanData>> read = store->SpansOfTrace(spans[0].context.trace_id);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 7u);
  for (size_t i = 0; i < spans.size(); ++i) EXPECT_EQ((*read)[i], spans[i]) << i;
  bad.attributes = {{"bytes", std::string("a\xEF\xBF\xBD"
                                          "b")}};
  EXPECT_EQ((*read)[6], bad);
}

TEST_F(SpanStoreTest, NanAttributeSurvives) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  SpanData span = MakeSpan(1, 1, 0, "x", "", 0, 1);
  span.attributes = {{"nan", std::numeric_limits<double>::quiet_NaN()}};
  MEND_ASSERT_OK(store->Write({span}));
  auto spans = store->SpansOfTrace(span.context.trace_id);
  ASSERT_TRUE(spans.ok());
  ASSERT_EQ(spans->size(), 1u);
  EXPECT_TRUE(std::isnan(std::get<double>((*spans)[0].attributes[0].value)));
}

TEST_F(SpanStoreTest, FileIsPrivateAndDirectoryCreated0700) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  MEND_ASSERT_OK(store->Write({MakeSpan(1, 1, 0, "x", "r", 0, 1)}));
  struct stat st;
  ASSERT_EQ(::stat((dir_ + "/home").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  for (const char* name : {"/home/observe.db", "/home/observe.db-wal"}) {
    ASSERT_EQ(::stat((dir_ + name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << name;
  }
}

TEST_F(SpanStoreTest, ExistingWorldReadableFileIsNarrowed) {
  auto store = OpenStore();
  store.reset();
  const std::string path = dir_ + "/home/observe.db";
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  store = OpenStore();
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(SpanStoreTest, OpenReadOnlyOfMissingFileIsNotFound) {
  EXPECT_THAT(SpanStore::OpenReadOnly(dir_ + "/nothing/observe.db"),
              StatusIs(StatusCode::kNotFound));
}

TEST_F(SpanStoreTest, ReadOnlyStoreReadsAndCannotWrite) {
  auto store = OpenStore();
  MEND_ASSERT_OK(store->Write({MakeSpan(1, 1, 0, "invoke_agent a", "r", 0, 1)}, 3));
  auto reader = SpanStore::OpenReadOnly(dir_ + "/home/observe.db");
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_THAT((*reader)->dropped_spans(), IsOkAndHolds(3));
  EXPECT_THAT((*reader)->TraceIdOfRun("r"), IsOkAndHolds(std::string(31, '0') + "1"));
  EXPECT_FALSE((*reader)->Write({MakeSpan(1, 2, 0, "x", "r", 0, 1)}).ok());
}

TEST_F(SpanStoreTest, NewerSchemaIsRefused) {
  auto store = OpenStore();
  store.reset();
  // A later build bumped the version.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ + "/home/observe.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = 99 WHERE key = 'schema_version'", nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  EXPECT_THAT(SpanStore::Open(dir_ + "/home/observe.db"),
              StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(SpanStore::OpenReadOnly(dir_ + "/home/observe.db"),
              StatusIs(StatusCode::kFailedPrecondition));
  // Reading the version is not refused: mend migrate reports it.
  EXPECT_THAT(SpanStore::ReadSchemaVersion(dir_ + "/home/observe.db"), IsOkAndHolds(99));
}

TEST_F(SpanStoreTest, ReadSchemaVersionCreatesNothing) {
  const std::string path = dir_ + "/home/observe.db";
  EXPECT_THAT(SpanStore::ReadSchemaVersion(path), IsOkAndHolds(0));
  struct stat st;
  EXPECT_NE(::stat(path.c_str(), &st), 0);
  OpenStore().reset();
  EXPECT_THAT(SpanStore::ReadSchemaVersion(path), IsOkAndHolds(kSpanStoreSchemaVersion));
  EXPECT_NE(::stat((path + "-wal").c_str(), &st), 0);
}

TEST_F(SpanStoreTest, TraceIdOfUnknownRunIsNotFound) {
  auto store = OpenStore();
  EXPECT_THAT(store->TraceIdOfRun("nope"), StatusIs(StatusCode::kNotFound));
}

}  // namespace
}  // namespace mend::obs
