#include "mcp/sse_reader.h"

#include <algorithm>
#include <cstdint>

namespace mend::mcp {
namespace {

// Room on a line for the field name ("data: ") beyond the data it carries.
constexpr size_t kLineSlack = 64;
// A "retry" of more digits than this is clamped rather than parsed into an overflow.
constexpr size_t kMaxRetryDigits = 9;

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

}  // namespace

Status SseReader::Feed(std::string_view bytes, const EventFn& on_event) {
  if (!failed_.ok()) return failed_;
  size_t pos = 0;
  if (after_cr_ && !bytes.empty()) {
    if (bytes.front() == '\n') pos = 1;
    after_cr_ = false;
  }
  while (pos < bytes.size()) {
    const size_t end = bytes.find_first_of("\r\n", pos);
    if (end == std::string_view::npos) {
      line_.append(bytes.substr(pos));
      if (line_.size() > max_event_bytes_ + kLineSlack) {
        failed_ = ResourceExhaustedError("a server-sent event has a line over " +
                                         std::to_string(max_event_bytes_) + " bytes");
      }
      return failed_;
    }
    std::string_view line = bytes.substr(pos, end - pos);
    if (!line_.empty()) {
      line_.append(line);
      line = line_;
    }
    pos = end + 1;
    if (bytes[end] == '\r') {
      if (pos == bytes.size()) {
        after_cr_ = true;
      } else if (bytes[pos] == '\n') {
        ++pos;
      }
    }
    Status status = Line(line, on_event);
    line_.clear();
    if (!status.ok()) {
      failed_ = status;
      return failed_;
    }
  }
  return OkStatus();
}

Status SseReader::Line(std::string_view line, const EventFn& on_event) {
  if (!started_) {
    started_ = true;
    if (line.substr(0, kByteOrderMark.size()) == kByteOrderMark) {
      line.remove_prefix(kByteOrderMark.size());
    }
  }
  if (line.size() > max_event_bytes_ + kLineSlack) {
    return ResourceExhaustedError("a server-sent event has a line over " +
                                  std::to_string(max_event_bytes_) + " bytes");
  }
  if (line.empty()) {
    Dispatch(on_event);
    return OkStatus();
  }
  if (line.front() == ':') return OkStatus();  // a comment (often a keep-alive)
  const size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "data") {
    // data_ holds a "\n" after each line; the last one goes, so this is the event's final size.
    if (data_.size() + value.size() > max_event_bytes_) {
      return ResourceExhaustedError("a server-sent event carries over " +
                                    std::to_string(max_event_bytes_) + " bytes of data");
    }
    data_.append(value);
    data_.push_back('\n');
  } else if (field == "event") {
    type_ = std::string(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) id_buffer_ = std::string(value);
  } else if (field == "retry") {
    if (!value.empty() &&
        std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      int64_t millis = 0;
      for (char c : value.substr(0, kMaxRetryDigits)) millis = millis * 10 + (c - '0');
      if (value.size() > kMaxRetryDigits) millis = 999'999'999;
      retry_ = std::chrono::milliseconds(millis);
    }
  }
  return OkStatus();
}

void SseReader::Dispatch(const EventFn& on_event) {
  last_event_id_ = id_buffer_;
  if (data_.empty()) {
    type_.clear();
    return;
  }
  data_.pop_back();
  SseEvent event;
  if (!type_.empty()) event.type = std::move(type_);
  event.data = std::move(data_);
  event.id = last_event_id_;
  data_.clear();
  type_.clear();
  on_event(std::move(event));
}

}  // namespace mend::mcp
