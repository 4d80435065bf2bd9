// The rules of one recovery pass (docs/heal.md), applied to each listed run.

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>

#include "heal/recovery_impl.h"
#include "heal/recovery_policy.h"
#include "mend/agent/run_origin.h"
#include "mend/obs/trace.h"

namespace mend::heal {
namespace {

obs::Event RunEvent(std::string type, const std::string& run_id) {
  obs::Event event(std::move(type));
  event.AddString("run", run_id);
  return event;
}

}  // namespace

store::RecoveryClass RecoveryImpl::Classify(const store::RunRecord& run, Time now) const {
  return store::ClassifyForRecovery(run, now, options_.max_attempts);
}

void RecoveryImpl::ReadCursor() {
  if (cursor_read_) return;
  cursor_read_ = true;
  Result<std::optional<store::RunCursor>> stored = options_.store->RecoveryCursor();
  if (stored.ok()) {
    cursor_ = *stored;
  } else {
    // Only a position is lost: this pass starts at the oldest run.
    ReportError(stored.status().Annotate("reading the recovery position"), "");
  }
}

void RecoveryImpl::WriteCursor(const std::optional<store::RunCursor>& before) {
  if (cursor_ == before) return;
  Status written = options_.store->SetRecoveryCursor(cursor_);
  if (!written.ok()) ReportError(written.Annotate("storing the recovery position"), "");
}

Status RecoveryImpl::NormalPass(Time now, TickReport& report, PassCounts& counts) {
  ReadCursor();
  const std::optional<store::RunCursor> before = cursor_;
  store::RecoveryQuery query = Query(now, store::RecoveryBackoff::kSkip);
  // After a probe, the counts taken before it stand: they are the state the pass began with.
  if (counts.counts.has_value()) query.counting = store::RecoveryCounting::kOmit;
  CandidateWalk walk(*options_.store, query, cursor_, options_.max_runs_per_pass);
  MEND_ASSIGN_OR_RETURN(CandidateWalk::End end, walk.Run([&](const store::RunRecord& run) {
    return HandleCandidate(run, now, report);
  }));
  if (!counts.counts.has_value()) counts.counts = walk.counts();
  if (counts.counts.has_value()) {
    const store::RecoveryCounts& c = *counts.counts;
    report.skipped.waiting += static_cast<int>(c.waiting);
    report.skipped.non_retryable += static_cast<int>(c.non_retryable);
    report.skipped.backoff += static_cast<int>(c.backoff) - counts.probed_in_backoff;
    if (end == CandidateWalk::End::kBudgetUsed) {
      report.skipped.deferred = static_cast<int>(
          std::max<int64_t>(0, c.candidates - static_cast<int64_t>(walk.visited())));
    }
  }
  // A pass that went round starts the next one at the oldest run again; one that used its budget
  // leaves the rest to the next.
  if (end == CandidateWalk::End::kBudgetUsed) {
    cursor_ = walk.last();
  } else {
    cursor_.reset();
  }
  WriteCursor(before);
  return OkStatus();
}

CandidateWalk::Step RecoveryImpl::HandleCandidate(const store::RunRecord& run, Time now,
                                                  TickReport& report) {
  if (attempted_.count(run.id) != 0) return CandidateWalk::Step::kNext;
  // The store lists only the runs to act on, but a row it could not read is listed as a failed
  // run that is not retryable, and the store counted it as a candidate: it is counted here.
  switch (Classify(run, now)) {
    case store::RecoveryClass::kWaiting:
      ++report.skipped.waiting;
      break;
    case store::RecoveryClass::kNonRetryable:
      ++report.skipped.non_retryable;
      break;
    case store::RecoveryClass::kBackoff:
      ++report.skipped.backoff;
      break;
    case store::RecoveryClass::kLeftAlone:
      break;
    case store::RecoveryClass::kGiveUp:
      switch (GiveUp(run, report)) {
        case GaveUp::kQuarantined:
          break;  // listed in `quarantined`
        case GaveUp::kHealing:
          ++report.skipped.healing;
          break;
        case GaveUp::kError:
          ++report.skipped.error;
          break;
      }
      break;
    case store::RecoveryClass::kDue: {
      const ProviderEndpoint endpoint = EndpointOf(run);
      // Its endpoint is down: resuming the run now would only charge it for the outage. Its probe
      // (ProbePass) tells when the endpoint is back.
      if (InOutage(endpoint)) {
        ++report.skipped.outage;
        break;
      }
      ResumeOne(run, endpoint, report);
      break;
    }
  }
  return CandidateWalk::Step::kNext;
}

RecoveryImpl::Outcome RecoveryImpl::OutcomeOf(const agent::RunResult& result) const {
  switch (result.status) {
    case store::RunStatus::kCompleted:
      return Outcome::kCompleted;
    case store::RunStatus::kWaiting:
      return Outcome::kWaiting;
    case store::RunStatus::kRunning:
      if (!result.error.has_value()) return Outcome::kStopped;
      break;
    default:
      break;
  }
  if (result.error.has_value() && IsProviderFailure(*result.error)) {
    return Outcome::kProviderFailure;
  }
  return Outcome::kOtherFailure;
}

// The driver is an interface implemented outside this module; a throw from it must not end the
// loop any more than a callback's.
Result<agent::RunResult> RecoveryImpl::CallResume(const store::RunRecord& run) {
  try {
    return options_.driver->Resume(run);
  } catch (const std::exception& e) {
    return InternalError(std::string("the run driver threw: ") + e.what());
  } catch (...) {
    return InternalError("the run driver threw an unknown exception");
  }
}

std::string_view RecoveryImpl::OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kCompleted:
      return "completed";
    case Outcome::kWaiting:
      return "waiting";
    case Outcome::kProviderFailure:
      return "provider_failure";
    case Outcome::kOtherFailure:
      return "failed";
    case Outcome::kLeased:
      return "leased";
    case Outcome::kError:
      return "error";
    case Outcome::kStopped:
      return "stopped";
    case Outcome::kUnconfigured:
      return "unconfigured";
  }
  return "error";
}

RecoveryImpl::Outcome RecoveryImpl::ResumeOne(const store::RunRecord& run,
                                              const ProviderEndpoint& endpoint,
                                              TickReport& report) {
  if (options_.tracer == nullptr) return ResumeOneTraced(run, endpoint, report);
  obs::SpanStart start;
  start.run_id = run.id;
  start.trace_id =
      agent::ParseRunOrigin(run.metadata, run.id).value_or(agent::RunOrigin{}).trace_id;
  obs::Span span = options_.tracer->StartSpan("mend.recovery.attempt", std::move(start));
  span.SetAttribute("mend.recovery.attempt", run.attempts + 1);
  if (IsHealFork(run.id)) span.SetAttribute("mend.recovery.heal_fork", true);
  span.Announce();
  obs::ActiveSpanScope scope(span);
  Outcome outcome = ResumeOneTraced(run, endpoint, report);
  span.SetAttribute("mend.recovery.outcome", std::string(OutcomeName(outcome)));
  if (outcome == Outcome::kError) {
    span.SetError("recovery_error", "the resume failed; see the recovery.error event");
  } else {
    span.SetOk();
  }
  return outcome;
}

RecoveryImpl::Outcome RecoveryImpl::ResumeOneTraced(const store::RunRecord& run,
                                                    const ProviderEndpoint& endpoint,
                                                    TickReport& report) {
  attempted_.insert(run.id);
  Result<agent::RunResult> result = CallResume(run);
  if (!result.ok()) {
    // Another holder is driving the run right now: nothing failed, nothing to count.
    if (result.status().code() == StatusCode::kUnavailable) {
      ++report.skipped.leased;
      return Outcome::kLeased;
    }
    // The run is another process's to drive: the provider it recorded is not configured here.
    if (result.status().detail_code() == kProviderNotConfiguredDetail) {
      LeaveUnconfigured(run, result.status(), report);
      return Outcome::kUnconfigured;
    }
    // Another replica finished the run (or it began waiting for a person) after this pass listed
    // it: the resume is refused, and that is no failure either.
    if (result.status().code() == StatusCode::kFailedPrecondition) {
      Result<store::RunRecord> now = options_.store->GetRun(run.id);
      if (now.ok() && (now->status == store::RunStatus::kCompleted ||
                       now->status == store::RunStatus::kWaiting)) {
        ++report.skipped.leased;
        return Outcome::kLeased;
      }
    }
    ReportError(result.status().Annotate("resuming run " + run.id), run.id);
    ++report.skipped.error;
    return Outcome::kError;
  }
  report.resumed.push_back(run.id);
  // The claim succeeded, so no live process held the run: a `running` one that had been claimed
  // before (not a fresh fork) was interrupted.
  if (run.status == store::RunStatus::kRunning && run.epoch > 0) {
    report.interrupted.push_back(run.id);
  }
  Publish(RunEvent("recovery.resumed", run.id));
  Outcome outcome = OutcomeOf(*result);
  if (outcome == Outcome::kStopped) return outcome;
  if (outcome == Outcome::kProviderFailure) {
    if (RecordProviderFailure(run, endpoint, *result->error, report)) return outcome;
  } else {
    RecordOtherResult(endpoint);
  }
  if (outcome == Outcome::kCompleted) {
    OnCompleted(run, report);
  } else if (outcome == Outcome::kWaiting) {
    report.failed.push_back(run.id);  // stopped to wait for a person: left to them
  } else {
    ChargeFailure(run, report);
  }
  return outcome;
}

void RecoveryImpl::OnCompleted(const store::RunRecord& run, TickReport& report) {
  report.completed.push_back(run.id);
  Publish(RunEvent("recovery.completed", run.id));
  // The attempts stay on the completed run as a record of what it took; a completed run is never
  // listed again, so resetting them would only cost a durable write per recovered run.
  if (IsHealFork(run.id)) {
    FinishHealed(HealOriginalId(run.id));
  } else {
    NotifyRecovered(run.id);
  }
}

void RecoveryImpl::LeaveUnconfigured(const store::RunRecord& run, const Status& why,
                                     TickReport& report) {
  ++report.skipped.unconfigured;
  // Retryable, so that a process where the provider is configured still takes the run.
  store::RunError error{std::string(kProviderNotConfiguredDetail), std::string(why.message()),
                        "auth", true};
  if (run.last_error.has_value() && run.last_error->code == error.code &&
      run.last_error->message == error.message) {
    return;  // said already: each pass would only write it again
  }
  store::RunUpdate update;
  update.last_error = std::optional<store::RunError>(error);
  Status s = options_.store->UpdateUnleased(run.id, update);
  obs::Event event = RunEvent("recovery.unconfigured", run.id);
  event.AddString("message", error.message);
  Publish(std::move(event));
  if (!s.ok()) ReportError(s, run.id);
}

void RecoveryImpl::ChargeFailure(const store::RunRecord& run, TickReport& report) {
  report.failed.push_back(run.id);
  store::RunRecord now_run = run;
  Result<store::RunRecord> fresh = options_.store->GetRun(run.id);
  if (fresh.ok()) {
    now_run = *fresh;
  } else {
    ReportError(fresh.status(), run.id);
  }
  // A new checkpoint during the attempt is progress: the counter starts over at this failure.
  int64_t attempts = now_run.step > run.step ? 1 : run.attempts + 1;
  Time next =
      options_.clock->Now() + BackoffDelay(options_.interval, options_.max_backoff, attempts);
  store::RunUpdate update;
  update.attempts = attempts;
  update.next_attempt_at = std::optional<Time>(next);
  Status s = options_.store->UpdateUnleased(run.id, update);
  obs::Event event = RunEvent("recovery.failed", run.id);
  if (now_run.last_error.has_value()) event.AddString("code", now_run.last_error->code);
  event.AddInt("attempts", attempts);
  Publish(std::move(event));
  if (!s.ok()) {
    ReportError(s, run.id);
    return;
  }
  now_run.attempts = attempts;
  now_run.next_attempt_at = next;
  if (attempts >= options_.max_attempts) GiveUp(now_run, report);
}

RecoveryImpl::GaveUp RecoveryImpl::GiveUp(const store::RunRecord& run, TickReport& report) {
  bool diagnose = options_.retry_with_diagnosis && !IsHealFork(run.id) && !IsSessionRun(run);
  if (!diagnose) return Quarantine(run.id, report) ? GaveUp::kQuarantined : GaveUp::kError;
  Result<store::RunRecord> fork = options_.store->GetRun(HealForkId(run.id));
  if (!fork.ok()) {
    if (fork.status().code() == StatusCode::kNotFound) {
      return CreateHealFork(run) ? GaveUp::kHealing : GaveUp::kError;
    }
    ReportError(fork.status(), run.id);
    return GaveUp::kError;
  }
  // The fork exists: the original waits for its outcome (a failed delete is retried here).
  if (fork->status == store::RunStatus::kCompleted) FinishHealed(run.id);
  if (fork->status == store::RunStatus::kQuarantined) {
    return Quarantine(run.id, report) ? GaveUp::kQuarantined : GaveUp::kError;
  }
  return GaveUp::kHealing;
}

bool RecoveryImpl::CreateHealFork(const store::RunRecord& run) {
  std::string fork_id = HealForkId(run.id);
  Status s =
      options_.driver->ForkWithNote(run, fork_id, DiagnosisNote(run, options_.max_note_bytes));
  if (s.ok()) {
    // The fork starts with a fresh counter whatever the store copied from the original.
    store::RunUpdate update;
    update.attempts = 0;
    update.next_attempt_at = std::optional<Time>();
    s = options_.store->UpdateUnleased(fork_id, update);
  }
  if (!s.ok()) {
    ReportError(s.Annotate("forking run " + run.id + " for a diagnosed retry"), run.id);
    return false;
  }
  obs::Event event = RunEvent("recovery.forked", run.id);
  event.AddString("fork", fork_id);
  Publish(std::move(event));
  return true;
}

bool RecoveryImpl::Quarantine(const std::string& run_id, TickReport& report) {
  store::RunUpdate update;
  update.status = store::RunStatus::kQuarantined;
  Status s = options_.store->UpdateUnleased(run_id, update);
  if (!s.ok()) {
    ReportError(s.Annotate("quarantining run " + run_id), run_id);
    return false;
  }
  report.quarantined.push_back(run_id);
  Publish(RunEvent("recovery.quarantined", run_id));
  NotifyQuarantined(run_id);
  if (!IsHealFork(run_id)) return true;
  // The diagnosed retry failed too: its original, kept for it, gives up as well.
  Result<store::RunRecord> original = options_.store->GetRun(HealOriginalId(run_id));
  if (original.ok() && original->status != store::RunStatus::kQuarantined &&
      original->status != store::RunStatus::kCompleted) {
    Quarantine(original->id, report);
  }
  return true;
}

void RecoveryImpl::FinishHealed(const std::string& original_id) {
  Status s = options_.store->DeleteRun(original_id);
  if (!s.ok() && s.code() != StatusCode::kNotFound) {
    ReportError(s.Annotate("deleting healed run " + original_id), original_id);
    return;
  }
  if (!s.ok()) return;  // deleted before: on_recovered fired then
  obs::Event event = RunEvent("recovery.healed", original_id);
  event.AddString("fork", HealForkId(original_id));
  Publish(std::move(event));
  NotifyRecovered(original_id);
}

}  // namespace mend::heal
