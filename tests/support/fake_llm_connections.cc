#include "tests/support/fake_llm_connections.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

namespace mend::testing::fake_llm {
namespace {

// The connection served by this thread: its number, httplib's socket and our duplicate of it.
struct ThreadConnection {
  int id = 0;
  int socket = -1;
  int duplicate = -1;
};
thread_local ThreadConnection t_connection;

int PortOf(int (*name_of)(int, sockaddr*, socklen_t*), int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  if (name_of(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.sin_family != AF_INET) return -1;
  return ntohs(addr.sin_port);
}

// httplib does not hand the socket to handlers, so it is looked up among the process's open
// descriptors: the one whose local and peer ports are those of the request.
int FindSocket(int local_port, int remote_port) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int found = -1;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    int fd = std::atoi(entry->d_name);
    if (PortOf(getsockname, fd) == local_port && PortOf(getpeername, fd) == remote_port) {
      found = fd;
      break;
    }
  }
  closedir(dir);
  return found;
}

// A peer that closes early makes send() raise SIGPIPE; on server threads that must be an error
// return instead, without changing the disposition for the whole process.
void BlockSigpipe() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace

class Connections::Queue : public httplib::TaskQueue {
 public:
  Queue(Connections* owner, size_t threads) : owner_(owner), pool_(threads) {}

  void enqueue(std::function<void()> fn) override {
    int id = ++owner_->next_id_;
    pool_.enqueue([this, id, fn = std::move(fn)] { owner_->Serve(id, fn); });
  }
  void shutdown() override { pool_.shutdown(); }

 private:
  Connections* owner_;
  httplib::ThreadPool pool_;
};

Connections::~Connections() {
  std::lock_guard<std::mutex> lock(mu_);
  for (int fd : open_) close(fd);
}

httplib::TaskQueue* Connections::NewTaskQueue(size_t threads) { return new Queue(this, threads); }

int Connections::CurrentId() { return t_connection.id; }

void Connections::Serve(int id, const std::function<void()>& task) {
  BlockSigpipe();
  t_connection = ThreadConnection{id, -1, -1};
  task();
  if (t_connection.duplicate >= 0) {
    std::lock_guard<std::mutex> lock(mu_);
    open_.erase(t_connection.duplicate);
    close(t_connection.duplicate);
  }
  t_connection = ThreadConnection{};
}

void Connections::Attach(int local_port, int remote_port) {
  if (t_connection.socket >= 0 || t_connection.id == 0) return;
  int fd = FindSocket(local_port, remote_port);
  if (fd < 0) return;
  int duplicate = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (duplicate < 0) return;
  t_connection.socket = fd;
  t_connection.duplicate = duplicate;
  std::lock_guard<std::mutex> lock(mu_);
  open_.insert(duplicate);
  if (closing_) shutdown(duplicate, SHUT_RDWR);
}

void Connections::Drop() {
  if (t_connection.socket < 0) return;
  shutdown(t_connection.duplicate, SHUT_RDWR);
  // httplib still writes its response to its descriptor and then closes it; pointing that
  // descriptor at /dev/null makes both harmless while our duplicate keeps the socket closed.
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) return;
  dup2(devnull, t_connection.socket);
  close(devnull);
}

void Connections::SendAndDrop(std::string_view bytes) {
  if (t_connection.socket < 0) return;
  while (!bytes.empty()) {
    ssize_t n = send(t_connection.duplicate, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) break;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  Drop();
}

void Connections::CloseAll() {
  std::lock_guard<std::mutex> lock(mu_);
  closing_ = true;
  for (int fd : open_) shutdown(fd, SHUT_RDWR);
}

}  // namespace mend::testing::fake_llm
