// Proposals shared by replicas (docs/operations.md, "How replicas behave"): three `mend` homes, as
// three hosts, on one PostgreSQL database. `mend improve` on A makes a proposal; B lists and shows
// it (its audit folder stays on A); C applies it; A can then neither apply nor reject it again,
// and sees what C decided. The attempt is the skill-fix scenario of bench/improve.
//
// Needs a server: MEND_TEST_POSTGRES_URL (scripts/with_postgres); skipped without one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <vector>

#include "tests/e2e/postgres_e2e_test.h"

namespace mend::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kKey[] = "sk-replica-improve-KEY-7316";
constexpr std::chrono::seconds kBound(60);
constexpr char kSkill[] = "skills/entry-format.md";

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

class ReplicaImproveTest : public PostgresE2eTest {
 protected:
  ReplicaImproveTest() : PostgresE2eTest("mend_improve_replicas", {.secret = kKey}) {}

  void SetUpWithDatabase() override {
    env_.push_back("MEND_STORE=" + db_.url());
    std::error_code error;
    fs::copy(Scenario() / "agent", dir_->File("agent"), fs::copy_options::recursive, error);
    ASSERT_FALSE(error) << error.message();
    ASSERT_NO_FATAL_FAILURE(StartFakeLlm({"--routes", (Scenario() / "routes.json").string()}));
    base_url_ = ServerUrl();
  }

  static fs::path Scenario() { return fs::path(IMPROVE_SCENARIOS_DIR) / "skill-fix"; }

  // `mend --home home-<replica> --json ARGS` on the shared database; the result's stdout as JSON.
  json Mend(const std::string& replica, std::vector<std::string> args, int expect_code = 0) {
    const std::string what = replica + " " + args[0] + " " + args[1];
    args.insert(args.begin(), "--json");
    const ChildOutput result =
        E2eTest::Mend(std::move(args), {.home = dir_->File("home-" + replica), .timeout = kBound});
    EXPECT_TRUE(result.status.exited && result.status.code == expect_code)
        << what << ": " << result.err;
    EXPECT_THAT(result.out + result.err, Not(HasSubstr(kKey)));
    err_ = result.err;
    return json::parse(result.out, nullptr, false);
  }

  std::string base_url_;
  std::string err_;
};

TEST_F(ReplicaImproveTest, AProposalMadeOnOneReplicaIsShownAndDecidedOnceFromAnyOther) {
  const std::string check = (fs::path(IMPROVE_SCENARIOS_DIR) / "lib/check_answer").string();
  const json made =
      Mend("a", {"improve",      dir_->File("agent"),
                 "--check",      ShellQuote(check) + " " + ShellQuote(dir_->File("agent")),
                 "--cases",      (Scenario() / "cases.jsonl").string(),
                 "--provider",   "openai",
                 "--base-url",   base_url_,
                 "--held-out",   "0",
                 "--seed",       "1",
                 "--candidates", "1",
                 "--rounds",     "1",
                 "--repeats",    "3"});
  ASSERT_TRUE(made.is_object());
  ASSERT_EQ(made.value("outcome", ""), "proposal");
  const std::string id = made.value("attempt_id", "");
  const std::string original = *ReadWholeFile(dir_->File(std::string("agent/") + kSkill));

  // B lists A's attempt, and shows it from the database: the audit folder is on A.
  const json list = Mend("b", {"improve", "list"});
  ASSERT_EQ(list.value("attempts", json::array()).size(), 1u) << list.dump();
  const json& listed = list["attempts"][0];
  EXPECT_EQ(listed.value("attempt_id", ""), id);
  EXPECT_EQ(listed.value("outcome", ""), "proposal");
  EXPECT_EQ(listed.value("proposal", json()), "queued");
  EXPECT_EQ(listed.value("host", json()), HostName());
  const json shown = Mend("b", {"improve", "show", id});
  EXPECT_EQ(shown.value("audit_here", true), false);
  EXPECT_EQ(shown.value("audit_dir", ""), dir_->File("home-a") + "/improve/" + id);
  EXPECT_EQ(shown.value("outcome", ""), "proposal");
  EXPECT_THAT(shown.value("diff", ""), HasSubstr(std::string("+++ b/") + kSkill));
  EXPECT_FALSE(fs::exists(dir_->File("home-b/improve/" + id)));

  // C applies it: the agent folder changes, C keeps the backup, privately.
  const json applied = Mend("c", {"improve", "apply", id});
  EXPECT_EQ(applied["proposal"].value("status", ""), "applied") << applied.dump();
  EXPECT_NE(*ReadWholeFile(dir_->File(std::string("agent/") + kSkill)), original);
  const std::string backup = dir_->File("home-c/improve/" + id + "/backup/" + kSkill);
  EXPECT_EQ(*ReadWholeFile(backup), original);
  struct stat st {};
  ASSERT_EQ(::stat(backup.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(dir_->File("home-c/improve/" + id).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  // A, where the attempt ran, sees C's decision and cannot decide again.
  Mend("a", {"improve", "reject", id, "--reason", "late"}, 1);
  EXPECT_THAT(err_, HasSubstr("already applied"));
  Mend("b", {"improve", "apply", id}, 1);
  EXPECT_THAT(err_, HasSubstr("already applied"));
  const json home = Mend("a", {"improve", "show", id});
  EXPECT_EQ(home.value("audit_here", false), true);
  EXPECT_EQ(home.value("recomputed_matches", json()), json(true));
  EXPECT_EQ(home["proposal"].value("status", ""), "applied");
  EXPECT_EQ(Mend("b", {"improve", "list"})["attempts"][0].value("proposal", json()), "applied");
}

}  // namespace
}  // namespace mend::testing
