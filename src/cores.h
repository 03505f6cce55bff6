/* A rank's share of its node (cores.c); include with _GNU_SOURCE defined (cpu_set_t). */
#ifndef SL_CORES_H
#define SL_CORES_H

#include <hwloc.h>
#include <sched.h>

#define SL_CORES_MAX 1024
typedef struct {
  int lo, hi;                     /* the node's cores [lo, hi) (hwloc's logical core order) */
  unsigned bindid[SL_CORES_MAX];  /* StarPU's bind id of core lo + i: the logical index of its first PU */
  cpu_set_t cpus;                 /* the OS CPUs of those cores (every hardware thread) */
} sl_cores_share;

/** The share of node rank r of k in topo: cores [r C / k, (r + 1) C / k) of C, core r mod C when C < k.
 *  Returns 0, or -1 when topo has no cores or r, k are out of range. */
int sl_cores_plan(hwloc_topology_t topo, int k, int r, sl_cores_share *out);

#endif
