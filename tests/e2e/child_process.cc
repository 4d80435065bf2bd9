// Child processes for end-to-end tests. Pipes are created close-on-exec so that a child never
// inherits the pipe ends of another child (which would keep them open and hide its EOF); the
// spawn actions dup2 the write ends onto stdout and stderr, which clears the flag there.
#include "tests/e2e/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

namespace mend::testing {
namespace {

using Deadline = std::chrono::steady_clock::time_point;

// Milliseconds left until `deadline`, for poll(); never negative.
int RemainingMs(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

ExitStatus DecodeWaitStatus(int wait_status) {
  ExitStatus status;
  if (WIFEXITED(wait_status)) {
    status.exited = true;
    status.code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    status.signal = WTERMSIG(wait_status);
  }
  return status;
}

Result<int> WaitFor(pid_t pid) {
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) return ErrnoToStatus(errno, "waitpid");
  }
  return wait_status;
}

// Reads what is available on `*fd` into `buffer`; closes it and sets it to -1 at end of file.
Status Drain(int* fd, std::string& buffer) {
  char chunk[4096];
  const ssize_t n = read(*fd, chunk, sizeof(chunk));
  if (n < 0) return errno == EINTR ? OkStatus() : ErrnoToStatus(errno, "read from child");
  if (n == 0) {
    close(*fd);
    *fd = -1;
    return OkStatus();
  }
  buffer.append(chunk, static_cast<size_t>(n));
  return OkStatus();
}

// The child starts with default signal dispositions and an empty mask, whatever the test runner
// set up for itself.
void ResetSignals(posix_spawnattr_t& attr) {
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGCHLD}) sigaddset(&defaults, sig);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
}

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

std::string ShellQuote(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Result<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                                          const std::vector<std::string>& env,
                                                          const std::string& cwd) {
  if (argv.empty()) return InvalidArgumentError("no program to run");
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return ErrnoToStatus(errno, "pipe");
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    const int err = errno;
    close(out_pipe[0]);
    close(out_pipe[1]);
    return ErrnoToStatus(err, "pipe");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  ResetSignals(attr);

  std::vector<char*> args = CStrings(argv);
  std::vector<char*> environment = CStrings(env);
  pid_t pid = -1;
  const int spawn_error =
      posix_spawn(&pid, argv[0].c_str(), &actions, &attr, args.data(), environment.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (spawn_error != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return ErrnoToStatus(spawn_error, "spawn " + argv[0]);
  }
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, out_pipe[0], err_pipe[0]));
}

ChildProcess::~ChildProcess() {
  KillAndReap();
  CloseFds();
}

void ChildProcess::KillAndReap() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  WaitFor(pid_).status().IgnoreError();
  pid_ = -1;
}

void ChildProcess::CloseFds() {
  for (int* fd : {&out_fd_, &err_fd_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

Result<std::string> ChildProcess::ReadStdoutLine(std::chrono::milliseconds timeout) {
  const Deadline deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (const size_t eol = out_buffer_.find('\n'); eol != std::string::npos) {
      std::string line = out_buffer_.substr(0, eol);
      out_buffer_.erase(0, eol + 1);
      return line;
    }
    if (out_fd_ < 0) return OutOfRangeError("the child closed its stdout");
    pollfd pfd{out_fd_, POLLIN, 0};
    const int ready = poll(&pfd, 1, RemainingMs(deadline));
    if (ready < 0 && errno != EINTR) return ErrnoToStatus(errno, "poll");
    if (ready == 0) return DeadlineExceededError("no line on the child's stdout in time");
    if (ready > 0) MEND_RETURN_IF_ERROR(Drain(&out_fd_, out_buffer_));
  }
}

Status ChildProcess::Kill(int signal) {
  if (pid_ <= 0) return FailedPreconditionError("the child was already reaped");
  if (kill(pid_, signal) != 0) return ErrnoToStatus(errno, "kill");
  return OkStatus();
}

Result<ChildOutput> ChildProcess::Finish(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return FailedPreconditionError("the child was already reaped");
  const Deadline deadline = std::chrono::steady_clock::now() + timeout;
  while (out_fd_ >= 0 || err_fd_ >= 0) {
    pollfd pfds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};  // poll skips negative fds
    const int ready = poll(pfds, 2, RemainingMs(deadline));
    if (ready < 0 && errno != EINTR) return ErrnoToStatus(errno, "poll");
    if (ready == 0) {
      KillAndReap();
      return DeadlineExceededError("the child did not finish in time");
    }
    if (ready < 0) continue;
    if (pfds[0].revents != 0) MEND_RETURN_IF_ERROR(Drain(&out_fd_, out_buffer_));
    if (pfds[1].revents != 0) MEND_RETURN_IF_ERROR(Drain(&err_fd_, err_buffer_));
  }
  MEND_ASSIGN_OR_RETURN(int wait_status, WaitFor(pid_));
  pid_ = -1;
  ChildOutput output;
  output.status = DecodeWaitStatus(wait_status);
  output.out = std::move(out_buffer_);
  output.err = std::move(err_buffer_);
  out_buffer_.clear();
  err_buffer_.clear();
  return output;
}

Result<ChildOutput> RunProcess(const std::vector<std::string>& argv,
                               const std::vector<std::string>& env,
                               std::chrono::milliseconds timeout, const std::string& cwd) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> child, ChildProcess::Spawn(argv, env, cwd));
  return child->Finish(timeout);
}

Result<FakeServerProcess> StartFakeServer(const std::string& binary,
                                          const std::vector<std::string>& args,
                                          std::chrono::milliseconds timeout) {
  constexpr std::string_view kReady = "listening on 127.0.0.1:";
  std::vector<std::string> argv = {binary, "--port", "0"};
  argv.insert(argv.end(), args.begin(), args.end());
  FakeServerProcess server;
  MEND_ASSIGN_OR_RETURN(server.process, ChildProcess::Spawn(argv, {"PATH=/usr/bin:/bin"}));
  MEND_ASSIGN_OR_RETURN(std::string line, server.process->ReadStdoutLine(timeout));
  if (!line.starts_with(kReady)) return InternalError("unexpected ready line: " + line);
  const std::string_view digits = std::string_view(line).substr(kReady.size());
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), server.port);
  if (ec != std::errc() || end != digits.data() + digits.size() || server.port <= 0) {
    return InternalError("no port in: " + line);
  }
  return server;
}

}  // namespace mend::testing
