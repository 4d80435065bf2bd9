// `mend chat` at a real terminal: the test runs the binary on a pseudo-terminal, so chat reads with
// libedit, and drives Tab completion of the live dead-letter ids the way a person would: Tab lists
// the ids with a preview of their task, a unique prefix and Tab complete one, Enter purges it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "mend/base/file_system.h"
#include "mend/lessonq/job.h"
#include "mend/lessonq/wal_dir.h"
#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

// A child process whose stdin, stdout and stderr are the slave side of a pseudo-terminal.
class TerminalChild {
 public:
  TerminalChild(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    std::vector<char*> args, vars;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    for (const std::string& v : env) vars.push_back(const_cast<char*>(v.c_str()));
    args.push_back(nullptr);
    vars.push_back(nullptr);
    pid_ = forkpty(&master_, nullptr, nullptr, nullptr);
    if (pid_ == 0) {
      execve(args[0], args.data(), vars.data());
      _exit(127);
    }
  }
  ~TerminalChild() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) close(master_);
  }
  bool started() const { return pid_ > 0 && master_ >= 0; }

  void Type(const std::string& keys) {
    ASSERT_EQ(write(master_, keys.data(), keys.size()), static_cast<ssize_t>(keys.size()));
  }

  // Reads the terminal until every one of `needles` has appeared, in any order, in what was read
  // since the last call; what was read up to the furthest of them is then consumed.
  void Expect(const std::vector<std::string>& needles) {
    const auto deadline = std::chrono::steady_clock::now() + kBound;
    auto missing = [&] {
      for (const std::string& n : needles) {
        if (seen_.find(n) == std::string::npos) return n;
      }
      return std::string();
    };
    for (std::string n = missing(); !n.empty(); n = missing()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      ASSERT_GT(left.count(), 0) << "no \"" << n << "\" in:\n" << seen_;
      ASSERT_TRUE(ReadSome(static_cast<int>(left.count()))) << "terminal closed; read:\n" << seen_;
    }
    size_t end = 0;
    for (const std::string& n : needles) end = std::max(end, seen_.find(n) + n.size());
    all_ += seen_.substr(0, end);
    seen_.erase(0, end);
  }
  void Expect(const std::string& needle) { Expect(std::vector<std::string>{needle}); }

  // Reads until the child closes the terminal, then reaps it; its exit code (-1 if killed).
  int Finish() {
    while (ReadSome(static_cast<int>(std::chrono::milliseconds(kBound).count()))) {
    }
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    all_ += seen_;
    seen_.clear();
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  const std::string& output() const { return all_; }

 private:
  // False at end of file (EIO once the child has closed the slave side) or after `ms` idle.
  bool ReadSome(int ms) {
    pollfd p{master_, POLLIN, 0};
    if (poll(&p, 1, ms) <= 0) return false;
    char buf[4096];
    const ssize_t n = read(master_, buf, sizeof(buf));
    if (n <= 0) return false;
    seen_.append(buf, static_cast<size_t>(n));
    return true;
  }

  pid_t pid_ = -1;
  int master_ = -1;
  std::string seen_;
  std::string all_;
};

lessonq::Job DeadLetter(const std::string& task) {
  lessonq::Job job;
  job.request = {task, "tried once", "ERROR: boom", "error"};
  job.id = lessonq::JobIdFor(job.request);
  job.attempts = 5;
  job.last_error = "UNAVAILABLE: the model service is overloaded";
  job.enqueued_at = job.next_attempt_at = Time(std::chrono::seconds(1'700'000'000));
  return job;
}

class ChatTerminalTest : public E2eTest {};

TEST_F(ChatTerminalTest, TabCompletesLiveDeadLetterIdsWithAPreview) {
  ASSERT_NO_FATAL_FAILURE(WriteAgent("agent", "name = \"t\"\ntools = []\n", "Answer briefly.\n"));
  auto script = dir_->WriteFile("script.json", "[]");
  MEND_ASSERT_OK(script);
  const std::string home = Home();
  auto dlq = lessonq::WalDir::Open(*PosixFileSystem::Default(), home + "/reflexion/dlq");
  MEND_ASSERT_OK(dlq);
  const lessonq::Job alpha = DeadLetter("rotate the alpha certificate");
  const lessonq::Job beta = DeadLetter("rebuild the beta index");
  MEND_ASSERT_OK((*dlq)->Append(alpha));
  MEND_ASSERT_OK((*dlq)->Append(beta));
  size_t unique = 0;
  while (alpha.id[unique] == beta.id[unique]) ++unique;
  const std::string alpha_prefix = alpha.id.substr(0, unique + 1);

  std::vector<std::string> env = env_;
  env.push_back("TERM=xterm");
  TerminalChild chat(MendCommand({"chat", dir_->File("agent"), "--provider", "scripted",
                                  "--script-file", *script}),
                     env);
  ASSERT_TRUE(chat.started());
  ASSERT_NO_FATAL_FAILURE(chat.Expect("> "));
  // Tab after "purge " lists both live ids, each with its task.
  chat.Type("/reflect purge \t");
  ASSERT_NO_FATAL_FAILURE(chat.Expect(
      {alpha.id + "  rotate the alpha certificate", beta.id + "  rebuild the beta index"}));
  // A unique prefix and Tab complete alpha's id; Enter purges it.
  chat.Type(alpha_prefix + "\t");
  ASSERT_NO_FATAL_FAILURE(chat.Expect(alpha.id.substr(unique + 1)));
  chat.Type("\r");
  ASSERT_NO_FATAL_FAILURE(chat.Expect("purged " + alpha.id + " from the dead letter queue"));
  chat.Type("/quit\r");
  EXPECT_EQ(chat.Finish(), 0) << chat.output();

  EXPECT_THAT((*dlq)->ListIds(), IsOkAndHolds(::testing::ElementsAre(beta.id)));
}

}  // namespace
}  // namespace mend::testing
