// `mend serve` over HTTPS (serve.tls_cert, serve.tls_key): a certificate made for the test by the
// openssl command, checked by cpp-httplib's client and by curl; bad or partial settings refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <string>

#include "mend/base/subprocess.h"
#include "tests/server/server_fixture.h"
#include "tests/support/status_matchers.h"

namespace mend::server {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kToken[] = "serve-tls-token-3141";

class ServeTlsTest : public ServerTest {
 protected:
  // Runs `argv` in dir_; its output, or "" when it could not run or failed.
  SubprocessResult Run(std::vector<std::string> argv) {
    SubprocessOptions options;
    options.argv = std::move(argv);
    options.cwd = dir_;
    options.timeout = std::chrono::seconds(60);
    Result<SubprocessResult> r = RunSubprocess(options);
    EXPECT_THAT(r.status(), ::mend::testing::IsOk());
    return r.ok() ? *r : SubprocessResult{};
  }

  // A self-signed certificate for 127.0.0.1 and localhost, and its key, in dir_.
  void MakeCertificate(const std::string& name = "server") {
    SubprocessResult made =
        Run({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key",
             "-out", name + ".crt", "-days", "2", "-subj", "/CN=localhost", "-addext",
             "subjectAltName=IP:127.0.0.1,DNS:localhost"});
    ASSERT_EQ(made.exit_code, 0) << made.stdout_data;
  }

  ServerOptions TlsOptions(const std::string& name = "server") {
    ServerOptions options;
    options.token = kToken;
    options.tls_cert = dir_ + "/" + name + ".crt";
    options.tls_key = dir_ + "/" + name + ".key";
    return options;
  }

  std::unique_ptr<httplib::SSLClient> TlsClient() {
    auto client = std::make_unique<httplib::SSLClient>("127.0.0.1", server_->port());
    client->set_ca_cert_path((dir_ + "/server.crt").c_str());
    client->enable_server_certificate_verification(true);
    client->set_read_timeout(std::chrono::seconds(30));
    return client;
  }
};

TEST_F(ServeTlsTest, ServesHttpsWithTheCertificateAndNothingInClearText) {
  MakeCertificate();
  StartServer({}, TlsOptions());

  auto client = TlsClient();
  httplib::Result health = client->Get("/healthz");
  ASSERT_TRUE(health) << httplib::to_string(health.error());
  EXPECT_EQ(health->status, 200);
  httplib::Result unauthorized = client->Get("/api/v1/runs");
  ASSERT_TRUE(unauthorized);
  EXPECT_EQ(unauthorized->status, 401);
  httplib::Result runs =
      client->Get("/api/v1/runs", {{"Authorization", std::string("Bearer ") + kToken}});
  ASSERT_TRUE(runs);
  EXPECT_EQ(runs->status, 200);

  // Plain HTTP on the same port gets no answer.
  httplib::Client plain("127.0.0.1", server_->port());
  plain.set_read_timeout(std::chrono::seconds(5));
  httplib::Result clear = plain.Get("/healthz");
  EXPECT_TRUE(!clear || clear->status != 200);

  // curl checks the certificate against the one made here, and refuses it without.
  const std::string url = "https://127.0.0.1:" + std::to_string(server_->port()) + "/healthz";
  SubprocessResult trusted = Run({"curl", "-sS", "--cacert", dir_ + "/server.crt", url});
  EXPECT_EQ(trusted.exit_code, 0) << trusted.stdout_data;
  EXPECT_THAT(trusted.stdout_data, HasSubstr("ok"));
  SubprocessResult untrusted = Run({"curl", "-sS", url});
  EXPECT_EQ(untrusted.exit_code, 60) << untrusted.stdout_data;  // peer certificate not trusted
}

TEST_F(ServeTlsTest, PartialOrUnreadableSettingsAreRefused) {
  MakeCertificate("server");
  MakeCertificate("other");
  ConfigSources sources;
  sources.flags["home"] = home_;
  Result<Config> config = LoadConfig(sources, *env_.fs);
  MEND_ASSERT_OK(config);
  app::RuntimeOptions runtime_options;
  runtime_options.event_log = app::EventLog::kNone;
  auto runtime = app::OpenRuntime(*config, env_, std::move(runtime_options));
  MEND_ASSERT_OK(runtime);

  ServerOptions only_cert = TlsOptions();
  only_cert.tls_key.clear();
  EXPECT_THAT(Server::Create(**runtime, only_cert),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("go together")));
  ServerOptions missing = TlsOptions();
  missing.tls_cert = dir_ + "/nothing.crt";
  EXPECT_THAT(Server::Create(**runtime, missing),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("could not be loaded")));
  ServerOptions mismatched = TlsOptions();
  mismatched.tls_key = dir_ + "/other.key";
  EXPECT_THAT(Server::Create(**runtime, mismatched),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("could not be loaded")));
  ServerOptions swapped = TlsOptions();
  std::swap(swapped.tls_cert, swapped.tls_key);
  EXPECT_THAT(Server::Create(**runtime, swapped), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace mend::server
