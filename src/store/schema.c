/* The run database's schema, as an ordered list of migrations.
 *
 * A migration is applied once, in its own transaction, and recorded in `schema_version`;
 * PRAGMA user_version mirrors the highest version so a newer database is refused quickly.
 * Never edit a released migration: append a new one. */
#include "store/store_impl.h"

#define NOW "(strftime('%Y-%m-%dT%H:%M:%fZ','now'))"

/* The llm_exchanges table named name, whose purpose may be one of purposes (SQL strings):
 * widening the CHECK recreates the table, so every version is written from here */
#define LLM_EXCHANGES(name, purposes)                                                        \
	"CREATE TABLE " name " ("                                                            \
	" id INTEGER PRIMARY KEY,"                                                           \
	" round INTEGER NOT NULL,"                                                           \
	" purpose TEXT NOT NULL CHECK (purpose IN (" purposes ")),"                          \
	" model TEXT NOT NULL,"                                                              \
	" params TEXT NOT NULL CHECK (json_valid(params)),"                                  \
	" prompt TEXT NOT NULL,"                                                             \
	" reply TEXT NOT NULL,"                                                              \
	" prompt_tokens INTEGER NOT NULL DEFAULT 0,"                                         \
	" completion_tokens INTEGER NOT NULL DEFAULT 0,"                                     \
	" latency_ms REAL,"                                                                  \
	" cost REAL,"                                                                        \
	" status TEXT NOT NULL,"                                                             \
	" error TEXT,"                                                                       \
	" created TEXT NOT NULL DEFAULT " NOW ","                                            \
	" truncated INTEGER NOT NULL DEFAULT 0);"

static const char schema_v1[] =
	"CREATE TABLE run ("
	" one INTEGER PRIMARY KEY CHECK (one = 1),"
	" id TEXT NOT NULL,"
	" created TEXT NOT NULL DEFAULT " NOW ","
	" updated TEXT NOT NULL DEFAULT " NOW ","
	" version TEXT NOT NULL,"
	" task TEXT NOT NULL,"
	" task_hash TEXT NOT NULL,"
	" backend TEXT NOT NULL,"
	" strategy TEXT NOT NULL,"
	" policy TEXT NOT NULL,"
	" seed INTEGER NOT NULL,"
	" budget INTEGER NOT NULL,"
	" config TEXT NOT NULL CHECK (json_valid(config)),"
	" status TEXT NOT NULL CHECK (status IN ('running','finished','interrupted')),"
	" truncated INTEGER NOT NULL DEFAULT 0);"

	"CREATE TABLE workloads ("
	" idx INTEGER PRIMARY KEY CHECK (idx >= 0),"
	" label TEXT NOT NULL,"
	" params TEXT NOT NULL CHECK (json_valid(params)),"
	" is_check INTEGER NOT NULL CHECK (is_check IN (0,1)));"

	"CREATE TABLE candidates ("
	" id INTEGER PRIMARY KEY,"
	" created TEXT NOT NULL DEFAULT " NOW ","
	" source TEXT NOT NULL,"
	" source_hash TEXT NOT NULL CHECK (length(source_hash) = 64),"
	" language TEXT NOT NULL,"
	" parent_id INTEGER REFERENCES candidates(id),"
	" node_id INTEGER,"
	" action TEXT NOT NULL,"
	" policy TEXT NOT NULL,"
	" family TEXT NOT NULL,"
	" knobs TEXT NOT NULL CHECK (json_valid(knobs)),"
	" defines TEXT NOT NULL,"
	" round INTEGER NOT NULL,"
	" compile_status TEXT NOT NULL DEFAULT 'pending'"
	"  CHECK (compile_status IN ('pending','ok','failed')),"
	" compile_log TEXT,"
	" resources TEXT,"
	" compile_ms REAL,"
	" truncated INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX candidates_identity ON candidates(source_hash, defines);"

	"CREATE TABLE evaluations ("
	" id INTEGER PRIMARY KEY,"
	" candidate_id INTEGER NOT NULL REFERENCES candidates(id),"
	" workload INTEGER NOT NULL REFERENCES workloads(idx),"
	" seed INTEGER NOT NULL,"
	" phase TEXT NOT NULL CHECK (phase IN ('search','final')),"
	" status TEXT NOT NULL CHECK (status IN ('PASSED','COMPILE_ERROR','RUNTIME_ERROR',"
	"  'TIMEOUT','MEMORY_LIMIT','INCORRECT_NUMERICAL','SANDBOX_VIOLATION','SUSPICIOUS')),"
	" max_abs_err REAL, max_rel_err REAL, median_us REAL, spread_pct REAL,"
	" gflops REAL, gbps REAL, roofline_pct REAL, baseline_us REAL, speedup REAL,"
	" samples TEXT NOT NULL CHECK (json_valid(samples)),"
	" log TEXT,"
	" created TEXT NOT NULL DEFAULT " NOW ","
	" truncated INTEGER NOT NULL DEFAULT 0,"
	" UNIQUE (candidate_id, workload, seed, phase));"

	"CREATE TABLE candidate_results ("
	" seq INTEGER PRIMARY KEY,"
	" candidate_id INTEGER NOT NULL REFERENCES candidates(id),"
	" phase TEXT NOT NULL CHECK (phase IN ('search','final')),"
	" status TEXT NOT NULL CHECK (status IN ('PASSED','COMPILE_ERROR','RUNTIME_ERROR',"
	"  'TIMEOUT','MEMORY_LIMIT','INCORRECT_NUMERICAL','SANDBOX_VIOLATION','SUSPICIOUS')),"
	" speedup REAL,"
	" created TEXT NOT NULL DEFAULT " NOW ","
	" UNIQUE (candidate_id, phase));"

	"CREATE TABLE tree_snapshots ("
	" version INTEGER PRIMARY KEY,"
	" round INTEGER NOT NULL,"
	" json TEXT NOT NULL CHECK (json_valid(json)),"
	" created TEXT NOT NULL DEFAULT " NOW ");"
	"CREATE TRIGGER tree_snapshots_no_update BEFORE UPDATE ON tree_snapshots"
	" BEGIN SELECT RAISE(ABORT, 'tree_snapshots is append-only'); END;"
	"CREATE TRIGGER tree_snapshots_no_delete BEFORE DELETE ON tree_snapshots"
	" BEGIN SELECT RAISE(ABORT, 'tree_snapshots is append-only'); END;"

	LLM_EXCHANGES("llm_exchanges", "'init','edit','action','debug','improve','repair'")

	"CREATE TABLE events ("
	" id INTEGER PRIMARY KEY,"
	" ts TEXT NOT NULL DEFAULT " NOW ","
	" level TEXT NOT NULL CHECK (level IN ('debug','info','warn','error')),"
	" kind TEXT NOT NULL,"
	" message TEXT NOT NULL,"
	" data TEXT NOT NULL CHECK (json_valid(data)),"
	" truncated INTEGER NOT NULL DEFAULT 0);";

/* the llm policy asks for "direct" kernels when the tree has no open action */
static const char schema_v2[] =
	LLM_EXCHANGES("llm_exchanges_v2",
		      "'init','edit','action','debug','improve','repair','direct'")
	"INSERT INTO llm_exchanges_v2 SELECT * FROM llm_exchanges;"
	"DROP TABLE llm_exchanges;"
	"ALTER TABLE llm_exchanges_v2 RENAME TO llm_exchanges;";

/* the task's library kernel (OpenBLAS, cuBLAS) timed beside the baseline */
static const char schema_v3[] = "ALTER TABLE evaluations ADD COLUMN library_us REAL;";

/* the llm policies ask for a "repeat" kernel after a kernel that repeated a candidate */
static const char schema_v4[] =
	LLM_EXCHANGES("llm_exchanges_v4",
		      "'init','edit','action','debug','improve','repair','direct','repeat'")
	"INSERT INTO llm_exchanges_v4 SELECT * FROM llm_exchanges;"
	"DROP TABLE llm_exchanges;"
	"ALTER TABLE llm_exchanges_v4 RENAME TO llm_exchanges;";

/* what the task's tolerance judged, as shares of it (the error columns are not it) */
static const char schema_v5[] = "ALTER TABLE evaluations ADD COLUMN tol_elem REAL;"
				"ALTER TABLE evaluations ADD COLUMN tol_l2 REAL;";

const struct ks_store_migration ks_store_migrations[] = {
	{1, "initial schema", schema_v1},
	{2, "llm exchanges may be 'direct' requests", schema_v2},
	{3, "evaluations record the library's median", schema_v3},
	{4, "llm exchanges may be 'repeat' requests", schema_v4},
	{5, "evaluations record the share of the tolerance used", schema_v5},
};
const size_t ks_store_nmigrations = sizeof(ks_store_migrations) / sizeof(ks_store_migrations[0]);
