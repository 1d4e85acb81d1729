/* dt_sys.h — small system facts the CLI records: paths next to the executable, file
 * hashes, host description, git state (through the one spawner, common/dt_spawn.h). Fallible functions return 0/-1. */
#ifndef DT_SYS_H
#define DT_SYS_H

#include <jansson.h>
#include <stddef.h>

/* Directory of /proc/self/exe (no trailing slash). */
int dt_exe_dir(char *buf, size_t len);
/* SHA-256 of a file's contents as lowercase hex; -1 if unreadable. */
int dt_file_sha256(const char *path, char out_hex[65]);
/* {"cpu":..., "cores":..., "os":..., "kernel":..., "hostname":...} */
json_t *dt_host_info(void);
/* {"revision":..., "dirty":bool, "source":"git"|"build"} for the tree at repo_dir. */
json_t *dt_git_info(const char *repo_dir, const char *build_rev);

#endif
