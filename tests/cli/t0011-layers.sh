#!/bin/bash
# The folders of src/ are layers (src/layers.txt): code includes only its own folder's headers
# and those of lower layers, and a function is declared in a header of the folder that
# defines it.  Three checks, each first shown to catch a planted fault:
#   - every folder of src/ and every public header (include/ksearch/) has a line in layers.txt;
#   - no #include points to a folder on the same or a higher layer (by the public header's
#     owner, or by the private header's folder: "eval/stats.h");
#   - in the built library (nm of its objects, when the build folder has them), no folder uses
#     a symbol defined by a folder on the same or a higher layer.
# needs: python3; the object check needs the build folder (KS_BIN, set by CTest)
set -u
SRC="${KSEARCH_HOME:-$(pwd)}"
OBJ="${KS_OBJ_DIR:-${KS_BIN:-build}/CMakeFiles/ksearch_lib.dir/src}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cat >"$TMP/layers.py" <<'PY'
import os, re, subprocess, sys
from collections import defaultdict

def load(root):
    layer, owner, bad = {}, {}, []
    for n, line in enumerate(open(os.path.join(root, "src/layers.txt")), 1):
        line = line.split("|")[0].strip()
        if not line or line.startswith("#"):
            continue
        f = line.split()
        if len(f) < 2 or not f[1].isdigit():
            bad.append("src/layers.txt:%d: expected 'folder layer headers...'" % n)
            continue
        layer[f[0]] = int(f[1])
        for h in f[2:]:
            owner[h] = f[0]
    return layer, owner, bad

def includes(root, layer, owner):
    out = []
    src = os.path.join(root, "src")
    for folder in sorted(os.listdir(src)):
        d = os.path.join(src, folder)
        if not os.path.isdir(d):
            continue
        if folder not in layer:
            out.append("src/%s/: a folder with no line in src/layers.txt" % folder)
            continue
        for f in sorted(os.listdir(d)):
            if not re.search(r"\.(c|h|cpp)$", f):
                continue
            for n, line in enumerate(open(os.path.join(d, f), errors="replace"), 1):
                m = re.match(r'\s*#\s*include\s+"([a-z_0-9]+)/([^"]+)"', line)
                if not m:
                    continue
                top, name = m.groups()
                if top == "ksearch":
                    to = owner.get(name)
                    if to is None:
                        out.append("src/%s/%s:%d: include/ksearch/%s has no owner in src/layers.txt"
                                   % (folder, f, n, name))
                        continue
                elif top in layer:
                    to = top
                else:
                    continue  # another project's header (mlx/...)
                if to != folder and layer[to] >= layer[folder]:
                    out.append("src/%s/%s:%d: includes %s/%s of '%s' (layer %d) from '%s' (layer %d)"
                               % (folder, f, n, top, name, to, layer[to], folder, layer[folder]))
    for h in sorted(os.listdir(os.path.join(root, "include/ksearch"))):
        if h.endswith(".h") and h not in owner:
            out.append("include/ksearch/%s: no folder owns it in src/layers.txt" % h)
    return out

def symbols(objdir, layer, root=None):
    defs, uses = {}, defaultdict(set)
    for folder in sorted(os.listdir(objdir)):
        d = os.path.join(objdir, folder)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            # objects of a source that moved or went away stay in a build folder
            if not f.endswith(".o") or (root and not os.path.exists(
                    os.path.join(root, "src", folder, f[:-2]))):
                continue
            nm = subprocess.run(["nm", os.path.join(d, f)], capture_output=True, text=True).stdout
            for line in nm.splitlines():
                p = line.split()
                if len(p) == 3 and p[1] in "TDBR":
                    defs[p[2]] = folder
                elif len(p) == 2 and p[0] == "U":
                    uses[(folder, f[:-2])].add(p[1])
    out = []
    for (folder, f), syms in sorted(uses.items()):
        for s in sorted(syms):
            to = defs.get(s)
            if to and to != folder and folder in layer and to in layer and layer[to] >= layer[folder]:
                out.append("src/%s/%s uses %s, defined in '%s' (layer %d) from '%s' (layer %d)"
                           % (folder, f, s, to, layer[to], folder, layer[folder]))
    return out

root, what = sys.argv[1], sys.argv[2]
layer, owner, bad = load(root)
found = bad + (includes(root, layer, owner) if what == "includes" else symbols(sys.argv[3], layer, root if what == "symbols" and os.path.isdir(os.path.join(root, "src", "util")) else None))
if found:
    print("\n".join(found))
PY

fails=0 n=0
check() { # check NAME COND...
	local name=$1
	shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $name"; else echo "not ok $n - $name"; fails=$((fails + 1)); fi
}
# a planted tree: an upward include, a same-layer include, an unowned header, a folder with no line
mkdir -p "$TMP/t/src/low" "$TMP/t/src/high" "$TMP/t/src/mid" "$TMP/t/src/stray" "$TMP/t/include/ksearch"
printf 'low 0 low.h\nmid 1 mid.h\nmid2 1\nhigh 2 high.h\n' >"$TMP/t/src/layers.txt"
touch "$TMP/t/include/ksearch/low.h" "$TMP/t/include/ksearch/mid.h" "$TMP/t/include/ksearch/high.h" \
	"$TMP/t/include/ksearch/orphan.h"
printf '#include "ksearch/high.h"\n' >"$TMP/t/src/low/a.c"
printf '#include "ksearch/low.h"\n#include "mid2/x.h"\n' >"$TMP/t/src/mid/b.c"
printf '#include "ksearch/mid.h"\n#include "low/p.h"\n' >"$TMP/t/src/high/c.c"
python3 "$TMP/layers.py" "$TMP/t" includes >"$TMP/planted"
check "a planted upward include is found" grep -q "src/low/a.c:1: includes ksearch/high.h" "$TMP/planted"
check "a planted same-layer include is found" grep -q "src/mid/b.c:2: includes mid2/x.h" "$TMP/planted"
check "a header without an owner is found" grep -q "include/ksearch/orphan.h" "$TMP/planted"
check "a folder without a line is found" grep -q "src/stray/" "$TMP/planted"
check "downward includes are not reported" test "$(wc -l <"$TMP/planted")" -eq 4

python3 "$TMP/layers.py" "$SRC" includes >"$TMP/found"
[ -s "$TMP/found" ] && sed 's/^/# /' "$TMP/found"
check "no include points up or sideways in src/" test ! -s "$TMP/found"

# README's Layout names every folder of src/layers.txt with its line, and no other
readme_rows=$(grep -oE '^\| `src/[a-z_0-9]+/` \| [0-9]+ \| .* \|$' "$SRC/README.md" |
	sed -E 's/^\| `src\/([a-z_0-9]+)\/` \| ([0-9]+) \| (.*) \|$/\1 \2 \3/' | sort)
layer_rows=$(grep -vE '^(#|$)' "$SRC/src/layers.txt" |
	awk -F'|' '{split($1, f, " "); sub(/^ +/, "", $2); sub(/ +$/, "", $2); print f[1], f[2], $2}' | sort)
check "README's Layout matches src/layers.txt" test "$readme_rows" = "$layer_rows"
[ "$readme_rows" = "$layer_rows" ] || diff <(echo "$layer_rows") <(echo "$readme_rows") | sed 's/^/# /'

if [ -d "$OBJ" ] && command -v nm >/dev/null; then
	# planted objects: low uses a symbol high defines
	mkdir -p "$TMP/o/low" "$TMP/o/high"
	echo 'int up(void); int low_f(void) { return up(); }' >"$TMP/o/low.c"
	echo 'int up(void) { return 1; }' >"$TMP/o/high.c"
	cc -c -o "$TMP/o/low/low.c.o" "$TMP/o/low.c" && cc -c -o "$TMP/o/high/high.c.o" "$TMP/o/high.c"
	python3 "$TMP/layers.py" "$TMP/t" symbols "$TMP/o" >"$TMP/planted2"
	check "a planted upward symbol is found" grep -q "src/low/low.c uses up" "$TMP/planted2"
	python3 "$TMP/layers.py" "$SRC" symbols "$OBJ" >"$TMP/found2"
	[ -s "$TMP/found2" ] && sed 's/^/# /' "$TMP/found2"
	check "no folder of the library uses a symbol of its layer or above" test ! -s "$TMP/found2"
else
	n=$((n + 1))
	echo "ok $n - symbols by folder # SKIP no object files in $OBJ (KS_BIN: the build folder)"
fi
echo "1..$n"
[ "$fails" -eq 0 ]
