// The text/event-stream parser (sse.h), per the WHATWG HTML standard's "event stream
// interpretation": fields `event`, `data` and `id`; `retry` and unknown fields are ignored.
#include "proxy/sse.h"

namespace mend::proxy {

bool SseParser::pending() const { return !line_.empty() || has_data_ || !current_.event.empty(); }

Status SseParser::Feed(std::string_view bytes, std::vector<SseEvent>& out) {
  if (!failed_.ok()) return failed_;
  const auto end_line = [&]() -> Status {
    std::string_view line = line_;
    if (line.empty()) {
      // A blank line dispatches the event, if it has data (the standard drops data-less ones).
      if (has_data_) {
        if (!current_.data.empty() && current_.data.back() == '\n') current_.data.pop_back();
        out.push_back(std::move(current_));
      }
      current_ = SseEvent();
      has_data_ = false;
      return OkStatus();
    }
    if (line.front() != ':') {
      const size_t colon = line.find(':');
      std::string_view field = line.substr(0, colon);
      std::string_view value;
      if (colon != std::string_view::npos) {
        value = line.substr(colon + 1);
        if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      }
      if (field == "data") {
        current_.data.append(value);
        current_.data.push_back('\n');
        has_data_ = true;
      } else if (field == "event") {
        current_.event.assign(value);
      } else if (field == "id") {
        if (value.find('\0') == std::string_view::npos) current_.id.assign(value);
      }
    }
    line_.clear();
    return OkStatus();
  };
  for (const char c : bytes) {
    if (cr_pending_) {
      cr_pending_ = false;
      if (c == '\n') continue;  // the \n of a \r\n pair
    }
    if (c == '\r' || c == '\n') {
      cr_pending_ = c == '\r';
      MEND_RETURN_IF_ERROR(end_line());
      continue;
    }
    line_.push_back(c);
    if (line_.size() + current_.data.size() > max_event_bytes_) {
      failed_ = ResourceExhaustedError("stream event larger than " +
                                       std::to_string(max_event_bytes_) + " bytes");
      return failed_;
    }
  }
  return OkStatus();
}

}  // namespace mend::proxy
