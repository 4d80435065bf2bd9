// `mend memory ...` in process, on a real temporary home (the fact store is SQLite on disk).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "memory/memory_section.h"
#include "mend/base/file_system.h"
#include "tests/cli/cli_home_test.h"
#include "tests/support/status_matchers.h"

namespace mend::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

constexpr char kLesson[] =
    "Before deploying the payments service, run the database migrations first.";
constexpr char kRelatedTask[] = "deploying the payments service, with its database migrations";
constexpr char kUnrelatedTask[] = "write a haiku about autumn leaves";
// A memory with some unrelated facts, as a real one has: BM25 weighs a word by how few facts
// contain it.
constexpr const char* kFillers[] = {
    "The team prefers tabs over spaces in Makefiles.",
    "Use the cluster named blue-7 for load tests.",
    "Release notes are written in the CHANGELOG file at the repository root.",
    "Unit tests must not sleep; use the manual clock instead.",
};

class MemoryCommandTest : public CliHomeTest {
 protected:
  int Mend(std::vector<std::string> args, const std::string& home = "") {
    return MendIn(home.empty() ? home_ : home, std::move(args));
  }

  // Adds the fillers and the lesson; returns the lesson's id.
  std::string AddMemory() {
    for (const char* filler : kFillers) {
      EXPECT_EQ(Mend({"memory", "add", filler}), 0) << err();
    }
    EXPECT_EQ(Mend({"memory", "add", kLesson, "--category", "lesson", "--tags", "Deploy, payments",
                    "--json"}),
              0)
        << err();
    return Json().value("id", "");
  }

  size_t ListCount(const std::string& home = "") {
    EXPECT_EQ(Mend({"memory", "list", "--all", "--json"}, home), 0) << err();
    return Json()["facts"].size();
  }
};

TEST_F(MemoryCommandTest, AddReportsAddedThenReinforced) {
  ASSERT_EQ(Mend({"memory", "add", "run", "the", "migrations", "first", "--json"}), 0) << err();
  const nlohmann::json added = Json();
  EXPECT_EQ(JsonKeys(added), (std::set<std::string>{"id", "result"}));
  EXPECT_EQ(added["result"], "added");
  EXPECT_EQ(added["id"].get<std::string>().size(), 24u);

  ASSERT_EQ(Mend({"memory", "add", "run the migrations first"}), 0) << err();
  EXPECT_EQ(out(), "reinforced " + added["id"].get<std::string>() + "\n");
}

TEST_F(MemoryCommandTest, ListAndShowDescribeTheFact) {
  const std::string id = AddMemory();
  ASSERT_FALSE(id.empty());

  ASSERT_EQ(Mend({"memory", "list", "--category", "lesson", "--json"}), 0) << err();
  const nlohmann::json facts = Json()["facts"];
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0]["id"], id);
  EXPECT_EQ(facts[0]["content"], kLesson);
  EXPECT_EQ(facts[0]["tags"], (nlohmann::json{"deploy", "payments"}));
  EXPECT_EQ(facts[0]["helped"], 0);
  EXPECT_EQ(facts[0]["hurt"], 0);
  EXPECT_TRUE(facts[0]["superseded_by"].is_null());

  ASSERT_EQ(Mend({"memory", "list"}), 0) << err();
  EXPECT_THAT(out(), StartsWith("ID"));
  EXPECT_THAT(out(), HasSubstr(id));
  EXPECT_THAT(out(), HasSubstr("deploy,payments"));
  EXPECT_THAT(out(), HasSubstr("0/0"));
  ASSERT_EQ(Mend({"memory", "list", "--limit", "2", "--json"}), 0) << err();
  EXPECT_EQ(Json()["facts"].size(), 2u);

  ASSERT_EQ(Mend({"memory", "show", id, "--json"}), 0) << err();
  EXPECT_EQ(Json()["id"], id);
  EXPECT_EQ(Json()["category"], "lesson");
  EXPECT_TRUE(Json()["provenance"].is_array());
  ASSERT_EQ(Mend({"memory", "show", id}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("id:             " + id));
  EXPECT_THAT(out(), HasSubstr("  " + std::string(kLesson)));
  EXPECT_THAT(out(), HasSubstr("provenance:     0 episodes"));
}

TEST_F(MemoryCommandTest, SearchRanksTheMatchingFactFirst) {
  const std::string id = AddMemory();
  ASSERT_EQ(Mend({"memory", "search", "payments", "migrations", "-k", "3", "--json"}), 0) << err();
  const nlohmann::json results = Json()["results"];
  ASSERT_GE(results.size(), 1u);
  EXPECT_LE(results.size(), 3u);
  EXPECT_EQ(JsonKeys(results[0]),
            (std::set<std::string>{"id", "score", "category", "tags", "content"}));
  EXPECT_EQ(results[0]["id"], id);

  ASSERT_EQ(Mend({"memory", "search", "payments"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr(id));
}

TEST_F(MemoryCommandTest, HostileSearchTextIsJustWords) {
  AddMemory();
  EXPECT_EQ(Mend({"memory", "search", "\"unbalanced (NEAR * content:x", "--json"}), 0) << err();
  EXPECT_TRUE(Json()["results"].is_array());
  EXPECT_EQ(Mend({"memory", "recall", "\"unbalanced (NEAR * content:x AND OR"}), 0) << err();
}

TEST_F(MemoryCommandTest, RecallOfARelatedTaskPrintsTheSection) {
  const std::string id = AddMemory();
  ASSERT_EQ(Mend({"memory", "recall", kRelatedTask, "--json"}), 0) << err();
  const nlohmann::json recall = Json();
  ASSERT_GE(recall["facts"].size(), 1u);
  EXPECT_EQ(recall["facts"][0]["id"], id);
  EXPECT_EQ(JsonKeys(recall["facts"][0]), (std::set<std::string>{"id", "category", "content"}));
  const std::string section = recall["section"];
  EXPECT_THAT(section, StartsWith(memory::kMemorySectionHeading));
  EXPECT_THAT(section, HasSubstr(std::string("- [lesson] ") + kLesson));

  ASSERT_EQ(Mend({"memory", "recall", kRelatedTask}), 0) << err();
  EXPECT_EQ(out(), section.ends_with('\n') ? section : section + "\n");
  EXPECT_EQ(err(), "");
}

TEST_F(MemoryCommandTest, RecallOfAnUnrelatedTaskPrintsNothing) {
  AddMemory();
  ASSERT_EQ(Mend({"memory", "recall", kUnrelatedTask}), 0) << err();
  EXPECT_EQ(out(), "");
  // The gate's thresholds and how close the task came, so a person can tell a near miss from
  // an unrelated task.
  EXPECT_THAT(err(), MatchesRegex("nothing would be injected \\(below the relevance gate: best "
                                  "score [0-9]+\\.[0-9]{2}, gate 1\\.90 \\(rare words' worth\\); "
                                  "best coverage [0-9]\\.[0-9]{2}, gate 0\\.50\\)\n"));
  ASSERT_EQ(Mend({"memory", "recall", kUnrelatedTask, "--json"}), 0) << err();
  const nlohmann::json recall = Json();
  EXPECT_TRUE(recall["facts"].empty());
  EXPECT_EQ(recall["section"], "");
  EXPECT_EQ(recall["reason"], "below the relevance gate");
  EXPECT_EQ(JsonKeys(recall["gate"]),
            (std::set<std::string>{"score", "needed", "coverage", "coverage_needed"}));
  EXPECT_EQ(recall["gate"]["needed"], 1.9);
  EXPECT_EQ(recall["gate"]["coverage_needed"], 0.5);
  EXPECT_LT(recall["gate"]["score"].get<double>(), 1.9);
  EXPECT_LT(recall["gate"]["coverage"].get<double>(), 0.5);

  // A related task opens the gate; its figures say by how much.
  ASSERT_EQ(Mend({"memory", "recall", kRelatedTask, "--json"}), 0) << err();
  const nlohmann::json related = Json();
  EXPECT_TRUE(related["reason"].is_null());
  const nlohmann::json& open = related["gate"];
  EXPECT_TRUE(open["score"].get<double>() >= 1.9 || open["coverage"].get<double>() >= 0.5)
      << open.dump();
}

TEST_F(MemoryCommandTest, RecallSaysWhyNothingIsInjected) {
  ASSERT_EQ(Mend({"memory", "recall", kRelatedTask}), 0) << err();
  EXPECT_EQ(err(), "nothing would be injected (no facts)\n");
  AddMemory();
  env_["MEND_MEMORY_ENABLED"] = "false";
  ASSERT_EQ(Mend({"memory", "recall", kRelatedTask}), 0) << err();
  EXPECT_EQ(out(), "");
  EXPECT_EQ(err(), "nothing would be injected (memory.enabled is false)\n");
}

TEST_F(MemoryCommandTest, RecallUsesTheWorkspaceOfTheAgentFolder) {
  for (const char* filler : kFillers) ASSERT_EQ(Mend({"memory", "add", filler}), 0) << err();
  Write(dir_ + "/agent/agent.toml", "name = \"a\"\ntools = []\nworkspace = \"ws\"\n");
  Write(dir_ + "/agent/instructions.md", "Help.\n");
  MEND_ASSERT_OK(fs_.CreateDirs(dir_ + "/agent/ws"));
  MEND_ASSERT_OK(fs_.CreateDirs(dir_ + "/elsewhere"));
  ASSERT_EQ(Mend({"memory", "add", kLesson, "--workspace", dir_ + "/agent/ws/"}), 0) << err();

  ASSERT_EQ(Mend({"memory", "recall", kRelatedTask, "--agent", dir_ + "/agent"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr(kLesson));
  ASSERT_EQ(Mend({"memory", "recall", kRelatedTask, "--workspace", dir_ + "/elsewhere"}), 0);
  EXPECT_THAT(out(), ::testing::Not(HasSubstr(kLesson)));
  // Neither flag: the recall of a run started here, whose workspace is the current directory.
  ASSERT_EQ(Mend({"memory", "recall", kRelatedTask, "--json"}), 0) << err();
  EXPECT_EQ(Json()["workspace"], std::filesystem::current_path().lexically_normal().string());
  EXPECT_THAT(out(), ::testing::Not(HasSubstr(kLesson)));
}

// Words of a query or a fact that are also command names (run, list, show) stay words.
TEST_F(MemoryCommandTest, CommandNamesInsideTheTextAreJustWords) {
  ASSERT_EQ(Mend({"memory", "add", "deploy", "run", "list", "show"}), 0) << err();
  ASSERT_EQ(Mend({"memory", "search", "deploy", "run", "list", "--json"}), 0) << err();
  ASSERT_EQ(Json()["results"].size(), 1u) << out();
  EXPECT_EQ(Json()["results"][0]["content"], "deploy run list show");
  ASSERT_EQ(Mend({"memory", "recall", "show", "the", "deploy", "run", "list"}), 0) << err();
}

TEST_F(MemoryCommandTest, RmDeletesAndAMissingIdIsAnError) {
  const std::string id = AddMemory();
  ASSERT_EQ(Mend({"memory", "rm", id}), 0) << err();
  EXPECT_EQ(out(), "removed " + id + "\n");
  EXPECT_EQ(Mend({"memory", "rm", id}), 1);
  EXPECT_THAT(err(), HasSubstr(id));
  EXPECT_EQ(Mend({"memory", "show", id, "--json"}), 1);
  EXPECT_EQ(Json()["error"]["code"], "NOT_FOUND");
}

TEST_F(MemoryCommandTest, ExportThenImportKeepsIdsAndSkipsOnASecondImport) {
  const std::string id = AddMemory();
  const std::string file = dir_ + "/export.json";
  ASSERT_EQ(Mend({"memory", "export", file}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("exported 5 facts"));
  EXPECT_FALSE(fs_.Exists(file + ".tmp"));

  const std::string other = dir_ + "/other-home";
  ASSERT_EQ(Mend({"memory", "import", file, "--json"}, other), 0) << err();
  EXPECT_EQ(Json(), (nlohmann::json{
                        {"imported", 5}, {"skipped", 0}, {"unusable", nlohmann::json::array()}}));
  ASSERT_EQ(Mend({"memory", "show", id, "--json"}, other), 0) << err();
  EXPECT_EQ(Json()["content"], kLesson);
  EXPECT_EQ(Json()["tags"], (nlohmann::json{"deploy", "payments"}));

  ASSERT_EQ(Mend({"memory", "import", file, "--json"}, other), 0) << err();
  EXPECT_EQ(Json(), (nlohmann::json{
                        {"imported", 0}, {"skipped", 5}, {"unusable", nlohmann::json::array()}}));
  EXPECT_EQ(ListCount(other), 5u);
}

TEST_F(MemoryCommandTest, ExportToStdoutIsAJsonArray) {
  AddMemory();
  ASSERT_EQ(Mend({"memory", "export", "-"}), 0) << err();
  const nlohmann::json doc = Json();
  ASSERT_TRUE(doc.is_array());
  EXPECT_EQ(doc.size(), 5u);
}

TEST_F(MemoryCommandTest, CorruptOrForeignImportImportsNothing) {
  const std::vector<std::string> bad = {
      "not json at all",
      R"({"facts": [{"content": "an object, not an array"}]})",
      R"([{"content": "a good fact about deployments"}, "not a fact"])",
      R"([{"content": "a good fact about deployments"}, {"content": 7}])",
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    const std::string file = dir_ + "/bad" + std::to_string(i) + ".json";
    Write(file, bad[i]);
    EXPECT_EQ(Mend({"memory", "import", file}), 1) << bad[i];
    EXPECT_THAT(err(), HasSubstr("nothing was imported")) << bad[i];
    EXPECT_EQ(ListCount(), 0u) << bad[i];
  }
  EXPECT_EQ(Mend({"memory", "import", dir_ + "/missing.json"}), 1);
}

TEST_F(MemoryCommandTest, UnusableFactsAreReportedAndTheRestImported) {
  const std::string file = dir_ + "/mixed.json";
  Write(file, R"([{"content": "a good fact about deployments"},
    {"id": "empty-one", "content": "  "},
    {"content": ")" +
                  std::string(20 * 1024, 'x') + R"("},
    {"id": "when", "content": "an unreadable time", "created_at": "yesterday"}])");

  ASSERT_EQ(Mend({"memory", "import", file}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("imported 2, skipped 0 already present, left out 2 unusable\n"
                               "  fact 1 (empty-one): content is empty\n"
                               "  fact 3 (when): created_at: "));
  EXPECT_EQ(ListCount(), 2u);

  const std::string other = dir_ + "/other-home";
  ASSERT_EQ(Mend({"memory", "import", file, "--json"}, other), 0) << err();
  const nlohmann::json report = Json();
  EXPECT_EQ(report["imported"], 2);
  ASSERT_EQ(report["unusable"].size(), 2u);
  EXPECT_EQ(report["unusable"][0],
            (nlohmann::json{{"index", 1}, {"id", "empty-one"}, {"reason", "content is empty"}}));
  EXPECT_EQ(report["unusable"][1]["index"], 3);
  EXPECT_EQ(report["unusable"][1]["id"], "when");
}

TEST_F(MemoryCommandTest, ImportThenExportGivesBackWhatChatcliWrote) {
  const std::string file = dir_ + "/chatcli.json";
  const nlohmann::json written = nlohmann::json::parse(R"([
    {"id": "aaaaaaaaaaaaaaaaaaaaaaaa", "content": "Deploy with make release",
     "category": "project", "tags": ["Deploy", "deploy", "CI/CD", "Deploy"],
     "created_at": "2026-03-01T10:00:00.123456789+02:00",
     "last_accessed": "2026-03-02T07:15:30.100000001Z", "access_count": 2, "score": 0,
     "provenance": "correction"},
    {"id": "bbbbbbbbbbbbbbbbbbbbbbbb", "content": "Prefers short answers",
     "category": "preference", "created_at": "2026-01-05T23:59:59.999999999-08:00",
     "last_accessed": "2026-01-06T00:00:00Z", "access_count": 0, "score": 0,
     "provenance": "extraction"}])");
  Write(file, written.dump(2));
  ASSERT_EQ(Mend({"memory", "import", file}), 0) << err();

  ASSERT_EQ(Mend({"memory", "export", "-"}), 0) << err();
  const nlohmann::json exported = Json();
  ASSERT_EQ(exported.size(), 2u);
  for (const nlohmann::json& want : written) {
    const nlohmann::json* got = nullptr;
    for (const nlohmann::json& e : exported) {
      if (e["id"] == want["id"]) got = &e;
    }
    ASSERT_NE(got, nullptr) << want["id"];
    for (const auto& [key, value] : want.items()) {
      EXPECT_EQ((*got)[key].dump(), value.dump()) << want["id"] << " " << key;
    }
  }
}

TEST_F(MemoryCommandTest, UsageErrorsExitTwo) {
  const std::vector<std::vector<std::string>> usages = {
      {"memory"},
      {"memory", "add"},
      {"memory", "add", "   "},
      {"memory", "search", "x", "-k", "0"},
      {"memory", "show"},
      {"memory", "rm"},
      {"memory", "list", "--limit", "-1"},
      {"memory", "frobnicate"},
      {"memory", "recall", "x", "--workspace", "/a", "--agent", "/b"},
  };
  for (const std::vector<std::string>& args : usages) {
    std::string line;
    for (const std::string& a : args) line += a + " ";
    EXPECT_EQ(Mend(args), 2) << line << err();
    EXPECT_THAT(err(), StartsWith("mend: ")) << line;
  }
}

TEST_F(MemoryCommandTest, HelpDescribesEverySubcommand) {
  ASSERT_EQ(Mend({"memory", "--help"}), 0);
  for (const char* sub : {"add", "search", "recall", "list", "show", "rm", "export", "import"}) {
    EXPECT_THAT(out(), HasSubstr(sub));
  }
  ASSERT_EQ(Mend({"memory", "recall", "--help"}), 0);
  EXPECT_THAT(out(), HasSubstr("--workspace"));
  EXPECT_THAT(out(), HasSubstr("--agent"));
  ASSERT_EQ(Mend({"--help"}), 0);
  EXPECT_THAT(out(), HasSubstr("memory"));
}

TEST_F(MemoryCommandTest, RunsCreditTheFactsTheyReceived) {
  const std::string id = AddMemory();
  Write(dir_ + "/agent/agent.toml", "name = \"a\"\ntools = []\n");
  Write(dir_ + "/agent/instructions.md", "Help.\n");
  Write(dir_ + "/script.json", R"([{"text": "deployed"}])");
  ASSERT_EQ(Mend({"run", dir_ + "/agent", kRelatedTask, "--provider", "scripted", "--script-file",
                  dir_ + "/script.json"}),
            0)
      << err();
  ASSERT_EQ(Mend({"memory", "show", id, "--json"}), 0) << err();
  EXPECT_EQ(Json()["helped"], 1);
  EXPECT_GE(Json()["access_count"], 1);
}

}  // namespace
}  // namespace mend::cli
