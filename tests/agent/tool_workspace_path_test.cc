#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "agent/workspace_path.h"
#include "tests/agent/tool_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::agent {
namespace {

using ::mend::agent::tool_testing::TempWorkspace;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

class WorkspacePathTest : public ::testing::Test {
 protected:
  Result<std::string> Resolve(const std::string& rel, PathUse use = PathUse::kRead) {
    return ResolveInWorkspace(ws_.path(), rel, use);
  }
  TempWorkspace ws_;
  TempWorkspace outside_;
};

TEST_F(WorkspacePathTest, ResolvesPlainAndDottedPaths) {
  ws_.Write("src/a.txt", "x");
  EXPECT_EQ(*Resolve("src/a.txt"), ws_.Abs("src/a.txt"));
  EXPECT_EQ(*Resolve("./src//b/../a.txt", PathUse::kWrite), ws_.Abs("src/a.txt"));
  EXPECT_EQ(*Resolve(""), ws_.path());
  EXPECT_EQ(*Resolve("."), ws_.path());
}

TEST_F(WorkspacePathTest, MissingPathIsNotFoundForReadButFineForWrite) {
  EXPECT_THAT(Resolve("new/file.txt"), StatusIs(StatusCode::kNotFound));
  EXPECT_EQ(*Resolve("new/file.txt", PathUse::kWrite), ws_.Abs("new/file.txt"));
}

TEST_F(WorkspacePathTest, RefusesAbsolutePaths) {
  EXPECT_THAT(Resolve("/etc/passwd"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("absolute")));
  EXPECT_THAT(Resolve(ws_.Abs("x"), PathUse::kWrite), StatusIs(StatusCode::kInvalidArgument));
}

TEST_F(WorkspacePathTest, RefusesDotDotEscapes) {
  EXPECT_THAT(Resolve(".."), StatusIs(StatusCode::kPermissionDenied, HasSubstr("outside")));
  EXPECT_THAT(Resolve("a/../../x", PathUse::kWrite), StatusIs(StatusCode::kPermissionDenied));
  EXPECT_THAT(Resolve("../" + fs::path(ws_.path()).filename().string() + "/x", PathUse::kWrite),
              StatusIs(StatusCode::kPermissionDenied));
}

TEST_F(WorkspacePathTest, RefusesSymlinkToOutside) {
  outside_.Write("secret.txt", "s");
  fs::create_symlink(outside_.Abs("secret.txt"), ws_.Abs("link.txt"));
  EXPECT_THAT(Resolve("link.txt"), StatusIs(StatusCode::kPermissionDenied, HasSubstr("symlink")));
  EXPECT_THAT(Resolve("link.txt", PathUse::kWrite), StatusIs(StatusCode::kPermissionDenied));
}

TEST_F(WorkspacePathTest, RefusesSymlinkedParentDirectory) {
  fs::create_directory_symlink(outside_.path(), ws_.Abs("out"));
  EXPECT_THAT(Resolve("out/new.txt", PathUse::kWrite), StatusIs(StatusCode::kPermissionDenied));
  EXPECT_THAT(Resolve("missing/../out/new.txt", PathUse::kWrite),
              StatusIs(StatusCode::kPermissionDenied));
}

TEST_F(WorkspacePathTest, RefusesDanglingSymlink) {
  fs::create_symlink(outside_.Abs("not-yet"), ws_.Abs("dangling"));
  EXPECT_THAT(Resolve("dangling", PathUse::kWrite), StatusIs(StatusCode::kPermissionDenied));
}

TEST_F(WorkspacePathTest, AllowsSymlinksThatStayInside) {
  ws_.Write("real/a.txt", "x");
  fs::create_directory_symlink(ws_.Abs("real"), ws_.Abs("alias"));
  EXPECT_EQ(*Resolve("alias/a.txt"), ws_.Abs("real/a.txt"));
  // ".." after a symlinked directory climbs from where the link leads, as the kernel does.
  EXPECT_EQ(*Resolve("alias/../real/a.txt"), ws_.Abs("real/a.txt"));
}

TEST_F(WorkspacePathTest, MissingWorkspaceIsFailedPrecondition) {
  EXPECT_THAT(ResolveInWorkspace(ws_.Abs("nope"), "a", PathUse::kRead),
              StatusIs(StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace mend::agent
