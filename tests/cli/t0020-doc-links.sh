#!/usr/bin/env bash
# Every relative link in README.md and docs/**/*.md resolves to a file or folder inside the
# repository (a clone has it); links to the web and to anchors of the same page are left out.
# Every file under docs/results/ and bench/ is listed in that folder's README.md.
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

# Every file under docs/results/ and bench/ is named in that folder's README.md, by its path
# from there: the index a newcomer reads.  A page or script added without its line fails here.
cat >"$TMP/listed.py" <<'PY'
import os, re, subprocess, sys
root = os.path.realpath(sys.argv[1])
def files(folder):  # what git would add (tracked, or new and not ignored); a plain walk elsewhere
    git = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard",
                          "--", folder], capture_output=True, text=True)
    if git.returncode == 0 and os.path.exists(os.path.join(root, ".git")):
        names = [os.path.relpath(f, folder) for f in git.stdout.split("\n") if f]
        return [f for f in names if os.path.exists(os.path.join(root, folder, f))]
    return [os.path.relpath(os.path.join(d, f), os.path.join(root, folder))
            for d, subs, fs in os.walk(os.path.join(root, folder))
            for f in fs if not f.startswith(".") and "__pycache__" not in d]
n = bad = 0
for folder in sys.argv[2:]:
    index = os.path.join(root, folder, "README.md")
    text = open(index, encoding="utf-8").read() if os.path.exists(index) else ""
    if not text:
        bad += 1
        print(f"{folder}/README.md is missing")
    for f in sorted(files(folder)):
        if f == "README.md":
            continue
        n += 1
        if not re.search(r"(?<![\w./-])" + re.escape(f) + r"(?![\w/-])", text):
            bad += 1
            print(f"{folder}/{f} is not listed in {folder}/README.md")
print(f"{n} files, {bad} not listed")
sys.exit(1 if bad else 0)
PY
# the check itself, on a folder with one listed and one unlisted file
mkdir -p "$TMP/fixture/d/sub"
echo "- [sub/a.md](sub/a.md)" >"$TMP/fixture/d/README.md"
touch "$TMP/fixture/d/sub/a.md" "$TMP/fixture/d/sub/b.md" "$TMP/fixture/d/a.md"
python3 "$TMP/listed.py" "$TMP/fixture" d >"$TMP/fixture.out"
[ $? -ne 0 ] && [ "$(grep -c "not listed in" "$TMP/fixture.out")" = 2 ] &&
	grep -q "^d/sub/b.md is not listed" "$TMP/fixture.out" && grep -q "^d/a.md is not listed" "$TMP/fixture.out"
ok $? "the listing check names an unlisted file (and sub/a.md does not list a.md)"
python3 "$TMP/listed.py" "$ROOT" docs/results bench >"$TMP/listed.out"
rc=$?
sed 's/^/# /' "$TMP/listed.out"
ok $rc "every file in docs/results/ and bench/ is listed in its README.md"
[ "$(tail -1 "$TMP/listed.out" | cut -d' ' -f1)" -gt 40 ] 2>/dev/null
ok $? "and files were found (the check sees them)"
done_testing
