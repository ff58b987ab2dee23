#!/usr/bin/env bash
# ksearch run refuses, once, with exit 2 and nothing written: --resume of a folder without a
# run, model options with a policy that asks no model, a backend that cannot run candidate
# kernels here (MLX's CPU build).
. "$(dirname "$0")/lib.sh"
TASK=$ROOT/tests/fixtures/eval/scale
KSA=$(cd "$(dirname "$KS")" && pwd)/$(basename "$KS")

refused() { # refused "what" "message" ARGS...: exit 2, the message once, nothing written
	local what=$1 msg=$2
	shift 2
	local d
	d=$(mktemp -d)
	(cd "$d" && "$KSA" "$@" >/dev/null 2>"$TMP/err")
	local rc=$?
	is "$rc:$(ls -A "$d" | wc -l)" "2:0" "$what: exit 2, nothing written"
	is "$(grep -c -F -- "$msg" "$TMP/err")" 1 "... says '$msg' once ($(head -c 200 "$TMP/err"))"
	rm -rf "$d"
}

# --resume of a folder without a run: ksearch report's message, no run.lock left
refused "run --resume of a missing folder" "no run database in 'runs/nope' (expected runs/nope/run.db)" \
	run --resume runs/nope
grep -q "run.lock\|what was recorded" "$TMP/err"
ok $((!$?)) "... and nothing about a lock or a run.db that is not there"
mkdir "$TMP/empty"
"$KS" run --resume "$TMP/empty" >/dev/null 2>"$TMP/e.err"
is "$?" 2 "run --resume of an empty folder exits 2"
is "$(ls -A "$TMP/empty" | wc -l)" 0 "... and leaves it empty (no run.lock)"
grep -q "no run database in '$TMP/empty'" "$TMP/e.err"
ok $? "... saying there is no run database in it"

# model options with the builtin policy (the default, or named)
refused "run --llm-replay (builtin policy)" "--llm-replay needs --policy llm, cmd or files" \
	run "$TASK" --llm-replay runs/nope
refused "run --llm-model (builtin policy)" "--llm-model needs --policy llm" \
	run "$TASK" --llm-model m
refused "run --llm-base-url (builtin policy)" "--llm-base-url needs --policy llm" \
	run "$TASK" --llm-base-url https://example.invalid/v1
refused "run --llm-cmd (builtin policy)" "--llm-cmd needs --policy cmd" run "$TASK" --llm-cmd cat
refused "run --policy builtin --llm-max-calls" "--llm-max-calls needs --policy llm, cmd or files" \
	run "$TASK" --policy builtin --llm-max-calls 3
refused "run --context (builtin policy)" "--context needs --policy llm, cmd or files" \
	run "$TASK" --context spec

# every kind of option (src/cli/opts.c) refuses a value it does not take, saying what it
# takes: never capped, never ignored
refused "run --top 17 (int, range)" "option '--top' must be from 0 to 16, got 17" run "$TASK" --top 17
refused "run --budget 0 (int, range)" "option '--budget' must be from 1 to 1000000, got 0" \
	run "$TASK" --budget 0
refused "run --seed x (int)" "option '--seed' expects an integer, got 'x'" run "$TASK" --seed x
refused "run --llm-temperature 3 (number, range)" "option '--llm-temperature' must be from 0 to 2, got 3" \
	run "$TASK" --policy cmd --llm-cmd cat --llm-temperature 3
refused "run --timeout 0 (duration, range)" "option '--timeout' must be at least 0.001 s, got 0" \
	run "$TASK" --timeout 0
refused "run --time-limit 5x (duration)" "option '--time-limit' expects a duration like 90s, 30m or 2h, got '5x'" \
	run "$TASK" --time-limit 5x
refused "run --memory-limit 2Q (size)" "option '--memory-limit' expects a size like 512M or 2G, got '2Q'" \
	run "$TASK" --memory-limit 2Q
refused "run --policy llmm (one of words)" "unknown --policy 'llmm' (builtin, llm, cmd, files); did you mean 'llm'?" \
	run "$TASK" --policy llmm
refused "run --json=1 (flag)" "option '--json' takes no value" run "$TASK" --json=1
refused "eval --seeds 2 (int, range)" "option '--seeds' must be from 3 to 16, got 2" \
	eval "$TASK" "$ROOT/tests/fixtures/hostile/plain.c" --seeds 2
refused "report --to x (one of words)" "unknown --to 'x' (flashinfer-trace)" report runs/nope --to x

# MLX's CPU build: its native baselines run, candidate kernels do not.  ksearch beside a
# runner whose probe says so (whatever MLX is installed here)
BIN=$(cd "$(dirname "$KS")" && pwd)
FAKE=$TMP/cpu-mlx
mkdir -p "$FAKE"
cp "$BIN/ksearch" "$BIN/ksearch-runner" "$BIN/ksearch-cc-jail" "$FAKE/"
printf '#!/bin/sh\n[ "$1" = --probe ] && echo "mlx 0.32.4 metal=0 cuda=0 device=cpu" && exit 0\nexit 3\n' \
	>"$FAKE/ksearch-runner-mlx"
chmod +x "$FAKE/ksearch-runner-mlx"
KSA=$FAKE/ksearch
refused "run --backend mlx on MLX's CPU build" "custom kernels need MLX's Metal or CUDA backend" \
	run softmax --backend mlx --budget 3
grep -q "^ksearch run: backend 'mlx' cannot run candidate kernels here" "$TMP/err"
ok $? "... as the run's one error"
done_testing
