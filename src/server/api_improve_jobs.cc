// Starting an improve attempt over HTTP (docs/http_api.md, "Improve"): POST /api/v1/improve runs
// one attempt of an agent folder of serve.agents_dir in the background, one at a time, and
// GET /api/v1/improve/job tells how it goes. A request names the agent and a few numbers only: the
// check command and the cases come from the folder's [improve] table, so no request can make the
// server run a command of its choosing.
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "mend/agent/agent_spec.h"
#include "mend/app/improve_attempt.h"
#include "mend/app/runtime.h"
#include "mend/base/time_format.h"
#include "mend/improve/gates.h"
#include "mend/improve/proposal.h"
#include "mend/obs/events.h"
#include "server/api.h"
#include "server/api_runs.h"
#include "server/serve_context.h"

namespace mend::server {
namespace {

using nlohmann::json;

constexpr const char* kIntegerFields[] = {"repeats", "rounds", "candidates"};

// The request's numbers into `request`; kInvalidArgument naming the field otherwise.
Status ReadNumbers(const json& body, app::ImproveRequest& request) {
  for (const auto& [key, value] : body.items()) {
    if (key == "agent" || key == "repeats" || key == "rounds" || key == "candidates" ||
        key == "held_out_fraction" || key == "seed") {
      continue;
    }
    if (key == "check" || key == "cases") {
      return InvalidArgumentError(
          "a request cannot give the " + key +
          ": the check command and the cases come from the agent folder's [improve] table "
          "(docs/agent_folder.md)");
    }
    return InvalidArgumentError("unknown body field " + key +
                                " (accepted: agent, repeats, rounds, candidates, "
                                "held_out_fraction, seed)");
  }
  for (const char* name : kIntegerFields) {
    auto it = body.find(name);
    if (it == body.end() || it->is_null()) continue;
    // Checked here against int's range; ValidateImproveRequest says which values make sense.
    if (!it->is_number_integer() || it->get<int64_t>() < std::numeric_limits<int>::min() ||
        it->get<int64_t>() > std::numeric_limits<int>::max()) {
      return InvalidArgumentError(std::string("body field ") + name + " must be an integer");
    }
    const int value = static_cast<int>(it->get<int64_t>());
    if (std::string_view(name) == "repeats") request.repeats = value;
    if (std::string_view(name) == "rounds") request.rounds = value;
    if (std::string_view(name) == "candidates") request.candidates = value;
  }
  if (auto it = body.find("held_out_fraction"); it != body.end() && !it->is_null()) {
    if (!it->is_number()) {
      return InvalidArgumentError("body field held_out_fraction must be a number in [0, 1)");
    }
    request.held_out_fraction = it->get<double>();
  }
  if (auto it = body.find("seed"); it != body.end() && !it->is_null()) {
    if (!it->is_number_unsigned()) {
      return InvalidArgumentError("body field seed must be an integer >= 0");
    }
    request.seed = it->get<std::uint64_t>();
  }
  return app::ValidateImproveRequest(request, app::ImproveFieldNames::kJson);
}

json NullIfEmpty(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

// {"job","agent","agent_dir","state","started_at","finished_at","progress","attempt_id","outcome",
// "gate","proposal","error"}.
json JobJson(const ImproveJob& job) {
  json error = nullptr;
  if (!job.error.ok()) {
    error = {{"code", StatusCodeName(job.error.code())}, {"message", job.error.message()}};
  }
  return {{"job", job.id},
          {"agent", job.agent},
          {"agent_dir", job.agent_dir},
          {"state", ImproveJobStateName(job.state)},
          {"started_at", job.started_at},
          {"finished_at", NullIfEmpty(job.finished_at)},
          {"progress", NullIfEmpty(job.progress)},
          {"attempt_id", NullIfEmpty(job.attempt_id)},
          {"outcome", NullIfEmpty(job.outcome)},
          {"gate", NullIfEmpty(job.gate)},
          {"proposal", NullIfEmpty(job.proposal)},
          {"error", error}};
}

void Publish(app::Runtime& runtime, obs::Event event) {
  if (runtime.events != nullptr) runtime.events->Publish(std::move(event));
}

// The attempt itself, on the job's thread: progress lines go to the job and the event bus, the
// outcome to both when it ends.
void RunJob(ServeContext& context, int64_t id, const std::string& agent,
            const agent::AgentSpec& spec, app::ImproveRequest request) {
  app::Runtime& runtime = context.runtime();
  ImproveJobs& jobs = context.improve();
  std::string attempt_id;
  {
    obs::Event e("improve.started");
    e.AddInt("job", id).AddString("agent", agent).AddString("agent_dir", request.agent_dir);
    Publish(runtime, std::move(e));
  }
  request.stop = &jobs.stopping();
  request.on_started = [&](const std::string& started) {
    attempt_id = started;
    jobs.Update(id, [&](ImproveJob& job) { job.attempt_id = started; });
    obs::Event e("improve.attempt");
    e.AddInt("job", id).AddString("agent", agent).AddString("attempt", started);
    Publish(runtime, std::move(e));
  };
  request.on_progress = [&](const std::string& line) {
    jobs.Update(id, [&](ImproveJob& job) { job.progress = line; });
    obs::Event e("improve.progress");
    e.AddInt("job", id)
        .AddString("agent", agent)
        .AddString("attempt", attempt_id)
        .AddString("line", line);
    Publish(runtime, std::move(e));
  };
  Result<app::ImproveAttempt> attempt = app::RunImproveAttempt(runtime, spec, request);
  ImproveJob done;
  jobs.Finish(id, runtime.env.clock->Now(), [&](ImproveJob& job) {
    if (!attempt.ok()) {
      job.state = ImproveJob::State::kFailed;
      job.error = attempt.status();
    } else {
      const improve::GateDecision& decision = attempt->report.result.decision;
      job.state = ImproveJob::State::kSucceeded;
      job.attempt_id = attempt->report.attempt_id;
      job.outcome = std::string(improve::GateOutcomeName(decision.outcome));
      if (decision.refused_by.has_value())
        job.gate = std::string(improve::GateName(*decision.refused_by));
      if (attempt->proposal.has_value()) {
        job.proposal = std::string(improve::ProposalStatusName(attempt->proposal->status));
      }
    }
    done = job;
  });
  obs::Event e("improve.finished");
  e.AddInt("job", id)
      .AddString("agent", agent)
      .AddString("state", ImproveJobStateName(done.state))
      .AddString("attempt", done.attempt_id)
      .AddString("outcome", done.outcome)
      .AddString("proposal", done.proposal);
  if (!done.error.ok()) {
    e.AddString("code", StatusCodeName(done.error.code())).AddString("error", done.error.message());
  }
  Publish(runtime, std::move(e));
}

// POST /api/v1/improve {"agent", "repeats"?, "rounds"?, "candidates"?, "held_out_fraction"?,
// "seed"?}: 202 with the job.
Result<ApiResponse> StartAttempt(ServeContext& context, const ApiRequest& req) {
  MEND_ASSIGN_OR_RETURN(std::string name, req.BodyString("agent"));
  app::ImproveRequest request;
  MEND_RETURN_IF_ERROR(ReadNumbers(req.body, request));
  MEND_ASSIGN_OR_RETURN(std::string dir, runs::AgentDirOf(context, name));
  app::Runtime& runtime = context.runtime();
  FileSystem& fs = *runtime.env.fs;
  MEND_ASSIGN_OR_RETURN(agent::AgentSpec spec, agent::LoadAgentFolder(fs, dir));
  request.agent_dir = NormalizePath(dir);
  if (Status table = app::UseImproveTable(fs, spec, request); !table.ok()) {
    // A cases file the table names but the folder lacks is the folder's mistake, not a missing
    // resource of the API.
    if (table.code() == StatusCode::kNotFound) {
      return InvalidArgumentError(
          "agent " + name + ": the [improve] table's cases file: " + std::string(table.message()));
    }
    return table;
  }
  MEND_RETURN_IF_ERROR(app::PrepareProvider(runtime, spec.model));
  // Opened now, so a store that cannot be reached is this answer's error, not the job's.
  MEND_RETURN_IF_ERROR(runtime.Attempts().status());
  ImproveJob job;
  job.agent = name;
  job.agent_dir = request.agent_dir;
  job.started_at = FormatRfc3339(runtime.env.clock->Now());
  MEND_ASSIGN_OR_RETURN(ImproveJob started,
                        context.improve().Start(job, [&context, name, spec, request](int64_t id) {
                          RunJob(context, id, name, spec, request);
                        }));
  return ApiResponse(JobJson(started), 202);
}

}  // namespace

void AddImproveJobRoutes(ApiRoutes& routes, ServeContext& context) {
  routes.Post("/api/v1/improve",
              [&context](const ApiRequest& req) { return StartAttempt(context, req); });
  routes.Get("/api/v1/improve/job", [&context](const ApiRequest&) -> Result<ApiResponse> {
    MEND_ASSIGN_OR_RETURN(ImproveJob job, context.improve().Latest());
    return ApiResponse(JobJson(job));
  });
}

}  // namespace mend::server
