#include <algorithm>
#include <exception>

#include "mend/obs/events.h"
#include "obs/redaction.h"

namespace mend::obs {

struct EventBus::State {
  std::vector<std::pair<SubscriptionId, std::shared_ptr<EventSink>>> sinks;
  std::vector<std::string> secrets;  // longest first, so a secret containing another goes whole
};

EventBus::EventBus(Clock& clock) : clock_(clock), state_(std::make_shared<const State>()) {}
EventBus::~EventBus() = default;

std::shared_ptr<const EventBus::State> EventBus::Snapshot() const {
  std::lock_guard lock(mu_);
  return state_;
}

SubscriptionId EventBus::Subscribe(std::shared_ptr<EventSink> sink) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<State>(*state_);
  const SubscriptionId id{next_id_++};
  next->sinks.emplace_back(id, std::move(sink));
  state_ = std::move(next);
  return id;
}

Status EventBus::Unsubscribe(SubscriptionId id) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<State>(*state_);
  auto it = std::find_if(next->sinks.begin(), next->sinks.end(),
                         [id](const auto& entry) { return entry.first == id; });
  if (it == next->sinks.end()) {
    return NotFoundError("no event subscription " + std::to_string(static_cast<uint64_t>(id)));
  }
  next->sinks.erase(it);
  state_ = std::move(next);
  return OkStatus();
}

void EventBus::AddRedactor(std::string secret) {
  if (secret.empty()) return;
  std::lock_guard lock(mu_);
  auto next = std::make_shared<State>(*state_);
  if (std::find(next->secrets.begin(), next->secrets.end(), secret) != next->secrets.end()) return;
  next->secrets.push_back(std::move(secret));
  std::stable_sort(next->secrets.begin(), next->secrets.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  state_ = std::move(next);
}

void EventBus::RecordError(Status error) {
  error_count_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  last_error_ = std::move(error);
}

Status EventBus::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

void EventBus::Publish(Event event) {
  const std::shared_ptr<const State> state = Snapshot();
  event.set_time(clock_.Now());
  if (!state->secrets.empty()) RedactEvent(state->secrets, &event);
  for (const auto& [id, sink] : state->sinks) {
    // Sinks may come from outside our code and throw; one bad sink must not cost the others their
    // events, nor the publisher its progress.
    try {
      Status s = sink->Write(event);
      if (!s.ok()) RecordError(s.Annotate("event sink"));
    } catch (const std::exception& e) {
      RecordError(InternalError(std::string("event sink threw: ") + e.what()));
    } catch (...) {
      RecordError(InternalError("event sink threw a non-standard exception"));
    }
  }
}

Status EventBus::Flush() {
  const std::shared_ptr<const State> state = Snapshot();
  Status first;
  for (const auto& [id, sink] : state->sinks) {
    Status s;
    try {
      s = sink->Flush();
    } catch (...) {
      s = InternalError("event sink threw on flush");
    }
    if (s.ok()) continue;
    s = s.Annotate("event sink flush");
    RecordError(s);
    if (first.ok()) first = s;
  }
  return first;
}

}  // namespace mend::obs
