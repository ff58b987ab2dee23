#!/usr/bin/env bash
# needs: a C compiler with OpenMP (as the cpu backend does); no GPU.
# tasks/selective_scan_f32 (selective_scan with f32 u, delta, B, C, z and y) runs
# selective_scan's files with SS_F32 1 through '// @ksearch include:': its baseline and CPU
# templates pass on cpu, and a kernel that rounds y through _Float16 fails its tolerance
# (which is tight enough for that: task.yaml says how it was chosen). Its CUDA template
# wrappers only include selective_scan's, whose shared-memory bounds count sizeof.u.
. "$(dirname "$0")/lib.sh"

F=$ROOT/tasks/selective_scan_f32
S=$ROOT/tasks/selective_scan
status() { eval_status k "$F" "$1" --quick --no-baseline; } # status FILE
"$KS" tasks show "$F" >"$TMP/show.txt" 2>&1
grep -q 'void selective_scan_f32(const float \*u, const float \*delta, const float \*A, const float \*B, const float \*C, const float \*D, const float \*z, const float \*delta_bias, float \*y' "$TMP/show.txt"
ok $? "the prototype takes f32 activations"
is "$(status "$F/baseline.c")" PASSED "f32 baseline.c passes"
for f in "$F"/templates/cpu/*.c; do
	is "$(status "$f")" PASSED "f32 ${f#$F/} passes"
done

# the baseline with y rounded through _Float16 (the f16 task's output precision)
{ echo '#define SS_GATE 1'
  echo '#define SS_F32 1'
  echo '#define SS_FN selective_scan_f32'
  sed 's|y\[row + t\] = (ss_t)acc;|y[row + t] = (ss_t)(_Float16)acc;|' "$S/baseline.c"; } >"$TMP/f16y.c"
grep -q '(_Float16)acc' "$TMP/f16y.c"
ok $? "f16-rounding kernel made"
is "$(status "$TMP/f16y.c")" INCORRECT_NUMERICAL "a kernel that rounds y to f16 fails the f32 tolerance"

# the wrappers only include: the shared-memory bounds of state_scan.cu and chunk_carry.cu count
# sizeof.u / sizeof.B, so one knob block serves f16 and f32
for t in state_scan chunk_carry; do
	w=$F/templates/cuda/$t.cu
	grep -q "^// @ksearch include: ../../../selective_scan/templates/cuda/$t.cu$" "$w"
	ok $? "f32 $t.cu includes selective_scan's"
	! grep -q '@ksearch$' "$w" && grep -q 'sizeof\.' "$S/templates/cuda/$t.cu"
	ok $? "f32 $t.cu has no knob block of its own; the included one's bound counts sizeof"
done
knobs() { sed -n '/^knob templates/,/^$/p' "$1"; }
"$KS" tasks show "$F" --backend cuda >"$TMP/f.txt" 2>&1 &&
	"$KS" tasks show "$S" --backend cuda >"$TMP/s.txt" 2>&1
[ -n "$(knobs "$TMP/f.txt")" ] && [ "$(knobs "$TMP/f.txt")" = "$(knobs "$TMP/s.txt")" ]
ok $? "the f32 CUDA templates list selective_scan's families and knobs"
done_testing
