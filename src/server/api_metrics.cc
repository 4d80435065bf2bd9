// /metrics: the process's metrics in Prometheus text format (docs/metrics.md).
#include <httplib.h>

#include "mend/app/runtime.h"
#include "mend/obs/metrics.h"
#include "server/api.h"
#include "server/serve_context.h"

namespace mend::server {

void AddMetricsRoutes(ApiRoutes& routes, ServeContext& context) {
  routes.http().Get("/metrics", [&context](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(context.runtime().metrics->RenderPrometheus(),
                    std::string(obs::kPrometheusContentType));
  });
}

}  // namespace mend::server
