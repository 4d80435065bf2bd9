#include "tests/chaos/serve_fleet.h"

#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/chaos/chaos_util.h"

namespace mend::chaos {

ServeFleet::ServeFleet(const ChaosOptions& options, std::vector<std::string> env, int count,
                       bool shared_home)
    : options_(options), env_(std::move(env)), shared_home_(shared_home), replicas_(count) {}

ServeFleet::~ServeFleet() {
  for (Replica& r : replicas_) r.process.reset();  // SIGKILL and reap what still runs
}

std::string ServeFleet::Home(int k) const {
  return options_.work_dir + (shared_home_ ? std::string("/home") : "/home-r" + std::to_string(k));
}

std::string ServeFleet::Log(int k) const {
  return options_.work_dir + "/serve-" + std::to_string(k) + ".log";
}

std::vector<std::string> ServeFleet::EventLogs() const {
  if (shared_home_) return {Home(0) + "/events.jsonl"};
  std::vector<std::string> logs;
  for (int k = 0; k < count(); ++k) logs.push_back(Home(k) + "/events.jsonl");
  return logs;
}

Status ServeFleet::Start(int k) {
  Replica& r = replicas_[k];
  auto before = ReadText(Log(k));
  r.log_offset = before.ok() ? before->size() : 0;
  std::vector<std::string> argv = {"/bin/sh", "-c", "log=$1; shift; exec \"$@\" >>\"$log\" 2>&1",
                                   "sh", Log(k)};
  for (const std::string& arg : MendArgv(options_, Home(k), {"serve", "--listen", "127.0.0.1:0"})) {
    if (arg != "--json") argv.push_back(arg);
  }
  MEND_ASSIGN_OR_RETURN(r.process, testing::ChildProcess::Spawn(argv, env_));
  // Its first line says where it listens: poll the log for it.
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  const std::string marker = "listening on http://127.0.0.1:";
  while (std::chrono::steady_clock::now() < deadline) {
    auto log = ReadText(Log(k));
    if (log.ok() && log->size() > r.log_offset) {
      const size_t at = log->find(marker, r.log_offset);
      if (at != std::string::npos) {
        r.port = std::atoi(log->c_str() + at + marker.size());
        if (r.port > 0) return OkStatus();
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return DeadlineExceededError("replica " + std::to_string(k) + " did not start: " + LogTails());
}

Result<bool> ServeFleet::KillAndRestart(int k) {
  Replica& r = replicas_[k];
  bool alive = false;
  if (r.process != nullptr) {
    alive = r.process->Kill(SIGKILL).ok();
    MEND_ASSIGN_OR_RETURN(testing::ChildOutput out, r.process->Finish(kBound));
    alive = alive && !out.status.exited && out.status.signal == SIGKILL;
    r.process.reset();
  }
  MEND_RETURN_IF_ERROR(Start(k));
  return alive;
}

Status ServeFleet::StopAll() {
  for (Replica& r : replicas_) {
    if (r.process == nullptr) continue;
    r.process->Kill(SIGTERM).IgnoreError();
  }
  for (Replica& r : replicas_) {
    if (r.process == nullptr) continue;
    MEND_ASSIGN_OR_RETURN(testing::ChildOutput out, r.process->Finish(kBound));
    (void)out;
    r.process.reset();
  }
  return OkStatus();
}

Status ServeFleet::Finish(const std::string& home, const std::vector<std::string>& ids,
                          ChaosRow* row, std::set<std::string>* seen_failed,
                          int64_t* resumed_by_hand) {
  const Status quiet =
      AwaitQuiet(options_, home, env_, ids, std::chrono::seconds(90 * options_.scale), seen_failed);
  if (!quiet.ok()) row->problems.push_back("the servers did not finish: " + quiet.ToString());
  MEND_RETURN_IF_ERROR(StopAll());
  const Status settled =
      Settle(options_, home, env_, ids, std::chrono::seconds(60 * options_.scale), resumed_by_hand,
             seen_failed);
  if (!settled.ok()) row->problems.push_back(settled.ToString());
  return OkStatus();
}

Status ServeFleet::Submit(int k, const std::string& agent, const std::string& task,
                          const std::string& id) {
  httplib::Client client("127.0.0.1", replicas_[k].port);
  client.set_connection_timeout(std::chrono::seconds(5));
  client.set_read_timeout(std::chrono::seconds(30));
  const nlohmann::json body = {{"agent", agent}, {"task", task}, {"id", id}};
  auto res = client.Post("/api/v1/runs", body.dump(), "application/json");
  if (!res) {
    return UnavailableError("replica " + std::to_string(k) + ": " +
                            httplib::to_string(res.error()));
  }
  if (res->status == 202 || res->status == 409) return OkStatus();
  return InternalError("POST /api/v1/runs " + id + ": " + std::to_string(res->status) + " " +
                       res->body);
}

std::string ServeFleet::LogTails() const {
  std::string all;
  for (int k = 0; k < count(); ++k) {
    auto log = ReadText(Log(k));
    std::string text = log.ok() ? *log : "";
    if (text.size() > 1500) text = text.substr(text.size() - 1500);
    all += "--- replica " + std::to_string(k) + "\n" + text + "\n";
  }
  return all;
}

}  // namespace mend::chaos
