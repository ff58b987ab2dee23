#!/bin/bash
# ksearch tasks import, what goes wrong: a failed import leaves nothing behind, names become
# identifiers the loader takes, errors name the user's file (and line), silent acceptance
# of unknown fields or huge sizes is gone, a non-UTF-8 problem file is one line.
# needs: python3
. "$(dirname "$0")/lib.sh"

FIX=tests/fixtures/import
export KSEARCH_CACHE=$TMP/cache
O=$TMP/o
mkdir -p "$O"

kb() { # kb FILE SHAPE-ARGS [PRELUDE]: a KernelBench relu problem
	printf 'import torch\n%s\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\ndef get_inputs():\n    return [torch.randn(%s)]\ndef get_init_inputs():\n    return []\n' "${3:-}" "$2" >"$1"
}
left() { find "$O" -mindepth 1 | wc -l; }

# --- a failed import leaves nothing, and a retry is not blocked
kb "$TMP/zero.py" "0, 3"
$KS tasks import kernelbench "$TMP/zero.py" --out "$O" >/dev/null 2>"$TMP/zero.err"
is "$?" 2 "a zero-sized input is refused"
grep -q "zero.py': dimension 0 of input 'x' of get_inputs() is 0, not a positive 32-bit integer" "$TMP/zero.err"
ok $? "... naming the problem file, not the generated task.yaml"
is "$(left)" 0 "... and nothing is left in the output folder"
$KS tasks import kernelbench "$TMP/zero.py" --out "$O" >/dev/null 2>"$TMP/zero2.err"
! grep -q "already holds a task" "$TMP/zero2.err"
ok $? "a retry is not blocked by a half-written task"
kb "$TMP/big_size.py" "batch_size, 4" "batch_size = 3000000000"
$KS tasks import kernelbench "$TMP/big_size.py" --out "$O" >/dev/null 2>"$TMP/bs.err"
grep -q "big_size.py': size 'batch_size' is 3000000000, not a positive 32-bit integer" "$TMP/bs.err"
ok $? "a module size beyond 32 bits names the file and the size"
is "$(left)" 0 "... nothing left"

def() { # def FILE AXES INPUTS OUTPUTS [EXTRA]
	printf '{"name": "d", "axes": %s, "inputs": %s, "outputs": %s, "reference": "def run(x):\\n    return x\\n"%s}\n' "$2" "$3" "$4" "${5:-}" >"$1"
}
X='{"x": {"shape": ["n"], "dtype": "float32"}}'
Y='{"y": {"shape": ["n"], "dtype": "float32"}}'
def "$TMP/huge.json" '{"n": {"type": "const", "value": 1000000000000}}' "$X" "$Y"
$KS tasks import flashinfer-bench "$TMP/huge.json" --out "$O" >/dev/null 2>"$TMP/huge.err"
is "$?" 2 "a const axis of 10^12 is refused"
grep -q "huge.json': const axis 'n' is 1000000000000, not a positive 32-bit integer" "$TMP/huge.err"
ok $? "... naming the definition"
def "$TMP/neg.json" '{"n": {"type": "const", "value": -4}}' "$X" "$Y"
$KS tasks import flashinfer-bench "$TMP/neg.json" --out "$O" >/dev/null 2>"$TMP/neg.err"
grep -q "neg.json': const axis 'n' is -4" "$TMP/neg.err"
ok $? "a negative const axis names the definition"
def "$TMP/dup.json" '{"n": {"type": "const", "value": 4}}' "$X" '{"x": {"shape": ["n"], "dtype": "float32"}}'
$KS tasks import flashinfer-bench "$TMP/dup.json" --out "$O" >/dev/null 2>"$TMP/dup.err"
grep -q "dup.json': output 'x' has the name of an input" "$TMP/dup.err"
ok $? "an output named like an input names the definition"
VAR='{"n": {"type": "var"}}'
def "$TMP/var.json" "$VAR" "$X" "$Y"
wl() { printf '%s\n' "$@" >"$TMP/w.jsonl"; }
wl '{"axes": {"n": 8}, "inputs": {"x": {"type": "random"}}}' '{"axes": {"n": 3000000000}, "inputs": {"x": {"type": "random"}}}'
$KS tasks import flashinfer-bench "$TMP/var.json" "$TMP/w.jsonl" --out "$O" >/dev/null 2>"$TMP/wbig.err"
grep -q "w.jsonl:2: axis 'n' is 3000000000, not a positive 32-bit integer" "$TMP/wbig.err"
ok $? "a workload axis beyond 32 bits names the file and line"
wl '{"axes": {"n": -2}, "inputs": {"x": {"type": "random"}}}'
$KS tasks import flashinfer-bench "$TMP/var.json" "$TMP/w.jsonl" --out "$O" >/dev/null 2>"$TMP/wneg.err"
grep -q "w.jsonl:1: axis 'n' is -2" "$TMP/wneg.err"
ok $? "a negative workload axis names the file and line"
wl '{"axes": {"n": 8, "bogus": 3}, "inputs": {"x": {"type": "random"}}}'
$KS tasks import flashinfer-bench "$TMP/var.json" "$TMP/w.jsonl" --out "$O" >/dev/null 2>"$TMP/wax.err"
is "$?" 2 "a workload with an unknown axis is refused"
grep -q "w.jsonl:1: axis 'bogus' is not an axis of" "$TMP/wax.err"
ok $? "... naming the file and line"
wl '{"axes": {"n": 8}, "inputs": {"x": {"type": "weird"}}}'
$KS tasks import flashinfer-bench "$TMP/var.json" "$TMP/w.jsonl" --out "$O" >/dev/null 2>"$TMP/wty.err"
is "$?" 2 "a workload input of an unknown type is refused"
grep -q "w.jsonl:1: input 'x' has type 'weird'" "$TMP/wty.err"
ok $? "... naming the file and line"
is "$(left)" 0 "none of these left anything in the output folder"
printf '{"name": "d", "reference": 42}\n' >"$TMP/ref.json"
$KS tasks import flashinfer-bench "$TMP/ref.json" --out "$O" >/dev/null 2>"$TMP/ref.err"
grep -q "'reference' is not a string" "$TMP/ref.err"
ok $? "a reference that is not a string says so"

# --- names become identifiers the loader accepts
kb "$TMP/Ünïcode.py" "16"
$KS tasks import kernelbench "$TMP/Ünïcode.py" --out "$O" >"$TMP/uni.out" 2>&1
ok $? "a problem file with a non-ASCII name imports"
$KS tasks show "$(sed -n "s/^wrote task '.*' to //p" "$TMP/uni.out")" >/dev/null 2>&1
ok $? "... as a task that loads"
sed 's/"name": "d"/"name": "..\/..\/evil"/' "$TMP/var.json" >"$TMP/evil.json"
wl '{"axes": {"n": 8}, "inputs": {"x": {"type": "random"}}}'
$KS tasks import flashinfer-bench "$TMP/evil.json" "$TMP/w.jsonl" --out "$O" >"$TMP/evil.out" 2>&1
ok $? "a definition named '../../evil' imports"
grep -q "wrote task 'evil' to $O/evil" "$TMP/evil.out"
ok $? "... inside the output folder, as 'evil'"

# --- huge sizes are a warning; a non-UTF-8 file is one line
kb "$TMP/huge_kb.py" "1000000, 1000000"
$KS tasks import kernelbench "$TMP/huge_kb.py" --out "$O" >/dev/null 2>"$TMP/hkb.err"
ok $? "a 10^6 x 10^6 problem imports"
grep -q "warning: workload 1's tensors need 7.3 TiB of memory" "$TMP/hkb.err"
ok $? "... with a warning giving the size"
printf 'im\xff\xfeport torch\n' >"$TMP/binary.py"
$KS tasks import kernelbench "$TMP/binary.py" --out "$O" >/dev/null 2>"$TMP/bin.err"
is "$?" 2 "a non-UTF-8 problem file is refused"
is "$(cat "$TMP/bin.err")" "ksearch: '$TMP/binary.py': not UTF-8 text (byte 0xff at offset 2)" \
	"... in one line naming the byte"

done_testing
