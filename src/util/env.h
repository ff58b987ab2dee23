/* The environment variables ksearch reads: one table (name, what it does, its default),
 * read once into struct ks_env.  Library code, the runners and the CLI take configuration
 * from ks_env_get(), never from getenv() ('ksearch --help' lists the table as its ENVIRONMENT
 * section; tests/cli/t0025-environment.sh checks both).  Variables a sandboxed process is
 * handed by name (a backend's sandbox needs, a library's core variable) are passed through,
 * not configuration, and are not in the table. */
#ifndef KS_UTIL_ENV_H
#define KS_UTIL_ENV_H

#ifdef __cplusplus
extern "C" {
#endif

/* X(field, NAME, what it does, the default when unset) */
#define KS_ENV_VARS(X)                                                                      \
	X(home, "KSEARCH_HOME", "the data root: tasks/, knowledge/, prompts/",               \
	  "<prefix>/share/ksearch beside the executable, or the source tree")                \
	X(cache, "KSEARCH_CACHE",                                                           \
	  "the cache: compiled kernels, inputs, references, results, specs ('ksearch cache')", \
	  "$XDG_CACHE_HOME/ksearch, else $HOME/.cache/ksearch")                               \
	X(xdg_cache_home, "XDG_CACHE_HOME", "where the cache goes when KSEARCH_CACHE is unset", \
	  "$HOME/.cache")                                                                     \
	X(user_home, "HOME", "where the cache goes when neither of those is set", "none")    \
	X(runner_dir, "KSEARCH_RUNNER_DIR", "the folder of ksearch-runner* and ksearch-cc-jail", \
	  "beside the ksearch executable")                                                    \
	X(cc, "KSEARCH_CC", "the C compiler of the cpu backend", "$CC, else cc")              \
	X(cc_env, "CC", "the C compiler when KSEARCH_CC is unset", "cc")                      \
	X(nvcc, "KSEARCH_NVCC", "nvcc for the cuda backend",                                  \
	  "nvcc on PATH, else /usr/local/cuda/bin/nvcc")                                      \
	X(path, "PATH", "where compilers (cc, nvcc) are found", "/usr/bin:/bin")              \
	X(cuda_arch, "KSEARCH_CUDA_ARCH", "the GPU architecture nvcc builds for (90a, sm_80, 9.0)", \
	  "the device's own")                                                                 \
	X(libcuda, "KSEARCH_LIBCUDA", "the CUDA driver library the cuda backend opens",       \
	  "libcuda.so.1")                                                                     \
	X(cuda_no_ceilings, "KSEARCH_CUDA_NO_CEILINGS",                                      \
	  "set: a GPU's spec takes its theoretical roofs instead of measuring them",         \
	  "measured")                                                                  \
	X(device, "KSEARCH_DEVICE", "the GPU a runner and 'eval' use ('worker --device' sets it)", \
	  "0")                                                                                \
	X(mlx_timer, "KSEARCH_MLX_TIMER", "events: time MLX kernels with CUDA events (docs/mlx.md)", \
	  "the wall clock")                                                                   \
	X(mlx_header, "KSEARCH_MLX_HEADER", "file: hand MLX a kernel's header as an #include", \
	  "inline text")                                                                      \
	X(mlx_chain, "KSEARCH_MLX_CHAIN", "MLX kernel calls timed together per eval, 1 to 64", \
	  "8")                                                                                \
	X(mlx_trace, "KSEARCH_MLX_TRACE",                                                   \
	  "1: the MLX runner logs every shim call on stderr; /abs/path: into that file", "off") \
	X(python, "KSEARCH_PYTHON", "the Python of reference.py files and 'tasks import'", "python3") \
	X(no_input_cache, "KSEARCH_NO_INPUT_CACHE",                                          \
	  "set (not 0): generate inputs anew instead of reading the input cache", "the cache") \
	X(api_key, "KSEARCH_API_KEY", "the key of --policy llm's endpoint (never stored or shown)", \
	  "$OPENAI_API_KEY")                                                                  \
	X(openai_api_key, "OPENAI_API_KEY", "the key when KSEARCH_API_KEY is unset", "none") \
	X(seccomp_audit, "KSEARCH_SECCOMP_AUDIT",                                            \
	  "FILE: runners log calls off the seccomp list into FILE instead of dying (diagnosis)", \
	  "off")                                                                              \
	X(sandbox_skip, "KSEARCH_SANDBOX_SKIP",                                              \
	  "landlock,seccomp,...: layers a runner started by hand skips (never passed on)",    \
	  "none")                                                                             \
	X(sandbox_trace, "KSEARCH_SANDBOX_TRACE",                                            \
	  "set: a runner started by hand prints every open the sandbox refused", "off")        \
	X(tmpdir, "TMPDIR", "where reference.py runs and imports get scratch folders", "/tmp") \
	X(columns, "COLUMNS", "the width of run's status line where the terminal does not say", \
	  "80")                                                                               \
	X(cuda_home, "CUDA_HOME", "the MLX runner also reads CUDA headers from its include/", \
	  "none")                                                                             \
	X(cuda_path, "CUDA_PATH", "the same, where CUDA_HOME is unset", "none")

/* each variable's value, NULL when unset (an empty value stays "") */
struct ks_env {
#define KS_ENV_FIELD(field, name, what, dflt) const char *field;
	KS_ENV_VARS(KS_ENV_FIELD)
#undef KS_ENV_FIELD
};

/* one row of the table, for --help */
struct ks_env_var {
	const char *name, *what, *dflt;
};

/* The environment as it was at the first call (thread-safe); the values are copies, valid
 * until ks_env_reload. */
const struct ks_env *ks_env_get(void);
/* read the environment again: after a process sets a variable for itself and its children
 * ('ksearch worker --device'), and in tests; not while other threads read ks_env_get() */
void ks_env_reload(void);
/* the table, n rows */
const struct ks_env_var *ks_env_vars(int *n);

#ifdef __cplusplus
}
#endif

#endif
