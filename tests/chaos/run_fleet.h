#pragma once

// The runs the process scenarios drive: one agent folder whose only tool appends a marker to a
// log in its workspace, and a routes file for the fake LLM server that answers each run by where
// its conversation stands, so a run killed or failed at any point gets the right next turn when it
// is resumed. Every run takes three model turns: two calls of the tool, then its final answer.
// Faults scripted for a turn are answered before its good response, in order.

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "mend/base/result.h"
#include "tests/chaos/chaos.h"
#include "tests/e2e/child_process.h"

namespace mend::chaos {

inline constexpr int kTurns = 3;

struct RunPlan {
  std::string id;  // also in its task, which the routes match on
  std::array<std::vector<nlohmann::json>, kTurns> faults;
  // Whether a fault above leaves the run failed for good (400, 401) until a person resumes it.
  bool permanent = false;
  int FaultCount() const;
};

// A random provider fault as a fake server response; `permanent` says whether it is 400 or 401.
// Transient ones: 429 with Retry-After, 500, 503, a proxy's 502 HTML page, a truncated body, a
// dropped connection, a body that is not JSON, an empty body, an answer later than the request
// timeout (`timeout_ms` from now: ChaosEnv sets provider.timeout to 1 s).
nlohmann::json RandomFault(std::mt19937& rng, bool allow_permanent, bool* permanent);

// `count` runs named `prefix`-NN. Each, with probability `fault_share`, fails once on its second
// turn on a RandomFault (400 and 401 included): a lesson to learn, and a failed run for recovery
// or a person. Adds the faults to `*faults`.
std::vector<RunPlan> PlansWithOccasionalFault(std::mt19937& rng, const std::string& prefix,
                                              int count, double fault_share, int64_t* faults);

class RunFleet {
 public:
  // Writes the agent folder (`dir`/agent) and the routes (`dir`/routes.json). `latency_ms` is the
  // delay of every good answer and `tool_ms` how long each tool call takes, so kills land inside
  // model requests and tool calls.
  static Result<RunFleet> Create(const std::string& dir, std::vector<RunPlan> plans, int latency_ms,
                                 int tool_ms);

  const std::string& agent_dir() const { return agent_dir_; }
  const std::string& routes_path() const { return routes_path_; }
  const std::vector<RunPlan>& plans() const { return plans_; }
  std::string Task(const RunPlan& plan) const { return "Carry out job " + plan.id + "."; }

  // The environment of every mend process: the fake server at `base_url`, short timeouts and
  // recovery intervals, and `extra` entries.
  std::vector<std::string> Env(const std::string& home_root, const std::string& base_url,
                               const std::vector<std::string>& extra = {}) const;

  // Checks the end state through `home` (after the scenario drove every run to the end and
  // drained the lessons) and fills the row's runs_completed, lessons_stored, lost, duplicated and
  // problems. A tool call may run again only when a kill hit it in flight; a run makes one call at
  // a time, so each run's calls run again at most `kills` times in all. `event_logs` are the
  // events.jsonl files of every home that ran the runs: a run with a `run.failed` event there must
  // have exactly one lesson; one whose scripted fault went to a request a kill cut short may have
  // one or none (the hooks may have seen the failure before the kill); one without faults none.
  // `seen_failed` adds the runs the scenario saw recorded as failed at rest (a kill can come
  // between that record and the event).
  Status Verify(const ChaosOptions& options, const std::string& home,
                const std::vector<std::string>& env, int64_t kills,
                const std::vector<std::string>& event_logs,
                const std::set<std::string>& seen_failed, ChaosRow* row) const;

 private:
  RunFleet() = default;
  std::string dir_;
  std::string agent_dir_;
  std::string routes_path_;
  std::vector<RunPlan> plans_;
};

// A fleet, the fake LLM server answering its routes (it runs as long as this lives) and the
// environment of every mend process on it.
struct ServedFleet {
  RunFleet fleet;
  testing::FakeServerProcess fake;
  std::vector<std::string> env;
};

// RunFleet::Create in options.work_dir, the fake server on its routes, and RunFleet::Env with the
// work folder as HOME, the server's URL and `extra_env`.
Result<ServedFleet> StartFleet(const ChaosOptions& options, std::vector<RunPlan> plans,
                               int latency_ms, int tool_ms,
                               const std::vector<std::string>& extra_env = {});

}  // namespace mend::chaos
