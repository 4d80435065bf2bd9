// `mend --version`, `-V` and `mend version`: the build's version text with and without a git
// description, and with --verbose every versioned format this build writes beside the versions
// the home holds, read without creating the home or anything in it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli/version_info.h"
#include "tests/cli/cli_home_test.h"

namespace mend::cli {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;

TEST(VersionTextTest, SaysThePackageVersionAndWhatTheDescriptionAddsToIt) {
  EXPECT_EQ(VersionText("0.1.0", "", ""), "0.1.0");
  // No tag: git describe --always gives the abbreviated commit.
  EXPECT_EQ(VersionText("0.1.0", "a09cd62", "git"), "0.1.0 (git a09cd62)");
  EXPECT_EQ(VersionText("0.1.0", "a09cd62-dirty", "git"), "0.1.0 (git a09cd62-dirty)");
  // A tag naming the package version says nothing more; commits after it do.
  EXPECT_EQ(VersionText("0.1.0", "v0.1.0", "git"), "0.1.0");
  EXPECT_EQ(VersionText("0.1.0", "0.1.0", "git"), "0.1.0");
  EXPECT_EQ(VersionText("0.1.0", "v0.1.0-dirty", "git"), "0.1.0 (git v0.1.0-dirty)");
  EXPECT_EQ(VersionText("0.1.0", "v0.1.0-3-g1f2e3d4", "git"), "0.1.0 (git v0.1.0-3-g1f2e3d4)");
  // A packager's text.
  EXPECT_EQ(VersionText("0.1.0", "0.1.0-1", "override"), "0.1.0 (0.1.0-1)");
  EXPECT_EQ(VersionText("0.1.0", "0.1.0", "override"), "0.1.0");
}

class VersionCommandTest : public CliHomeTest {
 protected:
  // Each format's row of the text listing: file, schema, key and version, in columns.
  static std::string RowPattern(const SchemaVersionInfo& info) {
    return "\n" + info.file + " +" + info.schema + " +" +
           std::regex_replace(info.key, std::regex("\\."), "\\.") + " +" +
           std::to_string(info.writes) + "( |\n)";
  }

  static const nlohmann::json* Entry(const nlohmann::json& doc, const std::string& file,
                                     const std::string& schema) {
    for (const nlohmann::json& entry : doc["schemas"]) {
      if (entry.value("file", "") == file && entry.value("schema", "") == schema) return &entry;
    }
    return nullptr;
  }

  static void Exec(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    sqlite3_close(db);
  }
};

TEST_F(VersionCommandTest, TheFlagsAndTheCommandPrintOneLine) {
  ASSERT_EQ(Mend({"--version"}), 0) << err();
  const std::string version = out();
  EXPECT_EQ(version, "mend " + VersionText() + "\n");
  EXPECT_THAT(version, StartsWith("mend " + std::string(PackageVersion())));
  EXPECT_THAT(version, MatchesRegex("mend [0-9]+\\.[0-9]+\\.[0-9]+( \\(.+\\))?\n"));
  EXPECT_EQ(err(), "");
  ASSERT_EQ(Mend({"-V"}), 0);
  EXPECT_EQ(out(), version);
  ASSERT_EQ(Mend({"version"}), 0);
  EXPECT_EQ(out(), version);
  // After a command, the flag still wins, as it always did.
  ASSERT_EQ(Mend({"pending", "--version"}), 0);
  EXPECT_EQ(out(), version);
  EXPECT_FALSE(std::filesystem::exists(home_));
}

TEST_F(VersionCommandTest, JsonNamesThePackageVersionAndTheBuild) {
  ASSERT_EQ(Mend({"version", "--json"}), 0) << err();
  const nlohmann::json doc = Json();
  EXPECT_EQ(JsonKeys(doc), (std::set<std::string>{"build", "build_source", "version"}));
  EXPECT_EQ(doc["version"], std::string(PackageVersion()));
  EXPECT_EQ(doc["build"], std::string(BuildDescribe()));
  EXPECT_EQ(doc["build_source"], std::string(BuildDescribeSource()));
  ASSERT_EQ(Mend({"--version", "--json"}), 0);
  EXPECT_EQ(Json(), doc);
}

TEST_F(VersionCommandTest, VerboseListsEverySchemaWithItsNumberAndCreatesNoHome) {
  ASSERT_EQ(Mend({"--version", "--verbose"}), 0) << err();
  const std::string text = out();
  EXPECT_THAT(text, StartsWith("mend " + VersionText() + "\n"));
  EXPECT_THAT(text, HasSubstr("home: " + home_ + " (does not exist; nothing read)\n"));
  const std::vector<SchemaVersionInfo> versions = SchemaVersions();
  ASSERT_EQ(versions.size(), 11u);
  for (const SchemaVersionInfo& info : versions) {
    EXPECT_THAT(text, ContainsRegex(RowPattern(info))) << info.file << " " << info.schema;
  }
  EXPECT_THAT(text, Not(HasSubstr("FOUND")));
  EXPECT_EQ(err(), "");
  EXPECT_FALSE(std::filesystem::exists(home_));

  // The command says the same.
  ASSERT_EQ(Mend({"version", "--verbose"}), 0) << err();
  EXPECT_EQ(out(), text);
  ASSERT_EQ(Mend({"--verbose", "version"}), 0) << err();
  EXPECT_EQ(out(), text);
  EXPECT_FALSE(std::filesystem::exists(home_));
}

TEST_F(VersionCommandTest, VerboseJsonHasEveryVersionAndNoFoundOnesWithoutAHome) {
  ASSERT_EQ(Mend({"version", "--verbose", "--json"}), 0) << err();
  const nlohmann::json doc = Json();
  EXPECT_EQ(JsonKeys(doc), (std::set<std::string>{"build", "build_source", "home", "home_exists",
                                                  "schemas", "version"}));
  EXPECT_EQ(doc["home"], home_);
  EXPECT_EQ(doc["home_exists"], false);
  const std::vector<SchemaVersionInfo> versions = SchemaVersions();
  ASSERT_EQ(doc["schemas"].size(), versions.size());
  for (size_t i = 0; i < versions.size(); ++i) {
    const nlohmann::json& entry = doc["schemas"][i];
    EXPECT_EQ(JsonKeys(entry), (std::set<std::string>{"file", "key", "schema", "writes"}));
    EXPECT_EQ(entry["file"], versions[i].file);
    EXPECT_EQ(entry["schema"], versions[i].schema);
    EXPECT_EQ(entry["key"], versions[i].key);
    EXPECT_EQ(entry["writes"], versions[i].writes);
  }
  EXPECT_FALSE(std::filesystem::exists(home_));
}

TEST_F(VersionCommandTest, VerboseReportsTheVersionsFoundInAnExistingHome) {
  // migrate creates mend.db's runs and memory schemas and observe.db at this build's versions;
  // the proxy's table only exists once the proxy ran. Then the runs store is made one older.
  ASSERT_EQ(Mend({"migrate"}), 0) << err();
  const std::string db = home_ + "/mend.db";
  Exec(db, "UPDATE meta SET value = '3' WHERE key = 'store.schema_version'");

  ASSERT_EQ(Mend({"--version", "--verbose", "--json"}), 0) << err();
  const nlohmann::json doc = Json();
  EXPECT_EQ(doc["home_exists"], true);
  const nlohmann::json* runs = Entry(doc, "mend.db", "runs");
  const nlohmann::json* memory = Entry(doc, "mend.db", "memory");
  const nlohmann::json* proxy = Entry(doc, "mend.db", "proxy");
  const nlohmann::json* traces = Entry(doc, "observe.db", "traces");
  const nlohmann::json* wal = Entry(doc, "reflexion/wal", "lesson records");
  const nlohmann::json* pg = Entry(doc, "postgres", "runs");
  ASSERT_TRUE(runs && memory && proxy && traces && wal && pg);
  EXPECT_EQ((*runs)["found"], 3);
  EXPECT_EQ((*memory)["found"], (*memory)["writes"]);
  EXPECT_EQ((*proxy)["found"], 0);
  EXPECT_EQ((*traces)["found"], (*traces)["writes"]);
  // Neither the records nor a PostgreSQL database are read.
  EXPECT_FALSE(wal->contains("found"));
  EXPECT_FALSE(pg->contains("found"));

  ASSERT_EQ(Mend({"version", "--verbose"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("home: " + home_ + "\n"));
  EXPECT_THAT(out(), ContainsRegex("\nFILE +SCHEMA +KEY +WRITES +FOUND\n"));
  EXPECT_THAT(out(), ContainsRegex("\nmend\\.db +runs +store\\.schema_version +4 +3\n"));
  EXPECT_THAT(out(), ContainsRegex("\nmend\\.db +proxy +proxy\\.schema_version +1 +none\n"));
  EXPECT_THAT(out(), ContainsRegex("\npostgres +runs +store\\.schema_version +4 +-\n"));
  // Reading changed nothing.
  ASSERT_EQ(Mend({"version", "--verbose", "--json"}), 0);
  EXPECT_EQ((*Entry(Json(), "mend.db", "runs"))["found"], 3);
}

TEST_F(VersionCommandTest, AnUnreadableDatabaseIsReportedAndTheListingStillSucceeds) {
  MEND_ASSERT_OK(fs_.CreateDirs(home_));
  Write(home_ + "/observe.db", std::string(4096, 'x'));
  ASSERT_EQ(Mend({"version", "--verbose", "--json"}), 0) << err();
  const nlohmann::json doc = Json();
  const nlohmann::json* traces = Entry(doc, "observe.db", "traces");
  ASSERT_NE(traces, nullptr);
  EXPECT_TRUE((*traces)["found"].is_null());
  EXPECT_THAT((*traces).value("error", ""), HasSubstr("not a database"));
  // mend.db does not exist: nothing found, nothing created.
  EXPECT_EQ((*Entry(doc, "mend.db", "runs"))["found"], 0);
  EXPECT_FALSE(std::filesystem::exists(home_ + "/mend.db"));

  ASSERT_EQ(Mend({"version", "--verbose"}), 0);
  EXPECT_THAT(out(), ContainsRegex("\nobserve\\.db +traces +schema_version +3 +unreadable\n"));
  EXPECT_THAT(err(), HasSubstr("mend: observe.db traces: "));
}

TEST_F(VersionCommandTest, VerboseWithoutVersionIsAUsageError) {
  EXPECT_EQ(Mend({"--verbose"}), 2);
  EXPECT_THAT(err(), HasSubstr("--verbose goes with --version"));
  EXPECT_EQ(Mend({"pending", "--verbose"}), 2);
  EXPECT_FALSE(std::filesystem::exists(home_));
}

}  // namespace
}  // namespace mend::cli
