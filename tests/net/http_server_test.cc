// mend's HTTP server (mend/net/http_server.h) against hostile clients over real sockets: a
// thousand half-sent requests, connections over the cap, oversized and late heads, request
// smuggling, a client that does not read, and the same over TLS.
#include "mend/net/http_server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mend/base/subprocess.h"
#include "tests/support/raw_http.h"
#include "tests/support/status_matchers.h"

namespace mend::net {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

int Connect(int port) { return ::mend::testing::RawConnect(port); }
void SendAll(int fd, std::string_view data) { ::mend::testing::RawSend(fd, data); }
std::string ReadToClose(int fd) { return ::mend::testing::RawReadToClose(fd); }
std::string ReadResponse(int fd) { return ::mend::testing::RawReadResponse(fd); }

bool ClosedByServer(int fd) {
  char byte;
  return ::recv(fd, &byte, 1, 0) == 0;
}

constexpr std::string_view kHealthz = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
constexpr std::string_view kHalfHead = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";

class HttpServerTest : public ::testing::Test {
 protected:
  // The clients go first: a request in progress (a stream nobody reads) then ends at once.
  ~HttpServerTest() override {
    for (int fd : clients_) ::close(fd);
    Stop();
  }

  void Start(ConnectionLimits limits) {
    Result<std::unique_ptr<httplib::Server>> made = NewHttpServer(limits);
    ASSERT_TRUE(made.ok()) << made.status();
    server_ = *std::move(made);
    server_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok", "text/plain");
    });
    server_->Get("/secret", [this](const httplib::Request&, httplib::Response& res) {
      ++secret_calls_;
      res.set_content("secret", "text/plain");
    });
    // Refused before the body is read, as mend serve refuses a request that fails its checks.
    server_->set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
      if (req.path != "/refused") return httplib::Server::HandlerResponse::Unhandled;
      res.status = 403;
      res.set_content("refused", "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    });
    server_->Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.body, "text/plain");
    });
    // 256 MiB in 64 KiB chunks, made as the client takes them.
    server_->Get("/stream", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content_provider(
          "application/octet-stream",
          [this](size_t, httplib::DataSink& sink) {
            const std::string chunk(64 << 10, 'x');
            if (streamed_ >= (256u << 20)) {
              sink.done();
              return true;
            }
            if (!sink.write(chunk.data(), chunk.size())) return false;
            streamed_ += chunk.size();
            return true;
          },
          [this](bool success) {
            std::lock_guard<std::mutex> lock(mu_);
            stream_ended_ = true;
            stream_succeeded_ = success;
            cv_.notify_all();
          });
    });
    server_->set_socket_options([this](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listen_fd_ = sock;
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    ::listen(listen_fd_, 4096);  // httplib's backlog of 5 would drop a burst of connections
    listener_ = std::thread([this] { server_->listen_after_bind(); });
    while (!server_->is_running()) std::this_thread::yield();
  }

  void Stop() {
    if (listener_.joinable()) {
      server_->stop();
      listener_.join();
    }
  }

  int Open() {
    const int fd = Connect(port_);
    clients_.push_back(fd);
    return fd;
  }

  std::string Healthz() {
    const int fd = Open();
    SendAll(fd, kHealthz);
    return ReadResponse(fd);
  }

  std::unique_ptr<httplib::Server> server_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread listener_;
  std::vector<int> clients_;
  std::atomic<int> secret_calls_{0};
  std::atomic<size_t> streamed_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stream_ended_ = false;
  bool stream_succeeded_ = true;
};

TEST_F(HttpServerTest, AThousandHalfSentRequestsDoNotStopHealthz) {
  ConnectionLimits limits;
  limits.max_active = 4;  // few turns: the half-sent heads must not take them
  Start(limits);
  std::vector<int> slow;
  for (int i = 0; i < 1000; ++i) {
    slow.push_back(Open());
    SendAll(slow.back(), kHalfHead);
  }
  for (int i = 0; i < 20; ++i) EXPECT_THAT(Healthz(), StartsWith("HTTP/1.1 200 OK")) << i;
  // The half-sent requests are still open and can finish.
  SendAll(slow.front(), "1\r\n\r\n");
  EXPECT_THAT(ReadResponse(slow.front()), StartsWith("HTTP/1.1 200 OK"));
}

TEST_F(HttpServerTest, AtTheCapTheConnectionWaitingLongestMakesRoom) {
  ConnectionLimits limits;
  limits.max_connections = 16;
  Start(limits);
  std::vector<int> idle;
  for (int i = 0; i < 16; ++i) {
    idle.push_back(Open());
    SendAll(idle.back(), kHalfHead);
  }
  EXPECT_THAT(Healthz(), StartsWith("HTTP/1.1 200 OK"));
  EXPECT_TRUE(ClosedByServer(idle[0]));
}

TEST_F(HttpServerTest, WhenEveryConnectionIsBusyANewOneIsAnswered503) {
  ConnectionLimits limits;
  limits.max_connections = 1;
  limits.io_timeout = std::chrono::seconds(20);
  Start(limits);
  const int streaming = Open();
  SendAll(streaming, "GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  char first[1];
  ASSERT_EQ(::recv(streaming, first, 1, 0), 1);  // its request is in progress
  const int refused = Open();
  const std::string answer = ReadToClose(refused);
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 503 Service Unavailable"));
  EXPECT_THAT(answer, HasSubstr("no room for another connection"));
}

TEST_F(HttpServerTest, AHeadOverTheLimitIsRefused431) {
  ConnectionLimits limits;
  limits.max_header_bytes = 4096;
  Start(limits);
  const int one_long = Open();
  SendAll(one_long,
          "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(6000, 'a') + "\r\n\r\n");
  EXPECT_THAT(ReadToClose(one_long), StartsWith("HTTP/1.1 431 Request Header Fields Too Large"));

  // httplib limits each line, not their number: many short headers count together.
  std::string many = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 400; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  const int many_short = Open();
  SendAll(many_short, many + "\r\n");
  EXPECT_THAT(ReadToClose(many_short), StartsWith("HTTP/1.1 431"));
  EXPECT_THAT(Healthz(), StartsWith("HTTP/1.1 200 OK"));
}

TEST_F(HttpServerTest, AHeadThatTakesTooLongIsRefused408) {
  ConnectionLimits limits;
  limits.header_timeout = std::chrono::milliseconds(300);
  Start(limits);
  const int fd = Open();
  SendAll(fd, kHalfHead);
  const std::string answer = ReadToClose(fd);
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 408 Request Timeout"));
  EXPECT_THAT(answer, HasSubstr("\"code\":\"DEADLINE_EXCEEDED\""));
}

TEST_F(HttpServerTest, TrickleFedHeadersDoNotExtendTheDeadline) {
  ConnectionLimits limits;
  limits.header_timeout = std::chrono::milliseconds(500);
  limits.io_timeout = std::chrono::seconds(20);
  Start(limits);
  const int fd = Open();
  SendAll(fd, kHalfHead);
  // One byte at a time, each long before the I/O timeout: only the head's deadline can end it.
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop.load()) {
      if (::send(fd, "a", 1, MSG_NOSIGNAL) <= 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the attack's pace, not a wait
    }
  });
  EXPECT_THAT(ReadToClose(fd), StartsWith("HTTP/1.1 408"));
  stop.store(true);
  trickle.join();
}

TEST_F(HttpServerTest, ContentLengthWithTransferEncodingIsRefusedAndNothingSmuggledRuns) {
  Start(ConnectionLimits{});
  const int fd = Open();
  SendAll(fd,
          "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n"
          "\r\n0\r\n\r\nGET /secret HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string answer = ReadToClose(fd);
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 400 Bad Request"));
  EXPECT_THAT(answer, HasSubstr("both Content-Length and Transfer-Encoding"));
  EXPECT_EQ(answer.find("HTTP/1.1", 1), std::string::npos) << answer;  // one answer only
  EXPECT_EQ(secret_calls_.load(), 0);
}

TEST_F(HttpServerTest, AmbiguousFramingIsRefused) {
  Start(ConnectionLimits{});
  struct Case {
    std::string head;
    std::string status;
  };
  const std::vector<Case> cases = {
      {"Content-Length: 5\r\nContent-Length: 6\r\n", "400"},
      {"Content-Length: +5\r\n", "400"},
      {"Content-Length: 5, 5\r\n", "400"},
      {"Transfer-Encoding: gzip, chunked\r\n", "501"},
      {"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "400"},
      {"Transfer-Encoding : chunked\r\nContent-Length: 5\r\n", "400"},
  };
  for (const Case& c : cases) {
    const int fd = Open();
    SendAll(fd, "POST /echo HTTP/1.1\r\nHost: x\r\n" + c.head + "\r\nhello");
    EXPECT_THAT(ReadToClose(fd), StartsWith("HTTP/1.1 " + c.status)) << c.head;
  }
  // The same request framed one way is served.
  const int fd = Open();
  SendAll(fd, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
  const std::string answer = ReadResponse(fd);
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_THAT(answer, ::testing::EndsWith("hello"));
}

// A body nobody read must never be read as the next request on the connection: it would run
// without the checks its request failed (found by fuzz/http_routes_fuzz.cc).
TEST_F(HttpServerTest, ABodyNobodyReadIsNeverReadAsTheNextRequest) {
  Start(ConnectionLimits{});
  const std::string smuggled = "GET /secret HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string length = std::to_string(smuggled.size());
  struct Case {
    std::string head;
    std::string status;
  };
  const std::vector<Case> cases = {
      // refused before its body was read
      {"POST /refused HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + "\r\n\r\n", "403"},
      // a GET's body, which httplib never reads
      {"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + "\r\n\r\n", "200"},
      // a chunked body refused before it was read
      {"POST /refused HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", "403"},
      // a request line httplib cannot parse (it answers 400 itself)
      {"GET /a?b=1?c=2 HTTP/1.1 trailing\r\nHost: x\r\nContent-Length: " + length + "\r\n\r\n",
       "400"},
  };
  for (const Case& c : cases) {
    const int fd = Open();
    SendAll(fd, c.head + smuggled);
    const std::string answer = ReadToClose(fd);
    EXPECT_THAT(answer, StartsWith("HTTP/1.1 " + c.status)) << c.head;
    EXPECT_EQ(answer.find("HTTP/1.1", 1), std::string::npos) << c.head << answer;
  }
  EXPECT_EQ(secret_calls_.load(), 0);
}

TEST_F(HttpServerTest, ARangeHeaderDoesNotCutAnAnswer) {
  Start(ConnectionLimits{});
  const int fd = Open();
  SendAll(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\nRange: bytes=0-0\r\n\r\n");
  const std::string answer = ReadResponse(fd);
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_THAT(answer, ::testing::EndsWith("\r\n\r\nok"));
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrderOnOneConnection) {
  Start(ConnectionLimits{});
  const int fd = Open();
  SendAll(
      fd,
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\none"
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n"
      "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string all = ReadToClose(fd);
  const size_t one = all.find("\r\n\r\none");
  const size_t two = all.find("\r\n\r\ntwo");
  const size_t ok = all.find("\r\n\r\nok");
  ASSERT_NE(one, std::string::npos) << all;
  ASSERT_NE(two, std::string::npos) << all;
  ASSERT_NE(ok, std::string::npos) << all;
  EXPECT_LT(one, two);
  EXPECT_LT(two, ok);
}

TEST_F(HttpServerTest, AClientThatDoesNotReadIsCutOffAndNothingPilesUp) {
  ConnectionLimits limits;
  limits.io_timeout = std::chrono::milliseconds(300);
  Start(limits);
  const int fd = Open();
  int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  SendAll(fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return stream_ended_; });
    EXPECT_FALSE(stream_succeeded_);
  }
  // What was made is what the socket buffers took: far from the 256 MiB of the whole answer.
  EXPECT_LT(streamed_.load(), 64u << 20);
  EXPECT_THAT(Healthz(), StartsWith("HTTP/1.1 200 OK"));
}

TEST_F(HttpServerTest, StopClosesWaitingConnectionsAndReturns) {
  Start(ConnectionLimits{});
  std::vector<int> idle;
  for (int i = 0; i < 50; ++i) {
    idle.push_back(Open());
    if (i % 2 == 0) SendAll(idle.back(), kHalfHead);
  }
  EXPECT_THAT(Healthz(), StartsWith("HTTP/1.1 200 OK"));
  Stop();
  for (int fd : idle) EXPECT_EQ(ReadToClose(fd).find("200"), std::string::npos);
}

TEST(ConnectionLimitsTest, OutOfRangeLimitsAreRefused) {
  ConnectionLimits limits;
  limits.max_connections = 0;
  EXPECT_THAT(ValidateLimits(limits),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("max_connections")));
  limits = ConnectionLimits{};
  limits.max_header_bytes = 100;
  EXPECT_THAT(NewHttpServer(limits).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("max_header_bytes")));
  limits = ConnectionLimits{};
  limits.header_timeout = std::chrono::milliseconds(0);
  EXPECT_THAT(ValidateLimits(limits),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("header_timeout")));
  limits = ConnectionLimits{};
  limits.tls_cert = "cert.pem";
  EXPECT_THAT(ValidateLimits(limits),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("go together")));
}

class HttpsServerTest : public HttpServerTest {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mend-net-tls-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    SubprocessOptions options;
    options.argv = {
        "openssl",  "req",           "-x509",   "-newkey",
        "rsa:2048", "-nodes",        "-keyout", "server.key",
        "-out",     "server.crt",    "-days",   "2",
        "-subj",    "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"};
    options.cwd = dir_;
    options.timeout = std::chrono::seconds(60);
    Result<SubprocessResult> made = RunSubprocess(options);
    ASSERT_TRUE(made.ok() && made->exit_code == 0);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ConnectionLimits TlsLimits() {
    ConnectionLimits limits;
    limits.tls_cert = dir_ + "/server.crt";
    limits.tls_key = dir_ + "/server.key";
    return limits;
  }

  httplib::Result TlsHealthz() {
    httplib::SSLClient client("127.0.0.1", port_);
    client.set_ca_cert_path((dir_ + "/server.crt").c_str());
    client.enable_server_certificate_verification(true);
    client.set_read_timeout(std::chrono::seconds(20));
    return client.Get("/healthz");
  }

  std::string dir_;
};

TEST_F(HttpsServerTest, HundredsOfSilentConnectionsDoNotStopTheHandshakeOfAnother) {
  ConnectionLimits limits = TlsLimits();
  limits.max_active = 2;
  Start(limits);
  for (int i = 0; i < 300; ++i) Open();  // no ClientHello
  for (int i = 0; i < 5; ++i) {
    httplib::Result got = TlsHealthz();
    ASSERT_TRUE(got) << httplib::to_string(got.error());
    EXPECT_EQ(got->status, 200);
    EXPECT_EQ(got->body, "ok");
  }
}

TEST_F(HttpsServerTest, ASilentTlsConnectionIsClosedAtTheHeadDeadline) {
  ConnectionLimits limits = TlsLimits();
  limits.header_timeout = std::chrono::milliseconds(300);
  Start(limits);
  const int fd = Open();
  EXPECT_TRUE(ClosedByServer(fd));
  httplib::Result got = TlsHealthz();
  ASSERT_TRUE(got) << httplib::to_string(got.error());
  EXPECT_EQ(got->status, 200);
}

TEST_F(HttpsServerTest, AKeyThatIsNotAKeyIsRefused) {
  ConnectionLimits limits = TlsLimits();
  limits.tls_key = limits.tls_cert;
  EXPECT_THAT(NewHttpServer(limits).status(), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace mend::net
