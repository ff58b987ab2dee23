#!/bin/bash
# Roofs to trust: spec detect flags a probe that shared the CPUs with other work (load made
# here by busy processes, as many as twice the cores plus two), keeps the best figure of
# this machine in the cached spec (a lower measurement never replaces it, --fresh does),
# and the report says when, by which probe and at what load its roofs were measured; a
# "% of roofline" above 100 reads "above the roof", never as a share; a mistyped spec
# name gets a suggestion.
# needs: nothing (no GPU); spec detect runs ~1 s micro-benchmarks, a CPU run of softmax
. "$(dirname "$0")/lib.sh"

export KSEARCH_CACHE=$TMP/cache
ncpu=$(getconf _NPROCESSORS_ONLN)
busy=()
stop_busy() {
	for p in "${busy[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${busy[@]}"; do wait "$p" 2>/dev/null; done
	busy=()
}
trap 'stop_busy; rm -rf "$TMP"' EXIT

# a bandwidth value, its measured.at, from_cache and loaded, from `spec detect --json` output
bw() { json_get "$1" "d['fields']['mem_bandwidth_gbps']$2"; }

# ---- a loaded machine is flagged ---------------------------------------------------------
for _ in $(seq $((2 * ncpu + 2))); do
	(while :; do :; done) &
	busy+=($!)
done
sleep 0.5
KSEARCH_CACHE=$TMP/loaded "$KS" spec detect --json >"$TMP/loaded.json" 2>"$TMP/loaded.err"
rc=$?
stop_busy
is "$rc" 0 "spec detect under load exits 0"
is "$(bw "$TMP/loaded.json" "['measured']['loaded']")" True \
	"the bandwidth measured beside $((2 * ncpu + 2)) busy processes on $ncpu cores is flagged loaded"
python3 -c "import sys; sys.exit(not float(sys.argv[1]) > $ncpu)" \
	"$(bw "$TMP/loaded.json" "['measured']['load']")"
ok $? "... with the load it saw ($(bw "$TMP/loaded.json" "['measured']['load']") > $ncpu)"
grep -q "the machine was loaded while measuring (load [0-9.]* on $ncpu cores): copy bandwidth" "$TMP/loaded.err" &&
	grep -q "measure again when the machine is quiet" "$TMP/loaded.err"
ok $? "... and says so, with what to do"

# ---- the best figure is kept -------------------------------------------------------------
"$KS" spec detect --json >"$TMP/d1.json" 2>"$TMP/d1.err"
ok $? "spec detect exits 0"
cache=$(sed -n 's/^best figures of this machine: //p' "$TMP/d1.err")
test -s "$cache"
ok $? "the best figures are cached under \$KSEARCH_CACHE ($cache)"
is "$(bw "$TMP/d1.json" "['measured']['probe']")" memcpy "the bandwidth names its probe"

# set the cached bandwidth to VALUE, measured at AT under load LOAD
seed() {
	python3 - "$cache" "$1" "$2" "$3" <<'EOF'
import re, sys
path, value, at, load = sys.argv[1:]
text = open(path).read()
line = re.search(r"^  mem_bandwidth_gbps: .*$", text, re.M).group(0)
new = re.sub(r"value: [0-9.e+-]+", "value: " + value, line)
new = re.sub(r'at: "[^"]*"', 'at: "%s"' % at, new)
new = re.sub(r"load: [0-9.]+", "load: " + load, new)
open(path, "w").write(text.replace(line, new))
EOF
}
seed 99999 2020-01-02T03:04:05Z 0.25
"$KS" spec detect --json >"$TMP/d2.json" 2>"$TMP/d2.err"
is "$(bw "$TMP/d2.json" "['value']")" 99999 "a lower measurement does not replace the cached higher figure"
is "$(bw "$TMP/d2.json" "['measured']['at']")" 2020-01-02T03:04:05Z "... which keeps its time"
is "$(bw "$TMP/d2.json" "['measured']['from_cache']")" True "... and says it came from the cache"
grep -q "^  this detection: [0-9.]* GB/s, measured " "$TMP/d2.err"
ok $? "... while stderr says what this detection measured"
grep -q "value: 99999," "$cache"
ok $? "... and the cache still holds it"

seed 0.001 2020-01-02T03:04:05Z 0.25
"$KS" spec detect --json >"$TMP/d3.json" 2>"$TMP/d3.err"
python3 -c "import sys; sys.exit(not float(sys.argv[1]) > 0.001)" "$(bw "$TMP/d3.json" "['value']")"
ok $? "a higher measurement replaces a lower cached figure"
! grep -q "value: 0.001," "$cache"
ok $? "... in the cache too"

seed 99999 2020-01-02T03:04:05Z 0.25
"$KS" spec detect --fresh --json >"$TMP/d4.json" 2>/dev/null
python3 -c "import sys; sys.exit(not float(sys.argv[1]) < 99999)" "$(bw "$TMP/d4.json" "['value']")" &&
	! grep -q "value: 99999," "$cache"
ok $? "--fresh replaces the cached figure with this measurement"

# ---- the report tells the roof's age and load; above the roof is said plainly --------------
# a spec whose bandwidth roof is far too low (measured under load 9, years ago): softmax runs
# faster than it allows
"$KS" spec detect --save "$TMP/slow.yaml" >/dev/null 2>&1
python3 - "$TMP/slow.yaml" <<'EOF'
import re, sys
path = sys.argv[1]
text = open(path).read()
line = re.search(r"^  mem_bandwidth_gbps: .*$", text, re.M).group(0)
new = re.sub(r"value: [0-9.e+-]+", "value: 0.001", line)
new = re.sub(r'at: "[^"]*"', 'at: "2020-01-02T03:04:05Z"', new)
new = re.sub(r"load: [0-9.]+", "load: 9", new)
open(path, "w").write(text.replace(line, new))
EOF
"$KS" run softmax --backend cpu --spec "$TMP/slow.yaml" --budget 1 --top 0 --out "$TMP/run" \
	>"$TMP/run.out" 2>&1
ok $? "a run with that spec"
md=$TMP/run/report.md
grep -qE "The memory roof, 0.001 GB/s, was measured 2020-01-02 03:04 UTC \(age [0-9.]+ days\) by the memcpy probe at load 9.0 on $ncpu cores" "$md"
ok $? "the report's roofline line carries the roof's time, age, probe and load"
grep -q "the load was above the core count, so the figure may be low" "$md" &&
	grep -q "Measured under load: the roof may be low" "$md"
ok $? "... and says the roof was measured under load"
grep -q "above the roof ([0-9.]*x)" "$md"
ok $? "a kernel faster than the roof reads 'above the roof (Nx)'"
# the roofline column is a table's last (a spread of 100% or more, as under load, is not one)
! grep -qE "[0-9]{3,}% roof|\| [0-9]{3,}(\.[0-9])?% \|$" "$md"
ok $? "... never as a share above 100%"

# ---- a mistyped spec name ------------------------------------------------------------------
"$KS" spec show h20 >/dev/null 2>"$TMP/h20.err"
is "$?" 2 "spec show h20 exits 2"
grep -q "unknown spec 'h20' (see 'ksearch spec list'); did you mean 'h200'?" "$TMP/h20.err"
ok $? "... and suggests h200"

done_testing
