#include "mend/obs/trace.h"

#include <algorithm>
#include <cstdio>

#include "obs/redaction.h"

namespace mend::obs {
namespace {

thread_local Span* active_span = nullptr;

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

std::string RandomHex(Random& random, size_t bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  while (true) {
    std::string out;
    out.reserve(bytes * 2);
    for (size_t i = 0; i < bytes; i += 8) {
      uint64_t word = random.Next64();
      for (size_t b = 0; b < 8 && i + b < bytes; ++b) {
        out.push_back(kDigits[(word >> 4) & 0xf]);
        out.push_back(kDigits[word & 0xf]);
        word >>= 8;
      }
    }
    if (out.find_first_not_of('0') != std::string::npos) return out;
  }
}

void RedactAttributes(const std::vector<std::string>& secrets, std::vector<Attribute>* attributes) {
  for (Attribute& a : *attributes) {
    if (auto* s = std::get_if<std::string>(&a.value)) {
      ReplaceAllSecrets(s, secrets);
    } else if (auto* list = std::get_if<std::vector<std::string>>(&a.value)) {
      for (std::string& item : *list) ReplaceAllSecrets(&item, secrets);
    }
  }
}

void Put(std::vector<Attribute>& attributes, std::string key, AttributeValue value) {
  for (Attribute& a : attributes) {
    if (a.key == key) {
      a.value = std::move(value);
      return;
    }
  }
  attributes.push_back(Attribute{std::move(key), std::move(value)});
}

}  // namespace

bool IsSpanIdHex(std::string_view id, size_t hex_len) {
  if (id.size() != hex_len) return false;
  if (!std::all_of(id.begin(), id.end(), IsLowerHex)) return false;
  return id.find_first_not_of('0') != std::string_view::npos;
}

bool SpanContext::valid() const { return IsSpanIdHex(trace_id, 32) && IsSpanIdHex(span_id, 16); }

Result<SpanContext> ParseTraceparent(std::string_view header) {
  auto bad = [&](std::string_view why) {
    return InvalidArgumentError("traceparent \"" + std::string(header.substr(0, 80)) +
                                "\" is not valid: " + std::string(why) +
                                " (expected 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>)");
  };
  if (header.size() < 55) return bad("too short");
  std::string_view version = header.substr(0, 2);
  if (!IsLowerHex(version[0]) || !IsLowerHex(version[1])) return bad("version is not hex");
  if (version == "ff") return bad("version ff is invalid");
  if (header[2] != '-' || header[35] != '-' || header[52] != '-') return bad("misplaced dashes");
  if (version == "00" && header.size() != 55) return bad("version 00 has exactly four fields");
  if (version != "00" && header.size() > 55 && header[55] != '-') return bad("bad field separator");
  SpanContext context;
  context.trace_id = std::string(header.substr(3, 32));
  context.span_id = std::string(header.substr(36, 16));
  std::string_view flags = header.substr(53, 2);
  if (!IsLowerHex(flags[0]) || !IsLowerHex(flags[1])) return bad("flags are not hex");
  if (!IsSpanIdHex(context.trace_id, 32)) return bad("trace id is not 32 lowercase hex, non-zero");
  if (!IsSpanIdHex(context.span_id, 16)) return bad("span id is not 16 lowercase hex, non-zero");
  context.flags = static_cast<uint8_t>(std::stoi(std::string(flags), nullptr, 16));
  return context;
}

std::string FormatTraceparent(const SpanContext& context) {
  char flags[3];
  std::snprintf(flags, sizeof(flags), "%02x", context.flags);
  return "00-" + context.trace_id + "-" + context.span_id + "-" + flags;
}

std::string NewTraceId(Random& random) { return RandomHex(random, 16); }
std::string NewSpanId(Random& random) { return RandomHex(random, 8); }

const AttributeValue* FindAttribute(const std::vector<Attribute>& attributes,
                                    std::string_view key) {
  for (const Attribute& a : attributes) {
    if (a.key == key) return &a.value;
  }
  return nullptr;
}

std::string_view SpanKindName(SpanKind kind) {
  switch (kind) {
    case SpanKind::kInternal:
      return "internal";
    case SpanKind::kServer:
      return "server";
    case SpanKind::kClient:
      return "client";
    case SpanKind::kProducer:
      return "producer";
    case SpanKind::kConsumer:
      return "consumer";
  }
  return "internal";
}

std::string_view SpanStatusName(SpanStatus code) {
  switch (code) {
    case SpanStatus::kUnset:
      return "unset";
    case SpanStatus::kOk:
      return "ok";
    case SpanStatus::kError:
      return "error";
  }
  return "unset";
}

void RedactSpan(const std::vector<std::string>& secrets, SpanData* span) {
  if (secrets.empty()) return;
  ReplaceAllSecrets(&span->name, secrets);
  ReplaceAllSecrets(&span->status_message, secrets);
  RedactAttributes(secrets, &span->attributes);
  for (SpanEvent& e : span->events) {
    ReplaceAllSecrets(&e.name, secrets);
    RedactAttributes(secrets, &e.attributes);
  }
  for (SpanLink& l : span->links) RedactAttributes(secrets, &l.attributes);
}

// --- MemorySpanProcessor ---

void MemorySpanProcessor::OnEnd(const SpanData& span) {
  std::lock_guard lock(mu_);
  spans_.push_back(span);
}

std::vector<SpanData> MemorySpanProcessor::spans() const {
  std::lock_guard lock(mu_);
  return spans_;
}

void MemorySpanProcessor::Clear() {
  std::lock_guard lock(mu_);
  spans_.clear();
}

// --- Span ---

Span::~Span() { End(); }

Span::Span(Span&& other) noexcept
    : tracer_(std::exchange(other.tracer_, nullptr)), data_(std::move(other.data_)) {}

Span& Span::operator=(Span&& other) noexcept {
  if (this != &other) {
    End();
    tracer_ = std::exchange(other.tracer_, nullptr);
    data_ = std::move(other.data_);
  }
  return *this;
}

SpanContext Span::context() const { return data_ == nullptr ? SpanContext{} : data_->context; }

const std::string& Span::run_id() const {
  static const std::string kEmpty;
  return data_ == nullptr ? kEmpty : data_->run_id;
}

Span& Span::SetAttribute(std::string key, AttributeValue value) {
  if (data_ != nullptr) Put(data_->attributes, std::move(key), std::move(value));
  return *this;
}

Span& Span::SetContent(std::string key, std::string_view text) {
  if (data_ != nullptr && tracer_->capture_content()) {
    Put(data_->attributes, std::move(key), std::string(text));
  }
  return *this;
}

Span& Span::AddEvent(std::string name, std::vector<Attribute> attributes) {
  if (data_ == nullptr) return *this;
  data_->events.push_back(
      SpanEvent{std::move(name), tracer_->clock().Now(), std::move(attributes)});
  return *this;
}

Span& Span::AddLink(SpanContext context, std::vector<Attribute> attributes) {
  if (data_ != nullptr && context.valid()) {
    data_->links.push_back(SpanLink{std::move(context), std::move(attributes)});
  }
  return *this;
}

Span& Span::SetError(std::string_view type, std::string_view message) {
  if (data_ == nullptr) return *this;
  data_->status = SpanStatus::kError;
  data_->status_message = std::string(message);
  if (!type.empty()) Put(data_->attributes, "error.type", std::string(type));
  return *this;
}

Span& Span::SetOk() {
  if (data_ != nullptr && data_->status != SpanStatus::kError) data_->status = SpanStatus::kOk;
  return *this;
}

void Span::set_run_id(std::string run_id) {
  if (data_ == nullptr) return;
  Put(data_->attributes, "mend.run.id", run_id);
  data_->run_id = std::move(run_id);
}

void Span::Announce() {
  if (data_ != nullptr) tracer_->Announce(*data_);
}

void Span::End() {
  if (data_ == nullptr) return;
  std::unique_ptr<SpanData> data = std::move(data_);
  Tracer* tracer = std::exchange(tracer_, nullptr);
  data->end = tracer->clock().Now();
  tracer->Finish(*data);
}

// --- active span ---

ActiveSpanScope::ActiveSpanScope(Span& span) : previous_(active_span) { active_span = &span; }
ActiveSpanScope::~ActiveSpanScope() { active_span = previous_; }

Span* ActiveSpan() { return active_span; }

Span StartSpan(std::string name, SpanKind kind) {
  Span* parent = active_span;
  if (parent == nullptr || !parent->recording()) return Span();
  SpanStart start;
  start.parent = parent->context();
  start.kind = kind;
  start.run_id = parent->run_id();
  return parent->tracer()->StartSpan(std::move(name), std::move(start));
}

void AddActiveSpanEvent(std::string name, std::vector<Attribute> attributes) {
  if (active_span != nullptr) active_span->AddEvent(std::move(name), std::move(attributes));
}

// --- Tracer ---

Tracer::Tracer(TracerOptions options) : options_(options) {}

Tracer::~Tracer() = default;

void Tracer::AddProcessor(std::shared_ptr<SpanProcessor> processor) {
  if (processor == nullptr) return;
  std::lock_guard lock(mu_);
  processors_.push_back(std::move(processor));
}

void Tracer::AddRedactor(std::string secret) {
  if (secret.empty()) return;
  std::lock_guard lock(mu_);
  if (std::find(secrets_.begin(), secrets_.end(), secret) != secrets_.end()) return;
  secrets_.push_back(std::move(secret));
  std::stable_sort(secrets_.begin(), secrets_.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

Span Tracer::StartSpan(std::string name, SpanStart start) {
  auto data = std::make_unique<SpanData>();
  data->name = std::move(name);
  data->kind = start.kind;
  data->links = std::move(start.links);
  data->start = options_.clock->Now();
  std::optional<SpanContext> parent = std::move(start.parent);
  if (!parent.has_value() && active_span != nullptr && active_span->tracer() == this &&
      (start.trace_id.empty() || active_span->context().trace_id == start.trace_id)) {
    parent = active_span->context();
    if (start.run_id.empty()) start.run_id = active_span->run_id();
  }
  if (parent.has_value() && parent->valid()) {
    data->context.trace_id = parent->trace_id;
    data->context.flags = parent->flags;
    data->parent_span_id = parent->span_id;
  } else if (IsSpanIdHex(start.trace_id, 32)) {
    data->context.trace_id = std::move(start.trace_id);
  } else {
    data->context.trace_id = NewTraceId(*options_.random);
  }
  data->context.span_id = NewSpanId(*options_.random);
  if (!start.run_id.empty()) {
    data->attributes.push_back(Attribute{"mend.run.id", start.run_id});
    data->run_id = std::move(start.run_id);
  }
  return Span(this, std::move(data));
}

void Tracer::Announce(const SpanData& data) {
  SpanData snapshot = data;
  snapshot.end = snapshot.start;
  snapshot.attributes.push_back(Attribute{std::string(kInProgressAttribute), true});
  std::vector<std::shared_ptr<SpanProcessor>> processors;
  {
    std::lock_guard lock(mu_);
    if (shut_down_) return;
    RedactSpan(secrets_, &snapshot);
    processors = processors_;
  }
  for (const auto& p : processors) p->OnStart(snapshot);
}

void Tracer::Finish(SpanData& data) {
  std::vector<std::shared_ptr<SpanProcessor>> processors;
  {
    std::lock_guard lock(mu_);
    if (shut_down_) return;
    RedactSpan(secrets_, &data);
    ++ended_;
    processors = processors_;
  }
  for (const auto& p : processors) p->OnEnd(data);
}

Status Tracer::Flush(Duration timeout) {
  std::vector<std::shared_ptr<SpanProcessor>> processors;
  {
    std::lock_guard lock(mu_);
    processors = processors_;
  }
  Status first;
  for (const auto& p : processors) {
    Status s = p->Flush(timeout);
    if (first.ok() && !s.ok()) first = s;
  }
  return first;
}

void Tracer::Shutdown(Duration timeout) {
  std::vector<std::shared_ptr<SpanProcessor>> processors;
  {
    std::lock_guard lock(mu_);
    if (shut_down_) return;
    shut_down_ = true;
    processors = processors_;
  }
  for (const auto& p : processors) p->Shutdown(timeout);
}

uint64_t Tracer::spans_ended() const {
  std::lock_guard lock(mu_);
  return ended_;
}

}  // namespace mend::obs
