/* envinfo.h — what the machine and the build were when a sweep ran (DIR/env.json). */
#ifndef HX_ENVINFO_H
#define HX_ENVINFO_H

#include <jansson.h>
#include <stddef.h>

#include <forkscope/config.h>

/* forkscope's version: the runtime header's (FK_VERSION), which the installed .pc files carry */
#define HX_VERSION FK_VERSION

/* A new object with the fields of DIR/env.json that need no driver (see harness/results/results.h):
 * date, host, kernel, cpu_model, cores, topology (hwloc summary, e.g. "Package:1 NUMANode:1
 * Core:2 PU:2"; hwloc honours HWLOC_XMLFILE / HWLOC_SYNTHETIC), hwloc_version,
 * memory_bytes, git_revision (null outside a git work tree) and git_dirty of the tree the
 * executable was built in, bundle (make bundle's record, share/forkscope/BUNDLE.txt beside
 * bin/: its build id, revision, glibc floor, ...; git_revision then comes from it; null
 * outside a bundle), compilers {gcc, clang} (first line of --version, null if
 * absent), forkscope_version, config_file.  Never fails: what cannot be found is null. */
json_t *hx_envinfo_collect(const char *config_file);

/* ISO-8601 UTC time of t (seconds since the epoch) into buf (at least 21 bytes). */
void hx_envinfo_iso_time(double t, char *buf, size_t len);

/* Wall-clock time, seconds since the epoch. */
double hx_envinfo_wall_time(void);

/* The hwloc topology summary, e.g. "Package:1 NUMANode:1 Core:2 PU:2", into buf; 0 or
 * HX_EINTERNAL if hwloc cannot load this machine's topology. */
int hx_envinfo_topology(char *buf, size_t len);

#endif
