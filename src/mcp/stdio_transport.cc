// The stdio transport: the server is a child process in a process group of its own; messages are
// lines on its stdin and stdout, and its stderr is its log (docs/mcp.md, "stdio").
//
// One thread per server starts the child and serves its pipes until it is gone. Starting it on
// that thread ties the child's life, and that of what it starts, to the thread's
// (GuardGroupWhileParentLives), which lives until the child is reaped: the server dies with mend,
// kill -9 included.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>

#include "mend/base/subprocess.h"
#include "mend/base/utf8.h"
#include "mend/mcp/jsonrpc.h"
#include "mend/mcp/transport.h"

namespace mend::mcp {
namespace {

// A real child runs on the host's clock: poll() waits in real time.
using SteadyClock = std::chrono::steady_clock;

constexpr size_t kReadChunk = 64 * 1024;
constexpr size_t kStderrTailBytes = 4096;
constexpr size_t kMaxStderrLineBytes = 2048;
constexpr int kExitCheckMillis = 50;
constexpr auto kWriteTimeout = std::chrono::seconds(30);

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// Whether the child exited; it stays unreaped, so its process group id stays reserved.
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

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "ended";
}

// Blocks SIGPIPE on this thread while alive and takes any it raised, so a write to a server that
// closed its stdin fails with EPIPE instead of killing mend.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~SigpipeBlock() {
    const timespec zero{0, 0};
    while (sigtimedwait(&set_, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t set_;
  sigset_t old_;
};

class StdioTransport final : public Transport {
 public:
  explicit StdioTransport(StdioOptions options) : options_(std::move(options)) {}
  ~StdioTransport() override { Close(); }

  Status Start(MessageFn on_message, ClosedFn on_closed) override {
    if (thread_.joinable()) return FailedPreconditionError("the transport was started already");
    on_message_ = std::move(on_message);
    on_closed_ = std::move(on_closed);
    if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) return ErrnoToStatus(errno, "pipe");
    std::promise<Status> started;
    std::future<Status> result = started.get_future();
    thread_ = std::thread([this, promise = std::move(started)]() mutable { Run(promise); });
    Status status = result.get();
    if (!status.ok()) {
      thread_.join();
      CloseFd(wake_[0]);
      CloseFd(wake_[1]);
    }
    return status;
  }

  Status Send(const std::string& message) override {
    if (message.find('\n') != std::string::npos) {
      return InvalidArgumentError("an MCP message over stdio cannot hold a newline");
    }
    std::lock_guard<std::mutex> lock(write_mu_);
    if (stdin_fd_ < 0) return UnavailableError("the server is not running");
    const std::string line = message + "\n";
    SigpipeBlock block;
    size_t offset = 0;
    const auto deadline = SteadyClock::now() + kWriteTimeout;
    while (offset < line.size()) {
      const ssize_t n = write(stdin_fd_, line.data() + offset, line.size() - offset);
      if (n > 0) {
        offset += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno != EAGAIN) {
        return UnavailableError("the server stopped reading its stdin (" +
                                std::string(strerror(errno)) + ")");
      }
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
      if (left <= 0) {
        return DeadlineExceededError("the server has not read its stdin for 30 s");
      }
      pollfd fd{stdin_fd_, POLLOUT, 0};
      poll(&fd, 1, static_cast<int>(left));
    }
    return OkStatus();
  }

  void Close() override {
    if (!thread_.joinable()) return;
    closing_.store(true);
    const char byte = 1;
    (void)!write(wake_[1], &byte, 1);
    thread_.join();
    CloseFd(wake_[0]);
    CloseFd(wake_[1]);
  }

  std::string Describe() const override {
    std::string text = "stdio:";
    for (const std::string& arg : options_.argv) text += " " + arg;
    return TruncateUtf8Bytes(text, 200);
  }

  std::string StderrTail() const override {
    std::lock_guard<std::mutex> lock(tail_mu_);
    return stderr_tail_;
  }

 private:
  // The stages of shutting the child down once Close was called or it closed its stdout.
  enum class Stop { kRunning, kStdinClosed, kTermSent, kKillSent };

  void CloseStdin() {
    std::lock_guard<std::mutex> lock(write_mu_);
    CloseFd(stdin_fd_);
  }

  void Run(std::promise<Status>& started) {
    SpawnOptions spawn;
    spawn.argv = options_.argv;
    spawn.cwd = options_.cwd;
    spawn.extra_env = options_.extra_env;
    Result<SpawnedChild> child = SpawnChild(spawn);
    if (!child.ok()) {
      started.set_value(child.status());
      return;
    }
    {
      std::lock_guard<std::mutex> lock(write_mu_);
      stdin_fd_ = child->stdin_fd;
    }
    started.set_value(OkStatus());
    Serve(*child);
  }

  void Serve(SpawnedChild& child) {
    const pid_t pid = child.pid;
    int out_fd = child.stdout_fd;
    int err_fd = child.stderr_fd;
    const int exit_fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    std::string out, err;
    size_t out_scanned = 0;
    int stderr_lines = 0;
    int stderr_dropped = 0;
    Status broken;  // why the server is unusable, when it broke
    bool stdout_closed = false;
    Stop stop = Stop::kRunning;
    SteadyClock::time_point deadline{};
    bool exited = false;
    int status = 0;

    const auto begin_stop = [&](Stop next) {
      stop = next;
      deadline = SteadyClock::now() + options_.grace;
    };
    const auto stderr_line = [&](std::string line) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      line = SanitizeUtf8(TruncateUtf8Bytes(line, kMaxStderrLineBytes));
      {
        std::lock_guard<std::mutex> lock(tail_mu_);
        stderr_tail_ += line + "\n";
        if (stderr_tail_.size() > kStderrTailBytes) {
          stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
        }
      }
      if (stderr_lines >= options_.max_stderr_lines) {
        ++stderr_dropped;
        return;
      }
      ++stderr_lines;
      if (options_.on_stderr) options_.on_stderr(line);
    };
    const auto read_stdout = [&]() {
      char buf[kReadChunk];
      const ssize_t n = read(out_fd, buf, sizeof(buf));
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        CloseFd(out_fd);
        // A server that closes its stdout is done; it gets the same grace as at shutdown to
        // exit by itself, so that its exit status can be told.
        if (stop == Stop::kRunning && broken.ok() && !closing_.load()) {
          stdout_closed = true;
          CloseStdin();
          begin_stop(Stop::kStdinClosed);
        }
        return;
      }
      if (n < 0 || !broken.ok()) return;
      out.append(buf, static_cast<size_t>(n));
      size_t start = 0;
      for (size_t nl = out.find('\n', out_scanned); nl != std::string::npos;
           nl = out.find('\n', start)) {
        std::string line = out.substr(start, nl - start);
        start = nl + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        on_message_(std::move(line));
      }
      out.erase(0, start);
      out_scanned = out.size();
      if (out.size() > kMaxMessageBytes) {
        broken = ResourceExhaustedError("the server wrote a message over " +
                                        std::to_string(kMaxMessageBytes) + " bytes");
        out.clear();
        out_scanned = 0;
        CloseStdin();
        killpg(pid, SIGKILL);
        stop = Stop::kKillSent;
      }
    };
    const auto read_stderr = [&]() {
      char buf[kReadChunk];
      const ssize_t n = read(err_fd, buf, sizeof(buf));
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        CloseFd(err_fd);
        if (!err.empty()) stderr_line(std::move(err));
        err.clear();
        return;
      }
      if (n < 0) return;
      err.append(buf, static_cast<size_t>(n));
      size_t start = 0;
      for (size_t nl = err.find('\n'); nl != std::string::npos; nl = err.find('\n', start)) {
        stderr_line(err.substr(start, nl - start));
        start = nl + 1;
      }
      err.erase(0, start);
      // A log line without an end is cut rather than kept growing.
      if (err.size() > kMaxStderrLineBytes) {
        stderr_line(err);
        err.clear();
      }
    };

    for (;;) {
      if (!exited && HasExited(pid)) {
        // Reading first: what the server wrote before it exited is still in the pipes.
        if (out_fd >= 0) read_stdout();
        if (err_fd >= 0) read_stderr();
        killpg(pid, SIGKILL);  // what it left running in the background
        status = Reap(pid);
        exited = true;
      }
      if (exited) {
        // What is left in the pipes is read; a grandchild holding them open is not waited for.
        for (int i = 0; i < 64 && out_fd >= 0; ++i) read_stdout();
        for (int i = 0; i < 64 && err_fd >= 0; ++i) read_stderr();
        break;
      }
      if (closing_.load() && stop == Stop::kRunning) {
        CloseStdin();
        begin_stop(Stop::kStdinClosed);
      }
      const auto now = SteadyClock::now();
      if (stop == Stop::kStdinClosed && now >= deadline) {
        killpg(pid, SIGTERM);
        begin_stop(Stop::kTermSent);
      } else if (stop == Stop::kTermSent && now >= deadline) {
        killpg(pid, SIGKILL);
        stop = Stop::kKillSent;
      }
      int wait_ms = exit_fd >= 0 ? -1 : kExitCheckMillis;
      if (stop == Stop::kStdinClosed || stop == Stop::kTermSent) {
        const auto left =
            std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
        wait_ms = static_cast<int>(std::max<int64_t>(0, left));
        if (exit_fd < 0) wait_ms = std::min(wait_ms, kExitCheckMillis);
      }
      pollfd fds[4];
      nfds_t n = 0;
      if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
      if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
      fds[n++] = {wake_[0], POLLIN, 0};
      if (exit_fd >= 0) fds[n++] = {exit_fd, POLLIN, 0};
      if (poll(fds, n, wait_ms) <= 0) continue;
      for (nfds_t i = 0; i < n; ++i) {
        if (fds[i].revents == 0) continue;
        if (fds[i].fd == out_fd) {
          read_stdout();
        } else if (fds[i].fd == err_fd) {
          read_stderr();
        } else if (fds[i].fd == wake_[0]) {
          char drain[16];
          while (read(wake_[0], drain, sizeof(drain)) > 0) {
          }
        }
      }
    }
    if (exit_fd >= 0) close(exit_fd);
    CloseFd(out_fd);
    CloseFd(err_fd);
    CloseStdin();
    if (stderr_dropped > 0 && options_.on_stderr) {
      options_.on_stderr("(" + std::to_string(stderr_dropped) + " more lines of stderr dropped)");
    }
    if (closing_.load() && broken.ok()) return;
    if (broken.ok()) {
      const bool killed = WIFSIGNALED(status) && stdout_closed;
      broken = UnavailableError(killed ? "the server closed its stdout"
                                       : "the server " + DescribeExit(status));
    }
    if (on_closed_) on_closed_(broken);
  }

  const StdioOptions options_;
  MessageFn on_message_;
  ClosedFn on_closed_;
  std::thread thread_;
  std::atomic<bool> closing_{false};
  int wake_[2] = {-1, -1};
  std::mutex write_mu_;
  int stdin_fd_ = -1;  // guarded by write_mu_
  mutable std::mutex tail_mu_;
  std::string stderr_tail_;  // guarded by tail_mu_
};

}  // namespace

Result<std::unique_ptr<Transport>> MakeStdioTransport(StdioOptions options) {
  if (options.argv.empty() || options.argv.front().empty()) {
    return InvalidArgumentError("an MCP server over stdio needs a command");
  }
  if (options.cwd.empty()) options.cwd = ".";
  return std::unique_ptr<Transport>(new StdioTransport(std::move(options)));
}

}  // namespace mend::mcp
