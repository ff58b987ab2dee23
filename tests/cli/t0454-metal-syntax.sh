#!/usr/bin/env bash
# needs: a clang strict enough for Metal (zig's: pip install ziglang; .ci/cross-macos installs
# it); Debian 12's clang 14 accepts a non-const reference to a vector element by subscript,
# so with it alone the test reports skipped.
# Every Metal kernel the project ships (tasks/*/naive.metal.mlx, tasks/*/templates/mlx/
# *.metal.mlx) passes bench/mlx/metal_syntax.py: the source MLX generates from it, at every
# workload and check the mlx backend runs and every knob value, compiled as Metal-like C++
# against bench/mlx/metal_syntax.h.  Two deliberately broken Mac-only lines fail it, each
# for its reason: a non-const reference bound to a vector element (flash_simd.metal.mlx's
# mistake before issue 44) and an input pointer declared `device` where MLX passes a small
# input as `constant` (softmax's templates before issue 44).
. "$(dirname "$0")/lib.sh"
M=$ROOT/bench/mlx/metal_syntax.py
mapfile -t shipped < <(cd "$ROOT" && find tasks -name '*.metal.mlx' | sort)
ok "$([ ${#shipped[@]} -ge 9 ]; echo $?)" "the shipped Metal kernels are found (${#shipped[@]})"
(cd "$ROOT" && python3 "$M" --ksearch "$KS" "${shipped[@]}") >"$TMP/shipped" 2>&1
rc=$?
sed 's/^/# /' "$TMP/shipped" | head -60
[ "$rc" -eq 77 ] && skip_rest "no clang here is strict enough for Metal (pip install ziglang)"
is "$rc" 0 "every shipped Metal kernel passes the strict syntax check"
is "$(grep -c ': ok (' "$TMP/shipped")" "${#shipped[@]}" "... each of the ${#shipped[@]} named ok"

fixtures=$ROOT/tests/fixtures/metal
python3 "$M" --ksearch "$KS" --task softmax "$fixtures/vector_element_ref.metal.mlx" >"$TMP/ref" 2>&1
is "$?" 1 "a non-const reference to a vector element fails"
sed 's/^/# /' "$TMP/ref" | head -8
grep -q 'vector_element_ref.metal.mlx:20:[0-9]*: error: non-const reference cannot bind to vector element' "$TMP/ref"
ok $? "... at the fixture's own line 20, saying why"
python3 "$M" --ksearch "$KS" --task softmax "$fixtures/device_input.metal.mlx" >"$TMP/dev" 2>&1
is "$?" 1 "a device input pointer fails where MLX passes the input as constant"
sed 's/^/# /' "$TMP/dev" | head -8
grep -q "device_input.metal.mlx:14:[0-9]*: error: .*'device float const \*'.*'constant float const \*'" "$TMP/dev"
ok $? "... at the fixture's line 14, naming both address spaces"

# the mlx backend's hostile Metal kernels (ksearch doctor runs them on a Mac) are Metal,
# but for the one that must not compile
H=$ROOT/tests/fixtures/hostile_mlx/metal
python3 "$M" --ksearch "$KS" --task softmax "$H/good.mlx" "$H/hang.mlx" "$H/oob_write.mlx" \
	"$H/partial_write.mlx" >"$TMP/hostile" 2>&1
is "$?" 0 "the hostile Metal kernels compile, to fail as they are meant to"
python3 "$M" --ksearch "$KS" --task softmax "$H/compile_error.mlx" >"$TMP/ce" 2>&1
is "$?" 1 "... and metal/compile_error.mlx does not"

# a compiler that accepts the probe's bad lines (here `true`, which accepts everything) is
# refused: nothing is reported as checked
python3 "$M" --ksearch "$KS" --clang true "${shipped[0]}" >"$TMP/weak" 2>&1
is "$?" 77 "a compiler that lets a vector-element reference through is refused (77: skipped)"
grep -q "accepts void p(float2 v, int i) { thread float &a = v\[i\]" "$TMP/weak"
ok $? "... saying what it accepted"
done_testing
