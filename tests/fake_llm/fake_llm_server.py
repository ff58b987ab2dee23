#!/usr/bin/env python3
"""Fake OpenAI-compatible chat-completions server for ksearch tests (stdlib only).

Usage: fake_llm_server.py --script FILE [--log FILE] [--lifetime S] [--idle S]

Binds 127.0.0.1 on a free port and prints the port as the first line of stdout.  Exits
on its own after --lifetime seconds, or --idle seconds without a request.

The script is JSON:
  {"steps": [STEP, ...],                 # served in order, one per request
   "purposes": {"action": [STEP, ...]},  # or: matched on "PURPOSE: <name>" in the prompt
   "repeat_last": false}                 # serve the last step again when exhausted
A bare list is the same as {"steps": list}.  In purpose mode a request whose prompt has
"PURPOSE: x" gets the next step of purposes["x"] (falling back to purposes["*"]); steps
are used when the purpose has no list.  The last marker in the conversation counts, so a
correction round ("PURPOSE: action-fix") can be scripted apart.

A STEP is one reply or one fault:
  {"content": "text", "reasoning_content": "...", "usage": {...} | null, "model": "m"}
  {"status": 429, "retry_after": "2", "body": "..."}   any status with optional body
  {"hang": 5}                  sleep 5 s before answering (then serve the rest of the step)
  {"truncate": true}           Content-Length larger than the bytes sent, then close
  {"big": 5000000}             a valid reply whose content is that many bytes
  {"malformed": true}          a 200 with a body that is not JSON
  {"no_choices": true}         a 200 JSON body without "choices"
  {"content_null": true}       choices[0].message.content is null
  {"headers": {"X": "y"}}      extra response headers
When the script is exhausted the server answers 500 "script exhausted".

Every request is appended to --log as one JSON line:
  {"n": 1, "path": "/v1/chat/completions", "headers": {...}, "body": {...} | null,
   "raw": "<body text when not JSON>", "purpose": "action" | null}
"""

import argparse
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PURPOSE_RE = re.compile(r"PURPOSE:\s*([A-Za-z0-9_-]+)")


class State:
    def __init__(self, script, log_path):
        if isinstance(script, list):
            script = {"steps": script}
        self.steps = list(script.get("steps", []))
        self.purposes = {k: list(v) for k, v in script.get("purposes", {}).items()}
        self.repeat_last = bool(script.get("repeat_last", False))
        self.log_path = log_path
        self.lock = threading.Lock()
        self.n = 0
        self.last = time.monotonic()
        self.served = {}

    def next_step(self, purpose):
        with self.lock:
            queue = None
            if purpose is not None:
                if purpose in self.purposes:
                    queue = self.purposes[purpose]
                elif "*" in self.purposes:
                    queue = self.purposes["*"]
            if queue is None:
                queue = self.steps
            if not queue:
                return None
            if len(queue) == 1 and self.repeat_last:
                return queue[0]
            return queue.pop(0)

    def record(self, entry):
        with self.lock:
            self.n += 1
            entry["n"] = self.n
            self.last = time.monotonic()
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(entry) + "\n")


def reply_body(step, req):
    content = step.get("content", "")
    if "big" in step:
        content = "x" * int(step["big"])
    usage = step.get("usage", {"prompt_tokens": 11, "completion_tokens": 7,
                               "total_tokens": 18})
    msg = {"role": "assistant", "content": None if step.get("content_null") else content}
    if "reasoning_content" in step:
        msg["reasoning_content"] = step["reasoning_content"]
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": step.get("model", (req or {}).get("model", "fake")),
        "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}],
    }
    if usage is not None:
        body["usage"] = usage
    return json.dumps(body).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # keep stderr quiet
        pass

    def send_raw(self, status, body, headers=None, content_length=None):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(content_length if content_length is not None
                                                else len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        try:
            self.wfile.write(body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self):
        self.send_raw(200, json.dumps({"object": "list", "data": []}).encode())

    def do_POST(self):
        st = self.server.state
        n = int(self.headers.get("Content-Length", "0") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        entry = {"path": self.path, "headers": {k: v for k, v in self.headers.items()}}
        req = None
        try:
            req = json.loads(raw.decode("utf-8"))
            entry["body"] = req
        except (ValueError, UnicodeDecodeError):
            entry["body"] = None
            entry["raw"] = raw.decode("utf-8", "replace")
        purpose = None
        if isinstance(req, dict):
            text = "\n".join(str(m.get("content", "")) for m in req.get("messages", [])
                             if isinstance(m, dict))
            found = PURPOSE_RE.findall(text)
            if found:
                purpose = found[-1]  # the latest: a correction round says "<p>-fix"
        entry["purpose"] = purpose
        st.record(entry)

        step = st.next_step(purpose)
        if step is None:
            self.send_raw(500, b'{"error": {"message": "script exhausted"}}')
            return
        if "hang" in step:
            time.sleep(float(step["hang"]))
        headers = dict(step.get("headers", {}))
        if "retry_after" in step:
            headers["Retry-After"] = step["retry_after"]
        if "status" in step and step["status"] != 200:
            body = step.get("body", json.dumps(
                {"error": {"message": "fake error %d" % step["status"]}}))
            self.send_raw(int(step["status"]), body.encode(), headers)
            return
        if step.get("malformed"):
            self.send_raw(200, b'{"choices": [{"message": {"content": "oops"', headers)
            return
        if step.get("no_choices"):
            self.send_raw(200, b'{"id": "x", "object": "chat.completion"}', headers)
            return
        body = reply_body(step, req)
        if step.get("truncate"):
            self.send_raw(200, body[: len(body) // 2], headers, content_length=len(body))
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass
            return
        self.send_raw(200, body, headers)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--log")
    ap.add_argument("--lifetime", type=float, default=120)
    ap.add_argument("--idle", type=float, default=60)
    a = ap.parse_args()
    with open(a.script, encoding="utf-8") as f:
        script = json.load(f)
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.state = State(script, a.log)
    print(srv.server_address[1], flush=True)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    start = time.monotonic()
    while True:
        time.sleep(0.1)
        now = time.monotonic()
        if now - start > a.lifetime or now - srv.state.last > a.idle:
            break
    srv.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
