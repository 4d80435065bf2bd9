// Live events: the streams' queues, caps and tickets, and GET /api/v1/events over a real socket
// (a run's events arrive, a slow reader is dropped, a stop ends the stream, the token rules).
#include <gmock/gmock.h>
#include <poll.h>

#include <string>
#include <thread>

#include "mend/base/manual_clock.h"
#include "server/event_streams.h"
#include "tests/server/api_runs_fixture.h"
#include "tests/support/raw_http.h"

namespace mend::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

TEST(EventStreamsTest, AClientThatFallsBehindIsDroppedWithoutHoldingThePublisher) {
  ManualClock clock;
  obs::EventBus bus(clock);
  EventStreamOptions options;
  options.max_queued_bytes = 2000;
  EventStreams streams(&bus, clock, options);
  auto stream = streams.Open();
  MEND_ASSERT_OK(stream);
  // Nobody reads: every Publish returns at once, and the queue's bound ends the stream.
  for (int i = 0; i < 100; ++i) bus.Publish(obs::Event("tick").AddInt("n", i));
  std::string text;
  EXPECT_EQ((*stream)->Next(std::chrono::milliseconds(1), text), EventStream::Turn::kDropped);
  EXPECT_EQ(streams.dropped_streams(), 1u);
  EXPECT_EQ(streams.open_streams(), 0u);
}

TEST(EventStreamsTest, EventsArriveInOrderWithIdsAndAnIdleStreamBeats) {
  ManualClock clock;
  obs::EventBus bus(clock);
  bus.AddRedactor("sk-very-secret");
  EventStreams streams(&bus, clock, {});
  auto stream = streams.Open();
  MEND_ASSERT_OK(stream);
  std::string text;
  EXPECT_EQ((*stream)->Next(std::chrono::milliseconds(1), text), EventStream::Turn::kHeartbeat);
  bus.Publish(obs::Event("first").AddString("key", "sk-very-secret"));
  bus.Publish(obs::Event("second"));
  ASSERT_EQ((*stream)->Next(std::chrono::milliseconds(1), text), EventStream::Turn::kEvents);
  EXPECT_THAT(text, ::testing::MatchesRegex("id: ([0-9]+)\ndata: \\{\"type\":\"first\".*\\}\n\n"
                                            "id: [0-9]+\ndata: \\{\"type\":\"second\".*\\}\n\n"));
  EXPECT_THAT(text, HasSubstr("\"key\":\"[REDACTED]\""));
  EXPECT_THAT(text, Not(HasSubstr("sk-very-secret")));
  const uint64_t first = std::stoull(text.substr(4));
  const uint64_t second = std::stoull(text.substr(text.find("id: ", 4) + 4));
  EXPECT_EQ(second, first + 1);
  streams.Shutdown();
  EXPECT_EQ((*stream)->Next(std::chrono::milliseconds(1), text), EventStream::Turn::kEnded);
  EXPECT_EQ(streams.Open().status().code(), StatusCode::kUnavailable);
}

TEST(EventStreamsTest, StreamsAreCappedAndTicketsServeOnceBeforeTheyExpire) {
  ManualClock clock;
  EventStreamOptions options;
  options.max_streams = 2;
  EventStreams streams(nullptr, clock, options);
  auto a = streams.Open();
  auto b = streams.Open();
  MEND_ASSERT_OK(a);
  MEND_ASSERT_OK(b);
  EXPECT_EQ(streams.Open().status().code(), StatusCode::kUnavailable);
  streams.Close(*a);
  MEND_EXPECT_OK(streams.Open());

  const std::string ticket = streams.IssueTicket();
  EXPECT_THAT(ticket, ::testing::MatchesRegex("[0-9a-f]{32}"));
  EXPECT_TRUE(streams.RedeemTicket(ticket));
  EXPECT_FALSE(streams.RedeemTicket(ticket));
  const std::string late = streams.IssueTicket();
  clock.Advance(options.ticket_lifetime);
  EXPECT_FALSE(streams.RedeemTicket(late));
  EXPECT_FALSE(streams.RedeemTicket(""));
}

// A GET of the events route on a socket of its own; `receive_buffer` > 0 shrinks the socket's
// receive buffer first, so that a client that does not read soon leaves the server nowhere to
// write.
int OpenStream(int port, const std::string& extra_headers = "", int receive_buffer = 0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (receive_buffer > 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << errno;
  timeval tv{20, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  testing::RawSend(fd, "GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra_headers +
                           "Accept: text/event-stream\r\n\r\n");
  return fd;
}

// Reads into `out` until it holds `needle`; false when the connection ended first (or a read
// waited 20 s).
bool ReadUntil(int fd, const std::string& needle, std::string& out) {
  char buf[4096];
  while (out.find(needle) == std::string::npos) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    out.append(buf, static_cast<size_t>(n));
  }
  return true;
}

class EventsApiTest : public RunsApiTest {};

TEST_F(EventsApiTest, ARunsEventsArriveOverTheStream) {
  WriteAgent("helper");
  StartServer({TextStep("hello there")});
  const int fd = OpenStream(server_->port());
  std::string seen;
  ASSERT_TRUE(ReadUntil(fd, ": connected\n\n", seen)) << seen;
  EXPECT_THAT(seen, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(seen, HasSubstr("Content-Type: text/event-stream"));
  EXPECT_THAT(seen, HasSubstr("Transfer-Encoding: chunked"));
  EXPECT_THAT(seen, HasSubstr("retry: 3000\n"));

  ASSERT_EQ(StartRun("helper", "say hello", "r1").status, 202);
  ASSERT_TRUE(ReadUntil(fd, "\"type\":\"run.completed\"", seen)) << seen;
  EXPECT_THAT(seen, HasSubstr("data: {\"type\":\"run.started\""));
  EXPECT_THAT(seen, HasSubstr("\"run\":\"r1\""));
  EXPECT_THAT(seen, ::testing::ContainsRegex("\nid: [0-9]+\ndata: \\{\"type\":\"run.completed\""));
  ::close(fd);
}

TEST_F(EventsApiTest, AReaderThatFallsBehindIsDroppedAndTheBusGoesOn) {
  StartServer();
  const int fd = OpenStream(server_->port(), "", 4096);
  std::string seen;
  ASSERT_TRUE(ReadUntil(fd, ": connected\n\n", seen)) << seen;
  // 16 MiB of events, more than the socket buffers and the stream's 1 MiB queue can hold while
  // the client reads nothing: every Publish still returns, and the stream is dropped.
  const std::string payload(128 << 10, 'x');
  for (int i = 0; i < 128; ++i) {
    runtime_->events->Publish(obs::Event("bulk").AddInt("n", i).AddString("payload", payload));
  }
  runtime_->events->Publish(obs::Event("last"));
  // The server closes the connection once its write goes through; the last event never came.
  const std::string rest = testing::RawReadToClose(fd);
  ::close(fd);
  EXPECT_THAT(rest, Not(HasSubstr("\"type\":\"last\"")));
  EXPECT_THAT(rest, Not(HasSubstr("\"n\":127")));

  // A new stream is served as before.
  const int again = OpenStream(server_->port());
  std::string fresh;
  EXPECT_TRUE(ReadUntil(again, ": connected\n\n", fresh)) << fresh;
  ::close(again);
}

TEST_F(EventsApiTest, StoppingTheServerEndsTheStream) {
  StartServer();
  const int fd = OpenStream(server_->port());
  std::string seen;
  ASSERT_TRUE(ReadUntil(fd, ": connected\n\n", seen)) << seen;
  EXPECT_EQ(server_->Stop(), 0);
  // The connection closes (the stream usually ends with its last chunk first, unless the stop
  // came before the server's thread asked for the next event). Without the stop it would stay
  // open, and the read would give up after 20 s instead of seeing the end of the stream.
  testing::RawReadToClose(fd);
  char byte = 0;
  EXPECT_EQ(::recv(fd, &byte, 1, MSG_DONTWAIT), 0) << "the connection is still open";
  ::close(fd);
}

TEST_F(EventsApiTest, TheTokenOrATicketBoughtWithItOpensTheStream) {
  ServerOptions options;
  options.token = "s3cret";
  StartServer({}, options);
  const int port = server_->port();
  EXPECT_THAT(testing::RawExchange(port,
                                   "GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                   "Connection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 401"));
  EXPECT_EQ(Post("/api/v1/events/tickets").status, 401);

  const int with_token = OpenStream(port, "Authorization: Bearer s3cret\r\n");
  std::string seen;
  EXPECT_TRUE(ReadUntil(with_token, ": connected\n\n", seen)) << seen;
  ::close(with_token);

  Reply ticket = Post("/api/v1/events/tickets", nlohmann::json::object(),
                      {{"Authorization", "Bearer s3cret"}});
  ASSERT_EQ(ticket.status, 201) << ticket.text;
  EXPECT_EQ(ticket.body["expires_in_seconds"], 30);
  const std::string request =
      "GET /api/v1/events?ticket=" + ticket.body["ticket"].get<std::string>() +
      " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  const int fd = testing::RawConnect(port);
  testing::RawSend(fd, request + "\r\n");
  seen.clear();
  EXPECT_TRUE(ReadUntil(fd, ": connected\n\n", seen)) << seen;
  ::close(fd);
  // Spent: the same ticket again is refused.
  EXPECT_THAT(testing::RawExchange(port, request + "Connection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 401"));
}

}  // namespace
}  // namespace mend::server
