#!/usr/bin/env bash
# Every relative link in README.md and docs/**/*.md resolves to a file or folder inside the
# repository (a clone has it); links to the web and to anchors of the same page are left out.
. "$(dirname "$0")/lib.sh"
python3 - "$ROOT" >"$TMP/links.out" <<'PY'
import glob, os, re, sys
root = os.path.realpath(sys.argv[1])
files = [os.path.join(root, "README.md")] + glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True)
link = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
n = bad = 0
for f in files:
    text = open(f, encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks are not links
    for m in link.finditer(text):
        target = m.group(1)
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        n += 1
        path = os.path.realpath(os.path.join(os.path.dirname(f), target.split("#")[0]))
        line = text[: m.start()].count("\n") + 1
        if not path.startswith(root + os.sep) or not os.path.exists(path):
            bad += 1
            print(f"{os.path.relpath(f, root)}: '{target}' does not resolve inside the repository")
print(f"{n} links, {bad} broken")
sys.exit(1 if bad else 0)
PY
rc=$?
sed 's/^/# /' "$TMP/links.out"
ok $rc "the links of README.md and docs/ resolve inside the repository"
[ "$(tail -1 "$TMP/links.out" | cut -d' ' -f1)" -gt 10 ] 2>/dev/null
ok $? "and links were found (the check sees them)"
done_testing
