// `mend migrate` on a real home: a home written by older schemas (runs 3, memory 2, traces 1) is
// brought to this build's versions with its data, once; a newer schema is refused before anything
// changes; --dry-run changes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/memory/fact_store.h"
#include "mend/obs/span_store.h"
#include "mend/store/sqlite_store.h"
#include "tests/cli/cli_home_test.h"

namespace mend::cli {
namespace {

using ::mend::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kRunsVersion[] = "SELECT value FROM meta WHERE key = 'store.schema_version'";
constexpr char kMemoryVersion[] = "SELECT value FROM meta WHERE key = 'memory.schema_version'";
constexpr char kTracesVersion[] = "SELECT value FROM meta WHERE key = 'schema_version'";
constexpr char kRecoveryIndexes[] =
    "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'runs_recovery%' "
    "ORDER BY name";
constexpr char kFactContent[] = "deploys go through the staging cluster first";

// The first column of every row of `sql` on the file `path`.
std::vector<std::string> Query(const std::string& path, const std::string& sql) {
  std::vector<std::string> rows;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(stmt, 0);
    rows.emplace_back(text == nullptr ? "" : reinterpret_cast<const char*>(text));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

class MigrateCommandTest : public CliHomeTest {
 protected:
  std::string db() const { return home_ + "/mend.db"; }
  std::string observe() const { return home_ + "/observe.db"; }

  // A home as the previous release left it: one run, one fact and an observe.db, written by this
  // build and then taken back to the previous schemas with the SQL of what each version added.
  void MakePreviousReleaseHome() {
    MEND_ASSERT_OK(fs_.CreateDirs(home_));
    {
      store::SqliteStoreOptions options;
      options.path = db();
      auto runs = store::OpenSqliteStore(options, clock_);
      MEND_ASSERT_OK(runs);
      store::RunRecord run;
      run.id = "r-1";
      run.agent = "ops";
      run.task = "check the deploy";
      MEND_ASSERT_OK((*runs)->CreateRun(run));
      auto facts = memory::FactStore::Open(db(), memory::FactStoreOptions{&clock_});
      MEND_ASSERT_OK(facts);
      auto added = (*facts)->Add({kFactContent, "general", {"deploy"}});
      MEND_ASSERT_OK(added);
      fact_id_ = added->id;
      MEND_ASSERT_OK(obs::SpanStore::Open(observe()));
    }
    Query(db(), "DROP INDEX runs_recovery");
    Query(db(), "DROP INDEX runs_recovery_class");
    Query(db(), "UPDATE meta SET value = '3' WHERE key = 'store.schema_version'");
    Query(db(), "ALTER TABLE facts DROP COLUMN as_written");
    Query(db(), "DROP INDEX fact_injections_fact");
    Query(db(), "ALTER TABLE fact_injections DROP COLUMN score");
    Query(db(), "UPDATE meta SET value = '2' WHERE key = 'memory.schema_version'");
    Query(observe(), "DROP TABLE traces");
    Query(observe(), "DROP INDEX spans_otlp");
    Query(observe(), "ALTER TABLE spans DROP COLUMN otlp_state");
    Query(observe(), "UPDATE meta SET value = 1 WHERE key = 'schema_version'");
    ASSERT_THAT(Versions(), ElementsAre("3", "2", "1"));
  }

  std::vector<std::string> Versions() {
    return {Query(db(), kRunsVersion).at(0), Query(db(), kMemoryVersion).at(0),
            Query(observe(), kTracesVersion).at(0)};
  }

  // {store, from, to, migrated} of each store in the --json output.
  std::vector<std::string> Stores() {
    std::vector<std::string> stores;
    const nlohmann::json json = Json();
    for (const nlohmann::json& s : json.at("stores")) {
      stores.push_back(s.at("store").get<std::string>() + " " + s.at("from").dump() + " " +
                       s.at("to").dump() + " " + s.at("migrated").dump());
    }
    return stores;
  }

  ManualClock clock_;
  std::string fact_id_;
};

TEST_F(MigrateCommandTest, APreviousReleaseHomeIsMigratedOnceAndKeepsItsData) {
  MakePreviousReleaseHome();

  ASSERT_EQ(Mend({"migrate", "--json"}), 0) << err();
  EXPECT_THAT(Stores(), ElementsAre("runs 3 4 true", "memory 2 4 true", "traces 1 3 true"));
  const nlohmann::json runs = Json().at("stores").at(0);
  EXPECT_EQ(JsonKeys(runs),
            (std::set<std::string>{"store", "backend", "location", "from", "to", "migrated"}));
  EXPECT_EQ(runs.at("backend"), "sqlite");
  EXPECT_EQ(runs.at("location"), db());
  EXPECT_EQ(Json().at("stores").at(2).at("location"), observe());
  EXPECT_EQ(Json().at("dry_run"), false);
  EXPECT_THAT(Versions(), ElementsAre("4", "4", "3"));
  EXPECT_THAT(Query(db(), kRecoveryIndexes), ElementsAre("runs_recovery", "runs_recovery_class"));

  // The run and the fact are there, read by this build.
  store::SqliteStoreOptions options;
  options.path = db();
  auto store = store::OpenSqliteStore(options, clock_);
  MEND_ASSERT_OK(store);
  auto run = (*store)->GetRun("r-1");
  MEND_ASSERT_OK(run);
  EXPECT_EQ(run->task, "check the deploy");
  store->reset();
  auto facts = memory::FactStore::Open(db(), memory::FactStoreOptions{&clock_});
  MEND_ASSERT_OK(facts);
  auto fact = (*facts)->Get(fact_id_);
  MEND_ASSERT_OK(fact);
  EXPECT_EQ(fact->content, kFactContent);
  EXPECT_THAT(fact->tags, ElementsAre("deploy"));
  facts->reset();
  auto traces = obs::SpanStore::OpenReadOnly(observe());
  MEND_ASSERT_OK(traces);
  EXPECT_THAT((*traces)->ListTraces({}), IsOk());
  traces->reset();

  // A second run finds every store at its version.
  ASSERT_EQ(Mend({"migrate", "--json"}), 0) << err();
  EXPECT_THAT(Stores(), ElementsAre("runs 4 4 false", "memory 4 4 false", "traces 3 3 false"));
  ASSERT_EQ(Mend({"migrate"}), 0) << err();
  EXPECT_EQ(out(), "runs (sqlite, " + db() + "): version 4, up to date\n" + "memory (sqlite, " +
                       db() + "): version 4, up to date\n" + "traces (sqlite, " + observe() +
                       "): version 3, up to date\n");
}

TEST_F(MigrateCommandTest, DryRunReportsWhatWouldChangeAndChangesNothing) {
  MakePreviousReleaseHome();

  ASSERT_EQ(Mend({"migrate", "--dry-run"}), 0) << err();
  EXPECT_EQ(out(),
            "dry run: nothing changed\n"
            "runs (sqlite, " +
                db() + "): version 3 -> version 4, would be migrated\n" + "memory (sqlite, " +
                db() + "): version 2 -> version 4, would be migrated\n" + "traces (sqlite, " +
                observe() + "): version 1 -> version 3, would be migrated\n");
  ASSERT_EQ(Mend({"migrate", "--dry-run", "--json"}), 0) << err();
  EXPECT_EQ(Json().at("dry_run"), true);
  EXPECT_THAT(Stores(), ElementsAre("runs 3 4 true", "memory 2 4 true", "traces 1 3 true"));

  EXPECT_THAT(Versions(), ElementsAre("3", "2", "1"));
  EXPECT_THAT(Query(db(), kRecoveryIndexes), IsEmpty());
  EXPECT_THAT(Query(observe(), "SELECT name FROM sqlite_master WHERE name = 'traces'"), IsEmpty());
  // Reading the versions leaves no -wal or -shm file behind either.
  for (const std::string& file : {db(), observe()}) {
    EXPECT_FALSE(fs_.Stat(file + "-wal").ok()) << file;
    EXPECT_FALSE(fs_.Stat(file + "-shm").ok()) << file;
  }
}

TEST_F(MigrateCommandTest, ANewerSchemaIsRefusedAndNothingIsMigrated) {
  MakePreviousReleaseHome();
  Query(db(), "UPDATE meta SET value = '99' WHERE key = 'memory.schema_version'");

  EXPECT_EQ(Mend({"migrate", "--json"}), 1);
  EXPECT_EQ(err(), "mend: " + db() +
                       ": the memory schema (version 99) was written by a newer mend; this build "
                       "writes version 4; upgrade mend\n");
  EXPECT_THAT(Stores(), ElementsAre("runs 3 3 false", "memory 99 99 false", "traces 1 1 false"));
  EXPECT_EQ(Json().at("error").at("code"), "FAILED_PRECONDITION");
  EXPECT_THAT(Json().at("stores").at(1).at("error").get<std::string>(), HasSubstr("newer mend"));
  EXPECT_FALSE(Json().at("stores").at(0).contains("error"));
  EXPECT_THAT(Versions(), ElementsAre("3", "99", "1"));
  EXPECT_THAT(Query(db(), kRecoveryIndexes), IsEmpty());

  EXPECT_EQ(Mend({"migrate"}), 1);
  EXPECT_THAT(out(), HasSubstr("memory (sqlite, " + db() + "): version 99, not migrated\n"));
  EXPECT_THAT(err(), HasSubstr("upgrade mend"));
}

TEST_F(MigrateCommandTest, AHomeWithoutStoresGetsThemCreated) {
  ASSERT_EQ(Mend({"migrate", "--dry-run", "--json"}), 0) << err();
  EXPECT_THAT(Stores(), ElementsAre("runs 0 4 true", "memory 0 4 true", "traces 0 3 true"));
  EXPECT_FALSE(fs_.Stat(db()).ok());

  ASSERT_EQ(Mend({"migrate"}), 0) << err();
  EXPECT_EQ(out(), "runs (sqlite, " + db() + "): none -> version 4, created\n" +
                       "memory (sqlite, " + db() + "): none -> version 4, created\n" +
                       "traces (sqlite, " + observe() + "): none -> version 3, created\n");
  EXPECT_THAT(Versions(), ElementsAre("4", "4", "3"));
}

TEST_F(MigrateCommandTest, TracesOffAndNoObserveDbLeavesTheTracesOut) {
  env_["MEND_OBSERVE_ENABLED"] = "false";
  ASSERT_EQ(Mend({"migrate", "--json"}), 0) << err();
  EXPECT_THAT(Stores(), ElementsAre("runs 0 4 true", "memory 0 4 true"));
  EXPECT_FALSE(fs_.Stat(observe()).ok());
}

TEST_F(MigrateCommandTest, AStoreUrlThatIsNotPostgresIsAUsageError) {
  env_["MEND_STORE"] = "mysql://db.example/mend";
  EXPECT_EQ(Mend({"migrate"}), 2);
  EXPECT_THAT(err(), HasSubstr("store.url must be empty"));
  EXPECT_FALSE(fs_.Stat(db()).ok());
}

}  // namespace
}  // namespace mend::cli
