// The default CheckCommandRunner: a minimal fork/exec with stdin fed from memory, stdout captured
// and a deadline after which the child's process group is killed. The child gets the scrubbed
// environment and the resource limits of mend/base/subprocess.h, like the agent's command tools,
// and dies with mend, with everything it started (GuardGroupWhileParentLives).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <vector>

#include "mend/base/subprocess.h"
#include "mend/heal/output_check.h"

extern char** environ;

namespace mend::heal {
namespace {

constexpr size_t kMaxStdout = 64 * 1024;

using SteadyClock = std::chrono::steady_clock;

// Runs in the forked child: only async-signal-safe calls until exec. An exec failure is reported
// to the parent as the errno value through `report` (close-on-exec, so success closes it).
[[noreturn]] void ExecChild(char* const* argv, char* const* envp, const PreparedLimits& limits,
                            pid_t parent, const char* cwd, int in, int out, int report) {
  setpgid(0, 0);
  GuardGroupWhileParentLives(parent);
  // `mend serve` blocks SIGINT and SIGTERM in every thread; the command starts with none blocked.
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, nullptr);
  int null_fd = open("/dev/null", O_WRONLY);
  if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
      (null_fd >= 0 && dup2(null_fd, STDERR_FILENO) < 0) || (cwd[0] != '\0' && chdir(cwd) != 0)) {
    int err = errno;
    (void)!write(report, &err, sizeof(err));
    _exit(127);
  }
  ApplyPreparedLimits(limits);
  execvpe(argv[0], argv, envp);
  int err = errno;
  (void)!write(report, &err, sizeof(err));
  _exit(127);
}

int RemainingMs(SteadyClock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

// Feeds stdin and drains stdout until the child closes stdout or the deadline passes; closes
// both descriptors. Returns false on timeout.
bool Pump(int in_fd, int out_fd, std::string_view input, SteadyClock::time_point deadline,
          std::string& output) {
  size_t written = 0;
  bool eof = false;
  bool timed_out = false;
  if (input.empty()) {
    close(in_fd);
    in_fd = -1;
  }
  while (!eof && !timed_out) {
    pollfd fds[2] = {{out_fd, POLLIN, 0}, {in_fd, POLLOUT, 0}};
    int ready = poll(fds, in_fd >= 0 ? 2 : 1, RemainingMs(deadline));
    if (ready < 0 && errno == EINTR) continue;
    timed_out = ready <= 0;  // a poll failure is handled like a timeout: the child is killed
    if (in_fd >= 0 && fds[1].revents != 0) {
      ssize_t n = write(in_fd, input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      // A child that stops reading (EPIPE) gets no more input; that is its choice.
      if (n < 0 && errno != EAGAIN && errno != EINTR) written = input.size();
      if (written == input.size()) {
        close(in_fd);
        in_fd = -1;
      }
    }
    if (fds[0].revents == 0) continue;
    char buf[4096];
    ssize_t n = read(out_fd, buf, sizeof(buf));
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    eof = n <= 0;
    size_t room = kMaxStdout - std::min(kMaxStdout, output.size());
    if (n > 0) output.append(buf, std::min(static_cast<size_t>(n), room));
  }
  if (in_fd >= 0) close(in_fd);
  close(out_fd);
  return !timed_out;
}

// Reaps the child; kills its process group first when the deadline passes.
int Reap(pid_t pid, SteadyClock::time_point deadline, bool& timed_out) {
  int status = 0;
  while (!timed_out) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return status;
    // The child closed its stdout but has not exited yet: wait for it in short slices.
    if (RemainingMs(deadline) == 0) timed_out = true;
    if (!timed_out) poll(nullptr, 0, std::min(RemainingMs(deadline), 5));
  }
  kill(-pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

class SubprocessRunner final : public CheckCommandRunner {
 public:
  Result<CommandRun> Run(const std::vector<std::string>& argv, const std::string& cwd,
                         std::string_view stdin_data, std::chrono::milliseconds timeout) override;
};

}  // namespace

namespace {

Result<CommandRun> SubprocessRunner::Run(const std::vector<std::string>& argv,
                                         const std::string& cwd, std::string_view stdin_data,
                                         std::chrono::milliseconds timeout) {
  if (argv.empty()) return InvalidArgumentError("check command has no argv");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int in[2], out[2], report[2];
  if (pipe2(in, O_CLOEXEC) != 0) return ErrnoToStatus(errno, "pipe");
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(report, O_CLOEXEC) != 0) {
    int err = errno;
    close(in[0]);
    close(in[1]);
    return ErrnoToStatus(err, "pipe");
  }
  // The same environment and limits as the agent's command tools (mend/base/subprocess.h).
  std::vector<std::string> env = ChildEnvironment(environ);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const PreparedLimits limits = PrepareLimits(ChildLimits{}, timeout);
  SteadyClock::time_point deadline = SteadyClock::now() + timeout;
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    ExecChild(args.data(), envp.data(), limits, parent, cwd.c_str(), in[0], out[1], report[1]);
  }
  close(in[0]);
  close(out[1]);
  close(report[1]);
  if (pid < 0) {
    int err = errno;
    for (int fd : {in[1], out[0], report[0]}) close(fd);
    return ErrnoToStatus(err, "fork");
  }
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  // A child that exits without reading its stdin must not kill this process with SIGPIPE, so the
  // signal is blocked on this thread while writing and a pending one is consumed afterwards.
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  CommandRun run;
  run.timed_out = !Pump(in[1], out[0], stdin_data, deadline, run.stdout_data);
  timespec zero{0, 0};
  while (sigtimedwait(&pipe_set, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  int status = Reap(pid, deadline, run.timed_out);
  int exec_error = 0;
  bool exec_failed = read(report[0], &exec_error, sizeof(exec_error)) == sizeof(exec_error);
  close(report[0]);
  if (exec_failed) return ErrnoToStatus(exec_error, "run check command " + argv[0]);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace

std::shared_ptr<CheckCommandRunner> MakeSubprocessRunner() {
  return std::make_shared<SubprocessRunner>();
}

}  // namespace mend::heal
