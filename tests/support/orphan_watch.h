#pragma once

// Kills a stand-in for a mend process while a child it started is running, and reports whether
// that child ended with it. Waits on events only: the child reports its pid through a FIFO, and
// its end is seen through a pidfd.

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <functional>
#include <string>

namespace mend::testing {

enum class ChildFate { kEnded, kOutlived, kUnsupported, kNoChild };

// Makes the FIFO `fifo` and forks; the forked process calls `start`, which must start a child
// that writes its pid into `fifo` and then keeps running (for example
// `sh -c 'echo $$ > fifo; exec sleep 600'`), and must not return before that child ends. Once the
// pid has arrived, the forked process is killed with SIGKILL. kEnded when the child then ends
// within 30 s (a bound for failures, not a pause), kOutlived (and the child is killed) otherwise;
// kNoChild when no pid arrived.
inline ChildFate KillParentAndWatchChild(const std::string& fifo,
                                         const std::function<void()>& start) {
  if (mkfifo(fifo.c_str(), 0600) != 0) return ChildFate::kNoChild;
  const pid_t parent = fork();
  if (parent < 0) return ChildFate::kNoChild;
  if (parent == 0) {
    start();
    // `start` returned: no child reported a pid (it could not start), so the reader below gets
    // 0 rather than waiting forever for a writer.
    std::ofstream(fifo) << 0;
    _exit(0);
  }
  pid_t child = 0;
  {
    std::ifstream in(fifo);  // opens once the child opens its end
    in >> child;
  }
  const int pidfd = child > 0 ? static_cast<int>(syscall(SYS_pidfd_open, child, 0)) : -1;
  const int pidfd_errno = errno;
  kill(parent, SIGKILL);
  waitpid(parent, nullptr, 0);
  if (child <= 0) return ChildFate::kNoChild;
  if (pidfd < 0) return pidfd_errno == ENOSYS ? ChildFate::kUnsupported : ChildFate::kNoChild;
  pollfd ended{pidfd, POLLIN, 0};
  const int ready = poll(&ended, 1, 30'000);
  close(pidfd);
  if (ready == 1) return ChildFate::kEnded;
  kill(child, SIGKILL);
  return ChildFate::kOutlived;
}

// A shell command that starts a grandchild — a process of the command's process group that the
// command does not wait for — which writes its pid into `fifo` and sleeps; the command itself then
// sleeps too. For KillParentAndWatchChild (the pid it watches is then the grandchild's) and
// GrandchildEnds.
inline std::string SleepingGrandchildCommand(const std::string& fifo) {
  return "sh -c 'echo $$ > \"" + fifo + "\"; exec sleep 600' & exec sleep 600";
}

// Whether process `pid`, which is not a child of the caller, has ended (or ends within 30 s: a
// bound for failures, not a pause); it is killed when it has not.
inline bool EndsWithin30s(pid_t pid) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return errno == ESRCH;
  pollfd ended{pidfd, POLLIN, 0};
  const int ready = poll(&ended, 1, 30'000);
  close(pidfd);
  if (ready == 1) return true;
  kill(pid, SIGKILL);
  return false;
}

}  // namespace mend::testing
