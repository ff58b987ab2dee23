#!/usr/bin/env python3
"""Names of the system calls ksearch's runners make once their seccomp filter is loaded.

Reads `strace -f -o FILE` output (one line per call, each prefixed with its pid) of a
ksearch command and prints, one per line with a count, every system call made by a
ksearch-runner* process, or a thread it started, after the runner loaded its filter.
What the runner does before that (exec, loading libraries, entering the sandbox) is not
the kernel's business and is left out.  Used by scripts/seccomp_measure.sh."""
import re
import sys
from collections import Counter

exit_re = re.compile(r"^(\d+)\s+\+\+\+ (?:exited|killed)")
line_re = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()(.*)$")
ret_re = re.compile(r"\)\s+=\s+(-?\d+)")

counts = Counter()
for path in sys.argv[1:]:
    runners, filtered = set(), set()  # pids are per trace, and reused once gone
    with open(path, errors="replace") as f:
        for line in f:
            gone = exit_re.match(line)
            if gone:
                runners.discard(int(gone.group(1)))
                filtered.discard(int(gone.group(1)))
                continue
            m = line_re.match(line)
            if not m:
                continue
            pid = int(m.group(1))
            name = m.group(2) or m.group(3)
            rest = m.group(4)
            r = ret_re.search(rest)
            ret = int(r.group(1)) if r else None
            if name == "execve" and "ksearch-runner" in rest.split(",")[0]:
                runners.add(pid)
            loads = (name == "seccomp" and "SECCOMP_SET_MODE_FILTER" in rest) or \
                (name == "prctl" and "PR_SET_SECCOMP" in rest)
            if pid in filtered:
                if not loads:  # the runner stacking its later filters
                    counts[name] += 1
                if name in ("clone", "clone3") and ret and ret > 0:
                    filtered.add(ret)
            elif pid in runners and ret == 0 and loads:
                # the runner's own filters come first: the next calls are the kernel's era
                filtered.add(pid)
for name, n in sorted(counts.items()):
    print(f"{name} {n}")
