// The event streams of `mend serve` (event_streams.h).
#include "server/event_streams.h"

#include <openssl/rand.h>

#include <algorithm>
#include <set>
#include <utility>

namespace mend::server {

// What the bus's sink and the streams share. The sink may be called after the EventStreams is
// gone (the bus keeps an unsubscribed sink alive while a Publish still delivers to it), so it
// holds the hub, never the EventStreams.
struct EventStreams::Hub {
  std::mutex mu;
  std::set<std::shared_ptr<EventStream>> streams;  // guarded by mu
  uint64_t next_id = 1;                            // guarded by mu
  uint64_t dropped = 0;                            // guarded by mu
  bool shut_down = false;                          // guarded by mu
  size_t max_queued_bytes = 0;

  // Queues `event` on every stream, dropping those whose queue would grow past the bound. Never
  // blocks on a client: only this hub's and each stream's lock are taken.
  void Deliver(const obs::Event& event) {
    const std::string json = obs::EventToJson(event);
    std::lock_guard<std::mutex> lock(mu);
    const std::string message = "id: " + std::to_string(next_id++) + "\ndata: " + json + "\n\n";
    for (auto it = streams.begin(); it != streams.end();) {
      EventStream& stream = **it;
      std::lock_guard<std::mutex> stream_lock(stream.mu_);
      if (stream.queued_bytes_ + message.size() > max_queued_bytes) {
        stream.dropped_ = true;
        stream.queue_.clear();
        stream.queued_bytes_ = 0;
        stream.changed_.notify_all();
        ++dropped;
        it = streams.erase(it);
        continue;
      }
      stream.queue_.push_back(message);
      stream.queued_bytes_ += message.size();
      stream.changed_.notify_all();
      ++it;
    }
  }
};

namespace {

class HubSink final : public obs::EventSink {
 public:
  explicit HubSink(std::shared_ptr<EventStreams::Hub> hub) : hub_(std::move(hub)) {}
  Status Write(const obs::Event& event) override {
    hub_->Deliver(event);
    return OkStatus();
  }

 private:
  std::shared_ptr<EventStreams::Hub> hub_;
};

std::string RandomTicket() {
  unsigned char bytes[16];
  // RAND_bytes fails only when the system's entropy source does; an empty ticket is never issued
  // as valid (RedeemTicket refuses it).
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) return "";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (unsigned char b : bytes) {
    text.push_back(kHex[b >> 4]);
    text.push_back(kHex[b & 15]);
  }
  return text;
}

}  // namespace

EventStream::Turn EventStream::Next(std::chrono::milliseconds heartbeat, std::string& text) {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait_for(lock, heartbeat, [this] { return ended_ || dropped_ || !queue_.empty(); });
  if (dropped_) return Turn::kDropped;
  if (ended_) return Turn::kEnded;
  if (queue_.empty()) return Turn::kHeartbeat;
  text.clear();
  for (const std::string& message : queue_) text += message;
  queue_.clear();
  queued_bytes_ = 0;
  return Turn::kEvents;
}

EventStreams::EventStreams(obs::EventBus* bus, Clock& clock, EventStreamOptions options)
    : hub_(std::make_shared<Hub>()), bus_(bus), clock_(clock), options_(std::move(options)) {
  hub_->max_queued_bytes = options_.max_queued_bytes;
  // Ids keep growing across restarts of the server (microseconds of the clock at start), so a
  // client never mistakes a new server's events for ones it has seen.
  hub_->next_id = static_cast<uint64_t>(std::max<int64_t>(
      1, std::chrono::duration_cast<std::chrono::microseconds>(clock_.Now().time_since_epoch())
             .count()));
  if (bus_ != nullptr) subscription_ = bus_->Subscribe(std::make_shared<HubSink>(hub_));
}

EventStreams::~EventStreams() {
  Shutdown();
  if (bus_ != nullptr) (void)bus_->Unsubscribe(subscription_);
}

Result<std::shared_ptr<EventStream>> EventStreams::Open() {
  std::lock_guard<std::mutex> lock(hub_->mu);
  if (hub_->shut_down) return UnavailableError("the server is shutting down");
  if (hub_->streams.size() >= options_.max_streams) {
    return UnavailableError("too many event streams are open (the limit is " +
                            std::to_string(options_.max_streams) + ")");
  }
  auto stream = std::make_shared<EventStream>();
  hub_->streams.insert(stream);
  return stream;
}

void EventStreams::Close(const std::shared_ptr<EventStream>& stream) {
  std::lock_guard<std::mutex> lock(hub_->mu);
  hub_->streams.erase(stream);
}

void EventStreams::Shutdown() {
  std::lock_guard<std::mutex> lock(hub_->mu);
  hub_->shut_down = true;
  for (const auto& stream : hub_->streams) {
    std::lock_guard<std::mutex> stream_lock(stream->mu_);
    stream->ended_ = true;
    stream->changed_.notify_all();
  }
  hub_->streams.clear();
}

std::string EventStreams::IssueTicket() {
  const Time now = clock_.Now();
  std::string ticket = RandomTicket();
  std::lock_guard<std::mutex> lock(tickets_mu_);
  // Unused tickets expire; forgetting them here keeps the map as small as the tickets in flight.
  std::erase_if(tickets_, [now](const auto& entry) { return entry.second <= now; });
  if (!ticket.empty()) tickets_[ticket] = now + options_.ticket_lifetime;
  return ticket;
}

bool EventStreams::RedeemTicket(const std::string& ticket) {
  if (ticket.empty()) return false;
  std::lock_guard<std::mutex> lock(tickets_mu_);
  auto it = tickets_.find(ticket);
  if (it == tickets_.end()) return false;
  const bool valid = clock_.Now() < it->second;
  tickets_.erase(it);
  return valid;
}

size_t EventStreams::open_streams() const {
  std::lock_guard<std::mutex> lock(hub_->mu);
  return hub_->streams.size();
}

uint64_t EventStreams::dropped_streams() const {
  std::lock_guard<std::mutex> lock(hub_->mu);
  return hub_->dropped;
}

}  // namespace mend::server
