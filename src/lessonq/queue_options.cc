#include "lessonq/queue_options.h"

namespace mend::lessonq {

Status ValidateQueueOptions(const QueueOptions& o) {
  if (o.workers < 1) return InvalidArgumentError("lesson queue: workers must be at least 1");
  if (o.capacity < 1) return InvalidArgumentError("lesson queue: capacity must be at least 1");
  if (o.max_attempts < 1) {
    return InvalidArgumentError("lesson queue: max_attempts must be at least 1");
  }
  if (!(o.jitter >= 0.0 && o.jitter <= 0.5)) {
    return InvalidArgumentError("lesson queue: jitter must lie in [0, 0.5]");
  }
  if (!(o.multiplier >= 1.0)) {
    return InvalidArgumentError("lesson queue: multiplier must be at least 1");
  }
  if (o.initial_delay.count() < 0 || o.max_delay < o.initial_delay) {
    return InvalidArgumentError("lesson queue: need 0 <= initial_delay <= max_delay");
  }
  if (o.poll_interval.count() <= 0) {
    return InvalidArgumentError("lesson queue: poll_interval must be positive");
  }
  return OkStatus();
}

}  // namespace mend::lessonq
