#!/usr/bin/env python3
"""Runs every command of a documentation page and checks its output (docs/testing.md).

The page's ```console blocks hold the commands, each on a line starting with "$ " (a line ending
with a backslash continues on the next), followed by what it prints. Every printed line the page
shows must appear in the command's real output, in order; "..." stands for lines left out and
"<anything>" for a value that changes from run to run (an id, a time). A command exits 0 unless
the page says "# exits N" at its end. A block opened with ```console norun is shown, not run:
its commands are checked by another test, which the block's first line names.

All commands run in one bash, in a new empty HOME and working directory, so `cd` and `export`
carry over, as they would for a reader typing them. Runs of spaces match any run of spaces. The model is the fake OpenAI-compatible
server (tests/support), reached through MEND_BASE_URL; the ports 7070 and 7071 the page uses are
replaced by free ones.

  run_doc_commands.py PAGE --bin DIR --fake FAKE_SERVER --routes ROUTES.json
"""
import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile


def parse_page(text):
    """[(command, expected_lines, exit_code)] of the runnable console blocks, in order."""
    steps = []
    in_block = False
    runnable = False
    current = None
    for raw in text.splitlines():
        if raw.startswith("```"):
            if not in_block:
                info = raw[3:].strip().split()
                in_block = True
                runnable = bool(info) and info[0] == "console" and "norun" not in info[1:]
                current = None
            else:
                in_block = False
            continue
        if not in_block or not runnable:
            continue
        if current is not None and current["open"]:
            current["command"] += "\n" + raw
            current["open"] = raw.endswith("\\")
            continue
        if raw.startswith("$ "):
            current = {"command": raw[2:], "expected": [], "open": raw.endswith("\\")}
            steps.append(current)
        elif current is not None:
            current["expected"].append(raw)
    result = []
    for step in steps:
        command = step["command"]
        code = 0
        m = re.search(r"\s+# exits (\d+)\s*$", command)
        if m:
            code = int(m.group(1))
            command = command[: m.start()]
        result.append((command, step["expected"], code))
    return result


def line_pattern(expected):
    parts = re.split(r"(<[^<>\s][^<>]*>)", expected.strip())
    # Columns of a table are padded to their widest value, so any run of spaces matches any other.
    regex = "".join(".+?" if p.startswith("<") and p.endswith(">")
                    else r"\s+".join(re.escape(w) for w in p.split(" ") if w) +
                    (r"\s+" if p.endswith(" ") and p.strip() else "")
                    for p in parts)
    return re.compile(regex)


def check_output(expected, actual):
    """None when every shown line occurs in order, else the first line that does not."""
    lines = actual.splitlines()
    at = 0
    for want in expected:
        if not want.strip() or want.strip() == "...":
            continue
        pattern = line_pattern(want)
        while at < len(lines) and not pattern.search(lines[at]):
            at += 1
        if at == len(lines):
            return want
        at += 1
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("page")
    parser.add_argument("--bin", required=True, help="directory holding the mend binary")
    parser.add_argument("--fake", required=True, help="the fake_llm_server executable")
    parser.add_argument("--routes", required=True)
    parser.add_argument("--verbose", action="store_true", help="print every command's output")
    args = parser.parse_args()

    with open(args.page, encoding="utf-8") as f:
        steps = parse_page(f.read())
    if not steps:
        print(f"{args.page}: no runnable console block", file=sys.stderr)
        return 1

    work = tempfile.mkdtemp(prefix="mend-doc-")
    os.chmod(work, 0o700)
    fake = subprocess.Popen([args.fake, "--port", "0", "--routes", args.routes],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        # The fake server prints "listening on 127.0.0.1:<port>" once it accepts connections.
        first = fake.stdout.readline()
        m = re.search(r"127\.0\.0\.1:\d+", first)
        if not m:
            print(f"the fake server did not start: {first!r}", file=sys.stderr)
            return 1
        base_url = "http://" + m.group(0) + "/v1"
        ports = {"7070": str(free_port()), "7071": str(free_port())}

        marker = "@@mend-doc-step"
        script = ["set +e", "trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT", f"cd '{work}'"]
        for i, (command, _, _) in enumerate(steps):
            for port, free in ports.items():
                command = command.replace(f"127.0.0.1:{port}", f"127.0.0.1:{free}")
                command = command.replace(f"localhost:{port}", f"localhost:{free}")
            script.append(f"echo '{marker} {i} begin'")
            script.append(command)
            # On a line of its own even when the command's output does not end with a newline.
            script.append(f"printf '\\n{marker} {i} end %d\\n' $?")
        env = {
            "HOME": work,
            "PATH": f"{args.bin}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "MEND_BASE_URL": base_url,
            "MEND_SERVE_LISTEN": "127.0.0.1:" + ports["7070"],
            "MEND_PROXY_LISTEN": "127.0.0.1:" + ports["7071"],
            # The fake server's outage is a single 503; the run does not wait out retries.
            "MEND_PROVIDER_RETRIES": "0",
        }
        proc = subprocess.run(["bash", "-c", "\n".join(script)], env=env, cwd=work,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=600)
        outputs = {}
        current = None
        for line in proc.stdout.splitlines():
            m = re.match(rf"{marker} (\d+) (begin|end)(?: (\d+))?$", line)
            if m and m.group(2) == "end" and current is not None and outputs[current]["text"] \
                    and outputs[current]["text"][-1] == "":
                outputs[current]["text"].pop()  # the newline printed before the marker
            if m and m.group(2) == "begin":
                current = int(m.group(1))
                outputs[current] = {"text": [], "code": None}
            elif m:
                outputs[int(m.group(1))]["code"] = int(m.group(3))
                current = None
            elif current is not None:
                outputs[current]["text"].append(line)
        failures = 0
        for i, (command, expected, code) in enumerate(steps):
            got = outputs.get(i)
            if got is None or got["code"] is None:
                text = "\n".join(got["text"]) if got else ""
                print(f"FAIL {command!r}: did not run to its end\n--- its output:\n{text}\n---",
                      file=sys.stderr)
                failures += 1
                break
            text = "\n".join(got["text"])
            missing = check_output(expected, text)
            if got["code"] != code or missing is not None:
                failures += 1
                why = (f"exit {got['code']}, expected {code}" if got["code"] != code
                       else f"missing line {missing!r}")
                print(f"FAIL {command!r}: {why}\n--- its output:\n{text}\n---", file=sys.stderr)
            else:
                print(f"ok   {command.splitlines()[0]}")
                if args.verbose:
                    print("\n".join("     " + line for line in got["text"]))
        print(f"{len(steps) - failures} of {len(steps)} commands ok")
        return 1 if failures else 0
    finally:
        fake.terminate()
        fake.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
