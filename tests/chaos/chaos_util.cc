#include "tests/chaos/chaos_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/mend_command.h"

namespace mend::chaos {

std::string Tag(const std::string& prefix, int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%02d", i);
  return prefix + "-" + buf;
}

Status WriteText(const std::string& path, const std::string& contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoToStatus(errno, "open " + path);
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return ErrnoToStatus(err, "write " + path);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return ErrnoToStatus(errno, "close " + path);
  return OkStatus();
}

Result<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot read " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void Say(const ChaosOptions& options, const std::string& line) {
  if (options.verbose) std::cerr << "chaos: " << line << "\n";
}

std::vector<std::string> MendArgv(const ChaosOptions& options, const std::string& home,
                                  std::vector<std::string> args) {
  args.insert(args.begin(), "--json");
  return testing::MendArgv(options.mend_binary, home, args);
}

Result<MendResult> RunMend(const ChaosOptions& options, const std::string& home,
                           const std::vector<std::string>& env, std::vector<std::string> args,
                           std::chrono::milliseconds timeout) {
  auto output = testing::RunProcess(MendArgv(options, home, std::move(args)), env, timeout);
  if (!output.ok()) return output.status();
  MendResult result;
  result.output = std::move(*output);
  result.json = nlohmann::json::parse(result.output.out, nullptr, false);
  if (result.json.is_discarded()) result.json = nullptr;
  return result;
}

Result<testing::FakeServerProcess> StartFake(const ChaosOptions& options,
                                             const std::vector<std::string>& args) {
  return testing::StartFakeServer(options.fake_server_binary, args, kBound);
}

Result<std::vector<int>> CountFacts(const ChaosOptions& options, const std::string& home,
                                    const std::vector<std::string>& env,
                                    const std::vector<std::string>& needles, int64_t* total) {
  auto listed = RunMend(options, home, env, {"memory", "list"});
  if (!listed.ok()) return listed.status();
  if (!listed->json.is_object() || !listed->json.contains("facts")) {
    return InternalError("mend memory list: " + listed->output.err + listed->output.out);
  }
  std::vector<int> counts(needles.size(), 0);
  *total = 0;
  for (const nlohmann::json& fact : listed->json["facts"]) {
    ++*total;
    const std::string content = fact.value("content", "");
    for (size_t i = 0; i < needles.size(); ++i) {
      if (content.find(needles[i]) != std::string::npos) ++counts[i];
    }
  }
  return counts;
}

// The runs `mend pending` lists: one page of 1,000, more than a scenario starts at --scale 100.
Result<nlohmann::json> PendingRuns(const ChaosOptions& options, const std::string& home,
                                   const std::vector<std::string>& env) {
  auto pending = RunMend(options, home, env, {"pending", "--limit", "1000"});
  if (!pending.ok()) return pending.status();
  if (!pending->json.is_object() || !pending->json.contains("runs")) {
    return InternalError("mend pending: " + pending->output.err + pending->output.out);
  }
  return pending->json["runs"];
}

Status NoteFailedRuns(const ChaosOptions& options, const std::string& home,
                      const std::vector<std::string>& env, std::set<std::string>* seen_failed) {
  MEND_ASSIGN_OR_RETURN(const nlohmann::json runs, PendingRuns(options, home, env));
  for (const nlohmann::json& run : runs) {
    if (run.value("status", "") == "failed" && TaskFailure(run["last_error"])) {
      seen_failed->insert(run.value("id", ""));
    }
  }
  return OkStatus();
}

bool TaskFailure(const nlohmann::json& error) {
  return error.is_object() && error.value("class", "") == "permanent";
}

Status AwaitQuiet(const ChaosOptions& options, const std::string& home,
                  const std::vector<std::string>& env, const std::vector<std::string>& ids,
                  std::chrono::seconds deadline, std::set<std::string>* seen_failed) {
  const std::set<std::string> wanted(ids.begin(), ids.end());
  const auto end = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    MEND_ASSIGN_OR_RETURN(const nlohmann::json runs, PendingRuns(options, home, env));
    int busy = 0;
    for (const nlohmann::json& run : runs) {
      const std::string id = run.value("id", "");
      if (wanted.count(id) == 0) continue;
      const bool failed = run.value("status", "") == "failed";
      const nlohmann::json& error = run["last_error"];
      if (failed && TaskFailure(error)) seen_failed->insert(id);
      const bool for_good = failed && error.is_object() && !error.value("retryable", true);
      if (!for_good) ++busy;
    }
    if (busy == 0) return OkStatus();
    if (std::chrono::steady_clock::now() > end) {
      return DeadlineExceededError(std::to_string(busy) + " runs still unfinished after " +
                                   std::to_string(deadline.count()) + " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // polling only
  }
}

Status Settle(const ChaosOptions& options, const std::string& home,
              const std::vector<std::string>& env, const std::vector<std::string>& ids,
              std::chrono::seconds deadline, int64_t* resumed_by_hand,
              std::set<std::string>* seen_failed) {
  const std::set<std::string> wanted(ids.begin(), ids.end());
  const auto end = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    MEND_ASSIGN_OR_RETURN(const nlohmann::json runs, PendingRuns(options, home, env));
    std::vector<std::string> left;
    std::vector<std::string> stuck;
    for (const nlohmann::json& run : runs) {
      const std::string id = run.value("id", "");
      if (wanted.count(id) == 0) continue;
      left.push_back(id);
      const nlohmann::json& error = run["last_error"];
      if (run.value("status", "") == "failed" && TaskFailure(error)) seen_failed->insert(id);
      if (run.value("status", "") == "failed" && error.is_object() &&
          !error.value("retryable", true)) {
        stuck.push_back(id);
      }
    }
    if (left.empty()) break;
    if (std::chrono::steady_clock::now() > end) {
      std::string names;
      for (const std::string& id : left) names += " " + id;
      return DeadlineExceededError("still pending after " + std::to_string(deadline.count()) +
                                   " s:" + names);
    }
    for (const std::string& id : stuck) {
      Say(options, "resuming " + id + " by hand (its error is not retryable)");
      auto resumed = RunMend(options, home, env, {"resume", id});
      if (!resumed.ok()) return resumed.status();
      ++*resumed_by_hand;
    }
    auto pass = RunMend(options, home, env, {"recover", "--once"});
    if (!pass.ok()) return pass.status();
    if (stuck.empty() && pass->json.is_object() && pass->json["resumed"].empty()) {
      // Every pending run is in backoff: wait for the earliest (polling, 100 ms apart).
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  auto drained = RunMend(options, home, env, {"reflect", "drain"});
  if (!drained.ok()) return drained.status();
  if (!drained->output.status.exited || drained->output.status.code != 0) {
    return InternalError("mend reflect drain: " + drained->output.err);
  }
  return OkStatus();
}

}  // namespace mend::chaos
