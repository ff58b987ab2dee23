#!/bin/bash
# No code outside src/backend/ tells backends apart by name (docs/backends.md): what sets a
# backend apart is a slot of its struct ks_backend_i.  Fails on any string comparison
# (strcmp and kin) against a backend or kernel-language name, and on any == or != with a
# backend's struct, in src/ or include/ outside src/backend/; first proves on a planted tree
# that it catches one.  Also: each backend's sandbox needs are applied by a runner device.
# needs: nothing (reads the sources only)
set -u
SRC="${KSEARCH_HOME:-$(pwd)}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0 n=0

check() { # check NAME COND...
	local name=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		fails=$((fails + 1))
	fi
}

# Comparisons that stay, each with its reason (an extended regex on "file:line:text"):
allowed=(
	# a spec document's hardware kind (knowledge/specs/*.yaml: kind: gpu | cpu), not a backend
	'^[^:]*:[0-9]+:.*kind'
	# translation targets name concept-map documents (knowledge/translate/cuda-to-TARGET.yaml)
	# and hint files: knowledge, not backends; they exist whatever backends are built
	'^src/(knowledge/[a-z_]+|cli/cmd_translate)\.c:[0-9]+:.*cmp\(((m->)?target|to), "'
	# a concept map's source language field ("source: cuda")
	'^src/knowledge/conceptmap\.c:[0-9]+:.*ks_yaml_scalar\(n\), "cuda"'
)

# scan ROOT: print every comparison against a backend or language name outside src/backend/
scan() {
	local root=$1 names
	# the registered backends' names and languages, and the one announced next
	names=$( (grep -rhoE '\.(name|lang) = "[a-z0-9_]+"' "$root/src/backend" | sed 's/.*"\(.*\)"/\1/'
		echo mlx; echo metal) | sort -u | paste -sd'|')
	# by name, or by identity (be == &ks_backend_cpu)
	(cd "$root" && grep -rnE --include='*.[ch]' \
		-e "(str(n)?(case)?cmp|strstr|memcmp) *\\([^;]*\"($names)\"" \
		-e '[!=]= *&ks_backend_[a-z0-9_]+' -e '&ks_backend_[a-z0-9_]+ *[!=]=' src include) |
		grep -v '^src/backend/' | {
		local line ok
		while IFS= read -r line; do
			ok=0
			for a in "${allowed[@]}"; do
				[[ $line =~ $a ]] && ok=1
			done
			[ $ok = 1 ] || echo "$line"
		done
	}
}

# the check can fail: a planted comparison is found, an allowed one and src/backend/ are not
mkdir -p "$TMP/tree/src/backend" "$TMP/tree/src/eval" "$TMP/tree/include"
cat >"$TMP/tree/src/backend/x.c" <<'C'
const struct ks_backend_i ks_backend_x = {.name = "xpu", .lang = "xlang"};
int f(const char *b) { return !strcmp(b, "xpu"); }
C
cat >"$TMP/tree/src/eval/y.c" <<'C'
int g(const char *b) { return !strcmp(b, "xpu"); }
int h(const struct ks_spec *s) { return !strcmp(s->kind, "xpu"); }
int i(const char *lang) { return strncmp(lang, "xlang", 5); }
int j(const char *b) { return !strcmp(b, "mlx"); }
int k(const struct ks_backend_i *be) { return be != &ks_backend_x; }
C
scan "$TMP/tree" >"$TMP/planted"
check "a planted backend-name comparison is found" grep -q 'y.c:1:' "$TMP/planted"
check "a planted language-name comparison is found" grep -q 'y.c:3:' "$TMP/planted"
check "the announced mlx backend is covered before it is registered" grep -q 'y.c:4:' "$TMP/planted"
check "a comparison with a backend's struct is found" grep -q 'y.c:5:' "$TMP/planted"
check "spec kinds and src/backend/ are not reported" test "$(wc -l <"$TMP/planted")" -eq 4

scan "$SRC" >"$TMP/found"
check "no backend name compared outside src/backend/" test ! -s "$TMP/found"
sed 's/^/# /' "$TMP/found"

# the runner applies a backend's sandbox needs through its device, which must point to the
# very object the backend's sandbox slot does (docs/backends.md)
for needs in $(grep -rhoE '\.sandbox = &ks_sandbox_[a-z0-9_]+' "$SRC/src/backend" | sed 's/.*&//' | sort -u); do
	check "a runner device applies $needs" grep -qE "\.sandbox = &$needs\b" "$SRC"/src/runner/device_*.c
done

# policies are told apart by their interface struct, never by name outside the registry
pnames=$(grep -rh -A3 '^const struct ks_policy_i ks_policy_' "$SRC/src/policy" |
	grep -oE '\.name = "[a-z0-9_]+"' | sed 's/.*"\(.*\)"/\1/' | sort -u | paste -sd'|')
check "the registered policies are found ($pnames)" test -n "$pnames"
grep -rnE "cmp\([^)]*\"($pnames)\"" "$SRC/src" "$SRC/include" 2>/dev/null |
	grep -v "^$SRC/src/policy/registry.c:" | sed "s|^$SRC/||" >"$TMP/pfound"
check "no policy name compared outside src/policy/registry.c" test ! -s "$TMP/pfound"
sed 's/^/# /' "$TMP/pfound"

echo "1..$n"
echo "$((n - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
