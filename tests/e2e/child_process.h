#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "mend/base/result.h"

namespace mend::testing {

// How a child process ended.
struct ExitStatus {
  bool exited = false;  // true: exit() with `code`; false: killed by `signal`
  int code = -1;
  int signal = 0;
};

// Everything a finished child printed, and how it ended.
struct ChildOutput {
  ExitStatus status;
  std::string out;
  std::string err;
};

// A child process started with posix_spawn, its stdout and stderr connected to pipes and its stdin
// to /dev/null. The destructor kills a child that is still running (SIGKILL) and reaps it, so a
// failing test never leaves a process behind. Not thread-safe; one owner.
class ChildProcess {
 public:
  // Starts `argv[0]` (a path; PATH is not searched) with exactly `env` ("NAME=value" entries) as
  // its environment, in directory `cwd` (empty: this process's). kInvalidArgument for an empty
  // argv; the errno mapping of posix_spawn or pipe otherwise (e.g. kNotFound for a missing binary
  // or directory).
  static Result<std::unique_ptr<ChildProcess>> Spawn(const std::vector<std::string>& argv,
                                                     const std::vector<std::string>& env,
                                                     const std::string& cwd = "");
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // The next line of stdout without its '\n', waiting at most `timeout` for it (poll, no sleeps).
  // kDeadlineExceeded when no full line arrived in time; kOutOfRange when stdout closed first.
  Result<std::string> ReadStdoutLine(std::chrono::milliseconds timeout);

  // Sends `signal` to the child. kFailedPrecondition when it was already reaped.
  Status Kill(int signal);

  // Reads stdout and stderr until both close, then reaps the child. Output already consumed by
  // ReadStdoutLine is not repeated. kDeadlineExceeded (the child is then killed and reaped) when
  // that takes longer than `timeout`.
  Result<ChildOutput> Finish(std::chrono::milliseconds timeout);

 private:
  ChildProcess(pid_t pid, int out_fd, int err_fd) : pid_(pid), out_fd_(out_fd), err_fd_(err_fd) {}
  void KillAndReap();
  void CloseFds();

  pid_t pid_;
  int out_fd_;
  int err_fd_;
  std::string out_buffer_;  // stdout read but not yet returned as a line
  std::string err_buffer_;
};

// `word` quoted for /bin/sh: inside single quotes, each ' written as '\''.
std::string ShellQuote(const std::string& word);

// Runs `argv` with `env` (in `cwd` when not empty) to completion and returns what it printed. The
// deadline of Finish applies.
Result<ChildOutput> RunProcess(const std::vector<std::string>& argv,
                               const std::vector<std::string>& env,
                               std::chrono::milliseconds timeout = std::chrono::seconds(20),
                               const std::string& cwd = "");

// A fake_llm_server child process and the loopback port it announced.
struct FakeServerProcess {
  std::unique_ptr<ChildProcess> process;
  int port = 0;
};

// Starts `binary --port 0 args...` (the fake LLM server executable) with a minimal environment and
// waits up to `timeout` for its "listening on 127.0.0.1:<port>" line. kInternal when the first
// line is anything else.
Result<FakeServerProcess> StartFakeServer(const std::string& binary,
                                          const std::vector<std::string>& args,
                                          std::chrono::milliseconds timeout);

}  // namespace mend::testing
