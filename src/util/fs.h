/* Small file-system helpers shared by the whole library. */
#ifndef KS_UTIL_FS_H
#define KS_UTIL_FS_H

#include <stddef.h>

#include "ksearch/buf.h"
#include "ksearch/error.h"

/* read a whole file into out (NUL-terminated); fails with KS_ELIMIT beyond max bytes */
int ks_file_read(const char *path, size_t max, struct ks_buf *out, struct ks_error *e);
/* write data to path through a temporary file and rename, so readers never see half a file */
int ks_file_write_atomic(const char *path, const void *data, size_t len, struct ks_error *e);
/* the same for a buffer's contents, refused (nothing written, the buffer's error) when the
 * buffer failed: a prefix of the text meant is never written as if it were whole */
int ks_file_write_buf(const char *path, const struct ks_buf *b, struct ks_error *e);
/* mkdir -p */
int ks_mkdir_p(const char *path, struct ks_error *e);
/* remove a directory tree (best effort; never follows symlinks): any depth, any path
 * length, with a bounded number of descriptors and bounded memory; -1 when something
 * could not be removed */
int ks_rm_rf(const char *path);
/* 1 when path, every link in it followed, lies in the folder dir (or is dir itself): a
 * file a task's folder links to elsewhere is not the task's.  real (may be NULL) gets the
 * resolved path, "" when path does not resolve (then 0). */
int ks_path_within(const char *path, const char *dir, char *real, size_t n);
int ks_path_exists(const char *path);
int ks_is_dir(const char *path);
/* snprintf-style path joining into a caller buffer; KS_ELIMIT when it does not fit */
int ks_path_join(char *out, size_t n, const char *a, const char *b);
/* directory holding the running executable (for finding ksearch-runner, tasks/, ...) */
int ks_exe_dir(char *out, size_t n);
/* the ksearch data root: $KSEARCH_HOME, else the source tree the binary was built from,
 * else the directory above the executable; holds tasks/, knowledge/, prompts/ */
const char *ks_data_root(void);
/* cache root: $KSEARCH_CACHE, else $XDG_CACHE_HOME/ksearch, else ~/.cache/ksearch */
const char *ks_cache_root(void);

#endif
