#pragma once

// What the process scenarios of mend_chaos share: running `mend`, the fake server, words that make
// each run's lesson its own, and polling without sleeping for correctness.

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "mend/base/result.h"
#include "tests/chaos/chaos.h"
#include "tests/e2e/child_process.h"

namespace mend::chaos {

// A bound on every single wait, so a hang becomes a problem in the row instead of a stuck run.
inline constexpr std::chrono::seconds kBound(60);

// `prefix`-NN, two digits at least.
std::string Tag(const std::string& prefix, int i);

// Writes `contents` to `path`, replacing it; mode 0600.
Status WriteText(const std::string& path, const std::string& contents);

// The whole file; kNotFound when it cannot be read.
Result<std::string> ReadText(const std::string& path);

// Progress on stderr when options.verbose.
void Say(const ChaosOptions& options, const std::string& line);

// `mend --home <home> --json args...` with `env`, run to completion.
struct MendResult {
  testing::ChildOutput output;
  nlohmann::json json;  // stdout parsed; discarded when it is not JSON
};
Result<MendResult> RunMend(const ChaosOptions& options, const std::string& home,
                           const std::vector<std::string>& env, std::vector<std::string> args,
                           std::chrono::milliseconds timeout = kBound);

// The `mend` argv of RunMend, for children the scenario kills.
std::vector<std::string> MendArgv(const ChaosOptions& options, const std::string& home,
                                  std::vector<std::string> args);

// Starts the fake LLM server with `args` (e.g. --routes FILE).
Result<testing::FakeServerProcess> StartFake(const ChaosOptions& options,
                                             const std::vector<std::string>& args);

// The lesson facts of a home's memory (`mend memory list`), by how many contain each needle.
Result<std::vector<int>> CountFacts(const ChaosOptions& options, const std::string& home,
                                    const std::vector<std::string>& env,
                                    const std::vector<std::string>& needles, int64_t* total);

// Drives every run of `ids` to its end through `home`: `mend recover --once` passes, and `mend
// resume` of a run whose error is not retryable (what a person does once the cause is fixed), until
// none of them is pending or `deadline` passes; then `mend reflect drain`. Polls, never relies on
// timing for correctness. kDeadlineExceeded names the runs still pending. Every run seen failed
// by a failure of its task (TaskFailure) is added to `seen_failed`.
Status Settle(const ChaosOptions& options, const std::string& home,
              const std::vector<std::string>& env, const std::vector<std::string>& ids,
              std::chrono::seconds deadline, int64_t* resumed_by_hand,
              std::set<std::string>* seen_failed);

// Polls `mend pending` through `home` until every run of `ids` is finished or failed for good
// (waiting for a person), adding those failed by a failure of their task to `seen_failed`;
// kDeadlineExceeded after
// `deadline`. For a server that recovers the runs itself.
Status AwaitQuiet(const ChaosOptions& options, const std::string& home,
                  const std::vector<std::string>& env, const std::vector<std::string>& ids,
                  std::chrono::seconds deadline, std::set<std::string>* seen_failed);

// Adds to `seen_failed` the runs `mend pending` lists as failed now by a failure of their task.
Status NoteFailedRuns(const ChaosOptions& options, const std::string& home,
                      const std::vector<std::string>& env, std::set<std::string>* seen_failed);

// True when `error` (a run's error as `mend show` and `mend pending` print it) is a failure of the
// task, the kind reflexion turns into a lesson: class permanent. A provider outage (transient) or a
// rejected key (auth) is not (docs/reflexion.md, "Triggers").
bool TaskFailure(const nlohmann::json& error);

}  // namespace mend::chaos
