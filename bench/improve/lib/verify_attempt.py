#!/usr/bin/env python3
"""Checks one `mend improve` attempt of a scenario against the scenario's "expect" block.

Usage: verify_attempt.py SCENARIO_DIR WORK_DIR

WORK_DIR holds what run_scenarios left there: improve.json (`mend improve --json`), show.json
(`mend improve show ID --json`), list.json (`mend improve list --json`), requests.jsonl (the fake
server's --log), agent/ (the copy of the scenario's agent folder that was improved) and home/.
Prints one JSON object: {"ok", "seen", "expected", "audit", "problems"}; exits 0 either way (1 only
when the inputs cannot be read at all).
"""
import json
import os
import sys

EDITOR_PROMPT_START = "You improve the instructions of an AI agent"


def label(outcome, gate, proposal, refused):
    """A short name for an outcome: "proposal, queued", "rejected (cost)", "no_improvement"."""
    text = outcome
    if gate:
        text += f" ({gate})"
    if proposal:
        text += f", {proposal}"
    if refused:
        text += f", {refused} refused"
    return text


def expected_label(expect):
    return label(expect["outcome"], expect.get("gate"), expect.get("proposal"),
                 len(expect.get("refused", [])))


def seen_label(improve):
    proposal = improve.get("proposal") or {}
    return label(improve.get("outcome", "?"), improve.get("gate"), proposal.get("status"),
                 len(improve.get("refused", [])))


def check_text(problems, what, text, rule):
    for needle in rule.get("contains", []):
        if needle not in text:
            problems.append(f"{what} lacks {needle!r}")
    for needle in rule.get("lacks", []):
        if needle in text:
            problems.append(f"{what} contains {needle!r}")


def read_files(root):
    """Every regular file below root: relative path -> bytes."""
    out = {}
    for base, _, names in os.walk(root):
        for name in names:
            path = os.path.join(base, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = f.read()
    return out


def editor_requests(log_path):
    """The decoded text of every editor request the fake server recorded, in arrival order."""
    texts = []
    with open(log_path, encoding="utf-8") as f:
        for line in f:
            body = json.loads(json.loads(line)["body"])
            messages = body.get("messages", [])
            if not messages or messages[0].get("role") != "system":
                continue
            if not str(messages[0].get("content", "")).startswith(EDITOR_PROMPT_START):
                continue
            texts.append("\n".join(str(m.get("content") or "") for m in messages))
    return texts


def inside_block(text, needle, source):
    """True when `needle` occurs in `text` and every occurrence lies inside an
    <untrusted-data source="..."> block whose source is `source`."""
    opening = f'<untrusted-data source="{source}"'
    found = False
    pos = text.find(needle)
    while pos >= 0:
        start = text.rfind("<untrusted-data ", 0, pos)
        if start < 0 or not text.startswith(opening, start):
            return False
        if text.find("</untrusted-data>", start, pos) >= 0:
            return False
        found = True
        pos = text.find(needle, pos + 1)
    return found


def verify(scenario_dir, work):
    with open(os.path.join(scenario_dir, "scenario.json"), encoding="utf-8") as f:
        expect = json.load(f)["expect"]
    with open(os.path.join(work, "improve.json"), encoding="utf-8") as f:
        improve = json.load(f)
    with open(os.path.join(work, "show.json"), encoding="utf-8") as f:
        show = json.load(f)
    with open(os.path.join(work, "list.json"), encoding="utf-8") as f:
        attempts = json.load(f)["attempts"]
    problems = []

    def same(what, got, want):
        if got != want:
            problems.append(f"{what}: got {got!r}, want {want!r}")

    same("outcome", improve.get("outcome"), expect["outcome"])
    same("gate", improve.get("gate"), expect.get("gate"))
    proposal = improve.get("proposal")
    same("proposal", proposal and proposal.get("status"), expect.get("proposal"))
    if "proposal_note" in expect:
        check_text(problems, "proposal note", (proposal or {}).get("note", ""),
                   expect["proposal_note"])
    if "reason" in expect:
        check_text(problems, "reason", improve.get("reason", ""), expect["reason"])
    if "diff" in expect:
        check_text(problems, "diff", improve.get("diff", ""), expect["diff"])
    if "card" in expect:
        check_text(problems, "card", show.get("card", ""), expect["card"])
    refused = [{"path": r["path"], "refusal": r["refusal"]} for r in improve.get("refused", [])]
    same("refused", refused, expect.get("refused", []))
    same("editor errors", len(improve.get("editor_errors", [])), expect.get("editor_errors", 0))

    cases = {c["id"]: c for c in improve.get("cases", [])}
    same("case ids", sorted(cases), sorted(expect["cases"]))
    for case_id, want in expect["cases"].items():
        got = cases.get(case_id, {})
        for key, value in want.items():
            same(f"case {case_id} {key}", got.get(key), value)

    # The audit folder: `show` must find that the recorded scores give the recorded decision.
    if expect["audit"] == "recomputed":
        audit = "verified" if show.get("recomputed_matches") is True else "MISMATCH"
        if audit != "verified":
            problems.append(f"show: recomputed_matches is {show.get('recomputed_matches')!r}")
        decision = show.get("decision") or {}
        same("show decision outcome", decision.get("outcome"), expect["outcome"])
    else:
        audit = "no decision"
        same("show decision", show.get("decision"), None)
        same("show recomputed_matches", show.get("recomputed_matches"), None)
    same("show proposal", (show.get("proposal") or {}).get("status"), expect.get("proposal"))
    listed = [a for a in attempts if a.get("attempt_id") == improve.get("attempt_id")]
    same("list entries for the attempt", len(listed), 1)
    if listed:
        same("list outcome", listed[0].get("outcome"), expect["outcome"])
        same("list gate", listed[0].get("gate"), expect.get("gate"))

    # The agent folder: the files named in "files" as described, every other file untouched.
    before = read_files(os.path.join(scenario_dir, "agent"))
    after = read_files(os.path.join(work, "agent"))
    files = expect.get("files", {})
    for path, rule in files.items():
        check_text(problems, f"agent {path}", after.get(path, b"").decode("utf-8"), rule)
    for path in sorted(set(before) | set(after)):
        if path not in files and before.get(path) != after.get(path):
            problems.append(f"agent {path} changed")
    for path, rule in expect.get("backup", {}).items():
        backup = os.path.join(work, "home", "improve", improve.get("attempt_id", "?"), "backup",
                              path)
        try:
            with open(backup, encoding="utf-8") as f:
                check_text(problems, f"backup {path}", f.read(), rule)
        except OSError as e:
            problems.append(f"backup {path}: {e.strerror}")

    # What the editor was sent, as the fake server recorded it.
    rule = expect.get("editor_requests", {})
    requests = editor_requests(os.path.join(work, "requests.jsonl"))
    if "count" in rule:
        same("editor requests", len(requests), rule["count"])
    check_text(problems, "editor requests", "\n".join(requests), rule)
    for block in rule.get("in_block", []):
        if not requests or not all(inside_block(r, block["text"], block["source"])
                                   for r in requests):
            problems.append(f"editor requests: {block['text']!r} is not (only) inside "
                            f"<untrusted-data source=\"{block['source']}\"> blocks")

    return {"ok": not problems, "seen": seen_label(improve), "expected": expected_label(expect),
            "audit": audit, "problems": problems}


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        result = verify(argv[1], argv[2])
    except (OSError, ValueError, KeyError) as e:
        result = {"ok": False, "seen": "unreadable", "audit": "-", "problems": [repr(e)]}
        print(json.dumps(result))
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
