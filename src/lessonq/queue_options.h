#pragma once

#include "mend/base/status.h"
#include "mend/lessonq/durable_queue.h"

namespace mend::lessonq {

// The checks every backend makes of its QueueOptions (all but base_dir, which only the WAL queue
// uses): kInvalidArgument naming the first bad option.
Status ValidateQueueOptions(const QueueOptions& options);

}  // namespace mend::lessonq
