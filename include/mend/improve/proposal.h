#pragma once

// Proposals (docs/improve.md, "Proposals"): a candidate's edits kept in its audit folder as
// proposal.json, applied only to an unchanged agent folder (with a backup) or rejected, and the
// attempt summaries of `mend improve list`.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/file_system.h"
#include "mend/base/result.h"
#include "mend/improve/evaluate.h"

namespace mend::improve {

/// A proposal waiting for a person or applied by auto mode (docs/improve.md "Proposals"). It lives
/// in its attempt's audit folder as proposal.json, so the queue is the set of audit folders.
enum class ProposalStatus { kQueued, kApplied, kRejected };
std::string_view ProposalStatusName(ProposalStatus status);  ///< "queued", "applied", "rejected"

/// One proposal as proposal.json holds it.
struct Proposal {
  std::string attempt_id;                           ///< the attempt that made it
  std::string agent_dir;                            ///< absolute
  ProposalStatus status = ProposalStatus::kQueued;  ///< where it stands
  std::string created_at;                           ///< RFC 3339 UTC
  std::string decided_at;  ///< when applied or rejected; empty while queued
  /// Every file the proposal writes, by path relative to the agent folder, with the lowercase hex
  /// SHA-256 of its text when the attempt started ("" for a file that did not exist then).
  std::map<std::string, std::string> base_sha256;
  std::map<std::string, std::string> files;  ///< path -> the new text
  std::string note;  ///< why it is queued (e.g. auto mode refused) or the rejection's reason
  /// Field by field.
  friend bool operator==(const Proposal&, const Proposal&) = default;
};

/// The proposal that turns `base` into `after` (only the files that differ).
Proposal MakeProposal(std::string attempt_id, std::string agent_dir, const AgentText& base,
                      const AgentText& after, Time now);

/// `improve/<attempt_id>/proposal.json`, written atomically (0600). kInvalidArgument for an invalid
/// attempt id; kNotFound when the audit folder does not exist.
Status WriteProposal(FileSystem& fs, std::string_view home, const Proposal& proposal);
/// kNotFound when the attempt or its proposal does not exist ("attempt X made no proposal");
/// kDataLoss naming the file when it does not parse.
Result<Proposal> ReadProposal(FileSystem& fs, std::string_view home, std::string_view attempt_id);

/// Writes the proposal's files into its agent folder if, and only if, every file is still what the
/// attempt started from: kFailedPrecondition naming the first file that changed (nothing is
/// written then; the proposal stays queued). The old texts are first copied to
/// `improve/<id>/backup/<path>` (0600); each file is then replaced atomically (write to a temporary
/// file, fsync, rename, fsync the folder), so a crash leaves every file either old or new and the
/// backup complete. kFailedPrecondition too for a proposal that is not queued.
Result<Proposal> ApplyProposal(FileSystem& fs, Clock& clock, std::string_view home,
                               std::string_view attempt_id);
/// Marks a queued proposal rejected with `reason`. kFailedPrecondition for one that is not queued.
Result<Proposal> RejectProposal(FileSystem& fs, Clock& clock, std::string_view home,
                                std::string_view attempt_id, std::string reason);

/// What ApplyProposal does to a queued proposal `p`, read by the caller: checks every file, keeps
/// the backup in `<home>/improve/<id>/backup/` (the folder is created when missing), writes the
/// files, then sets p's status and decided_at. The proposal itself is not stored.
Status ApplyProposalFiles(FileSystem& fs, Clock& clock, std::string_view home, Proposal& p);
/// The proposal as proposal.json holds it, and back (kDataLoss naming the problem).
///@{
std::string ProposalToJsonText(const Proposal& proposal);
Result<Proposal> ProposalFromJsonText(std::string_view text);
///@}

/// One line of `mend improve list`: an attempt and, when it made one, its proposal.
struct AttemptSummary {
  std::string attempt_id;  ///< the attempt
  std::string agent_dir;   ///< the agent folder it improved
  /// decision.json's outcome; "no_improvement" for an attempt that evaluated no candidate,
  /// "failed" for one that stopped on an error (error.json), "unfinished" while it runs (or after
  /// it was killed).
  std::string outcome;
  std::string gate;                        ///< the refusing gate of a rejected outcome
  std::optional<ProposalStatus> proposal;  ///< std::nullopt: no proposal
  /// Where the audit folder is, when the list came from a store shared by hosts
  /// (attempt_store.h): the host's name and the folder's path there. Empty from ListAttempts.
  std::string host;
  std::string audit_dir;  ///< see host
};
/// One attempt of ListAttempts: kInvalidArgument for an invalid id; otherwise the summary, with
/// outcome "unreadable" when its files do not parse.
Result<AttemptSummary> SummarizeAttempt(FileSystem& fs, std::string_view home,
                                        std::string_view attempt_id);
/// Every attempt under `<home>/improve`, newest first (attempt ids sort by time). Folders whose
/// name is not an attempt id are skipped; an attempt whose files do not parse is listed with
/// outcome "unreadable".
Result<std::vector<AttemptSummary>> ListAttempts(FileSystem& fs, std::string_view home);

}  // namespace mend::improve
