// The process helper the end-to-end tests stand on: lines, exit codes, signals, deadlines.
#include "tests/e2e/child_process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/support/status_matchers.h"

namespace mend::testing {
namespace {

constexpr std::chrono::seconds kBound(20);

TEST(ChildProcessTest, ReadsLinesThenTheRestAndTheExitCode) {
  auto child = ChildProcess::Spawn(
      {"/bin/sh", "-c", "echo first; echo second; printf tail; echo oops >&2; exit 3"}, {});
  MEND_ASSERT_OK(child);
  auto line = (*child)->ReadStdoutLine(kBound);
  MEND_ASSERT_OK(line);
  EXPECT_EQ(*line, "first");
  auto rest = (*child)->Finish(kBound);
  MEND_ASSERT_OK(rest);
  EXPECT_TRUE(rest->status.exited);
  EXPECT_EQ(rest->status.code, 3);
  EXPECT_EQ(rest->out, "second\ntail");
  EXPECT_EQ(rest->err, "oops\n");
}

TEST(ChildProcessTest, PassesExactlyTheGivenEnvironment) {
  auto result = RunProcess({"/bin/sh", "-c", "echo \"$ONLY_THIS-${HOME:-unset}\""},
                           {"ONLY_THIS=yes"}, kBound);
  MEND_ASSERT_OK(result);
  EXPECT_EQ(result->out, "yes-unset\n");
}

TEST(ChildProcessTest, ClosedStdoutBeforeALineIsOutOfRange) {
  auto child = ChildProcess::Spawn({"/bin/sh", "-c", "printf partial"}, {});
  MEND_ASSERT_OK(child);
  EXPECT_THAT((*child)->ReadStdoutLine(kBound), StatusIs(StatusCode::kOutOfRange));
}

TEST(ChildProcessTest, SilentChildHitsTheDeadlineAndCanBeKilled) {
  // `exec` so the signal reaches the waiting process itself, not a shell around it.
  auto child = ChildProcess::Spawn({"/bin/sh", "-c", "exec /bin/sleep 60"}, {});
  MEND_ASSERT_OK(child);
  EXPECT_THAT((*child)->ReadStdoutLine(std::chrono::milliseconds(1)),
              StatusIs(StatusCode::kDeadlineExceeded));
  MEND_ASSERT_OK((*child)->Kill(SIGTERM));
  auto ended = (*child)->Finish(kBound);
  MEND_ASSERT_OK(ended);
  EXPECT_FALSE(ended->status.exited);
  EXPECT_EQ(ended->status.signal, SIGTERM);
  EXPECT_THAT((*child)->Kill(SIGTERM), StatusIs(StatusCode::kFailedPrecondition));
}

TEST(ChildProcessTest, MissingProgramIsNotFound) {
  EXPECT_THAT(ChildProcess::Spawn({"/nonexistent/mend-e2e-program"}, {}),
              StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(ChildProcess::Spawn({}, {}), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace mend::testing
