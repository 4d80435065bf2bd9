// The routes that drive runs (docs/http_api.md, "Runs"): start, resume, approve, deny, answer and
// fork. Everything a client can get wrong is checked before the answer (400, 404, 409), then the
// run continues on the server's run threads (BackgroundRuns) and the answer is 202; a run stops at
// its next checkpoint when the server drains (AgentOptions::stop).
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "mend/agent/agent.h"
#include "mend/app/runtime.h"
#include "mend/base/time_format.h"
#include "mend/obs/events.h"
#include "server/api.h"
#include "server/api_runs.h"
#include "server/serve_context.h"

namespace mend::server::runs {
namespace {

using nlohmann::json;

using Drive = std::function<Result<agent::RunResult>(agent::Agent&)>;

// A run driven here that returned an error of mend itself (not a failed run, which the run's
// record shows) is told on the event bus: nobody waits for the answer any more.
void ReportDriveError(app::Runtime& runtime, const std::string& run_id, std::string_view action,
                      const Status& error) {
  if (error.ok() || runtime.events == nullptr) return;
  obs::Event e("serve.run_error");
  e.AddString("run", run_id)
      .AddString("action", action)
      .AddString("code", StatusCodeName(error.code()))
      .AddString("error", error.message());
  runtime.events->Publish(std::move(e));
}

// Drives run `run_id` with `agent` on a run thread. kAlreadyExists when this server drives it
// already, kUnavailable while the server shuts down.
Status DriveInBackground(ServeContext& context, const std::string& run_id, std::string action,
                         std::unique_ptr<agent::Agent> agent, Drive drive) {
  std::shared_ptr<agent::Agent> shared = std::move(agent);
  return context.runs().Start(
      run_id, [&context, run_id, action = std::move(action), shared, drive = std::move(drive)] {
        Result<agent::RunResult> result = drive(*shared);
        ReportDriveError(context.runtime(), run_id, action, result.status());
      });
}

ApiResponse Accepted(const std::string& run_id) {
  return ApiResponse(json{{"run_id", run_id}, {"status", "running"}}, 202);
}

// Set once: by Send when the run's record exists, or by Send's end when it failed before.
class Creation {
 public:
  void Set(const Status& status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.has_value()) return;
    status_ = status;
    set_.notify_all();
  }
  Status Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    set_.wait(lock, [this] { return status_.has_value(); });
    return *status_;
  }

 private:
  std::mutex mu_;
  std::condition_variable set_;
  std::optional<Status> status_;
};

// POST /api/v1/runs {"agent","task","id"?}: the run exists when the answer arrives.
Result<ApiResponse> StartRun(ServeContext& context, const ApiRequest& request) {
  MEND_ASSIGN_OR_RETURN(std::string name, request.BodyString("agent"));
  MEND_ASSIGN_OR_RETURN(std::string task, request.BodyString("task"));
  MEND_ASSIGN_OR_RETURN(std::string run_id, request.OptionalBodyString("id"));
  if (!run_id.empty()) {
    MEND_RETURN_IF_ERROR(CheckRunId(run_id));
  }
  MEND_ASSIGN_OR_RETURN(std::string dir, AgentDirOf(context, name));
  app::Runtime& runtime = context.runtime();
  if (run_id.empty()) run_id = agent::NewRunId(runtime.env);
  if (runtime.store->GetRun(run_id).ok()) return AlreadyExistsError("run " + run_id + " exists");
  MEND_ASSIGN_OR_RETURN(
      std::unique_ptr<agent::Agent> agent,
      app::OpenAgent(runtime, dir, app::ProviderUse::kDrivesRuns, &context.runs().stopping()));
  auto created = std::make_shared<Creation>();
  MEND_RETURN_IF_ERROR(DriveInBackground(
      context, run_id, "start", std::move(agent),
      [run_id, task = std::move(task), created](agent::Agent& a) {
        agent::SendOptions options;
        options.run_id = run_id;
        options.on_created = [created](const std::string&) { created->Set(OkStatus()); };
        Result<agent::RunResult> result = a.Send(task, options);
        created->Set(result.status());  // no effect once the run was created
        return result;
      }));
  MEND_RETURN_IF_ERROR(created->Wait());
  return Accepted(run_id);
}

// kFailedPrecondition while another holder (a `mend resume`, recovery, another replica) has the
// run's lease; a lease left by a killed process on this host counts until it expires.
Status CheckNotLeased(app::Runtime& runtime, const store::RunRecord& run) {
  if (!run.lease_holder.has_value() || !run.lease_expires_at.has_value()) return OkStatus();
  if (*run.lease_expires_at <= runtime.env.clock->Now()) return OkStatus();
  return FailedPreconditionError("run " + run.id + " is being driven by " + run.lease_holder->id +
                                 " (lease until " + FormatRfc3339Seconds(*run.lease_expires_at) +
                                 ")");
}

// Why `action` does not apply to `run` as it is now (kFailedPrecondition), or OK.
Status CheckState(const store::RunRecord& run, std::string_view action) {
  const bool waiting = run.status == store::RunStatus::kWaiting;
  if (action == "resume") {
    if (run.status == store::RunStatus::kCompleted) {
      return FailedPreconditionError("run " + run.id + " is completed");
    }
    if (!waiting) return OkStatus();
    return FailedPreconditionError("run " + run.id +
                                   (run.waiting == "question"
                                        ? " is waiting for an answer; use answer"
                                        : " is waiting for approval; use approve or deny"));
  }
  const std::string_view kind = action == "answer" ? "question" : "approval";
  if (waiting && run.waiting == kind) return OkStatus();
  return FailedPreconditionError(
      "run " + run.id + " is " + std::string(store::RunStatusName(run.status)) +
      ", not waiting for " + (kind == "question" ? "an answer" : "approval"));
}

// POST /api/v1/runs/{id}/{resume,approve,deny,answer}.
Result<ApiResponse> ContinueRun(ServeContext& context, const ApiRequest& request,
                                const std::string& action) {
  const std::string& run_id = request.params.at(0);
  std::string text;
  if (action == "answer") {
    MEND_ASSIGN_OR_RETURN(text, request.BodyString("text"));
  } else if (action == "deny") {
    MEND_ASSIGN_OR_RETURN(text, request.OptionalBodyString("reason"));
  }
  app::Runtime& runtime = context.runtime();
  MEND_ASSIGN_OR_RETURN(store::RunRecord run, app::FindRun(runtime, run_id));
  if (context.runs().IsDriving(run_id)) {
    return AlreadyExistsError("run " + run_id + " is already being driven by this server");
  }
  MEND_RETURN_IF_ERROR(CheckState(run, action));
  MEND_RETURN_IF_ERROR(CheckNotLeased(runtime, run));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        app::OpenAgentForRun(runtime, run, app::ProviderUse::kDrivesRuns,
                                             &context.runs().stopping()));
  Drive drive = [action, run_id, text](agent::Agent& a) -> Result<agent::RunResult> {
    if (action == "approve") return a.Approve(run_id);
    if (action == "deny") return a.Deny(run_id, text);
    if (action == "answer") return a.Answer(run_id, text);
    return a.Resume(run_id);
  };
  MEND_RETURN_IF_ERROR(
      DriveInBackground(context, run_id, action, std::move(agent), std::move(drive)));
  return Accepted(run_id);
}

// POST /api/v1/runs/{id}/fork {"from_checkpoint"?} ("from_step", its old name, is read too): a
// new run, not driven (resume it).
Result<ApiResponse> ForkRun(ServeContext& context, const ApiRequest& request) {
  const std::string& run_id = request.params.at(0);
  app::Runtime& runtime = context.runtime();
  MEND_ASSIGN_OR_RETURN(store::RunRecord run, app::FindRun(runtime, run_id));
  std::optional<int64_t> step;
  const char* key = request.body.is_object() && request.body.contains("from_checkpoint")
                        ? "from_checkpoint"
                        : "from_step";
  if (auto it = request.body.find(key);
      request.body.is_object() && it != request.body.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > run.step) {
      return InvalidArgumentError(std::string(key) + " must be an integer from 0 to " +
                                  std::to_string(run.step) + " (the run's newest checkpoint)");
    }
    step = it->get<int64_t>();
  }
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        app::OpenAgentForRun(runtime, run, app::ProviderUse::kNoModel));
  MEND_ASSIGN_OR_RETURN(std::string fork_id, agent->Fork(run_id, step));
  MEND_ASSIGN_OR_RETURN(store::RunRecord fork, app::FindRun(runtime, fork_id));
  return ApiResponse(json{{"run_id", fork.id},
                          {"parent_id", fork.parent_id},
                          {"from_checkpoint", fork.parent_step},
                          {"from_step", fork.parent_step},
                          {"status", std::string(store::RunStatusName(fork.status))}},
                     201);
}

}  // namespace

Result<std::string> AgentDirOf(ServeContext& context, const std::string& name) {
  bool plain = !name.empty() && name.front() != '.';
  for (char c : name) plain = plain && c != '/' && c != '\\' && static_cast<unsigned char>(c) >= 32;
  if (!plain) {
    return InvalidArgumentError("agent must be the name of a folder in serve.agents_dir, not \"" +
                                name + "\"");
  }
  const std::string& root = context.options().agents_dir;
  if (root.empty()) return NotFoundError("no agents are served: serve.agents_dir is not set");
  const std::string dir = root + "/" + name;
  Result<FileInfo> info = context.runtime().env.fs->Stat(dir);
  if (!info.ok() || !info->is_directory) {
    return NotFoundError("no agent named " + name + " in serve.agents_dir");
  }
  return dir;
}

void AddRunActionRoutes(ApiRoutes& routes, ServeContext& context) {
  routes.Post("/api/v1/runs",
              [&context](const ApiRequest& request) { return StartRun(context, request); });
  for (const char* action : {"resume", "approve", "deny", "answer"}) {
    routes.Post("/api/v1/runs/([^/]+)/" + std::string(action),
                [&context, action = std::string(action)](const ApiRequest& request) {
                  return ContinueRun(context, request, action);
                });
  }
  routes.Post("/api/v1/runs/([^/]+)/fork",
              [&context](const ApiRequest& request) { return ForkRun(context, request); });
}

}  // namespace mend::server::runs
