// The improve scenario suite (bench/improve, docs/improve.md "Scenario suite and benchmark") run
// once each through the real `mend` and `fake_llm_server` executables: for every scenario folder,
// a copy of its agent, its cases and check script, a fake model answering from its routes.json,
// and the assertions of its scenario.json "expect" block on `mend improve --json`, `improve show
// --json`, `improve list --json`, the agent folder afterwards and the editor's requests as the
// fake server logged them. bench/improve/run_scenarios runs the same suite N times with a table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kKey[] = "sk-improve-scenarios-KEY-5150";
constexpr std::chrono::seconds kAttemptBound(60);
constexpr std::chrono::seconds kCommandBound(20);
constexpr char kEditorPromptStart[] = "You improve the instructions of an AI agent";

// Every folder of the suite with a scenario.json, by name.
std::vector<std::string> ScenarioNames() {
  std::vector<std::string> names;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(IMPROVE_SCENARIOS_DIR, error)) {
    const std::string name = entry.path().filename().string();
    if (!fs::exists(entry.path() / "scenario.json")) continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

json ParseJson(const std::string& text, const std::string& what) {
  json doc = json::parse(text, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << what << " is not JSON: " << text;
  return doc.is_discarded() ? json() : doc;
}

// Every regular file below `root`: relative path -> contents.
std::map<std::string, std::string> ReadTree(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    auto text = ReadWholeFile(entry.path().string());
    EXPECT_THAT(text, IsOk());
    files[fs::relative(entry.path(), root).string()] = text.ok() ? *text : "";
  }
  return files;
}

// `rule` is {"contains": [...], "lacks": [...]}; `what` names the text in failure messages.
void ExpectText(const std::string& what, const std::string& text, const json& rule) {
  for (const json& needle : rule.value("contains", json::array())) {
    EXPECT_THAT(text, HasSubstr(needle.get<std::string>())) << what;
  }
  for (const json& needle : rule.value("lacks", json::array())) {
    EXPECT_THAT(text, Not(HasSubstr(needle.get<std::string>()))) << what;
  }
}

// A member that is null or a string, as a string ("" for null or absent).
std::string StringOrEmpty(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || !it->is_string() ? "" : it->get<std::string>();
}

// True when `needle` occurs in `text` and each occurrence lies inside an <untrusted-data> block
// whose source is `source` (after its opening tag, before the block's closing tag).
bool OnlyInsideBlock(const std::string& text, const std::string& needle,
                     const std::string& source) {
  const std::string opening = "<untrusted-data source=\"" + source + "\"";
  bool found = false;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) {
    const size_t start = text.rfind("<untrusted-data ", pos);
    if (start == std::string::npos || text.compare(start, opening.size(), opening) != 0) {
      return false;
    }
    const size_t close = text.find("</untrusted-data>", start);
    if (close != std::string::npos && close < pos) return false;
    found = true;
  }
  return found;
}

class ImproveScenarioFixture : public E2eTest {
 protected:
  ImproveScenarioFixture() : E2eTest({.secret = kKey}) {}

  ChildOutput Mend(std::vector<std::string> args, std::chrono::seconds bound) {
    const std::string command = args[0];
    args.insert(args.begin(), "--json");
    const ChildOutput result = E2eTest::Mend(std::move(args), {.timeout = bound});
    EXPECT_TRUE(result.status.exited && result.status.code == 0)
        << "mend " << command << " exited " << result.status.code << ": " << result.err;
    EXPECT_THAT(result.out + result.err, Not(HasSubstr(kKey)));
    return result;
  }

  // The decoded text of every editor request in the fake server's log, in arrival order.
  std::vector<std::string> EditorRequests() {
    std::vector<std::string> requests;
    for (const json& body : LoggedBodies(dir_->File("requests.jsonl"))) {
      const json messages = body.value("messages", json::array());
      if (messages.empty() || messages[0].value("role", "") != "system" ||
          !StringOrEmpty(messages[0], "content").starts_with(kEditorPromptStart)) {
        continue;
      }
      std::string text;
      for (const json& m : messages) text += StringOrEmpty(m, "content") + "\n";
      requests.push_back(std::move(text));
    }
    return requests;
  }

  void RunScenario(const std::string& name);
  void CheckOutcome(const json& expect, const json& improve);
  void CheckAudit(const json& expect, const json& improve);
  void CheckAgentFolder(const fs::path& scenario, const json& expect, const json& improve);
  void CheckEditorRequests(const json& rule);
};

void ImproveScenarioFixture::RunScenario(const std::string& name) {
  const fs::path suite(IMPROVE_SCENARIOS_DIR);
  const fs::path scenario = suite / name;
  auto text = ReadWholeFile((scenario / "scenario.json").string());
  MEND_ASSERT_OK(text);
  const json spec = ParseJson(*text, "scenario.json");
  ASSERT_TRUE(spec.is_object());
  const json& expect = spec.at("expect");

  std::error_code error;
  fs::copy(scenario / "agent", dir_->File("agent"), fs::copy_options::recursive, error);
  ASSERT_FALSE(error) << error.message();
  auto server = StartAnotherFakeLlm(
      {"--routes", (scenario / "routes.json").string(), "--log", dir_->File("requests.jsonl")});
  MEND_ASSERT_OK(server);

  const std::string check = (suite / spec.value("check", "lib/check_answer")).string();
  std::vector<std::string> args = {
      "improve",    dir_->File("agent"),
      "--check",    ShellQuote(check) + " " + ShellQuote(dir_->File("agent")),
      "--cases",    (scenario / "cases.jsonl").string(),
      "--provider", "openai",
      "--base-url", "http://127.0.0.1:" + std::to_string(server->port)};
  for (const json& arg : spec.value("args", json::array())) args.push_back(arg.get<std::string>());
  const ChildOutput attempt = Mend(args, kAttemptBound);
  const json improve = ParseJson(attempt.out, "mend improve --json");
  ASSERT_TRUE(improve.is_object()) << attempt.err;
  MEND_ASSERT_OK(server->process->Kill(SIGTERM));

  CheckOutcome(expect, improve);
  CheckAudit(expect, improve);
  CheckAgentFolder(scenario, expect, improve);
  CheckEditorRequests(expect.value("editor_requests", json::object()));
}

void ImproveScenarioFixture::CheckOutcome(const json& expect, const json& improve) {
  EXPECT_EQ(improve.value("outcome", ""), expect.at("outcome").get<std::string>());
  EXPECT_EQ(improve.value("gate", json()), expect.value("gate", json()));
  const json proposal = improve.value("proposal", json());
  EXPECT_EQ(proposal.is_object() ? proposal.value("status", json()) : json(),
            expect.value("proposal", json()));
  if (expect.contains("proposal_note")) {
    ExpectText("proposal note", proposal.is_object() ? StringOrEmpty(proposal, "note") : "",
               expect["proposal_note"]);
  }
  ExpectText("reason", StringOrEmpty(improve, "reason"), expect.value("reason", json::object()));
  ExpectText("diff", StringOrEmpty(improve, "diff"), expect.value("diff", json::object()));
  json refused = json::array();
  for (const json& r : improve.value("refused", json::array())) {
    refused.push_back({{"path", r.value("path", "")}, {"refusal", r.value("refusal", "")}});
  }
  EXPECT_EQ(refused, expect.value("refused", json::array()));
  EXPECT_EQ(improve.value("editor_errors", json::array()).size(),
            expect.value("editor_errors", 0u));

  std::map<std::string, json> cases;
  for (const json& c : improve.value("cases", json::array())) cases[c.value("id", "")] = c;
  std::vector<std::string> seen;
  std::vector<std::string> wanted;
  for (const auto& [id, unused] : cases) seen.push_back(id);
  for (const auto& [id, unused] : expect.at("cases").items()) wanted.push_back(id);
  std::sort(wanted.begin(), wanted.end());
  EXPECT_EQ(seen, wanted);
  for (const auto& [id, want] : expect.at("cases").items()) {
    for (const auto& [key, value] : want.items()) {
      EXPECT_EQ(cases[id].value(key, json()), value) << "case " << id << ", " << key;
    }
  }
}

void ImproveScenarioFixture::CheckAudit(const json& expect, const json& improve) {
  const std::string id = improve.value("attempt_id", "");
  const json show = ParseJson(Mend({"improve", "show", id}, kCommandBound).out, "show --json");
  if (expect.at("audit") == "recomputed") {
    EXPECT_EQ(show.value("recomputed_matches", json()), json(true));
    const json decision = show.value("decision", json::object());
    EXPECT_EQ(decision.value("outcome", json()), expect.at("outcome"));
    EXPECT_EQ(decision.value("gate", json()), expect.value("gate", json()));
  } else {
    EXPECT_EQ(show.value("decision", json(0)), json());
    EXPECT_EQ(show.value("recomputed_matches", json(0)), json());
  }
  ExpectText("card", StringOrEmpty(show, "card"), expect.value("card", json::object()));
  const json shown_proposal = show.value("proposal", json());
  EXPECT_EQ(shown_proposal.is_object() ? shown_proposal.value("status", json()) : json(),
            expect.value("proposal", json()));

  const json list = ParseJson(Mend({"improve", "list"}, kCommandBound).out, "list --json");
  const json attempts = list.value("attempts", json::array());
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].value("attempt_id", ""), id);
  EXPECT_EQ(attempts[0].value("outcome", json()), expect.at("outcome"));
  EXPECT_EQ(attempts[0].value("gate", json()), expect.value("gate", json()));
}

void ImproveScenarioFixture::CheckAgentFolder(const fs::path& scenario, const json& expect,
                                              const json& improve) {
  const std::map<std::string, std::string> before = ReadTree(scenario / "agent");
  const std::map<std::string, std::string> after = ReadTree(dir_->File("agent"));
  const json files = expect.value("files", json::object());
  for (const auto& [path, rule] : files.items()) {
    auto it = after.find(path);
    ExpectText("agent " + path, it == after.end() ? "" : it->second, rule);
  }
  // Every other file, agent.toml and tools/ included, is exactly as the scenario has it.
  for (const auto& [path, content] : before) {
    if (files.contains(path)) continue;
    auto it = after.find(path);
    EXPECT_TRUE(it != after.end() && it->second == content) << "agent " << path << " changed";
  }
  for (const auto& [path, unused] : after) {
    EXPECT_TRUE(before.count(path) > 0 || files.contains(path)) << "agent " << path << " added";
  }
  const json backups = expect.value("backup", json::object());
  for (const auto& [path, rule] : backups.items()) {
    const std::string backup =
        dir_->File("home/improve/" + improve.value("attempt_id", "") + "/backup/" + path);
    auto text = ReadWholeFile(backup);
    MEND_EXPECT_OK(text);
    ExpectText("backup " + path, text.ok() ? *text : "", rule);
  }
}

void ImproveScenarioFixture::CheckEditorRequests(const json& rule) {
  const std::vector<std::string> requests = EditorRequests();
  if (rule.contains("count")) {
    EXPECT_EQ(requests.size(), rule["count"].get<size_t>());
  }
  std::string all;
  for (const std::string& r : requests) all += r;
  ExpectText("editor requests", all, rule);
  for (const json& block : rule.value("in_block", json::array())) {
    const std::string needle = block.at("text");
    const std::string source = block.at("source");
    EXPECT_FALSE(requests.empty());
    for (const std::string& r : requests) {
      EXPECT_TRUE(OnlyInsideBlock(r, needle, source))
          << needle << " is not (only) inside <untrusted-data source=\"" << source
          << "\"> blocks:\n"
          << r;
    }
  }
}

class ImproveScenariosTest : public ImproveScenarioFixture,
                             public ::testing::WithParamInterface<std::string> {};

TEST_P(ImproveScenariosTest, AttemptMeetsTheScenarioExpectations) { RunScenario(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Suite, ImproveScenariosTest, ::testing::ValuesIn(ScenarioNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// The suite must not shrink unnoticed: a renamed or lost folder would otherwise just drop a test.
TEST(ImproveScenariosSuiteTest, HoldsEveryRequiredScenario) {
  std::vector<std::string> names = ScenarioNames();
  for (const char* required :
       {"planted-flaw", "held-out-break", "costly-fix", "refused-edit", "noisy-case",
        "useless-edit", "injection-in-tool-result", "auto-race"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), required), names.end()) << required;
  }
}

}  // namespace
}  // namespace mend::testing
