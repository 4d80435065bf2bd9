// The built-in file tools stay inside the workspace even when symlinks are planted on the path,
// before the call or in the middle of it.

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "agent/builtin_tool_util.h"
#include "agent/workspace_path.h"
#include "mend/agent/builtin_tools.h"
#include "tests/agent/tool_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::agent {
namespace {

using ::mend::agent::tool_testing::TempWorkspace;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

// The components of the deep path the tests plant symlinks into.
const std::vector<std::string> kComponents = {"a", "b", "c", "f.txt"};

std::string Prefix(std::size_t n) {
  std::string path;
  for (std::size_t i = 0; i < n; ++i) path += (i > 0 ? "/" : "") + kComponents[i];
  return path;
}

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  stat(path.c_str(), &st);
  return st.st_mode & 07777;
}

mode_t CurrentUmask() {
  const mode_t mask = umask(0);
  umask(mask);
  return mask;
}

class WorkspaceConfinementTest : public ::testing::Test {
 protected:
  WorkspaceConfinementTest() : ctx_(ws_.Context()) {
    MEND_EXPECT_OK(RegisterBuiltinTools(registry_, BuiltinToolNames()));
    // The outside holds the same tree, so a tool that followed a link out would find its file.
    outside_.Write("a/b/c/f.txt", "outside secret\n");
    outside_.Write("b/c/f.txt", "outside secret\n");
    outside_.Write("c/f.txt", "outside secret\n");
    outside_.Write("f.txt", "outside secret\n");
  }
  ToolResult Call(const std::string& tool, const std::string& args) {
    return registry_.Invoke(tool, args, ctx_);
  }
  // Every file under the outside directory, with its content, to prove nothing changed there.
  std::string OutsideSnapshot() const {
    std::string all;
    for (const auto& entry : fs::recursive_directory_iterator(outside_.path())) {
      all += entry.path().string() + "\n";
      if (entry.is_regular_file())
        all += outside_.Read(fs::relative(entry.path(), outside_.path()));
    }
    return all;
  }

  TempWorkspace ws_;
  TempWorkspace outside_;
  ToolRegistry registry_;
  ToolContext ctx_;
};

// For each position i of a/b/c/f.txt, component i is a symlink to the matching place outside
// (absolute and relative spellings): no tool reads, lists, greps, writes or edits through it.
TEST_F(WorkspaceConfinementTest, SymlinkToOutsideAtEveryPositionIsRefused) {
  for (std::size_t i = 0; i < kComponents.size(); ++i) {
    for (const bool relative : {false, true}) {
      SCOPED_TRACE("symlink at " + Prefix(i + 1) + (relative ? " (relative)" : " (absolute)"));
      fs::remove_all(ws_.Abs("a"));
      if (i > 0) fs::create_directories(ws_.Abs(Prefix(i)));
      const std::string outside_target = outside_.Abs(Prefix(i + 1));
      const std::string link_path = ws_.Abs(Prefix(i + 1));
      const std::string link_text =
          relative ? fs::relative(outside_target, fs::path(link_path).parent_path()).string()
                   : outside_target;
      fs::create_symlink(link_text, link_path);
      const std::string before = OutsideSnapshot();
      const std::string path = Prefix(kComponents.size());

      const ToolResult read = Call("read_file", R"({"path":")" + path + R"("})");
      EXPECT_TRUE(read.is_error);
      EXPECT_THAT(read.content, HasSubstr("outside the workspace"));
      EXPECT_THAT(read.content, Not(HasSubstr("secret")));
      const ToolResult write =
          Call("write_file", R"({"path":")" + path + R"(","content":"pwned"})");
      EXPECT_TRUE(write.is_error);
      EXPECT_THAT(write.content, HasSubstr("outside the workspace"));
      const ToolResult edit =
          Call("edit_file", R"({"path":")" + path + R"(","old_string":"secret","new_string":"x"})");
      EXPECT_TRUE(edit.is_error);
      const ToolResult grep = Call("grep", R"({"pattern":"secret","path":")" + path + R"("})");
      EXPECT_TRUE(grep.is_error);
      EXPECT_THAT(Call("grep", R"({"pattern":"secret"})").content, "no matches");
      if (i + 1 < kComponents.size()) {
        const ToolResult list = Call("list_dir", R"({"path":")" + Prefix(i + 1) + R"("})");
        EXPECT_TRUE(list.is_error);
        EXPECT_THAT(list.content, Not(HasSubstr("f.txt")));
      }
      EXPECT_EQ(OutsideSnapshot(), before);
    }
  }
}

TEST_F(WorkspaceConfinementTest, SymlinkLoopsAndLinksClimbingOutAreRefused) {
  fs::create_symlink("loop2", ws_.Abs("loop1"));
  fs::create_symlink("loop1", ws_.Abs("loop2"));
  EXPECT_THAT(WalkWorkspace(ws_.path(), "loop1/x", PathUse::kWrite, true),
              StatusIs(StatusCode::kPermissionDenied, HasSubstr("too many levels")));
  fs::create_directories(ws_.Abs("d"));
  fs::create_symlink("../../" + fs::path(outside_.path()).filename().string(), ws_.Abs("d/up"));
  EXPECT_THAT(WalkWorkspace(ws_.path(), "d/up/f.txt", PathUse::kRead, false),
              StatusIs(StatusCode::kPermissionDenied, HasSubstr("a symlink on it leads out")));
}

TEST_F(WorkspaceConfinementTest, SymlinksThatStayInsideAreFollowedForReadAndWrite) {
  ws_.Write("real/f.txt", "inside\n");
  fs::create_directory_symlink("real", ws_.Abs("alias"));
  fs::create_symlink("real/f.txt", ws_.Abs("file-link"));
  EXPECT_EQ(Call("read_file", R"({"path":"alias/f.txt"})").content, "inside\n");
  EXPECT_EQ(Call("read_file", R"({"path":"file-link"})").content, "inside\n");
  EXPECT_FALSE(Call("write_file", R"({"path":"file-link","content":"new\n"})").is_error);
  EXPECT_EQ(ws_.Read("real/f.txt"), "new\n");
  EXPECT_TRUE(fs::is_symlink(ws_.Abs("file-link")));  // the link itself was not replaced
  EXPECT_EQ(Call("grep", R"({"pattern":"new","path":"alias"})").content, "real/f.txt:1: new\n");
}

// The race the descriptor walk closes: a directory is checked, then swapped for a symlink to the
// outside before it is opened. The hook runs in exactly that window.
TEST_F(WorkspaceConfinementTest, DirectorySwappedForSymlinkDuringTheWalkIsRefused) {
  ws_.Write("a/b/c/f.txt", "inside\n");
  int swaps = 0;
  const WalkHook swap = [&](std::string_view component) {
    if (component != "b" || swaps++ > 0) return;
    fs::rename(ws_.Abs("a/b"), ws_.Abs("a/b.old"));
    fs::create_directory_symlink(outside_.Abs("a/b"), ws_.Abs("a/b"));
  };
  EXPECT_THAT(WalkWorkspace(ws_.path(), "a/b/c/f.txt", PathUse::kRead, false, swap),
              StatusIs(StatusCode::kPermissionDenied, HasSubstr("a symlink on it leads out")));
  EXPECT_EQ(swaps, 1);

  // The same for a write that creates its parents: nothing appears outside.
  fs::remove(ws_.Abs("a/b"));
  fs::rename(ws_.Abs("a/b.old"), ws_.Abs("a/b"));
  swaps = 0;
  const std::string before = OutsideSnapshot();
  EXPECT_THAT(WalkWorkspace(ws_.path(), "a/b/c/new/g.txt", PathUse::kWrite, true, swap),
              StatusIs(StatusCode::kPermissionDenied));
  EXPECT_EQ(OutsideSnapshot(), before);
}

// After the walk, the tools hold the parent directory's descriptor: a parent swapped for a
// symlink now cannot redirect the open, which still happens in the directory that was checked.
TEST_F(WorkspaceConfinementTest, ParentSwappedAfterTheWalkDoesNotRedirectTheOpen) {
  ws_.Write("a/b/c/f.txt", "inside\n");
  Result<WorkspaceTarget> target = WalkWorkspace(ws_.path(), "a/b/c/f.txt", PathUse::kRead, false);
  MEND_ASSERT_OK(target.status());
  fs::rename(ws_.Abs("a/b"), ws_.Abs("a/b.old"));
  fs::create_directory_symlink(outside_.Abs("a/b"), ws_.Abs("a/b"));
  Result<FileContent> read = ReadTargetFile(*target, 1024);
  MEND_ASSERT_OK(read.status());
  EXPECT_EQ(read->data, "inside\n");
  const std::string before = OutsideSnapshot();
  MEND_EXPECT_OK(WriteTargetFile(*target, "rewritten\n"));
  EXPECT_EQ(OutsideSnapshot(), before);
  EXPECT_EQ(ws_.Read("a/b.old/c/f.txt"), "rewritten\n");
}

// The final component swapped for a symlink after the walk: the open refuses it (O_NOFOLLOW)
// and a write replaces the link instead of writing through it.
TEST_F(WorkspaceConfinementTest, FileSwappedForSymlinkAfterTheWalkIsNotFollowed) {
  ws_.Write("f.txt", "inside\n");
  Result<WorkspaceTarget> target = WalkWorkspace(ws_.path(), "f.txt", PathUse::kRead, false);
  MEND_ASSERT_OK(target.status());
  fs::remove(ws_.Abs("f.txt"));
  fs::create_symlink(outside_.Abs("f.txt"), ws_.Abs("f.txt"));
  EXPECT_THAT(ReadTargetFile(*target, 1024),
              StatusIs(StatusCode::kPermissionDenied, HasSubstr("became a symlink")));
  MEND_EXPECT_OK(WriteTargetFile(*target, "mine\n"));
  EXPECT_EQ(outside_.Read("f.txt"), "outside secret\n");
  EXPECT_FALSE(fs::is_symlink(ws_.Abs("f.txt")));
  EXPECT_EQ(ws_.Read("f.txt"), "mine\n");
}

TEST_F(WorkspaceConfinementTest, DotDotAndAbsolutePathsAreRefusedByEveryTool) {
  for (const std::string tool : {"read_file", "list_dir", "grep"}) {
    SCOPED_TRACE(tool);
    const auto args = [&](const std::string& path) {
      return std::string(tool == "grep" ? R"({"pattern":"x",)" : "{") + R"("path":")" + path +
             R"("})";
    };
    EXPECT_THAT(Call(tool, args("../x")).content, HasSubstr("outside the workspace"));
    EXPECT_THAT(Call(tool, args("a/../../x")).content, HasSubstr("\"..\" climbs above it"));
    EXPECT_THAT(Call(tool, args("/etc")).content, HasSubstr("absolute"));
  }
  EXPECT_THAT(Call("write_file", R"({"path":"new/../../x","content":"x"})").content,
              HasSubstr("outside the workspace"));
  EXPECT_FALSE(fs::exists(ws_.Abs("new")));  // refused before any directory was created
  EXPECT_THAT(Call("write_file", R"({"path":"/tmp/x","content":"x"})").content,
              HasSubstr("absolute"));
}

TEST_F(WorkspaceConfinementTest, WritesAreAtomicAndKeepModes) {
  ASSERT_FALSE(Call("write_file", R"({"path":"d/new.txt","content":"one"})").is_error);
  EXPECT_EQ(ModeOf(ws_.Abs("d/new.txt")), 0644 & ~CurrentUmask());
  EXPECT_EQ(ModeOf(ws_.Abs("d")), 0755 & ~CurrentUmask());
  ws_.Write("private.txt", "key = 1\n");
  fs::permissions(ws_.Abs("private.txt"), fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_FALSE(
      Call("edit_file", R"({"path":"private.txt","old_string":"1","new_string":"2"})").is_error);
  EXPECT_EQ(ws_.Read("private.txt"), "key = 2\n");
  EXPECT_EQ(ModeOf(ws_.Abs("private.txt")), 0600);
  ASSERT_FALSE(Call("write_file", R"({"path":"private.txt","content":"x"})").is_error);
  EXPECT_EQ(ModeOf(ws_.Abs("private.txt")), 0600);
  // No temporary file is left next to the targets.
  EXPECT_EQ(Call("list_dir", "{}").content, "d/\nprivate.txt\n");
  EXPECT_EQ(Call("list_dir", R"({"path":"d"})").content, "new.txt\n");
}

TEST_F(WorkspaceConfinementTest, FifosAndDirectoriesAreNotReadAsFiles) {
  ASSERT_EQ(mkfifo(ws_.Abs("pipe").c_str(), 0600), 0);
  EXPECT_THAT(Call("read_file", R"({"path":"pipe"})").content, HasSubstr("not a regular file"));
  fs::create_directory(ws_.Abs("dir"));
  EXPECT_EQ(Call("write_file", R"({"path":"dir","content":"x"})").content, "dir is a directory");
  EXPECT_THAT(Call("read_file", R"({"path":"dir"})").content, HasSubstr("is a directory"));
}

}  // namespace
}  // namespace mend::agent
