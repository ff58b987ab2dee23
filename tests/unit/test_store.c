/* Run store: schema, round trips of every table, re-open, find-by-hash, ordering,
 * truncation, append-only snapshots, redaction in the database file, two writer threads. */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksearch/secret.h"
#include "ksearch/store.h"
#include "tap.h"

/* tap.h's is_int evaluates its arguments twice: calls go through here */
#define is_rc(call, want, name)                                                          \
	do {                                                                             \
		long long rc_ = (call);                                                  \
		is_int(rc_, want, name);                                                 \
	} while (0)
#include "util/fs.h"
#include "util/hash.h"

static char dir[256];

static void make_dir(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/ks-store-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
}

/* raw access for checks the API does not offer */
static sqlite3 *raw_open(void)
{
	char path[512];
	sqlite3 *db;
	snprintf(path, sizeof(path), "%s/run.db", dir);
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return NULL;
	sqlite3_busy_timeout(db, 5000);
	return db;
}

static char *raw_text(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	char *r = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		r = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return r;
}

static int raw_is(sqlite3 *db, const char *sql, const char *want, const char *name)
{
	char *got = raw_text(db, sql);
	int r = is_str(got, want, name);
	free(got);
	return r;
}

static void test_schema(void)
{
	struct ks_store *s = NULL;
	struct ks_error e = {0};
	is_rc(ks_store_open(dir, 0, &s, &e), KS_ENOTFOUND, "open without create on an empty dir");
	ok(s == NULL, "no store on failure");
	char file[300];
	snprintf(file, sizeof(file), "%s/plain-file", dir);
	ks_file_write_atomic(file, "x", 1, NULL);
	is_rc(ks_store_open(file, 1, &s, &e), KS_EIO, "a file is not a run directory");
	unlink(file);
	is_rc(ks_store_open(dir, 1, &s, &e), 0, "create store");
	ok(s != NULL, "store created");
	sqlite3 *db = raw_open();
	raw_is(db, "PRAGMA journal_mode", "wal", "WAL mode");
	raw_is(db, "PRAGMA user_version", "5", "user_version is the schema version");
	raw_is(db, "SELECT group_concat(version || ':' || description) FROM schema_version",
	       "1:initial schema,2:llm exchanges may be 'direct' requests,"
	       "3:evaluations record the library's median,"
	       "4:llm exchanges may be 'repeat' requests,"
	       "5:evaluations record the share of the tolerance used", "migrations recorded");
	raw_is(db, "SELECT sql LIKE '%''direct''%' FROM sqlite_master WHERE name = 'llm_exchanges'",
	       "1", "llm_exchanges accepts direct requests");
	raw_is(db, "SELECT sql LIKE '%''repeat''%' FROM sqlite_master WHERE name = 'llm_exchanges'",
	       "1", "llm_exchanges accepts repeat requests");
	raw_is(db,
	       "SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master"
	       " WHERE type = 'table' ORDER BY name)",
	       "candidate_results,candidates,evaluations,events,llm_exchanges,run,schema_version,"
	       "tree_snapshots,workloads",
	       "every table exists");
	sqlite3_close(db);
	ks_store_close(s);

	/* re-open runs no migration twice; a newer schema is refused */
	is_rc(ks_store_open(dir, 0, &s, &e), 0, "re-open existing store");
	ks_store_close(s);
	db = raw_open();
	raw_is(db, "SELECT count(*) FROM schema_version", "5", "each migration applied once");
	sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL);
	sqlite3_close(db);
	is_rc(ks_store_open(dir, 0, &s, &e), KS_EDB, "newer schema refused");
	ok(strstr(e.msg, "newer") != NULL, "message says why (%s)", e.msg);
	db = raw_open();
	sqlite3_exec(db, "PRAGMA user_version = 5", NULL, NULL, NULL);
	sqlite3_close(db);
}

static const char *SRC1 = "void k(float *x) { x[0] = 1; }\n";
static const char *SRC2 = "void k(float *x) { x[0] = 2; }\n";

static void test_round_trips(void)
{
	struct ks_store *s;
	struct ks_error e = {0};
	if (!ok(ks_store_open(dir, 0, &s, &e) == 0, "open (%s)", e.msg))
		return;

	/* run */
	struct ks_store_run run = {
		.id = "r1", .task = "matmul", .task_hash = "abc", .backend = "cpu",
		.strategy = "wm", .policy = "builtin", .seed = 0xfedcba9876543210ull,
		.budget = 40, .config = "{\"budget\": 40, \"jobs\": 2}",
	};
	struct ks_store_run *rr = NULL;
	is_rc(ks_store_get_run(s, &rr, &e), KS_ENOTFOUND, "no run yet");
	is_rc(ks_store_write_run(s, &run, &e), 0, "write run");
	is_rc(ks_store_write_run(s, &run, &e), KS_EINVAL, "second run row refused");
	if (ok(ks_store_get_run(s, &rr, &e) == 0 && rr, "get run")) {
		is_str(rr->id, "r1", "run id");
		is_str(rr->task, "matmul", "run task");
		is_str(rr->task_hash, "abc", "run task hash");
		is_str(rr->backend, "cpu", "run backend");
		is_str(rr->strategy, "wm", "run strategy");
		is_str(rr->policy, "builtin", "run policy");
		ok(rr->seed == 0xfedcba9876543210ull, "run seed (64 bits)");
		is_int(rr->budget, 40, "run budget");
		is_str(rr->config, "{\"budget\": 40, \"jobs\": 2}", "run config");
		is_str(rr->status, "running", "run status defaults to running");
		is_str(rr->version, KS_VERSION, "run version");
		ok(rr->created && strlen(rr->created) >= 20, "run created (%s)", rr->created);
		ks_store_free(rr);
	}
	is_rc(ks_store_set_run_status(s, "finished", &e), 0, "set status");
	is_rc(ks_store_set_run_status(s, "exploded", &e), KS_EINVAL, "bad status refused");
	rr = NULL;
	ks_store_get_run(s, &rr, &e);
	const char *status = rr ? rr->status : NULL;
	is_str(status, "finished", "status updated");
	ks_store_free(rr);

	/* workloads */
	struct ks_store_workload w0 = {0, "M=64", "{\"M\": 64}", 0};
	struct ks_store_workload w1 = {1, "M=7 check", "{\"M\": 7}", 1};
	struct ks_store_workload bad = {2, "bad", "{not json", 0};
	is_rc(ks_store_add_workload(s, &w0, &e), 0, "add workload 0");
	is_rc(ks_store_add_workload(s, &w1, &e), 0, "add workload 1");
	is_rc(ks_store_add_workload(s, &bad, &e), KS_EINVAL, "invalid JSON refused");
	struct ks_store_workload *ws;
	size_t nw;
	is_rc(ks_store_list_workloads(s, &ws, &nw, &e), 0, "list workloads");
	if (is_int(nw, 2, "two workloads")) {
		is_str(ws[1].label, "M=7 check", "workload label");
		is_str(ws[1].params, "{\"M\": 7}", "workload params");
		is_int(ws[1].is_check, 1, "workload is_check");
		is_int(ws[0].index, 0, "workload index");
	}
	ks_store_free(ws);

	/* candidates */
	struct ks_store_candidate c = {
		.source = SRC1, .language = "c", .parent_id = 0, .node_id = 3, .action = "tile",
		.policy = "builtin", .family = "tiled", .knobs = "{\"BM\": 64}",
		.defines = "-DBM=64", .round = 2,
	};
	int64_t id1 = 0, id2 = 0, id3 = 0, id4 = 0;
	is_rc(ks_store_add_candidate(s, &c, &id1, &e), 0, "add candidate");
	is_int(id1, 1, "first candidate id");
	c.parent_id = id1;
	c.defines = "-DBM=32";
	is_rc(ks_store_add_candidate(s, &c, &id2, &e), 0, "add candidate 2");
	c.source = SRC2;
	c.node_id = -1;
	is_rc(ks_store_add_candidate(s, &c, &id3, &e), 0, "add candidate 3");
	is_rc(ks_store_add_candidate(s, &c, &id4, &e), 0, "add candidate 4 (same identity)");
	c.parent_id = 999;
	is_rc(ks_store_add_candidate(s, &c, NULL, &e), KS_EINVAL, "missing parent refused");
	is_rc(ks_store_finish_compile(s, id1, 1, "cc -O3 ok", "regs 32", 12.5, &e), 0,
	       "finish compile");
	is_rc(ks_store_finish_compile(s, 77, 1, NULL, NULL, 1, &e), KS_ENOTFOUND,
	       "finish compile of a missing candidate");
	ks_store_finish_compile(s, id2, 0, "error: x", NULL, NAN, &e);

	struct ks_store_candidate *cg;
	if (ok(ks_store_get_candidate(s, id1, &cg, &e) == 0, "get candidate")) {
		char hash[65];
		ks_sha256_str_hex(SRC1, hash);
		is_str(cg->source, SRC1, "candidate source");
		const char *want_hash = hash;
		is_str(cg->source_hash, want_hash, "candidate source hash");
		is_str(cg->language, "c", "language");
		is_int(cg->parent_id, 0, "no parent");
		is_int(cg->node_id, 3, "node id");
		is_str(cg->action, "tile", "action");
		is_str(cg->policy, "builtin", "policy");
		is_str(cg->family, "tiled", "family");
		is_str(cg->knobs, "{\"BM\": 64}", "knobs");
		is_str(cg->defines, "-DBM=64", "defines");
		is_int(cg->round, 2, "round");
		is_str(cg->compile_status, "ok", "compile status");
		is_str(cg->compile_log, "cc -O3 ok", "compile log");
		is_str(cg->resources, "regs 32", "resources");
		ok(cg->compile_ms == 12.5, "compile ms");
		is_int(cg->has_result, 0, "no result yet");
		ok(cg->status == NULL && isnan(cg->speedup), "no result fields");
		ks_store_free(cg);
	}
	if (ok(ks_store_get_candidate(s, id3, &cg, &e) == 0, "get candidate 3")) {
		is_int(cg->parent_id, id1, "parent id");
		is_int(cg->node_id, -1, "no node");
		is_str(cg->compile_status, "pending", "compile pending");
		ks_store_free(cg);
	}
	is_rc(ks_store_get_candidate(s, 1234, &cg, &e), KS_ENOTFOUND, "missing candidate");
	struct ks_buf src = KS_BUF_INIT;
	is_rc(ks_store_get_source(s, id3, &src, &e), 0, "get source");
	is_str(ks_buf_str(&src), SRC2, "source text");
	ks_buf_release(&src);

	/* evaluations */
	struct ks_store_eval ev = {
		.candidate_id = id1, .workload = 0, .seed = 7, .status = "PASSED",
		.max_abs_err = 1e-6, .max_rel_err = 2e-6, .median_us = 10, .spread_pct = 1.5,
		.gflops = 100, .gbps = 50, .roofline_pct = 20, .baseline_us = 40, .speedup = 4,
		.samples = "[10.1, 9.9, 10.0]", .log = "fine",
	};
	is_rc(ks_store_add_eval(s, &ev, &e), 0, "add evaluation");
	ev.seed = 8;
	ev.max_rel_err = NAN;
	is_rc(ks_store_add_eval(s, &ev, &e), 0, "add evaluation seed 8");
	ev.workload = 1;
	ev.samples = NULL;
	ev.log = NULL;
	is_rc(ks_store_add_eval(s, &ev, &e), 0, "add evaluation workload 1");
	ev.median_us = 11;
	is_rc(ks_store_add_eval(s, &ev, &e), 0, "same key again replaces");
	ev.phase = "final";
	is_rc(ks_store_add_eval(s, &ev, &e), 0, "final phase is a separate row");
	ev.phase = NULL;
	ev.workload = 5;
	is_rc(ks_store_add_eval(s, &ev, &e), KS_EINVAL, "unknown workload refused");
	ev.workload = 0;
	ev.status = "GREAT";
	is_rc(ks_store_add_eval(s, &ev, &e), KS_EINVAL, "unknown status refused");
	ev.status = "PASSED";
	ev.samples = "[1,";
	is_rc(ks_store_add_eval(s, &ev, &e), KS_EINVAL, "invalid samples JSON refused");

	struct ks_store_eval *evs;
	size_t ne;
	is_rc(ks_store_list_evals(s, id1, "search", &evs, &ne, &e), 0, "list evaluations");
	if (is_int(ne, 3, "three search evaluations")) {
		is_int(evs[0].workload, 0, "order: workload 0 first");
		ok(evs[0].seed == 7 && evs[1].seed == 8, "order: seeds");
		is_str(evs[0].status, "PASSED", "status");
		ok(evs[0].max_abs_err == 1e-6 && evs[0].max_rel_err == 2e-6, "errors");
		ok(evs[0].median_us == 10 && evs[0].spread_pct == 1.5, "time and spread");
		ok(evs[0].gflops == 100 && evs[0].gbps == 50 && evs[0].roofline_pct == 20,
		   "rates");
		ok(evs[0].baseline_us == 40 && evs[0].speedup == 4, "baseline and speedup");
		is_str(evs[0].samples, "[10.1, 9.9, 10.0]", "samples");
		is_str(evs[0].log, "fine", "log");
		is_str(evs[0].phase, "search", "phase defaults to search");
		ok(isnan(evs[1].max_rel_err), "NAN round trip");
		is_str(evs[2].samples, "[]", "samples default");
		ok(evs[2].log == NULL, "NULL log");
		ok(evs[2].median_us == 11, "replaced row has the new value");
	}
	ks_store_free(evs);
	is_rc(ks_store_list_evals(s, id1, NULL, &evs, &ne, &e), 0, "list every phase");
	is_int(ne, 4, "four evaluations in all");
	if (ne == 4)
		is_str(evs[3].phase, "final", "final phase last");
	ks_store_free(evs);

	/* results, ordering, convergence, find */
	int64_t n = -1;
	is_rc(ks_store_count_evaluated(s, &n, &e), 0, "count");
	is_int(n, 0, "nothing evaluated yet");
	is_rc(ks_store_add_result(s, id1, "search", "PASSED", 2.0, &e), 0, "result 1");
	is_rc(ks_store_add_result(s, id2, NULL, "INCORRECT_NUMERICAL", NAN, &e), 0, "result 2");
	is_rc(ks_store_add_result(s, id3, "search", "PASSED", 3.5, &e), 0, "result 3");
	is_rc(ks_store_add_result(s, id3, "search", "PASSED", 3.0, &e), 0, "result 3 replaced");
	is_rc(ks_store_add_result(s, id1, "bogus", "PASSED", 3.0, &e), KS_EINVAL, "bad phase");
	is_rc(ks_store_add_result(s, 999, "search", "PASSED", 3.0, &e), KS_EINVAL,
	       "missing candidate");
	ks_store_count_evaluated(s, &n, &e);
	is_int(n, 3, "three evaluated");

	struct ks_store_candidate *cl;
	size_t nc;
	is_rc(ks_store_list_candidates(s, KS_STORE_ORDER_BEST, &cl, &nc, &e), 0, "list best");
	if (is_int(nc, 4, "four candidates")) {
		ok(cl[0].id == id3 && cl[1].id == id1 && cl[2].id == id2 && cl[3].id == id4,
		   "best-first order (%lld %lld %lld %lld)", (long long)cl[0].id,
		   (long long)cl[1].id, (long long)cl[2].id, (long long)cl[3].id);
		ok(cl[0].source == NULL && cl[0].compile_log == NULL, "list omits big texts");
		is_int(cl[0].has_result, 1, "has result");
		ok(cl[0].speedup == 3.0, "speedup");
		is_str(cl[2].status, "INCORRECT_NUMERICAL", "status of failing one");
		is_int(cl[3].has_result, 0, "unevaluated last");
	}
	ks_store_free(cl);
	is_rc(ks_store_add_result(s, id1, "final", "PASSED", 4.0, &e), 0, "final result");
	ks_store_list_candidates(s, KS_STORE_ORDER_BEST, &cl, &nc, &e);
	ok(nc == 4 && cl[0].id == id1 && cl[0].has_final && cl[0].final_speedup == 4.0,
	   "final re-measurement decides the order");
	ks_store_free(cl);
	ks_store_list_candidates(s, KS_STORE_ORDER_ID, &cl, &nc, &e);
	ok(nc == 4 && cl[0].id == id1 && cl[3].id == id4, "id order");
	ks_store_free(cl);
	ks_store_count_evaluated(s, &n, &e);
	is_int(n, 3, "final results are not counted against the budget");

	struct ks_store_point *pts;
	size_t np;
	is_rc(ks_store_convergence(s, &pts, &np, &e), 0, "convergence");
	if (is_int(np, 3, "three points")) {
		ok(pts[0].candidate_id == id1 && pts[0].best == 2.0, "point 1");
		ok(isnan(pts[1].speedup) && pts[1].best == 2.0, "failure keeps best");
		ok(pts[2].speedup == 3.0 && pts[2].best == 3.0, "point 3 improves");
	}
	ks_store_free(pts);

	int64_t fid = -1;
	int has = -1;
	is_rc(ks_store_find_candidate(s, SRC1, "-DBM=32", &fid, &has, &e), 0, "find");
	ok(fid == id2 && has == 1, "found by source and defines");
	ks_store_find_candidate(s, SRC2, "-DBM=32", &fid, &has, &e);
	ok(fid == id3 && has == 1, "evaluated duplicate preferred");
	ks_store_find_candidate(s, SRC1, "-DBM=16", &fid, &has, &e);
	ok(fid == 0 && has == 0, "different defines: not found");
	ks_store_find_candidate(s, "other", NULL, &fid, &has, &e);
	ok(fid == 0, "different source: not found");

	/* snapshots */
	int v = 0;
	is_rc(ks_store_add_snapshot(s, 0, "{\"nodes\": []}", &v, &e), 0, "snapshot 1");
	is_int(v, 1, "version 1");
	ks_store_add_snapshot(s, 1, "{\"nodes\": [1]}", &v, &e);
	ks_store_add_snapshot(s, 1, "{\"nodes\": [1, 2]}", &v, &e);
	is_int(v, 3, "version 3");
	is_rc(ks_store_add_snapshot(s, 2, "{", &v, &e), KS_EINVAL, "invalid snapshot JSON");
	struct ks_store_snapshot *sn;
	size_t nsn;
	if (ok(ks_store_latest_snapshot(s, &sn, &e) == 0, "latest snapshot")) {
		ok(sn->version == 3 && sn->round == 1, "latest is version 3");
		is_str(sn->json, "{\"nodes\": [1, 2]}", "latest json");
		ks_store_free(sn);
	}
	is_rc(ks_store_list_snapshots(s, &sn, &nsn, &e), 0, "all snapshots");
	ok(nsn == 3 && sn[0].version == 1 && sn[2].version == 3, "snapshots oldest first");
	ks_store_free(sn);
	sqlite3 *db = raw_open();
	ok(sqlite3_exec(db, "UPDATE tree_snapshots SET json = '{}'", NULL, NULL, NULL) != SQLITE_OK,
	   "snapshots refuse updates");
	ok(sqlite3_exec(db, "DELETE FROM tree_snapshots", NULL, NULL, NULL) != SQLITE_OK,
	   "snapshots refuse deletes");
	sqlite3_close(db);

	/* llm exchanges */
	struct ks_store_llm x = {
		.round = 1, .purpose = "init", .model = "m1", .params = "{\"temperature\": 0.2}",
		.prompt = "classify this kernel", .reply = "```c\nint x;\n```",
		.prompt_tokens = 100, .completion_tokens = 20, .latency_ms = 1234.5, .cost = 0.01,
		.status = "ok",
	};
	int64_t xid = 0;
	is_rc(ks_store_add_llm(s, &x, &xid, &e), 0, "llm exchange 1");
	x.purpose = "edit";
	x.reply = NULL;
	x.status = "error";
	x.error = "http 429";
	x.cost = NAN;
	ks_store_add_llm(s, &x, NULL, &e);
	x.purpose = "chitchat";
	is_rc(ks_store_add_llm(s, &x, NULL, &e), KS_EINVAL, "unknown purpose refused");
	struct ks_store_llm *xs;
	size_t nx;
	is_rc(ks_store_list_llm(s, &xs, &nx, &e), 0, "list llm");
	if (is_int(nx, 2, "two exchanges")) {
		is_int(xs[0].id, xid, "id");
		is_str(xs[0].purpose, "init", "purpose");
		is_str(xs[0].model, "m1", "model");
		is_str(xs[0].params, "{\"temperature\": 0.2}", "params");
		is_str(xs[0].prompt, "classify this kernel", "prompt");
		is_str(xs[0].reply, "```c\nint x;\n```", "reply byte for byte");
		ok(xs[0].prompt_tokens == 100 && xs[0].completion_tokens == 20, "tokens");
		ok(xs[0].latency_ms == 1234.5 && xs[0].cost == 0.01, "latency and cost");
		is_str(xs[1].purpose, "edit", "second in order");
		is_str(xs[1].reply, "", "missing reply stored empty");
		is_str(xs[1].error, "http 429", "error");
		ok(isnan(xs[1].cost), "unknown cost");
	}
	ks_store_free(xs);

	/* events and truncation */
	is_rc(ks_store_add_event(s, "info", "round", "round 1 started", "{\"round\": 1}", &e), 0,
	       "event");
	is_rc(ks_store_add_event(s, "loud", "x", "y", NULL, &e), KS_EINVAL, "bad level");
	size_t big = KS_STORE_MAX_LOG + 5000;
	char *huge = malloc(big + 1);
	memset(huge, 'a', big);
	huge[big] = '\0';
	unsigned long t0 = ks_store_truncations(s);
	/* the truncation warning goes to the log, whose sink writes to this same store */
	ks_log_set(ks_store_log_sink, s, KS_LOG_WARN);
	is_rc(ks_store_add_event(s, "warn", "big", huge, NULL, &e), 0, "oversized message kept");
	ks_log_set(NULL, NULL, KS_LOG_WARN);
	is_int(ks_store_truncations(s) - t0, 1, "truncation counted");
	struct ks_store_event *evt;
	size_t nev;
	is_rc(ks_store_list_events(s, &evt, &nev, &e), 0, "list events");
	if (is_int(nev, 3, "three events")) {
		is_str(evt[0].kind, "round", "kind");
		is_str(evt[0].data, "{\"round\": 1}", "data");
		is_str(evt[0].level, "info", "level");
		is_str(evt[1].data, "{}", "data default");
		size_t ml = strlen(evt[1].message);
		ok(ml < KS_STORE_MAX_LOG + 64 && ml >= KS_STORE_MAX_LOG, "message cut to the cap");
		ok(strstr(evt[1].message, "[... truncated 5000 bytes]") != NULL, "cut is marked");
		is_str(evt[2].kind, "log", "log sink recorded the warning");
		is_str(evt[2].level, "warn", "log level");
		ok(strstr(evt[2].message, "event message cut to 65536 bytes") != NULL,
		   "warning names the field (%s)", evt[2].message);
	}
	ks_store_free(evt);
	db = raw_open();
	raw_is(db, "SELECT truncated FROM events WHERE kind = 'big'", "5000", "row says what was cut");
	sqlite3_close(db);
	free(huge);
	huge = malloc(KS_STORE_MAX_SOURCE + 2);
	memset(huge, ' ', KS_STORE_MAX_SOURCE + 1);
	huge[KS_STORE_MAX_SOURCE + 1] = '\0';
	struct ks_store_candidate hc = {.source = huge, .language = "c", .policy = "llm"};
	is_rc(ks_store_add_candidate(s, &hc, NULL, &e), KS_ELIMIT, "oversized source refused");
	free(huge);
	ks_store_close(s);

	/* re-open: everything is still there */
	is_rc(ks_store_open(dir, 0, &s, &e), 0, "re-open");
	ks_store_count_evaluated(s, &n, &e);
	is_int(n, 3, "count after re-open");
	ks_store_get_run(s, &rr, &e);
	ok(rr && !strcmp(rr->id, "r1") && rr->budget == 40, "run after re-open");
	ks_store_free(rr);
	ks_store_find_candidate(s, SRC1, "-DBM=64", &fid, &has, &e);
	ok(fid == id1 && has, "find after re-open");
	ks_store_close(s);
}

/* every file of the run directory, concatenated */
static size_t slurp_dir(char **out)
{
	struct ks_buf all = KS_BUF_INIT;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char path[512];
		struct ks_buf b = KS_BUF_INIT;
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (ks_file_read(path, 1 << 30, &b, NULL) == 0)
			ks_buf_add(&all, b.data ? b.data : "", b.len);
		ks_buf_release(&b);
	}
	if (d)
		closedir(d);
	size_t n;
	*out = ks_buf_detach(&all, &n);
	return n;
}

static void test_redaction_on_disk(void)
{
	static const char *keys[] = {"sk-proj-Zq81kLmN0pQrStUvWxYz12", "eyJhbGciOi.J9x8y7z6w5",
				     "Xy7Wv6Ut5Sr4", "envSecretValue-998877", "ghp_AbCdEfGhIjKlMnOpQrStUv123"};
	char env0[64];
	snprintf(env0, sizeof(env0), "KS_TEST_API_KEY=%s", keys[3]);
	char *envp[] = {env0, NULL};
	ks_secret_add_env(envp);

	char tmp[256];
	snprintf(tmp, sizeof(tmp), "%s/redact", dir);
	char saved[256];
	snprintf(saved, sizeof(saved), "%s", dir);
	snprintf(dir, sizeof(dir), "%s", tmp);

	struct ks_store *s;
	struct ks_error e = {0};
	if (!ok(ks_store_open(dir, 1, &s, &e) == 0, "open redaction store (%s)", e.msg))
		return;
	char config[512];
	snprintf(config, sizeof(config),
		 "{\"llm_api_key\": \"%s\", \"note\": \"key=%s\", \"env\": \"%s\"}", keys[0],
		 keys[2], keys[3]);
	struct ks_store_run run = {.task = "softmax", .config = config};
	ok(ks_store_write_run(s, &run, &e) == 0, "run with keys in config (%s)", e.msg);
	char prompt[512], reply[512];
	snprintf(prompt, sizeof(prompt), "POST /v1/chat\nAuthorization: Bearer %s\nhello", keys[1]);
	snprintf(reply, sizeof(reply), "your key is %s and %s", keys[3], keys[0]);
	struct ks_store_llm x = {.purpose = "init", .model = "m", .prompt = prompt,
				 .reply = reply, .status = "ok", .error = keys[4]};
	is_rc(ks_store_add_llm(s, &x, NULL, &e), 0, "exchange with keys");
	char msg[256];
	snprintf(msg, sizeof(msg), "worker env OPENAI_API_KEY=%s", keys[0]);
	char data[256];
	snprintf(data, sizeof(data), "{\"token\": \"%s\"}", keys[4]);
	is_rc(ks_store_add_event(s, "warn", "env", msg, data, &e), 0, "event with keys");
	struct ks_store_candidate c = {.source = "int k(void) { return 1; }", .language = "c",
				       .policy = "llm"};
	int64_t id;
	ks_store_add_candidate(s, &c, &id, &e);
	char log[256];
	snprintf(log, sizeof(log), "ld: KS_TEST_API_KEY=%s", keys[3]);
	ks_store_finish_compile(s, id, 0, log, NULL, 1, &e);
	struct ks_store_workload w = {0, "w", "{}", 0};
	ks_store_add_workload(s, &w, &e);
	struct ks_store_eval ev = {.candidate_id = id, .status = "RUNTIME_ERROR", .log = msg,
				   .median_us = NAN};
	ks_store_add_eval(s, &ev, &e);

	for (int pass = 0; pass < 2; pass++) {
		char *bytes;
		size_t n = slurp_dir(&bytes);
		ok(n > 0, "read the database files (%zu bytes)", n);
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			ok(!memmem(bytes, n, keys[k], strlen(keys[k])),
			   "%s: key %zu absent from the database files",
			   pass ? "after close" : "while open", k);
		ok(memmem(bytes, n, "[REDACTED]", 10) != NULL, "redaction marker present");
		free(bytes);
		if (pass == 0) {
			struct ks_store_run *rr;
			ks_store_get_run(s, &rr, &e);
			ok(rr && strstr(rr->config, "\"note\": \"key=[REDACTED]\""),
			   "config keeps its shape");
			size_t il = rr ? strlen(rr->id) : 0;
			ok(il > 16 && !strcmp(rr->id + il - 8, "-softmax") && rr->id[8] == '-',
			   "generated run id (%s)", rr ? rr->id : "");
			ks_store_free(rr);
			ks_store_close(s);
		}
	}
	ks_secret_clear();
	snprintf(dir, sizeof(dir), "%s", saved);
}

struct writer {
	struct ks_store *s;
	int64_t cand;
	int fails;
};

#define N_WRITES 60

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct ks_error e = {0};
	for (int i = 0; i < N_WRITES; i++) {
		struct ks_store_eval ev = {.candidate_id = w->cand, .workload = 0,
					   .seed = (uint64_t)i, .status = "PASSED",
					   .median_us = i, .speedup = 1};
		if (ks_store_add_eval(w->s, &ev, &e))
			w->fails++;
		if (ks_store_add_event(w->s, "debug", "t", "tick", NULL, &e))
			w->fails++;
		int64_t n;
		struct ks_store_candidate *cl;
		size_t nc;
		if (ks_store_count_evaluated(w->s, &n, &e) ||
		    ks_store_list_candidates(w->s, KS_STORE_ORDER_BEST, &cl, &nc, &e))
			w->fails++;
		else
			ks_store_free(cl);
	}
	return NULL;
}

static void test_threads(void)
{
	char saved[256];
	snprintf(saved, sizeof(saved), "%s", dir);
	snprintf(dir, sizeof(dir), "%s/threads", saved);
	struct ks_store *s;
	struct ks_error e = {0};
	if (!ok(ks_store_open(dir, 1, &s, &e) == 0, "open threads store"))
		goto out;
	struct ks_store_workload w0 = {0, "w", "{}", 0};
	ks_store_add_workload(s, &w0, &e);
	struct writer w[2] = {{s, 0, 0}, {s, 0, 0}};
	struct ks_store_candidate c = {.source = "a", .language = "c", .policy = "builtin"};
	ks_store_add_candidate(s, &c, &w[0].cand, &e);
	c.source = "b";
	ks_store_add_candidate(s, &c, &w[1].cand, &e);
	/* a second connection (as `ksearch report` would have) reads while the threads write */
	struct ks_store *reader;
	ok(ks_store_open(dir, 0, &reader, &e) == 0, "second connection (%s)", e.msg);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, writer_main, &w[i]);
	int read_fails = 0, reads = 0;
	size_t last = 0, shrank = 0;
	for (int i = 0; i < 200; i++) {
		struct ks_store_event *ev;
		size_t nev = 0;
		if (ks_store_list_events(reader, &ev, &nev, &e))
			read_fails++;
		else
			ks_store_free(ev);
		shrank += nev < last;
		last = nev;
		reads++;
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ok(read_fails == 0 && shrank == 0, "%d reads from a second connection, none failed", reads);
	struct ks_store_event *rev;
	size_t nrev = 0;
	ks_store_list_events(reader, &rev, &nrev, &e);
	is_int(nrev, 2 * N_WRITES, "second connection sees every committed event");
	ks_store_free(rev);
	ks_store_close(reader);
	ok(w[0].fails == 0 && w[1].fails == 0, "no failed call from two threads (%d %d)",
	   w[0].fails, w[1].fails);
	for (int i = 0; i < 2; i++) {
		struct ks_store_eval *evs;
		size_t n = 0;
		ks_store_list_evals(s, w[i].cand, NULL, &evs, &n, &e);
		is_int(n, N_WRITES, "every evaluation of a thread is there");
		ks_store_free(evs);
	}
	struct ks_store_event *ev;
	size_t nev = 0;
	ks_store_list_events(s, &ev, &nev, &e);
	is_int(nev, 2 * N_WRITES, "every event is there");
	ks_store_free(ev);
	ks_store_close(s);
out:
	snprintf(dir, sizeof(dir), "%s", saved);
}

int main(void)
{
	make_dir();
	test_schema();
	test_round_trips();
	test_redaction_on_disk();
	test_threads();
	ks_rm_rf(dir);
	return tap_done();
}
