#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "mend/store/sqlite_store.h"

namespace mend::store {
namespace {

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

std::string BootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!in || !std::getline(in, id)) return "";
  return id;
}

}  // namespace

LeaseHolder LocalLeaseHolder(const std::string& id_prefix) {
  LeaseHolder holder;
  holder.host = HostName();
  holder.boot_id = BootId();
  holder.pid = static_cast<int64_t>(getpid());
  std::string who = id_prefix.empty() ? "pid" : id_prefix;
  holder.id = who + "-" + std::to_string(holder.pid) + "@" + holder.host;
  return holder;
}

bool ProcessAlive(int64_t pid) {
  if (pid <= 0) return true;  // unknown: never treat as gone
  if (kill(static_cast<pid_t>(pid), 0) == 0) return true;
  return errno != ESRCH;
}

}  // namespace mend::store
