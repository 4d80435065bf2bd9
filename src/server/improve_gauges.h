#pragma once

// What /metrics says about improve attempts recorded under <home>/improve, whichever process made
// them (`mend improve` is a command of its own): mend_improve_attempts_recorded{outcome} and
// mend_improve_proposals{status}, read at scrape time and cached, since an attempt's audit folder
// is read whole; and the canaries (docs/improve.md, "Canary"): mend_canary_runs{agent,arm,outcome}
// of each running canary and mend_canaries{state}.
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/obs/metrics.h"

namespace mend::app {
struct Runtime;
}  // namespace mend::app

namespace mend::server {

class ImproveGauges {
 public:
  // Adds a collector to runtime.metrics that recounts at most once per `refresh` of the
  // runtime's clock. The runtime must outlive this object.
  ImproveGauges(app::Runtime& runtime, Duration refresh);
  ~ImproveGauges();  // removes the collector
  ImproveGauges(const ImproveGauges&) = delete;
  ImproveGauges& operator=(const ImproveGauges&) = delete;

 private:
  void Collect();
  // The canary gauges; false when the canaries could not be read.
  bool CollectCanaries();

  app::Runtime& runtime_;
  const Duration refresh_;
  obs::GaugeFamily& attempts_;
  obs::GaugeFamily& proposals_;
  obs::GaugeFamily& canary_runs_;
  obs::GaugeFamily& canaries_;
  obs::Counter& errors_;
  obs::CollectorId collector_;
  std::mutex mu_;
  Time last_{};
  bool counted_ = false;
  std::set<std::vector<std::string>> canary_runs_seen_;  // guarded by mu_: labels set before
};

}  // namespace mend::server
