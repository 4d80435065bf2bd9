// The durable lesson queue's costs, each next to a reference measured in the same run;
// bench/run_lessonq_bench prints them as a table.
//
//   mend_lessonq_bench DIR [ENQUEUES REPLAY_RECORDS]
//
// DIR must be on the disk being measured (not tmpfs). Figures:
//   - enqueue latency p50/p99 against a raw tmp+write+fsync+rename+dir-fsync loop writing the same
//     record bytes in the same directory (goal: at most 1.2x);
//   - enqueue throughput of 8 concurrent producers against 1 (goal: at least 2x), with the raw
//     loop's 8-thread throughput as the reference for what sharing directory syncs buys;
//   - the reflexion post-run hook on a run that matches no trigger (goal: under 1 µs);
//   - replay of REPLAY_RECORDS records at start (goal: at most 1 s for 10k), next to reading the
//     same files raw.
// Prints one JSON object on stdout; errors go to stderr with exit status 1.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mend/agent/hooks.h"
#include "mend/base/env.h"
#include "mend/lessonq/lesson_queue.h"
#include "mend/lessonq/wal_codec.h"
#include "mend/reflexion/hooks.h"

namespace mend::lessonq {
namespace {

using Micros = std::chrono::duration<double, std::micro>;
using std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& what, const Status& status) {
  std::fprintf(stderr, "lessonq_bench: %s: %s\n", what.c_str(), status.ToString().c_str());
  std::exit(1);
}

LessonRequest RequestFor(const std::string& tag, int i) {
  LessonRequest request;
  request.task = "Edit the large Go file number " + std::to_string(i) + " in " + tag;
  request.attempt = std::string(600, 'a') + " rewrote the whole file at once";
  request.outcome = "ERROR: file too large (" + std::to_string(i) + ")";
  request.trigger = "error";
  return request;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t at = static_cast<size_t>(p * static_cast<double>(values.size() - 1));
  return values[at];
}

std::unique_ptr<LessonQueue> OpenQueue(const std::string& dir) {
  QueueOptions options;
  options.base_dir = dir;
  options.stale_after = std::chrono::hours(24 * 365);
  options.max_attempts = 1000;
  auto queue = LessonQueue::Open(Env::Default(), options, nullptr);
  if (!queue.ok()) Die("open " + dir, queue.status());
  return std::move(queue).value();
}

// The reference: what one crash-safe file write costs with nothing shared.
void RawWrite(const std::string& dir, const std::string& name, const std::string& bytes) {
  const std::string tmp = dir + "/.tmp." + name;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || ::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()) ||
      ::fsync(fd) != 0 || ::close(fd) != 0 ||
      ::rename(tmp.c_str(), (dir + "/" + name).c_str()) != 0) {
    Die("raw write " + tmp, InternalError("system call failed"));
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || ::fsync(dfd) != 0 || ::close(dfd) != 0) {
    Die("raw dir fsync " + dir, InternalError("system call failed"));
  }
}

std::string RecordBytes(const LessonRequest& request) {
  Job job;
  job.request = request;
  job.id = JobIdFor(request);
  job.enqueued_at = job.next_attempt_at = SystemClock::Default()->Now();
  auto bytes = EncodeWalRecord(job);
  if (!bytes.ok()) Die("encode", bytes.status());
  return *bytes;
}

struct Latency {
  std::vector<double> mend_us;
  std::vector<double> raw_us;
};

// Alternates blocks of enqueues and raw writes so that both see the same disk conditions.
Latency MeasureLatency(const std::string& root, int n) {
  std::filesystem::create_directories(root + "/raw");
  std::unique_ptr<LessonQueue> queue = OpenQueue(root + "/queue");
  Latency latency;
  const int blocks = 4;
  for (int b = 0; b < blocks; ++b) {
    for (int i = b * n / blocks; i < (b + 1) * n / blocks; ++i) {
      const LessonRequest request = RequestFor("latency", i);
      const std::string bytes = RecordBytes(request);
      const auto start = steady_clock::now();
      RawWrite(root + "/raw", std::to_string(i) + ".wal", bytes);
      latency.raw_us.push_back(Micros(steady_clock::now() - start).count());
    }
    for (int i = b * n / blocks; i < (b + 1) * n / blocks; ++i) {
      const LessonRequest request = RequestFor("latency", i);
      const auto start = steady_clock::now();
      auto result = queue->Enqueue(request);
      latency.mend_us.push_back(Micros(steady_clock::now() - start).count());
      if (!result.ok()) Die("enqueue", result.status());
    }
  }
  return latency;
}

// Jobs per second of `threads` producers sharing `n` enqueues (raw: the reference loop).
double Throughput(const std::string& dir, int threads, int n, bool raw) {
  std::filesystem::create_directories(dir);
  std::unique_ptr<LessonQueue> queue = raw ? nullptr : OpenQueue(dir);
  std::atomic<int> next{0};
  const auto start = steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (int i = next++; i < n; i = next++) {
        const LessonRequest request = RequestFor(dir, i);
        if (raw) {
          RawWrite(dir, std::to_string(i) + ".wal", RecordBytes(request));
        } else if (auto result = queue->Enqueue(request); !result.ok()) {
          Die("enqueue", result.status());
        }
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  return n / std::chrono::duration<double>(steady_clock::now() - start).count();
}

// Nanoseconds per AfterRun of the reflexion hook on a completed run without flags.
double HookNanos() {
  class NeverEnqueuer final : public LessonEnqueuer {
   public:
    Result<EnqueueResult> Enqueue(const LessonRequest&) override {
      return InternalError("a run without a trigger must not enqueue");
    }
  } enqueuer;
  reflexion::ReflexionHook hook(reflexion::TriggerOptions{}, enqueuer);
  agent::RunInfo info;
  info.task = "summarise the notes";
  agent::RunOutcome outcome;
  outcome.run = &info;
  outcome.output = "done";
  constexpr int kCalls = 5'000'000;
  const auto start = steady_clock::now();
  for (int i = 0; i < kCalls; ++i) {
    Status s = hook.AfterRun(outcome);
    if (!s.ok()) Die("hook", s);
  }
  return std::chrono::duration<double, std::nano>(steady_clock::now() - start).count() / kCalls;
}

struct Replay {
  double start_ms = 0;
  double raw_read_ms = 0;
};

// Writes `n` records without syncing (setup only), then times a queue start that replays them
// against reading the same files raw.
Replay MeasureReplay(const std::string& root, int n) {
  const std::string wal = root + "/wal";
  std::filesystem::create_directories(wal);
  for (int i = 0; i < n; ++i) {
    const LessonRequest request = RequestFor("replay", i);
    std::ofstream(wal + "/" + JobIdFor(request) + ".wal", std::ios::binary) << RecordBytes(request);
  }
  Replay replay;
  auto start = steady_clock::now();
  size_t bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(wal)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes += data.size();
  }
  replay.raw_read_ms =
      std::chrono::duration<double, std::milli>(steady_clock::now() - start).count();
  if (bytes == 0) Die("replay setup", InternalError("no records written"));

  std::unique_ptr<LessonQueue> queue = OpenQueue(root);
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  // Workers hold their first jobs until the measurement is over, then give them back as transient
  // failures, so nothing is acknowledged.
  start = steady_clock::now();
  Status started = queue->Start([&](const Job&, const JobContext&) -> Result<ProcessResult> {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
    return UnavailableError("benchmark: not processing");
  });
  replay.start_ms = std::chrono::duration<double, std::milli>(steady_clock::now() - start).count();
  if (!started.ok()) Die("start", started);
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  (void)queue->Shutdown(std::chrono::seconds(10));
  return replay;
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mend_lessonq_bench DIR [ENQUEUES REPLAY_RECORDS]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int n = argc > 2 ? std::atoi(argv[2]) : 2000;
  const int replay_records = argc > 3 ? std::atoi(argv[3]) : 10000;
  std::filesystem::remove_all(dir);
  std::fprintf(stderr, "enqueue latency: %d enqueues and %d raw writes\n", n, n);
  const Latency latency = MeasureLatency(dir + "/latency", n);
  std::fprintf(stderr, "throughput: 1 and 8 producers\n");
  const double one = Throughput(dir + "/one", 1, n, false);
  const double eight = Throughput(dir + "/eight", 8, n, false);
  const double raw_one = Throughput(dir + "/raw_one", 1, n, true);
  const double raw_eight = Throughput(dir + "/raw_eight", 8, n, true);
  std::fprintf(stderr, "post-run hook without a trigger\n");
  const double hook_ns = HookNanos();
  std::fprintf(stderr, "replay of %d records\n", replay_records);
  const Replay replay = MeasureReplay(dir + "/replay", replay_records);
  std::printf(
      "{\"enqueue\":{\"n\":%d,\"p50_us\":%.1f,\"p99_us\":%.1f,\"raw_p50_us\":%.1f,"
      "\"raw_p99_us\":%.1f},\"throughput\":{\"one\":%.0f,\"eight\":%.0f,\"raw_one\":%.0f,"
      "\"raw_eight\":%.0f},\"hook_ns\":%.1f,\"replay\":{\"records\":%d,\"start_ms\":%.1f,"
      "\"raw_read_ms\":%.1f}}\n",
      n, Percentile(latency.mend_us, 0.5), Percentile(latency.mend_us, 0.99),
      Percentile(latency.raw_us, 0.5), Percentile(latency.raw_us, 0.99), one, eight, raw_one,
      raw_eight, hook_ns, replay_records, replay.start_ms, replay.raw_read_ms);
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace mend::lessonq

int main(int argc, char** argv) { return mend::lessonq::Main(argc, argv); }
