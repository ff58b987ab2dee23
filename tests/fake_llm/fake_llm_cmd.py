#!/usr/bin/env python3
"""Fake model for `--policy cmd`: reads a prompt on stdin, answers from a script.

Usage: fake_llm_cmd.py --script FILE --state FILE [--log FILE]

The script has the fake server's shape ({"steps": [...]} or {"purposes": {...}}, see
fake_llm_server.py); the step is chosen by the last "PURPOSE: x" marker of the prompt and
the position in each queue is kept in --state between invocations (one process per
request).  A step may be {"content": "..."} (printed on stdout), and may add
{"stderr": "..."}, {"exit": N} (exit status), {"hang": S} (sleep before answering) or
{"big": N} (N bytes of output); {"numbered": true} replaces "{n}" in the content by the
step's position in its queue (so a repeated last step still differs each time).  --log
appends one JSON line per request with the prompt.
"""

import argparse
import fcntl
import json
import re
import sys
import time

PURPOSE_RE = re.compile(r"PURPOSE:\s*([A-Za-z0-9_-]+)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--log")
    a = ap.parse_args()
    prompt = sys.stdin.read()
    with open(a.script, encoding="utf-8") as f:
        script = json.load(f)
    if isinstance(script, list):
        script = {"steps": script}
    found = PURPOSE_RE.findall(prompt)
    purpose = found[-1] if found else None
    with open(a.state, "a+", encoding="utf-8") as st:
        fcntl.flock(st, fcntl.LOCK_EX)  # parallel requests take distinct steps
        st.seek(0)
        text = st.read()
        pos = json.loads(text) if text.strip() else {}
        purposes = script.get("purposes", {})
        key = purpose if purpose in purposes else ("*" if "*" in purposes else "steps")
        queue = purposes.get(key) if key != "steps" else script.get("steps", [])
        i = pos.get(key, 0)
        if not queue:
            step = None
        elif i < len(queue):
            step = queue[i]
        else:
            step = queue[-1] if script.get("repeat_last") else None
        pos[key] = i + 1
        st.seek(0)
        st.truncate()
        st.write(json.dumps(pos))
    if a.log:
        with open(a.log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"purpose": purpose, "prompt": prompt}) + "\n")
    if step is None:
        sys.stderr.write("fake_llm_cmd: script exhausted for %s\n" % key)
        return 3
    if "hang" in step:
        time.sleep(float(step["hang"]))
    if "stderr" in step:
        sys.stderr.write(step["stderr"])
    if "big" in step:
        sys.stdout.write("x" * int(step["big"]))
    elif step.get("numbered"):
        sys.stdout.write(step.get("content", "").replace("{n}", str(i)))
    else:
        sys.stdout.write(step.get("content", ""))
    sys.stdout.flush()
    return int(step.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())
