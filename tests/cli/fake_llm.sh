# Shared by the scenario tests that talk to the fake model (tests/fake_llm): sourced after
# lib.sh.  Without python3 the whole test is one skip.  start_server runs the fake
# OpenAI-compatible server on a free port; FAKE_IDLE and FAKE_LIFETIME (seconds) bound it.
if ! command -v python3 >/dev/null 2>&1; then
	echo "ok 1 # SKIP python3 is missing (the fake model needs it)"
	echo "1..1"
	echo "1 passed, 0 failed"
	exit 0
fi
FAKE=$ROOT/tests/fake_llm

SERVER_PID=
start_server() { # start_server SCRIPT LOG -> PORT
	rm -f "$TMP/port"
	python3 "$FAKE/fake_llm_server.py" --script "$1" --log "$2" --idle "${FAKE_IDLE:-60}" \
		--lifetime "${FAKE_LIFETIME:-300}" >"$TMP/port" 2>/dev/null &
	SERVER_PID=$!
	for _ in $(seq 1 100); do
		[ -s "$TMP/port" ] && break
		sleep 0.05
	done
	PORT=$(head -1 "$TMP/port")
}
stop_server() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
	wait "$SERVER_PID" 2>/dev/null
	SERVER_PID=
}
