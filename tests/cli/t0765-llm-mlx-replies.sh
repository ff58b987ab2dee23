#!/usr/bin/env bash
# needs: python3; for the evaluations an NVIDIA GPU with MLX's CUDA build (pip install
# "mlx[cuda13]"; bench/mlx/gpu_env.sh for one unpacked by hand), skipped elsewhere.
# The MLX prompts a model answered, kept in tests/fixtures/llm_runs/mlx-prompts-h100/: per
# task the action prompt of `ksearch prompt TASK --backend mlx --flavour cuda --spec h100`,
# the model's reply, and in summary.json what an H100 measured of the reply's kernel.
#   - The kernel ksearch takes from each reply (`ksearch prompt --reply`: the extraction a
#     run makes) is byte for byte the kernel the H100 evaluated (its sha256 in summary.json).
#   - Today's prompt still asks for the format the reply follows: the reply-format lines,
#     the signature MLX generates, and the grammar line of every '// @mlx' directive the
#     kernel uses.
#   - Where MLX's CUDA build and a GPU are present, each kernel still passes every workload
#     and check (`ksearch eval --backend mlx`).
. "$(dirname "$0")/lib.sh"
FIX=$ROOT/tests/fixtures/llm_runs/mlx-prompts-h100
BIN=$(cd "$(dirname "$KS")" && pwd)
command -v python3 >/dev/null 2>&1 || skip_rest "python3 is missing"
TASKS=$(json_get "$FIX/summary.json" "' '.join(d['tasks'])")
[ -n "$TASKS" ]
ok $? "summary.json names the tasks ($TASKS)"

# the format the reply follows, asked for by the recorded prompt and by today's: its leading
# tag lines and its one fenced code block (the reply-format section), MLX's signature (each
# line), and for each '// @mlx KEY' line of the kernel the prompt's first line for KEY, its
# directive and placeholders (a comment after two spaces may change).  Today's prompt also
# asks for a '#define NAME VALUE' line per knob, which these replies predate (README.md).
format_kept() { # format_kept RECORDED_PROMPT TODAYS_PROMPT REPLY KERNEL
	python3 - "$@" <<'EOF'
import re, sys
rec, now, reply, kernel = (open(p, encoding="utf-8").read() for p in sys.argv[1:])
def section(text, start, end):
    s = text.find(start)
    if s < 0:
        return ""
    e = text.find(end, s + len(start))
    return text[s:e if e >= 0 else len(text)]
def asks(text):
    fmt = section(text, "## Reply format", "\n## ")
    tags = set(re.findall(r"^([A-Z]+):", fmt, re.M))
    fence = re.search(r"exactly one fenced (```\w+) code block", fmt)
    sig = [l.strip() for l in section(text, "Signature MLX generates, flavour cuda",
                                       "An input NAME also gets").splitlines()]
    return tags, fence.group(1) if fence else None, sig
used_tags = re.findall(r"^([A-Z]+):", reply, re.M)[:3]
used_fence = re.findall(r"^```\w+", reply, re.M)
missing = []
for name, text in (("the recorded prompt", rec), ("today's prompt", now)):
    tags, fence, sig = asks(text)
    missing += ["%s: tag %s" % (name, t) for t in used_tags if t not in tags]
    if used_fence != [fence]:
        missing.append("%s: one %s block (the reply has %s)" % (name, fence, used_fence))
rec_sig, now_lines = asks(rec)[2], {l.strip() for l in now.splitlines()}
missing += ["today's prompt: signature line '%s'" % l for l in rec_sig if l and l not in now_lines]
def grammar(text, key):
    m = re.search(r"^\s*// @mlx %s\b.*$" % re.escape(key), text, re.M)
    return re.split(r"\s{2,}", m.group(0).strip())[0] if m else None
keys = sorted(set(re.findall(r"^\s*// @mlx (\w+)", kernel, re.M)))
missing += ["directive %s (recorded: %s; today: %s)" % (k, grammar(rec, k), grammar(now, k))
            for k in keys if grammar(rec, k) is None or grammar(now, k) != grammar(rec, k)]
if len(used_tags) < 3 or not rec_sig or not keys:
    missing.append("the reply's tags %s, the recorded signature (%d lines) or the kernel's "
                   "directives (%d)" % (used_tags, len(rec_sig), len(keys)))
if missing:
    sys.exit("not asked for: " + "; ".join(missing[:5]))
print("tags %s, one %s block, %d signature lines, directives %s"
      % (" ".join(used_tags), used_fence[0], len([l for l in rec_sig if l]), " ".join(keys)))
EOF
}

for t in $TASKS; do
	"$KS" prompt "$t" --backend mlx --flavour cuda --spec h100 --purpose action \
		--reply "$FIX/$t-0001.reply.md" >"$TMP/$t.mlx" 2>"$TMP/$t.err"
	ok $? "$t: ksearch takes a kernel from the recorded reply"
	got=$(sha256sum "$TMP/$t.mlx" | cut -d' ' -f1)
	is "$got" "$(json_get "$FIX/summary.json" "d['tasks']['$t']['kernel_sha256']")" \
		"$t: ... byte for byte the kernel evaluated on the H100"
	"$KS" prompt "$t" --backend mlx --flavour cuda --spec h100 --purpose action >"$TMP/$t.prompt" 2>&1
	ok $? "$t: today's prompt builds"
	why=$(format_kept "$FIX/$t-0001-action.prompt.md" "$TMP/$t.prompt" "$FIX/$t-0001.reply.md" \
		"$TMP/$t.mlx" 2>&1)
	ok $? "$t: today's prompt asks for the format the reply follows ($why)"
done

# a reply without a usable kernel is refused as a run refuses it (the check can fail)
sed 's/^```cuda$/```text/' "$FIX/softmax-0001.reply.md" >"$TMP/text.reply.md"
"$KS" prompt softmax --backend mlx --flavour cuda --spec h100 --reply "$TMP/text.reply.md" \
	>/dev/null 2>"$TMP/text.err"
is "$?" 1 "a reply whose only block is not code gives no kernel (exit 1)"
grep -q "no code block" "$TMP/text.err"
ok $? "... and says why ($(head -c 200 "$TMP/text.err"))"

[ -x "$BIN/ksearch-runner-mlx" ] || skip_rest "ksearch was built without MLX: the kernels are not evaluated here"
probe=$("$BIN/ksearch-runner-mlx" --probe 2>&1)
case "$probe" in
*cuda=1*) ok 0 "ksearch-runner-mlx --probe: $probe" ;;
*) skip_rest "this MLX has no usable CUDA backend ($probe): the kernels are not evaluated here" ;;
esac
for t in $TASKS; do
	# correctness is what is required here; the H100's timings are in summary.json
	st=$(eval_status "$t" "$t" "$TMP/$t.mlx" --backend mlx --timeout 30 --quick --no-baseline)
	is "$st" PASSED "$t: the model's kernel passes every workload and check on this GPU"
	[ "$st" = PASSED ] || head -c 1000 "$TMP/$t.err" | sed 's/^/# /'
done
done_testing
