#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <set>
#include <string_view>

namespace httplib {
class TaskQueue;
}

namespace mend::testing::fake_llm {

// The TCP connections of one fake server. httplib serves each accepted connection as one task of
// its queue, on one thread from start to close; the queue made here numbers those tasks, so the
// calling thread always knows which connection it serves. The raw socket of a connection is found
// on its first request (by its local and remote port) and kept through a duplicate descriptor, so
// that faults can write bytes httplib would never write and stopping can close idle keep-alive
// connections at once. Thread-safe.
class Connections {
 public:
  Connections() = default;
  ~Connections();
  Connections(const Connections&) = delete;
  Connections& operator=(const Connections&) = delete;

  // A queue of `threads` workers for httplib::Server::new_task_queue; httplib owns it.
  httplib::TaskQueue* NewTaskQueue(size_t threads);

  // The id of the connection served by the calling thread (1, 2, ...); 0 off the server's threads.
  static int CurrentId();
  int count() const { return next_id_.load(); }

  // Finds the socket of the calling thread's connection, which carries a request from
  // `remote_port` to `local_port`. Call on every request; the search runs once per connection.
  void Attach(int local_port, int remote_port);

  // Closes the calling thread's connection without answering; whatever httplib writes afterwards
  // goes nowhere. No effect when the socket was not found.
  void Drop();
  // Sends `bytes` verbatim on the calling thread's connection, then drops it.
  void SendAndDrop(std::string_view bytes);

  // Shuts down every open connection and every later one (when the server stops).
  void CloseAll();

 private:
  class Queue;
  void Serve(int id, const std::function<void()>& task);

  std::atomic<int> next_id_{0};
  std::mutex mu_;
  std::set<int> open_;  // duplicates of the sockets of live connections
  bool closing_ = false;
};

}  // namespace mend::testing::fake_llm
