/* The SQL of every statement the store runs.  All values are bound parameters. */
#include "store/store_impl.h"

#define NOW "strftime('%Y-%m-%dT%H:%M:%fZ','now')"

/* candidate columns in struct ks_store_candidate order; SRC and LOG select the big texts */
#define CAND_COLS(SRC, LOG)                                                              \
	"SELECT c.id, c.created, " SRC ", c.source_hash, c.language,"                    \
	" coalesce(c.parent_id, 0), coalesce(c.node_id, -1), c.action, c.policy, c.family," \
	" c.knobs, c.defines, c.round, c.compile_status, " LOG ", c.resources,"           \
	" c.compile_ms, r.candidate_id IS NOT NULL, r.status, r.speedup,"                 \
	" f.candidate_id IS NOT NULL, f.status, f.speedup"                               \
	" FROM candidates c"                                                             \
	" LEFT JOIN candidate_results r ON r.candidate_id = c.id AND r.phase = 'search'"  \
	" LEFT JOIN candidate_results f ON f.candidate_id = c.id AND f.phase = 'final'"

const char *const ks_store_sql[KS_STMT_COUNT_] = {
	[KS_STMT_RUN_INSERT] =
		"INSERT INTO run (one, id, version, task, task_hash, backend, strategy, policy,"
		" seed, budget, config, status, truncated)"
		" VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
	[KS_STMT_RUN_GET] =
		"SELECT id, created, version, task, task_hash, backend, strategy, policy, seed,"
		" budget, config, status FROM run",
	[KS_STMT_RUN_STATUS] = "UPDATE run SET status = ?1, updated = " NOW,
	[KS_STMT_WORKLOAD_INSERT] =
		"INSERT INTO workloads (idx, label, params, is_check) VALUES (?1, ?2, ?3, ?4)"
		" ON CONFLICT (idx) DO UPDATE SET label = excluded.label,"
		" params = excluded.params, is_check = excluded.is_check",
	[KS_STMT_WORKLOAD_LIST] = "SELECT idx, label, params, is_check FROM workloads ORDER BY idx",
	[KS_STMT_CAND_INSERT] =
		"INSERT INTO candidates (source, source_hash, language, parent_id, node_id, action,"
		" policy, family, knobs, defines, round, truncated)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
	[KS_STMT_CAND_COMPILE] =
		"UPDATE candidates SET compile_status = ?2, compile_log = ?3, resources = ?4,"
		" compile_ms = ?5, truncated = truncated + ?6 WHERE id = ?1",
	[KS_STMT_CAND_GET] = CAND_COLS("c.source", "c.compile_log") " WHERE c.id = ?1",
	[KS_STMT_CAND_SOURCE] = "SELECT source FROM candidates WHERE id = ?1",
	[KS_STMT_CAND_FIND] =
		"SELECT c.id, r.candidate_id IS NOT NULL FROM candidates c"
		" LEFT JOIN candidate_results r ON r.candidate_id = c.id AND r.phase = 'search'"
		" WHERE c.source_hash = ?1 AND c.defines = ?2"
		" ORDER BY r.candidate_id IS NULL, c.id LIMIT 1",
	[KS_STMT_CAND_LIST_ID] = CAND_COLS("NULL", "NULL") " ORDER BY c.id",
	[KS_STMT_CAND_LIST_BEST] =
		CAND_COLS("NULL", "NULL")
		" ORDER BY CASE WHEN coalesce(f.status, r.status) = 'PASSED' THEN 0"
		"  WHEN r.status IS NOT NULL THEN 1 ELSE 2 END,"
		" coalesce(f.speedup, r.speedup, -1e308) DESC, c.id",
	[KS_STMT_EVAL_INSERT] =
		"INSERT INTO evaluations (candidate_id, workload, seed, phase, status, max_abs_err,"
		" max_rel_err, median_us, spread_pct, gflops, gbps, roofline_pct, baseline_us,"
		" speedup, samples, log, truncated, library_us, tol_elem, tol_l2)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,"
		" ?18, ?19, ?20)"
		" ON CONFLICT (candidate_id, workload, seed, phase) DO UPDATE SET"
		" status = excluded.status, max_abs_err = excluded.max_abs_err,"
		" max_rel_err = excluded.max_rel_err, median_us = excluded.median_us,"
		" spread_pct = excluded.spread_pct, gflops = excluded.gflops, gbps = excluded.gbps,"
		" roofline_pct = excluded.roofline_pct, baseline_us = excluded.baseline_us,"
		" speedup = excluded.speedup, samples = excluded.samples, log = excluded.log,"
		" truncated = excluded.truncated, library_us = excluded.library_us,"
		" tol_elem = excluded.tol_elem, tol_l2 = excluded.tol_l2,"
		" created = " NOW,
	[KS_STMT_EVAL_LIST] =
		"SELECT candidate_id, workload, seed, phase, status, max_abs_err, max_rel_err,"
		" median_us, spread_pct, gflops, gbps, roofline_pct, baseline_us, speedup,"
		" samples, log, created, library_us, tol_elem, tol_l2 FROM evaluations"
		" WHERE candidate_id = ?1 AND (?2 IS NULL OR phase = ?2)"
		" ORDER BY phase = 'final', workload, seed",
	[KS_STMT_RESULT_INSERT] =
		"INSERT INTO candidate_results (candidate_id, phase, status, speedup)"
		" VALUES (?1, ?2, ?3, ?4) ON CONFLICT (candidate_id, phase) DO UPDATE SET"
		" status = excluded.status, speedup = excluded.speedup, created = " NOW,
	[KS_STMT_RESULT_COUNT] = "SELECT count(*) FROM candidate_results WHERE phase = 'search'",
	[KS_STMT_CONVERGENCE] =
		"SELECT candidate_id, CASE WHEN status = 'PASSED' THEN speedup END"
		" FROM candidate_results WHERE phase = 'search' ORDER BY seq",
	[KS_STMT_SNAP_INSERT] =
		"INSERT INTO tree_snapshots (version, round, json)"
		" SELECT coalesce(max(version), 0) + 1, ?1, ?2 FROM tree_snapshots"
		" RETURNING version",
	[KS_STMT_SNAP_LATEST] =
		"SELECT round, version, json, created FROM tree_snapshots"
		" ORDER BY version DESC LIMIT 1",
	[KS_STMT_SNAP_LIST] =
		"SELECT round, version, json, created FROM tree_snapshots ORDER BY version",
	[KS_STMT_LLM_INSERT] =
		"INSERT INTO llm_exchanges (round, purpose, model, params, prompt, reply,"
		" prompt_tokens, completion_tokens, latency_ms, cost, status, error, truncated)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
	[KS_STMT_LLM_LIST] =
		"SELECT id, round, purpose, model, params, prompt, reply, prompt_tokens,"
		" completion_tokens, latency_ms, cost, status, error, created"
		" FROM llm_exchanges ORDER BY id",
	[KS_STMT_EVENT_INSERT] =
		"INSERT INTO events (level, kind, message, data, truncated)"
		" VALUES (?1, ?2, ?3, ?4, ?5)",
	[KS_STMT_EVENT_LIST] = "SELECT id, ts, level, kind, message, data FROM events ORDER BY id",
};
