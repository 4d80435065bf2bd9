#pragma once

// Child processes (docs/security.md): RunSubprocess runs a command tool, a check or run_command to
// completion with a timeout and capped output; SpawnChild starts a long-lived child such as an MCP
// server. Every child gets a filtered environment (ChildEnvironment), resource limits and a process
// group of its own.

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/result.h"

namespace mend {

/// Where the child's stderr goes.
enum class StderrMode { kSeparate, kMergeWithStdout };

/// Resource limits set in the child with setrlimit before exec, so they hold from its first
/// instruction and pass to everything it starts (including what it leaves running in the
/// background). A limit is only ever lowered: one above the inherited hard limit is clamped to it.
/// 0 leaves that limit as inherited.
struct ChildLimits {
  /// RLIMIT_CPU, per process: SIGXCPU at the soft limit, SIGKILL 5 s later. 0 = derived from the
  /// timeout: twice the timeout, at least 60 s (a timeout bounds wall time; this bounds what a
  /// process that left the process group can burn).
  std::uint64_t cpu_seconds = 0;
  /// RLIMIT_DATA: writable private memory (heap, anonymous mappings). Reservations without access
  /// (PROT_NONE, as JVMs and JavaScript engines make) do not count. Not applied in sanitizer
  /// builds, whose shadow memory would exceed it.
  std::uint64_t data_bytes = std::uint64_t{8} << 30;
  std::uint64_t file_size_bytes = std::uint64_t{4} << 30;  ///< RLIMIT_FSIZE: SIGXFSZ beyond
  bool no_core_dumps = true;                               ///< RLIMIT_CORE = 0
};

/// The limits to set in a child, computed before fork (getrlimit, the timeout) so that the child
/// only has to call setrlimit.
struct PreparedLimits {
  /// One limit: a RLIMIT_* resource and its value.
  struct Item {
    int resource;  ///< RLIMIT_CPU, RLIMIT_DATA, ...
    rlimit value;  ///< soft and hard limit
  };
  Item items[4];  ///< the first `count` are set
  int count = 0;  ///< items in use
};
/// The limits `limits` asks for, with the CPU limit derived from `timeout` when not set, clamped to
/// the inherited hard limits.
PreparedLimits PrepareLimits(const ChildLimits& limits, std::chrono::milliseconds timeout);
/// Applies `limits` to the calling process; async-signal-safe (for a forked child before exec).
void ApplyPreparedLimits(const PreparedLimits& limits);

/// Called in a forked child before exec (async-signal-safe): the kernel sends the child SIGKILL
/// when `parent`, the process that forked it, dies, kill -9 and crashes included, and the
/// setting passes through exec. A child whose parent is already gone exits at once with 127. So a
/// tool call interrupted with its `mend run` is not still running while `mend recover` runs that
/// call again. Processes the child starts in turn are not covered: they keep running until they
/// end or reach their CPU limit. (The signal is tied to the forking thread, which waits for the
/// child in every caller.)
void DieWithParent(pid_t parent);

/// Called in a forked child that is already the leader of its own process group, before exec
/// (async-signal-safe), instead of DieWithParent: covers what the command starts in turn. Forks
/// once more; the new process returns, to exec the command in the group, and dies with this one
/// (SIGKILL). This one never returns: it moves back into `parent`'s process group and stays as the
/// group's guard, with every descriptor closed and every signal blocked, until the command ends —
/// it then reaps it and exits as it did (the same code, or the same signal, without a core dump)
/// — or until `parent` dies, kill -9 and crashes included — it then kills the group with SIGKILL:
/// the command and every process it started that stayed in the group. The group's id stays the
/// guard's pid, so the caller kills the group (killpg) and reaps the guard as it would the
/// command, and finds the command reaped when it has reaped the guard. A child whose parent is
/// already gone exits at once with 127, as does one whose second fork fails.
void GuardGroupWhileParentLives(pid_t parent);

/// The environment every child mend starts for an agent gets (run_command, command tools, command
/// checks, improve check commands), built from `parent` (a NULL-terminated environ array):
/// - only the variables PATH, HOME, USER, LOGNAME, SHELL, LANG, LANGUAGE, TERM, TZ, TMPDIR and
///   LC_* pass; everything else is dropped (MEND_*, provider keys, tokens, database URLs, ...);
/// - a passing variable is dropped too when its value contains a secret: the value of any parent
///   variable whose name says it holds one (see IsSecretVariableName), the password of any URL in
///   one, or a value registered with AddChildEnvironmentSecret (keys read from config.toml).
/// Secrets shorter than 8 bytes are not matched (they would match by accident).
std::vector<std::string> ChildEnvironment(const char* const* parent);

/// True for variables whose value is or may hold a secret: MEND_API_KEY, MEND_EMBEDDINGS_API_KEY,
/// OPENAI_API_KEY, ANTHROPIC_API_KEY, MEND_SERVE_TOKEN, MEND_OTLP_HEADERS, MEND_STORE,
/// MEND_BASE_URL, MEND_EMBEDDINGS_URL, MEND_OTLP_ENDPOINT, and any name with a word (between
/// underscores, any case) KEY, APIKEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL or CREDENTIALS.
bool IsSecretVariableName(std::string_view name);

/// Registers a secret value (for the whole process) that no child's environment may carry; for
/// secrets that do not come from the environment, such as a key in config.toml. Thread-safe.
void AddChildEnvironmentSecret(std::string secret);

/// Makes this process non-dumpable (prctl PR_SET_DUMPABLE 0): its /proc files — environ, where
/// the provider keys of the environment stay readable whatever is done to environ, cmdline, mem —
/// become unreadable to other processes of the same user, its own children included, and it leaves
/// no core dump. A child regains the default at exec. Called once by mend's main(). A process with
/// CAP_SYS_PTRACE (root) can still read them.
Status MakeProcessUndumpable();

/// What RunSubprocess runs and how.
struct SubprocessOptions {
  std::vector<std::string> argv;  ///< argv[0] is looked up in PATH unless it contains a '/'
  std::string cwd;                ///< the child's working directory
  std::string stdin_data;         ///< written to the child's stdin, which is then closed
  std::chrono::milliseconds timeout{60'000};       ///< then the process group is killed
  std::size_t max_output_bytes = 256 * 1024;       ///< per stream; the rest is read and discarded
  StderrMode stderr_mode = StderrMode::kSeparate;  ///< where stderr goes
  ChildLimits limits;                              ///< resource limits of the child
};

/// What a child did: its output and how it ended.
struct SubprocessResult {
  std::string stdout_data;       ///< at most max_output_bytes
  std::string stderr_data;       ///< at most max_output_bytes; empty with kMergeWithStdout
  std::size_t stdout_total = 0;  ///< bytes the child wrote, including the discarded ones
  std::size_t stderr_total = 0;  ///< likewise for stderr
  int exit_code = -1;            ///< when the child exited normally
  int term_signal = 0;           ///< when a signal ended it (SIGKILL after a timeout)
  bool timed_out = false;        ///< killed at the timeout
};

/// Runs a child process to completion and captures its output. The child is started with fork and
/// execvpe; it runs in a process group of its own, with ChildEnvironment(environ) (not the
/// caller's whole environment), options.limits applied before exec, default signal dispositions
/// and an empty signal mask. Its output is drained continuously (beyond the cap
/// it is discarded) and stdin is written without blocking, so a child that floods its output or
/// never reads its input cannot stall the caller. When the timeout passes, the whole process
/// group is killed with SIGKILL and `timed_out` is set. When the child exits, its process group is
/// killed too, so background processes it left behind do not hold the pipes open. When the calling
/// process dies first, the child and what it started get SIGKILL (GuardGroupWhileParentLives).
///
/// A child that exits non-zero is a normal result. Errors: kInvalidArgument for an empty argv;
/// the errno-derived Status (kNotFound for a missing program, kPermissionDenied, ...) when the
/// program cannot be started (the child reports exec's errno through a close-on-exec pipe).
/// Thread-safe: SIGPIPE is blocked in the calling thread while stdin is written, so a child that
/// closes its stdin early does not kill the caller.
Result<SubprocessResult> RunSubprocess(const SubprocessOptions& options);

/// What SpawnChild starts: a child to talk to over its standard streams for as long as the caller
/// wants (an MCP server). Same environment, limits and process group as RunSubprocess, plus
/// `extra_env` ("NAME=VALUE", each replacing a variable of that name). The child is not tied to
/// the caller's death (GuardGroupWhileParentLives) unless the caller's thread is the one that
/// reaps it; it sees end of file on stdin when the caller goes away.
struct SpawnOptions {
  std::vector<std::string> argv;       ///< argv[0] is looked up in PATH unless it contains a '/'
  std::string cwd;                     ///< the working directory
  std::vector<std::string> extra_env;  ///< NAME=VALUE entries added to the environment
  /// The CPU limit is derived from it as for RunSubprocess's timeout; nothing kills the child
  /// when it passes.
  std::chrono::milliseconds lifetime{3'600'000};
  ChildLimits limits;  ///< resource limits of the child
};

/// The parent's ends of a spawned child's pipes: non-blocking and close-on-exec; the caller closes
/// them, and reaps `pid` (whose process group id equals it).
struct SpawnedChild {
  pid_t pid = -1;      ///< the child, leader of its process group
  int stdin_fd = -1;   ///< write end of the child's stdin
  int stdout_fd = -1;  ///< read end of the child's stdout
  int stderr_fd = -1;  ///< read end of the child's stderr
};

/// Starts the child and returns at once. Errors as RunSubprocess's (kInvalidArgument for an empty
/// argv or a malformed extra_env entry, kFailedPrecondition for a missing cwd, the exec errno).
/// The caller must write to stdin_fd with SIGPIPE blocked or ignored.
Result<SpawnedChild> SpawnChild(const SpawnOptions& options);

}  // namespace mend
