#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <string>

#include "proxy/conversation.h"
#include "tests/e2e/temp_dir.h"
#include "tests/support/status_matchers.h"

namespace mend::proxy {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::ScopedTempDir;
using ::mend::testing::StatusIs;

class ConversationStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<ScopedTempDir>> dir = ScopedTempDir::Create();
    ASSERT_TRUE(dir.ok());
    dir_ = *std::move(dir);
    path_ = dir_->File("mend.db");
    Result<std::unique_ptr<ConversationStore>> store = ConversationStore::Open(path_);
    ASSERT_THAT(store, IsOk());
    store_ = *std::move(store);
  }

  Conversation Sample(const std::string& id) {
    Conversation c;
    c.id = id;
    c.workspace = "w";
    c.task = "Fix the build";
    c.has_section = true;
    c.section = "## Long-term Memory\n- a \"quoted\" fact\n";
    c.created_at = t0_;
    c.updated_at = t0_;
    FailureRecord f;
    f.key = "k1";
    f.tool = "build";
    f.arguments = "{}";
    f.error = "Error: cc1";
    f.count = 2;
    f.first_seen = t0_;
    c.failures.push_back(f);
    return c;
  }

  Time t0_ = Time(std::chrono::milliseconds(1'800'000'000'000));
  std::unique_ptr<ScopedTempDir> dir_;
  std::string path_;
  std::unique_ptr<ConversationStore> store_;
};

TEST_F(ConversationStoreTest, SaveLoadRoundTripsEveryField) {
  const Conversation c = Sample("a");
  MEND_ASSERT_OK(store_->Save(c, std::chrono::hours(1)));
  Result<std::optional<Conversation>> loaded = store_->Load("a", t0_);
  ASSERT_TRUE(loaded.ok());
  ASSERT_TRUE(loaded->has_value());
  EXPECT_EQ(**loaded, c);
  EXPECT_FALSE(store_->Load("b", t0_)->has_value());
}

TEST_F(ConversationStoreTest, ItSurvivesReopening) {
  MEND_ASSERT_OK(store_->Save(Sample("a"), std::chrono::hours(1)));
  store_.reset();
  Result<std::unique_ptr<ConversationStore>> reopened = ConversationStore::Open(path_);
  ASSERT_TRUE(reopened.ok());
  Result<std::optional<Conversation>> loaded = (*reopened)->Load("a", t0_);
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ((*loaded)->section, Sample("a").section);
}

TEST_F(ConversationStoreTest, ExpiredRowsAreGoneAndDeleted) {
  MEND_ASSERT_OK(store_->Save(Sample("a"), std::chrono::minutes(5)));
  EXPECT_TRUE(store_->Load("a", t0_ + std::chrono::minutes(4))->has_value());
  EXPECT_FALSE(store_->Load("a", t0_ + std::chrono::minutes(5))->has_value());
  EXPECT_THAT(store_->DeleteExpired(t0_ + std::chrono::minutes(4)),
              ::mend::testing::IsOkAndHolds(0));
  EXPECT_THAT(store_->DeleteExpired(t0_ + std::chrono::minutes(5)),
              ::mend::testing::IsOkAndHolds(1));
}

TEST_F(ConversationStoreTest, OpenFailuresAreFoundByTheirAgeUntilEnqueued) {
  Conversation c = Sample("a");
  MEND_ASSERT_OK(store_->Save(c, std::chrono::hours(1)));
  EXPECT_TRUE(store_->WithOpenFailures(t0_ - std::chrono::seconds(1), 10)->empty());
  Result<std::vector<Conversation>> open = store_->WithOpenFailures(t0_, 10);
  ASSERT_TRUE(open.ok());
  ASSERT_EQ(open->size(), 1u);
  EXPECT_EQ((*open)[0].id, "a");
  c.failures[0].enqueued = true;
  MEND_ASSERT_OK(store_->Save(c, std::chrono::hours(1)));
  EXPECT_TRUE(store_->WithOpenFailures(t0_ + std::chrono::hours(1), 10)->empty());
}

TEST_F(ConversationStoreTest, TheDatabaseIsPrivate) {
  struct stat st {};
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
}

TEST_F(ConversationStoreTest, ADamagedRowIsDataLossNotACrash) {
  MEND_ASSERT_OK(store_->Save(Sample("a"), std::chrono::hours(1)));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE proxy_conversations SET state = '{\"id\":\"a\",\"failures\":"
                         "[{\"count\":\"many\"}]}'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "INSERT INTO proxy_conversations VALUES "
                         "('b','w','not json',NULL,0,99999999999999)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EXPECT_THAT(store_->Load("a", t0_), StatusIs(StatusCode::kDataLoss));
  EXPECT_THAT(store_->Load("b", t0_), StatusIs(StatusCode::kDataLoss));
}

TEST_F(ConversationStoreTest, ANewerSchemaIsRefused) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'proxy.schema_version'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  store_.reset();
  EXPECT_THAT(ConversationStore::Open(path_), StatusIs(StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace mend::proxy
