// Routes of improve's recorded attempts: list, show, apply, reject, and canaries (docs/http_api.md,
// "Improve"); starting an attempt is in api_improve_jobs.cc.
// Each mirrors a `mend improve` subcommand and answers its JSON shape (app/improve_view.h).
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mend/app/canary.h"
#include "mend/app/improve_view.h"
#include "mend/app/runtime.h"
#include "mend/improve/attempt_store.h"
#include "mend/improve/audit.h"
#include "mend/improve/proposal.h"
#include "server/api.h"
#include "server/serve_context.h"

namespace mend::server {
namespace {

// An attempt id names a folder under <home>/improve, so nothing but the form NewAttemptId writes
// gets near the file system.
Result<std::string> AttemptId(const ApiRequest& req) {
  const std::string& id = req.params[0];
  if (!improve::IsValidAttemptId(id)) {
    return InvalidArgumentError(
        "\"" + id + "\" is not an improve attempt id (imp-<yyyymmdd>T<hhmmss>-<8 hex>)");
  }
  return id;
}

Result<ApiResponse> List(app::Runtime& runtime) {
  MEND_ASSIGN_OR_RETURN(improve::AttemptStore * store, runtime.Attempts());
  MEND_ASSIGN_OR_RETURN(std::vector<improve::AttemptSummary> attempts, store->List());
  return ApiResponse(app::AttemptListJson(attempts));
}

Result<ApiResponse> Show(app::Runtime& runtime, const ApiRequest& req) {
  MEND_ASSIGN_OR_RETURN(std::string id, AttemptId(req));
  MEND_ASSIGN_OR_RETURN(improve::AttemptStore * store, runtime.Attempts());
  MEND_ASSIGN_OR_RETURN(app::AttemptDetail detail,
                        app::ReadAttemptDetail(*runtime.env.fs, *store, runtime.home, id));
  return ApiResponse(app::AttemptDetailJson(detail));
}

enum class Decision { kApply, kReject };

Result<ApiResponse> Decide(app::Runtime& runtime, const ApiRequest& req, Decision decision) {
  MEND_ASSIGN_OR_RETURN(std::string id, AttemptId(req));
  MEND_ASSIGN_OR_RETURN(std::string reason, req.OptionalBodyString("reason"));
  FileSystem& fs = *runtime.env.fs;
  Clock& clock = *runtime.env.clock;
  MEND_ASSIGN_OR_RETURN(improve::AttemptStore * store, runtime.Attempts());
  improve::Proposal proposal;
  if (decision == Decision::kApply) {
    MEND_ASSIGN_OR_RETURN(improve::Proposal queued, store->GetProposal(id));
    MEND_RETURN_IF_ERROR(app::RefuseWhileCanary(runtime, queued.agent_dir, id));
    MEND_ASSIGN_OR_RETURN(proposal, improve::ApplyProposal(fs, clock, *store, runtime.home, id));
  } else {
    MEND_ASSIGN_OR_RETURN(
        proposal,
        improve::RejectProposal(clock, *store, id, reason.empty() ? "rejected by hand" : reason));
  }
  return ApiResponse(app::ProposalDecisionJson(proposal));
}

// POST /api/v1/improve/{id}/canary {"percent": number, "auto": bool}: starts a canary (201).
Result<ApiResponse> StartCanary(app::Runtime& runtime, const ApiRequest& req) {
  MEND_ASSIGN_OR_RETURN(std::string id, AttemptId(req));
  const nlohmann::json& body = req.body;
  if (!body.is_object() || !body.contains("percent") || !body["percent"].is_number()) {
    return InvalidArgumentError("body field percent must be a number in (0, 100]");
  }
  const double percent = body["percent"].get<double>();
  bool auto_decide = false;
  if (body.contains("auto")) {
    if (!body["auto"].is_boolean())
      return InvalidArgumentError("body field auto must be a boolean");
    auto_decide = body["auto"].get<bool>();
  }
  MEND_RETURN_IF_ERROR(improve::ValidateCanaryRule(app::CanaryRuleFromConfig(runtime)));
  MEND_RETURN_IF_ERROR(app::StartCanary(runtime, id, percent, auto_decide).status());
  MEND_ASSIGN_OR_RETURN(app::CanaryReport report, app::ReadCanary(runtime, id));
  return ApiResponse(app::CanaryReportJson(report), 201);
}

enum class CanaryAction { kShow, kPromote, kRollBack };

Result<ApiResponse> Canary(app::Runtime& runtime, const ApiRequest& req, CanaryAction action) {
  MEND_ASSIGN_OR_RETURN(std::string id, AttemptId(req));
  if (action == CanaryAction::kPromote) {
    MEND_RETURN_IF_ERROR(app::PromoteCanary(runtime, id).status());
  } else if (action == CanaryAction::kRollBack) {
    MEND_RETURN_IF_ERROR(app::RollbackCanary(runtime, id).status());
  }
  MEND_ASSIGN_OR_RETURN(app::CanaryReport report, app::ReadCanary(runtime, id));
  return ApiResponse(app::CanaryReportJson(report));
}

}  // namespace

void AddImproveRoutes(ApiRoutes& routes, ServeContext& context) {
  app::Runtime& runtime = context.runtime();
  routes.Get("/api/v1/improve", [&runtime](const ApiRequest&) { return List(runtime); });
  AddImproveJobRoutes(routes, context);
  // The attempt store decides each proposal once (one at a time in this process; on PostgreSQL
  // under a row lock across replicas).
  auto decide = [&runtime](Decision decision) {
    return [&runtime, decision](const ApiRequest& req) { return Decide(runtime, req, decision); };
  };
  // `.+` rather than `[^/]+`, so an id with a slash is refused as a bad id (400), not missed.
  routes.Post("/api/v1/improve/(.+)/apply", decide(Decision::kApply));
  routes.Post("/api/v1/improve/(.+)/reject", decide(Decision::kReject));
  routes.Post("/api/v1/improve/(.+)/canary",
              [&runtime](const ApiRequest& req) { return StartCanary(runtime, req); });
  routes.Get("/api/v1/improve/(.+)/canary", [&runtime](const ApiRequest& req) {
    return Canary(runtime, req, CanaryAction::kShow);
  });
  routes.Post("/api/v1/improve/(.+)/promote", [&runtime](const ApiRequest& req) {
    return Canary(runtime, req, CanaryAction::kPromote);
  });
  routes.Post("/api/v1/improve/(.+)/rollback", [&runtime](const ApiRequest& req) {
    return Canary(runtime, req, CanaryAction::kRollBack);
  });
  routes.Get("/api/v1/improve/(.+)",
             [&runtime](const ApiRequest& req) { return Show(runtime, req); });
}

}  // namespace mend::server
