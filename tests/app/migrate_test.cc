// MigrateStores's order of work, over stores that record what is done to them. The stores
// themselves are migrated for real in tests/cli/migrate_command_test.cc.
#include "mend/app/migrate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Stores whose stored versions live in `versions`; opening one brings it to its version, unless
// it is listed in `failing_open`. Every open is recorded in `opened`.
class MigrateStoresTest : public ::testing::Test {
 protected:
  SchemaStore Store(const std::string& name, int64_t version) {
    SchemaStore store;
    store.name = name;
    store.backend = "sqlite";
    store.location = "/home/" + name + ".db";
    store.version = version;
    store.read_version = [this, name]() -> Result<int64_t> {
      if (unreadable_ == name) return DataLossError(name + " is not a database");
      return versions_[name];
    };
    store.open = [this, name, version]() -> Status {
      opened_.push_back(name);
      if (failing_open_ == name) return UnavailableError("disk busy");
      versions_[name] = version;
      return OkStatus();
    };
    return store;
  }
  std::vector<SchemaStore> Stores() {
    return {Store("runs", 4), Store("memory", 3), Store("traces", 2)};
  }

  std::map<std::string, int64_t> versions_;
  std::vector<std::string> opened_;
  std::string unreadable_;
  std::string failing_open_;
};

TEST_F(MigrateStoresTest, OpensOnlyStoresBelowTheirVersionAndReportsBeforeAndAfter) {
  versions_ = {{"runs", 3}, {"memory", 3}, {"traces", 0}};
  MigrateReport report = MigrateStores(Stores(), MigrateMode::kApply);
  MEND_ASSERT_OK(report.status);
  EXPECT_THAT(opened_, ElementsAre("runs", "traces"));
  ASSERT_EQ(report.stores.size(), 3u);
  EXPECT_EQ(report.stores[0].store, "runs");
  EXPECT_EQ(report.stores[0].location, "/home/runs.db");
  EXPECT_EQ(report.stores[0].from, 3);
  EXPECT_EQ(report.stores[0].to, 4);
  EXPECT_TRUE(report.stores[0].migrated());
  EXPECT_EQ(report.stores[1].from, 3);
  EXPECT_EQ(report.stores[1].to, 3);
  EXPECT_FALSE(report.stores[1].migrated());
  EXPECT_EQ(report.stores[2].from, 0);
  EXPECT_EQ(report.stores[2].to, 2);

  opened_.clear();
  report = MigrateStores(Stores(), MigrateMode::kApply);
  MEND_ASSERT_OK(report.status);
  EXPECT_THAT(opened_, IsEmpty());
  for (const StoreMigration& s : report.stores) EXPECT_FALSE(s.migrated()) << s.store;
}

TEST_F(MigrateStoresTest, DryRunReportsWhatWouldChangeAndOpensNothing) {
  versions_ = {{"runs", 1}, {"memory", 3}, {"traces", 1}};
  MigrateReport report = MigrateStores(Stores(), MigrateMode::kDryRun);
  MEND_ASSERT_OK(report.status);
  EXPECT_THAT(opened_, IsEmpty());
  EXPECT_EQ(report.stores[0].to, 4);
  EXPECT_TRUE(report.stores[0].migrated());
  EXPECT_FALSE(report.stores[1].migrated());
  EXPECT_EQ(report.stores[2].to, 2);
  EXPECT_EQ(versions_["runs"], 1);
}

TEST_F(MigrateStoresTest, ANewerStoreStopsEveryMigrationAndEveryStoreIsReported) {
  versions_ = {{"runs", 3}, {"memory", 7}, {"traces", 1}};
  MigrateReport report = MigrateStores(Stores(), MigrateMode::kApply);
  EXPECT_THAT(report.status,
              StatusIs(StatusCode::kFailedPrecondition,
                       HasSubstr("/home/memory.db: the memory schema (version 7) was written by a "
                                 "newer mend; this build writes version 3; upgrade mend")));
  EXPECT_THAT(opened_, IsEmpty());
  ASSERT_EQ(report.stores.size(), 3u);
  EXPECT_EQ(report.stores[0].from, 3);
  EXPECT_EQ(report.stores[0].to, 3);
  MEND_EXPECT_OK(report.stores[0].status);
  EXPECT_EQ(report.stores[1].from, 7);
  EXPECT_THAT(report.stores[1].status, StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_EQ(report.stores[2].from, 1);
  EXPECT_FALSE(report.stores[2].migrated());
}

TEST_F(MigrateStoresTest, AnUnreadableStoreStopsEveryMigration) {
  versions_ = {{"runs", 3}, {"memory", 3}, {"traces", 1}};
  unreadable_ = "traces";
  MigrateReport report = MigrateStores(Stores(), MigrateMode::kApply);
  EXPECT_THAT(report.status, StatusIs(StatusCode::kDataLoss, HasSubstr("traces")));
  EXPECT_THAT(opened_, IsEmpty());
  EXPECT_FALSE(report.stores[2].from.has_value());
  EXPECT_EQ(versions_["runs"], 3);
}

TEST_F(MigrateStoresTest, AFailedMigrationStopsThereAndKeepsWhatWasDone) {
  versions_ = {{"runs", 3}, {"memory", 2}, {"traces", 1}};
  failing_open_ = "memory";
  MigrateReport report = MigrateStores(Stores(), MigrateMode::kApply);
  EXPECT_THAT(report.status,
              StatusIs(StatusCode::kUnavailable, HasSubstr("migrating the memory store")));
  EXPECT_THAT(opened_, ElementsAre("runs", "memory"));
  EXPECT_EQ(report.stores[0].to, 4);
  EXPECT_FALSE(report.stores[1].to.has_value());
  EXPECT_EQ(report.stores[2].to, 1);
  EXPECT_FALSE(report.stores[2].migrated());
}

}  // namespace
}  // namespace mend::app
