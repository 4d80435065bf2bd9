#include "mend/agent/builtin_tools.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/agent/tool_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::agent {
namespace {

using ::mend::agent::tool_testing::TempWorkspace;
using ::mend::testing::StatusIs;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class BuiltinToolsTest : public ::testing::Test {
 protected:
  BuiltinToolsTest() : ctx_(ws_.Context()) {
    MEND_EXPECT_OK(RegisterBuiltinTools(registry_, BuiltinToolNames()));
  }
  ToolResult Call(const std::string& tool, const std::string& args) {
    return registry_.Invoke(tool, args, ctx_);
  }

  TempWorkspace ws_;
  TempWorkspace outside_;
  ToolRegistry registry_;
  ToolContext ctx_;
};

TEST_F(BuiltinToolsTest, RegistersEveryBuiltinWithItsFlags) {
  EXPECT_EQ(registry_.Names(), BuiltinToolNames());
  EXPECT_TRUE(registry_.Find("read_file")->spec().read_only);
  EXPECT_TRUE(registry_.Find("grep")->spec().read_only);
  EXPECT_FALSE(registry_.Find("write_file")->spec().read_only);
  EXPECT_TRUE(registry_.Find("run_command")->spec().requires_approval);
  EXPECT_FALSE(registry_.Find("edit_file")->spec().requires_approval);
  EXPECT_THAT(MakeBuiltinTool("nope"), StatusIs(StatusCode::kNotFound));
  ToolRegistry only;
  MEND_EXPECT_OK(RegisterBuiltinTools(only, {"list_dir", "my_external_tool"}));
  EXPECT_EQ(only.Names(), std::vector<std::string>{"list_dir"});
  EXPECT_THAT(RegisterBuiltinTools(only, {"list_dir"}), StatusIs(StatusCode::kAlreadyExists));
}

TEST_F(BuiltinToolsTest, ReadFileWholeAndByLines) {
  ws_.Write("a.txt", "one\ntwo\nthree\n");
  EXPECT_EQ(Call("read_file", R"({"path":"a.txt"})").content, "one\ntwo\nthree\n");
  EXPECT_EQ(Call("read_file", R"({"path":"a.txt","offset":2,"limit":1})").content, "two\n");
  const ToolResult past = Call("read_file", R"({"path":"a.txt","offset":9})");
  EXPECT_TRUE(past.is_error);
  EXPECT_THAT(past.content, HasSubstr("past the end"));
}

TEST_F(BuiltinToolsTest, ReadFileFailures) {
  ToolResult r = Call("read_file", R"({"path":"missing.txt"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_THAT(r.content, HasSubstr("no such file"));
  std::filesystem::create_directory(ws_.Abs("dir"));
  EXPECT_THAT(Call("read_file", R"({"path":"dir"})").content, HasSubstr("is a directory"));
  EXPECT_THAT(Call("read_file", R"({"path":"../x"})").content, HasSubstr("outside the workspace"));
  EXPECT_THAT(Call("read_file", R"({"path":"/etc/passwd"})").content, HasSubstr("absolute"));
}

TEST_F(BuiltinToolsTest, ReadFileCutsLargeFiles) {
  ws_.Write("big.txt", std::string(50000, 'x'));
  ctx_.max_output_bytes = 100;
  const ToolResult r = Call("read_file", R"({"path":"big.txt"})");
  EXPECT_FALSE(r.is_error);
  EXPECT_THAT(r.content, EndsWith("[output truncated: 100 of 50000 bytes shown]"));
}

TEST_F(BuiltinToolsTest, WriteFileCreatesParents) {
  const ToolResult r = Call("write_file", R"({"path":"deep/er/f.txt","content":"hi"})");
  EXPECT_FALSE(r.is_error) << r.content;
  EXPECT_EQ(r.content, "wrote 2 bytes to deep/er/f.txt");
  EXPECT_EQ(ws_.Read("deep/er/f.txt"), "hi");
}

TEST_F(BuiltinToolsTest, WriteFileRefusesEscapesAndSymlinks) {
  std::filesystem::create_directory_symlink(outside_.path(), ws_.Abs("out"));
  ToolResult r = Call("write_file", R"({"path":"out/pwned.txt","content":"x"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_FALSE(std::filesystem::exists(outside_.Abs("pwned.txt")));
  r = Call("write_file", R"({"path":"../pwned.txt","content":"x"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_THAT(Call("write_file", R"({"path":"f"})").content,
              HasSubstr("missing required property \"content\""));
}

TEST_F(BuiltinToolsTest, EditFileReplacesTheUniqueOccurrence) {
  ws_.Write("m.cc", "int a = 1;\nint b = 2;\n");
  const ToolResult r =
      Call("edit_file", R"({"path":"m.cc","old_string":"b = 2","new_string":"b = 3"})");
  EXPECT_FALSE(r.is_error) << r.content;
  EXPECT_EQ(ws_.Read("m.cc"), "int a = 1;\nint b = 3;\n");
}

TEST_F(BuiltinToolsTest, EditFileRefusesMissingOrNonUniqueOldString) {
  ws_.Write("m.cc", "x x x");
  ToolResult r = Call("edit_file", R"({"path":"m.cc","old_string":"y","new_string":"z"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.content, "old_string not found in m.cc");
  r = Call("edit_file", R"({"path":"m.cc","old_string":"x","new_string":"z"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_THAT(r.content, StartsWith("old_string occurs 3 times in m.cc"));
  EXPECT_EQ(ws_.Read("m.cc"), "x x x");
  EXPECT_TRUE(Call("edit_file", R"({"path":"m.cc","old_string":"","new_string":"z"})").is_error);
}

TEST_F(BuiltinToolsTest, ListDirIsSortedAndMarksDirectories) {
  ws_.Write("b.txt", "");
  ws_.Write("a/x.txt", "");
  ws_.Write("c.txt", "");
  EXPECT_EQ(Call("list_dir", "{}").content, "a/\nb.txt\nc.txt\n");
  EXPECT_EQ(Call("list_dir", R"({"path":"a"})").content, "x.txt\n");
  EXPECT_TRUE(Call("list_dir", R"({"path":"b.txt"})").is_error);
  EXPECT_TRUE(Call("list_dir", R"({"path":".."})").is_error);
}

TEST_F(BuiltinToolsTest, GrepFindsMatchesAndSkipsBinaryAndHugeFiles) {
  ws_.Write("src/a.cc", "int main() {\n  return 0;\n}\n");
  ws_.Write("src/b.cc", "// return here\n");
  ws_.Write("bin.dat", std::string("return\0x", 8));
  ws_.Write("huge.txt", "return\n" + std::string(2 * 1024 * 1024, 'x'));
  EXPECT_EQ(Call("grep", R"({"pattern":"ret.rn"})").content,
            "src/a.cc:2:   return 0;\nsrc/b.cc:1: // return here\n");
  EXPECT_EQ(Call("grep", R"({"pattern":"main","path":"src/a.cc"})").content,
            "src/a.cc:1: int main() {\n");
  EXPECT_EQ(Call("grep", R"({"pattern":"nothing-like-this"})").content, "no matches");
}

TEST_F(BuiltinToolsTest, GrepBoundsResultsAndRejectsBadPatterns) {
  std::string many;
  for (int i = 0; i < 50; ++i) many += "hit\n";
  ws_.Write("many.txt", many);
  const ToolResult r = Call("grep", R"({"pattern":"hit","max_results":3})");
  EXPECT_THAT(r.content, EndsWith("many.txt:3: hit\n[stopped after 3 matches]\n"));
  EXPECT_THAT(Call("grep", R"({"pattern":"(unclosed"})").content, HasSubstr("invalid pattern"));
  EXPECT_TRUE(Call("grep", R"({"pattern":"x","path":"../.."})").is_error);
}

// The model writes grep's pattern, and a tool result or file can ask it to: no pattern may hang
// the run. Each of these takes a backtracking engine exponential time on the long line.
TEST_F(BuiltinToolsTest, GrepSearchesLongLinesInLinearTimeWhateverThePattern) {
  ws_.Write("long.txt", "short\n" + std::string(200000, 'a') + "\n");
  EXPECT_EQ(Call("grep", R"({"pattern":"(a*)*b"})").content, "no matches");
  EXPECT_EQ(Call("grep", R"({"pattern":"^(a|aa)+$"})").content.substr(0, 16), "long.txt:2: aaaa");
  EXPECT_EQ(Call("grep", R"({"pattern":"^(a|a)*!$"})").content, "no matches");
  EXPECT_THAT(Call("grep", R"({"pattern":"(a)\\1"})").content,
              HasSubstr("backreferences and lookaround are not supported"));
}

TEST_F(BuiltinToolsTest, RunCommandReportsOutputAndExitCode) {
  ws_.Write("f.txt", "hello");
  ToolResult r = Call("run_command", R"({"command":"cat f.txt; echo; echo err >&2"})");
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.content, "hello\nerr\n[exit code: 0]");
  r = Call("run_command", R"({"command":"echo failing; exit 3"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.content, "failing\n[exit code: 3]");
}

TEST_F(BuiltinToolsTest, RunCommandRunsInTheWorkspace) {
  const ToolResult r = Call("run_command", R"({"command":"pwd -P"})");
  EXPECT_EQ(r.content, ws_.path() + "\n[exit code: 0]");
}

// A real child process that never ends: the call must come back once the timeout passes.
TEST_F(BuiltinToolsTest, RunCommandTimesOutAndKillsTheProcessGroup) {
  ctx_.timeout = std::chrono::milliseconds(300);
  const ToolResult r = Call("run_command", R"({"command":"echo started; sleep 30; echo late"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_THAT(r.content, StartsWith("started\n"));
  EXPECT_THAT(r.content, HasSubstr("timed out after 0.3s"));
  EXPECT_THAT(r.content, ::testing::Not(HasSubstr("late")));
}

TEST_F(BuiltinToolsTest, RunCommandCutsManyMegabytesOfOutput) {
  ctx_.max_output_bytes = 4096;
  const ToolResult r =
      Call("run_command", R"({"command":"head -c 20000000 /dev/zero | tr '\\0' 'a'"})");
  EXPECT_FALSE(r.is_error) << r.content.substr(0, 200);
  EXPECT_THAT(r.content, StartsWith(std::string(4096, 'a') + "\n"));
  EXPECT_THAT(r.content, HasSubstr("[output truncated: 4096 of 20000000 bytes shown]"));
  EXPECT_THAT(r.content, EndsWith("[exit code: 0]"));
}

TEST_F(BuiltinToolsTest, AskHumanIsNotExecutedByTheRegistry) {
  const ToolResult r = Call("ask_human", R"({"question":"which branch?"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.content, "ask_human must be handled by the run loop");
}

}  // namespace
}  // namespace mend::agent
