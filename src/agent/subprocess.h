#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "mend/base/result.h"

namespace mend::agent {

// Where the child's stderr goes.
enum class StderrMode { kSeparate, kMergeWithStdout };

struct SubprocessOptions {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH unless it contains a '/'
  std::string cwd;                // the child's working directory
  std::string stdin_data;         // written to the child's stdin, which is then closed
  std::chrono::milliseconds timeout{60'000};
  std::size_t max_output_bytes = 256 * 1024;  // per stream; the rest is read and discarded
  StderrMode stderr_mode = StderrMode::kSeparate;
};

struct SubprocessResult {
  std::string stdout_data;       // at most max_output_bytes
  std::string stderr_data;       // at most max_output_bytes; empty with kMergeWithStdout
  std::size_t stdout_total = 0;  // bytes the child wrote, including the discarded ones
  std::size_t stderr_total = 0;
  int exit_code = -1;   // when the child exited normally
  int term_signal = 0;  // when a signal ended it (SIGKILL after a timeout)
  bool timed_out = false;
};

// Runs a child process to completion and captures its output. The child runs in a process group
// of its own, with the caller's environment. Its output is drained continuously (beyond the cap
// it is discarded) and stdin is written without blocking, so a child that floods its output or
// never reads its input cannot stall the caller. When the timeout passes, the whole process
// group is killed with SIGKILL and `timed_out` is set. When the child exits, its process group is
// killed too, so background processes it left behind do not hold the pipes open.
//
// A child that exits non-zero is a normal result. Errors: kInvalidArgument for an empty argv;
// the errno-derived Status (kNotFound for a missing program, kPermissionDenied, ...) when the
// program cannot be started. Thread-safe: SIGPIPE is blocked in the calling thread while stdin
// is written, so a child that closes its stdin early does not kill the caller.
Result<SubprocessResult> RunSubprocess(const SubprocessOptions& options);

}  // namespace mend::agent
