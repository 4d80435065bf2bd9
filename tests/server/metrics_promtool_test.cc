// What a Prometheus server scrapes from `mend serve`: /metrics after real runs passes Prometheus'
// own `promtool check metrics`, and holds the families of the issue with Prometheus' naming.
// Skips when promtool (Debian package prometheus) is not installed.
#include <gmock/gmock.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "mend/agent/agent.h"
#include "tests/e2e/child_process.h"
#include "tests/server/server_fixture.h"

namespace mend::server {
namespace {

using ::testing::HasSubstr;

std::string Promtool() {
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
    const std::string path = std::string(dir) + "/promtool";
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

TEST_F(ServerTest, MetricsPassPromtoolAfterRuns) {
  const std::string promtool = Promtool();
  if (promtool.empty()) GTEST_SKIP() << "promtool is not installed (Debian package prometheus)";
  WriteAgent("helper");
  std::vector<llm::ScriptedStep> steps(1);
  steps[0].text = "first";
  steps[0].input_tokens = 100;
  steps[0].output_tokens = 10;
  StartServer(steps);
  auto agent = app::OpenAgent(*runtime_, agents_dir_ + "/helper");
  MEND_ASSERT_OK(agent);
  MEND_ASSERT_OK((*agent)->Send("one"));

  auto scraped = client_->Get("/metrics");
  ASSERT_TRUE(scraped);
  ASSERT_EQ(scraped->status, 200);
  const std::string& text = scraped->body;
  for (const char* family :
       {"mend_lessonq_queue_depth", "mend_runs_started_total", "mend_runs_completed_total",
        "mend_runs_active", "mend_runs_waiting", "mend_provider_requests_total",
        "mend_provider_request_duration_seconds_bucket", "mend_provider_tokens_total",
        "mend_provider_cost_usd_total", "mend_checkpoint_save_duration_seconds_bucket",
        "mend_memory_retrievals_total"}) {
    EXPECT_THAT(text, HasSubstr(family)) << family;
  }

  const std::string file = dir_ + "/metrics.txt";
  std::ofstream(file) << text;
  auto checked = mend::testing::RunProcess({"/bin/sh", "-c", promtool + " check metrics < " + file},
                                           {"PATH=/usr/bin:/bin"}, std::chrono::seconds(30));
  MEND_ASSERT_OK(checked);
  EXPECT_EQ(checked->status.code, 0) << checked->out << checked->err;
  EXPECT_EQ(checked->out + checked->err, "") << "promtool found problems";
}

}  // namespace
}  // namespace mend::server
