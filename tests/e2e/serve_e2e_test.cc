// `mend serve` as a user runs it: it prints where it listens, answers its probes and API, refuses
// an address other machines reach without a token, and on SIGTERM stops cleanly with exit 0.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

using ::testing::HasSubstr;

class ServeE2eTest : public E2eTest {
 protected:
  // Starts `mend serve` on a free loopback port and returns the port it printed.
  int StartServe(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"serve", "--listen", "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    serve_ = StartListening(args);
    return serve_.port;
  }

  Listening serve_;
};

TEST_F(ServeE2eTest, ServesAndStopsOnSigtermWithExitZero) {
  const int port = StartServe();
  ASSERT_GT(port, 0);
  httplib::Client client("127.0.0.1", port);
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto ready = client.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200) << ready->body;
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr("# TYPE mend_lessonq_queue_depth gauge"));

  auto out = FinishListening(serve_, SIGTERM);
  MEND_ASSERT_OK(out);
  EXPECT_TRUE(out->status.exited);
  EXPECT_EQ(out->status.code, 0) << out->err;
  EXPECT_THAT(out->err, HasSubstr("stopped"));
  // The home it created is private.
  struct stat st {};
  ASSERT_EQ(stat(dir_->File("home").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700);
}

TEST_F(ServeE2eTest, RefusesAnyAddressWithoutAToken) {
  auto out = RunProcess(
      {MEND_BINARY, "--home", dir_->File("home"), "serve", "--listen", "0.0.0.0:0"}, env_, kBound);
  MEND_ASSERT_OK(out);
  EXPECT_TRUE(out->status.exited);
  EXPECT_EQ(out->status.code, 2);
  EXPECT_THAT(out->err, HasSubstr("serve.token"));
  EXPECT_EQ(out->out, "");
}

TEST_F(ServeE2eTest, TokenFromTheEnvironmentGuardsTheApi) {
  env_.push_back("MEND_SERVE_TOKEN=t0ken-e2e");
  PlantSecret("t0ken-e2e");  // written to no file and printed nowhere
  const int port = StartServe();
  ASSERT_GT(port, 0);
  httplib::Client client("127.0.0.1", port);
  auto denied = client.Get("/metrics");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 401);
  auto allowed = client.Get("/metrics", {{"Authorization", "Bearer t0ken-e2e"}});
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200);
  auto out = FinishListening(serve_, SIGINT);
  MEND_ASSERT_OK(out);
  EXPECT_EQ(out->status.code, 0) << out->err;
  EXPECT_THAT(out->err, ::testing::Not(HasSubstr("t0ken-e2e")));
}

TEST_F(ServeE2eTest, AnAddressInUseIsAClearError) {
  const int port = StartServe();
  ASSERT_GT(port, 0);
  auto out = RunProcess({MEND_BINARY, "--home", dir_->File("home2"), "serve", "--listen",
                         "127.0.0.1:" + std::to_string(port)},
                        env_, kBound);
  MEND_ASSERT_OK(out);
  EXPECT_EQ(out->status.code, 1);
  EXPECT_THAT(out->err, HasSubstr("cannot listen on 127.0.0.1:" + std::to_string(port)));
}

}  // namespace
}  // namespace mend::testing
