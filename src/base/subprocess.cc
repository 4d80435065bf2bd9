#include "mend/base/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <ctime>
#include <mutex>
#include <string_view>

extern char** environ;

// Sanitizers reserve terabytes of shadow memory, which a data limit would refuse.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MEND_SANITIZED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define MEND_SANITIZED_BUILD 1
#endif
#endif
#ifndef MEND_SANITIZED_BUILD
#define MEND_SANITIZED_BUILD 0
#endif

namespace mend {
namespace {

// Secrets shorter than this are not looked for in values: they would match by accident.
constexpr std::size_t kMinSecretBytes = 8;

std::mutex& RegisteredSecretsMutex() {
  static std::mutex mu;
  return mu;
}

std::vector<std::string>& RegisteredSecrets() {
  static std::vector<std::string> secrets;
  return secrets;
}

// The variables a child may see: what programs need to find things, name the user and format
// text. Everything else, including every MEND_* variable, stays with mend.
bool IsPassedVariable(std::string_view name) {
  static constexpr std::string_view kPassed[] = {"PATH", "HOME", "USER",     "LOGNAME", "SHELL",
                                                 "LANG", "TERM", "LANGUAGE", "TZ",      "TMPDIR"};
  for (std::string_view p : kPassed) {
    if (name == p) return true;
  }
  return name.substr(0, 3) == "LC_";
}

// Adds the password of every "scheme://user:password@" in `value` to `secrets`.
void AddUrlPasswords(std::string_view value, std::vector<std::string>& secrets) {
  for (std::size_t pos = value.find("://"); pos != std::string_view::npos;
       pos = value.find("://", pos + 3)) {
    const std::size_t start = pos + 3;
    const std::size_t at = value.find('@', start);
    const std::size_t end = value.find_first_of("/?# ", start);
    if (at == std::string_view::npos || (end != std::string_view::npos && end < at)) continue;
    const std::size_t colon = value.find(':', start);
    if (colon == std::string_view::npos || colon > at) continue;
    const std::string_view password = value.substr(colon + 1, at - colon - 1);
    if (password.size() >= kMinSecretBytes) secrets.emplace_back(password);
  }
}

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

// Everything the forked child needs, prepared before fork: after it, the child only makes
// async-signal-safe calls until exec.
struct ChildSetup {
  std::vector<char*> argv;
  std::vector<char*> envp;
  const char* cwd = nullptr;
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  PreparedLimits limits;
  pid_t parent = 0;
};

// Makes `from` the child's descriptor `to`; dup2 onto itself would keep close-on-exec set.
bool MoveFd(int from, int to) {
  if (from == to) return fcntl(to, F_SETFD, 0) == 0;
  return dup2(from, to) == to;
}

// Runs in the forked child. An exec failure is reported to the parent as the errno value through
// `report` (close-on-exec, so a successful exec closes it empty).
[[noreturn]] void ExecChild(const ChildSetup& setup, int report) {
  // A group of its own, so a timeout can kill everything the child started; default signal
  // dispositions (the parent's handlers mean nothing here) and an empty mask.
  setpgid(0, 0);
  GuardGroupWhileParentLives(setup.parent);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0) continue;
    if (sig == SIGPIPE || (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN)) {
      sigaction(sig, &dfl, nullptr);
    }
  }
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, nullptr);
  int err = 0;
  if (!MoveFd(setup.stdin_fd, 0) || !MoveFd(setup.stdout_fd, 1) || !MoveFd(setup.stderr_fd, 2) ||
      chdir(setup.cwd) != 0) {
    err = errno;
  } else {
    ApplyPreparedLimits(setup.limits);
    execvpe(setup.argv[0], setup.argv.data(), setup.envp.data());
    err = errno;
  }
  (void)!write(report, &err, sizeof(err));
  _exit(127);
}

Result<pid_t> Spawn(const SubprocessOptions& options, ParentEnds& ends,
                    const std::vector<std::string>& extra_env = {}) {
  Pipe in, out, err, report;
  Status s = MakePipe(in);
  if (s.ok()) s = MakePipe(out);
  if (s.ok() && options.stderr_mode == StderrMode::kSeparate) s = MakePipe(err);
  if (s.ok()) s = MakePipe(report);
  ChildSetup setup;
  for (const std::string& a : options.argv) setup.argv.push_back(const_cast<char*>(a.c_str()));
  setup.argv.push_back(nullptr);
  std::vector<std::string> env = ChildEnvironment(environ);
  for (const std::string& extra : extra_env) {
    const std::string name = extra.substr(0, extra.find('=') + 1);
    std::erase_if(env, [&](const std::string& e) { return e.rfind(name, 0) == 0; });
    env.push_back(extra);
  }
  for (std::string& e : env) setup.envp.push_back(e.data());
  setup.envp.push_back(nullptr);
  setup.cwd = options.cwd.c_str();
  setup.stdin_fd = in.read_fd;
  setup.stdout_fd = out.write_fd;
  setup.stderr_fd = err.write_fd >= 0 ? err.write_fd : out.write_fd;
  setup.limits = PrepareLimits(options.limits, options.timeout);
  setup.parent = getpid();
  pid_t pid = -1;
  if (s.ok()) {
    // No signal handler may run in the child before it has reset the handlers.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid = fork();
    if (pid == 0) ExecChild(setup, report.write_fd);
    const int fork_errno = errno;
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (pid < 0) s = ErrnoToStatus(fork_errno, "fork");
  }
  CloseFd(in.read_fd);
  CloseFd(out.write_fd);
  CloseFd(err.write_fd);
  CloseFd(report.write_fd);
  ends.stdin_fd = in.write_fd;
  ends.stdout_fd = out.read_fd;
  ends.stderr_fd = err.read_fd;
  if (s.ok()) {
    int exec_errno = 0;
    ssize_t n;
    while ((n = read(report.read_fd, &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR) {
    }
    if (n == sizeof(exec_errno)) {
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      s = ErrnoToStatus(exec_errno, "start " + options.argv[0]);
    }
  }
  CloseFd(report.read_fd);
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

PreparedLimits PrepareLimits(const ChildLimits& limits, std::chrono::milliseconds timeout) {
  PreparedLimits prepared;
  const auto add = [&](int resource, std::uint64_t soft, std::uint64_t hard) {
    rlimit current{};
    if (getrlimit(resource, &current) != 0) return;
    const auto clamp = [&](std::uint64_t v) -> rlim_t {
      const rlim_t value = static_cast<rlim_t>(v);
      return current.rlim_max != RLIM_INFINITY && value > current.rlim_max ? current.rlim_max
                                                                           : value;
    };
    prepared.items[prepared.count++] = {resource, {clamp(soft), clamp(hard)}};
  };
  std::uint64_t cpu = limits.cpu_seconds;
  if (cpu == 0) {
    const auto seconds = std::chrono::ceil<std::chrono::seconds>(timeout).count();
    cpu = std::max<std::uint64_t>(60, 2 * static_cast<std::uint64_t>(std::max<long long>(
                                              0, static_cast<long long>(seconds))));
  }
  add(RLIMIT_CPU, cpu, cpu + 5);
#if !MEND_SANITIZED_BUILD
  if (limits.data_bytes != 0) add(RLIMIT_DATA, limits.data_bytes, limits.data_bytes);
#endif
  if (limits.file_size_bytes != 0) {
    add(RLIMIT_FSIZE, limits.file_size_bytes, limits.file_size_bytes);
  }
  if (limits.no_core_dumps) add(RLIMIT_CORE, 0, 0);
  return prepared;
}

void DieWithParent(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died between fork and prctl: the child then belongs to another process.
  if (getppid() != parent) _exit(127);
}

namespace {

// Closes every descriptor of the calling process (the guard keeps none: it must not hold the
// caller's pipes, sockets or files open).
void CloseAllDescriptors() {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, 0U, ~0U, 0U) == 0) return;
#endif
  rlimit files{};
  const rlim_t top = getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY
                         ? files.rlim_cur
                         : 65536;
  for (rlim_t fd = 0; fd < top; ++fd) close(static_cast<int>(fd));
}

// Ends the guard as `status` says the command ended: the same exit code, or the same signal.
[[noreturn]] void ExitAs(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    // The guard is a copy of the caller's memory: no core file of it, ever.
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, nullptr);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    kill(getpid(), sig);
    sigprocmask(SIG_UNBLOCK, &one, nullptr);
    _exit(128 + sig);  // a signal that does not end a process by default
  }
  _exit(127);
}

}  // namespace

void GuardGroupWhileParentLives(pid_t parent) {
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  // The caller may ignore SIGCHLD, which would reap the command behind the guard's back.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGCHLD, &dfl, nullptr);
  // The parent's death arrives as SIGUSR1, taken below like any other signal.
  prctl(PR_SET_PDEATHSIG, SIGUSR1);
  if (getppid() != parent) _exit(127);
  const pid_t guard = getpid();  // also the group's id
  const pid_t outer = getpgid(parent);
  const pid_t command = fork();
  if (command == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != guard) _exit(127);
    return;  // the caller execs the command
  }
  if (command < 0) _exit(127);
  // Out of the group, back into the caller's: a kill of the group (a timeout, a stop) then ends
  // the command and what it started but not the guard, which reaps the command before it exits
  // as the command did, so the caller that reaps the guard finds the command gone too. The group
  // keeps the guard's pid as its id while any member lives.
  setpgid(0, outer);
  CloseAllDescriptors();
  sigset_t wanted;
  sigemptyset(&wanted);
  sigaddset(&wanted, SIGCHLD);
  sigaddset(&wanted, SIGUSR1);
  for (;;) {
    siginfo_t info{};
    const int sig = sigwaitinfo(&wanted, &info);
    if (sig == SIGUSR1) {
      killpg(guard, SIGKILL);  // the command and what it started
      _exit(137);
    }
    if (sig == SIGCHLD) {
      int status = 0;
      if (waitpid(command, &status, WNOHANG) == command) ExitAs(status);
    }
  }
}

void ApplyPreparedLimits(const PreparedLimits& limits) {
  for (int i = 0; i < limits.count; ++i)
    setrlimit(limits.items[i].resource, &limits.items[i].value);
}

Status MakeProcessUndumpable() {
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return ErrnoToStatus(errno, "prctl PR_SET_DUMPABLE");
  return OkStatus();
}

bool IsSecretVariableName(std::string_view name) {
  static constexpr std::string_view kNamed[] = {"MEND_STORE",          "MEND_BASE_URL",
                                                "MEND_EMBEDDINGS_URL", "MEND_OTLP_ENDPOINT",
                                                "MEND_OTLP_HEADERS",   "MEND_SERVE_TOKEN"};
  for (std::string_view n : kNamed) {
    if (name == n) return true;
  }
  // Whole words between underscores, so that MONKEY or KEYBOARD_LAYOUT are not secrets.
  static constexpr std::string_view kWords[] = {"KEY",      "APIKEY", "TOKEN",      "SECRET",
                                                "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS"};
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::size_t start = 0;
  while (start <= upper.size()) {
    std::size_t end = upper.find('_', start);
    if (end == std::string::npos) end = upper.size();
    const std::string_view word = std::string_view(upper).substr(start, end - start);
    for (std::string_view w : kWords) {
      if (word == w) return true;
    }
    start = end + 1;
  }
  return false;
}

void AddChildEnvironmentSecret(std::string secret) {
  if (secret.size() < kMinSecretBytes) return;
  std::lock_guard<std::mutex> lock(RegisteredSecretsMutex());
  std::vector<std::string>& secrets = RegisteredSecrets();
  // Every runtime a process opens registers its keys; each is kept once.
  if (std::find(secrets.begin(), secrets.end(), secret) == secrets.end()) {
    secrets.push_back(std::move(secret));
  }
}

std::vector<std::string> ChildEnvironment(const char* const* parent) {
  std::vector<std::string> secrets;
  {
    std::lock_guard<std::mutex> lock(RegisteredSecretsMutex());
    secrets = RegisteredSecrets();
  }
  std::vector<std::pair<std::string_view, std::string_view>> vars;
  for (const char* const* entry = parent; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text = *entry;
    const std::size_t eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    vars.emplace_back(text.substr(0, eq), text.substr(eq + 1));
    if (!IsSecretVariableName(vars.back().first)) continue;
    const std::string_view value = vars.back().second;
    if (value.size() >= kMinSecretBytes) secrets.emplace_back(value);
    AddUrlPasswords(value, secrets);
  }
  std::vector<std::string> env;
  for (const auto& var : vars) {
    if (!IsPassedVariable(var.first)) continue;
    const std::string_view value = var.second;
    const bool carries_secret = std::any_of(secrets.begin(), secrets.end(), [&](const auto& s) {
      return value.find(s) != std::string_view::npos;
    });
    if (!carries_secret) env.push_back(std::string(var.first) + "=" + std::string(value));
  }
  return env;
}

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

Result<SpawnedChild> SpawnChild(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv.front().empty()) {
    return InvalidArgumentError("no command to run");
  }
  for (const std::string& extra : options.extra_env) {
    const size_t eq = extra.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgumentError("environment entry \"" + extra.substr(0, extra.find('=')) +
                                  "\" is not NAME=VALUE");
    }
  }
  struct stat st;
  if (stat(options.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return FailedPreconditionError("working directory " + options.cwd + " is not a directory");
  }
  SubprocessOptions spawn;
  spawn.argv = options.argv;
  spawn.cwd = options.cwd;
  spawn.timeout = options.lifetime;
  spawn.limits = options.limits;
  spawn.stderr_mode = StderrMode::kSeparate;
  ParentEnds ends;
  MEND_ASSIGN_OR_RETURN(const pid_t pid, Spawn(spawn, ends, options.extra_env));
  SpawnedChild child;
  child.pid = pid;
  std::swap(child.stdin_fd, ends.stdin_fd);
  std::swap(child.stdout_fd, ends.stdout_fd);
  std::swap(child.stderr_fd, ends.stderr_fd);
  return child;
}

}  // namespace mend
