#include "agent/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

extern char** environ;

namespace mend::agent {
namespace {

// Timeouts of real child processes are measured in real time: poll() sleeps on the host's
// clock, so an injected Clock could not drive them.
using SteadyClock = std::chrono::steady_clock;

constexpr std::size_t kReadChunk = 64 * 1024;
// How often a running child is checked for exit while its pipes stay quiet.
constexpr int kExitCheckMillis = 50;

struct Pipe {
  int read_fd = -1;
  int write_fd = -1;
};

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

Status MakePipe(Pipe& p) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoToStatus(errno, "pipe");
  p.read_fd = fds[0];
  p.write_fd = fds[1];
  return OkStatus();
}

// The parent's ends of the child's standard streams.
struct ParentEnds {
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  ~ParentEnds() {
    CloseFd(stdin_fd);
    CloseFd(stdout_fd);
    CloseFd(stderr_fd);
  }
};

Result<pid_t> Spawn(const SubprocessOptions& options, ParentEnds& ends) {
  Pipe in, out, err;
  Status s = MakePipe(in);
  if (s.ok()) s = MakePipe(out);
  if (s.ok() && options.stderr_mode == StderrMode::kSeparate) s = MakePipe(err);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, in.read_fd, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err.write_fd >= 0 ? err.write_fd : out.write_fd, 2);
  posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  // A group of its own, so a timeout can kill everything the child started; default signal
  // dispositions and an empty mask, whatever the caller had.
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (s.ok()) {
    const int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), environ);
    if (rc != 0) s = ErrnoToStatus(rc, "start " + options.argv[0]);
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  CloseFd(in.read_fd);
  CloseFd(out.write_fd);
  CloseFd(err.write_fd);
  ends.stdin_fd = in.write_fd;
  ends.stdout_fd = out.read_fd;
  ends.stderr_fd = err.read_fd;
  if (!s.ok()) return s;
  for (int fd : {ends.stdin_fd, ends.stdout_fd, ends.stderr_fd}) {
    if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  return pid;
}

// True once the child has exited; it is left unreaped so its process group id stays reserved.
bool HasExited(pid_t pid) {
  siginfo_t info{};
  while (waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    if (errno != EINTR) return true;
  }
  return info.si_pid == pid;
}

int Reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// Reads what is available from `fd`, keeping at most `cap` bytes in `data`. Closes `fd` at EOF.
void Drain(int& fd, std::string& data, std::size_t& total, std::size_t cap) {
  char buf[kReadChunk];
  const ssize_t n = read(fd, buf, sizeof(buf));
  if (n > 0) {
    total += static_cast<std::size_t>(n);
    if (data.size() < cap)
      data.append(buf, std::min(static_cast<std::size_t>(n), cap - data.size()));
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    CloseFd(fd);
  }
}

void Feed(int& fd, const std::string& input, std::size_t& offset) {
  const std::size_t chunk = std::min(input.size() - offset, kReadChunk);
  const ssize_t n = write(fd, input.data() + offset, chunk);
  if (n > 0) offset += static_cast<std::size_t>(n);
  if (offset == input.size() || (n < 0 && errno != EAGAIN && errno != EINTR)) CloseFd(fd);
}

// Waits for at most `wait_ms` for any of the open ends to be ready and serves them.
// `exit_fd` (a pidfd, or -1) becomes readable when the child exits, so a child that closed its
// pipes before exiting wakes the caller at once instead of at the next exit check.
void ServeOnce(ParentEnds& ends, const SubprocessOptions& options, std::size_t& stdin_offset,
               SubprocessResult& result, int wait_ms, int exit_fd) {
  pollfd fds[4];
  nfds_t n = 0;
  if (ends.stdin_fd >= 0) fds[n++] = {ends.stdin_fd, POLLOUT, 0};
  if (ends.stdout_fd >= 0) fds[n++] = {ends.stdout_fd, POLLIN, 0};
  if (ends.stderr_fd >= 0) fds[n++] = {ends.stderr_fd, POLLIN, 0};
  if (exit_fd >= 0) fds[n++] = {exit_fd, POLLIN, 0};
  if (poll(fds, n, wait_ms) <= 0) return;
  for (nfds_t i = 0; i < n; ++i) {
    if (fds[i].revents == 0 || fds[i].fd == exit_fd) continue;
    if (fds[i].fd == ends.stdin_fd) {
      Feed(ends.stdin_fd, options.stdin_data, stdin_offset);
    } else if (fds[i].fd == ends.stdout_fd) {
      Drain(ends.stdout_fd, result.stdout_data, result.stdout_total, options.max_output_bytes);
    } else {
      Drain(ends.stderr_fd, result.stderr_data, result.stderr_total, options.max_output_bytes);
    }
  }
}

// Blocks SIGPIPE in this thread for its lifetime; a SIGPIPE raised meanwhile by writing to a
// child that closed its stdin is consumed instead of delivered.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlock() {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t pipe_;
  sigset_t old_;
};

}  // namespace

Result<SubprocessResult> RunSubprocess(const SubprocessOptions& options) {
  if (options.argv.empty()) return InvalidArgumentError("no command to run");
  struct stat st;
  if (stat(options.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return FailedPreconditionError("working directory " + options.cwd + " is not a directory");
  }
  SigpipeBlock sigpipe_block;
  ParentEnds ends;
  MEND_ASSIGN_OR_RETURN(const pid_t pid, Spawn(options, ends));
  if (options.stdin_data.empty()) CloseFd(ends.stdin_fd);
  SubprocessResult result;
  std::size_t stdin_offset = 0;
  // Linux >= 5.3: a descriptor that polls readable when the child exits. Without it (ENOSYS) the
  // loop looks for the exit every kExitCheckMillis.
  const int exit_fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  const SteadyClock::time_point deadline = SteadyClock::now() + options.timeout;
  bool exited = false;
  int status = 0;
  for (;;) {
    if (!exited && HasExited(pid)) {
      killpg(pid, SIGKILL);  // what it left running in the background
      status = Reap(pid);
      exited = true;
    }
    if (exited && ends.stdout_fd < 0 && ends.stderr_fd < 0) break;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    const long long cap = exited || exit_fd >= 0 ? INT32_MAX : kExitCheckMillis;
    const int wait_ms = static_cast<int>(std::min<long long>(left.count(), cap));
    ServeOnce(ends, options, stdin_offset, result, wait_ms, exited ? -1 : exit_fd);
  }
  if (exit_fd >= 0) close(exit_fd);
  if (!exited) {
    killpg(pid, SIGKILL);
    status = Reap(pid);
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  return result;
}

}  // namespace mend::agent
