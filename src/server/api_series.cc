// GET /api/v1/metrics/series: runs and model calls over time, per agent or per model, summed by
// observe.db (docs/http_api.md, "Metrics over time"), for the web UI's Charts page.
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mend/app/runtime.h"
#include "mend/base/home_layout.h"
#include "mend/base/time_format.h"
#include "mend/obs/span_store.h"
#include "server/api.h"
#include "server/lazy_span_store.h"
#include "server/serve_context.h"

namespace mend::server {
namespace {

using nlohmann::json;

struct BucketSize {
  const char* name;
  Duration width;
  int64_t default_count;  // buckets shown when `from` is not given
};
constexpr BucketSize kBuckets[] = {{"minute", std::chrono::minutes(1), 60},
                                   {"hour", std::chrono::hours(1), 24},
                                   {"day", std::chrono::hours(24), 30}};

Result<BucketSize> BucketOf(const ApiRequest& req) {
  const std::string name = req.Query("bucket").value_or("hour");
  for (const BucketSize& b : kBuckets) {
    if (name == b.name) return b;
  }
  return InvalidArgumentError("bucket: \"" + name + "\" is not minute, hour or day");
}

Result<obs::SeriesBy> ByOf(const ApiRequest& req) {
  const std::string by = req.Query("by").value_or("agent");
  if (by == "agent") return obs::SeriesBy::kAgent;
  if (by == "model") return obs::SeriesBy::kModel;
  return InvalidArgumentError("by: \"" + by + "\" is neither agent nor model");
}

Result<std::optional<Time>> TimeParam(const ApiRequest& req, std::string_view name) {
  std::optional<std::string> text = req.Query(name);
  if (!text || text->empty()) return std::optional<Time>();
  Result<Time> parsed = ParseRfc3339(*text);
  if (!parsed.ok()) {
    return InvalidArgumentError(std::string(name) + ": \"" + *text +
                                "\" is not an RFC 3339 time (such as 2025-01-31T09:00:00Z)");
  }
  return std::optional<Time>(*parsed);
}

// The range asked for. Without `to`, the current bucket's end (buckets aligned on UTC); without
// `from`, the bucket's default count of buckets before `to`.
Result<obs::SeriesQuery> QueryOf(const ApiRequest& req, Time now) {
  MEND_ASSIGN_OR_RETURN(BucketSize bucket, BucketOf(req));
  obs::SeriesQuery q;
  MEND_ASSIGN_OR_RETURN(q.by, ByOf(req));
  q.bucket = bucket.width;
  MEND_ASSIGN_OR_RETURN(std::optional<Time> from, TimeParam(req, "from"));
  MEND_ASSIGN_OR_RETURN(std::optional<Time> to, TimeParam(req, "to"));
  if (!to.has_value()) {
    const Duration since_epoch = now.time_since_epoch();
    to = Time(since_epoch - since_epoch % bucket.width + bucket.width);
  }
  q.to = *to;
  q.from = from.value_or(q.to - bucket.width * bucket.default_count);
  if (q.from >= q.to) return InvalidArgumentError("from: must be before to");
  if ((q.to - q.from + q.bucket - Duration(1)) / q.bucket > obs::kMaxSeriesBuckets) {
    return InvalidArgumentError("bucket: from " + FormatRfc3339(q.from) + " to " +
                                FormatRfc3339(q.to) + " is more than " +
                                std::to_string(obs::kMaxSeriesBuckets) + " buckets of a " +
                                bucket.name + "; choose a larger bucket or a shorter range");
  }
  return q;
}

json PointJson(const obs::SeriesPoint& p, const obs::SeriesQuery& q) {
  return {{"start", FormatRfc3339(q.from + q.bucket * p.bucket)},
          {"count", p.count},
          {"failed", p.failed},
          {"failure_rate", static_cast<double>(p.failed) / static_cast<double>(p.count)},
          {"cost_usd", p.cost_usd},
          {"input_tokens", p.input_tokens},
          {"output_tokens", p.output_tokens},
          {"mean_ms", p.mean_ms},
          {"max_ms", p.max_ms}};
}

// One series per key, in the store's order (by key, then bucket).
json SeriesJson(const std::vector<obs::SeriesPoint>& points, const obs::SeriesQuery& q) {
  json series = json::array();
  for (const obs::SeriesPoint& p : points) {
    if (series.empty() || series.back()["key"] != p.key) {
      series.push_back({{"key", p.key}, {"points", json::array()}});
    }
    series.back()["points"].push_back(PointJson(p, q));
  }
  return series;
}

Result<ApiResponse> Series(ServeContext& context, LazySpanStore& spans, const ApiRequest& req) {
  MEND_ASSIGN_OR_RETURN(obs::SeriesQuery q, QueryOf(req, context.runtime().env.clock->Now()));
  MEND_ASSIGN_OR_RETURN(obs::SpanStore * store, spans.Get());
  MEND_ASSIGN_OR_RETURN(std::vector<obs::SeriesPoint> points, store->Series(q));
  const bool by_agent = q.by == obs::SeriesBy::kAgent;
  return ApiResponse(
      json{{"from", FormatRfc3339(q.from)},
           {"to", FormatRfc3339(q.to)},
           {"bucket", req.Query("bucket").value_or("hour")},
           {"bucket_seconds", std::chrono::duration_cast<std::chrono::seconds>(q.bucket).count()},
           {"by", by_agent ? "agent" : "model"},
           {"counts", by_agent ? "runs" : "model_calls"},
           {"series", SeriesJson(points, q)}});
}

}  // namespace

void AddSeriesRoutes(ApiRoutes& routes, ServeContext& context) {
  auto spans = std::make_shared<LazySpanStore>(home::ObserveFile(context.runtime().home));
  routes.Get("/api/v1/metrics/series",
             [&context, spans](const ApiRequest& req) { return Series(context, *spans, req); });
}

}  // namespace mend::server
