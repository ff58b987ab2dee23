#!/bin/bash
# A buffer's text is stored or sent whole, or not at all (issue 41): a ks_buf whose add failed
# (its cap, out of memory) holds a prefix of the text meant, and ks_buf_detach hands over
# nothing then (unit/test_buf).  Files are written from buffers through ks_file_write_buf,
# which refuses a failed one; this test finds a file written from a buffer's bytes directly
# (ks_file_write_atomic(path, b.data, b.len) or ks_buf_str(&b), b.len), first in a planted
# file, then in src/.
. "$(dirname "$0")/lib.sh"

# ks_file_write_buf itself
KEPT='src/util/fs.c'

direct() { # direct DIR: "file:line: text" of each direct write of a buffer's bytes
	grep -rnE 'ks_file_write_atomic\([^;]*(\.data|->data|ks_buf_str\()' "$1" --include='*.c' |
		grep -vE "^$ROOT/($KEPT):" || true
}

mkdir -p "$TMP/planted"
printf 'static int f(struct ks_buf *b)\n{\n\treturn ks_file_write_atomic("x", b->data, b->len, NULL);\n}\n' \
	>"$TMP/planted/w.c"
got=$(direct "$TMP/planted")
ok $([ -n "$got" ]; echo $?) "a planted direct write of a buffer is found: $got"

got=$(direct "$ROOT/src")
ok $([ -z "$got" ]; echo $?) "src/ writes buffers through ks_file_write_buf only${got:+: $got}"

done_testing
