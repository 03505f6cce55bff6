/* A rank's share of its node (src/cores.c, sl_cores_plan) on synthetic machines: every rank of k gets whole
 * cores, the shares are disjoint and cover the node when there are at least as many cores as ranks, sizes
 * differ by at most one, each bind id is the first hardware thread of a core of the share, and the CPU set is
 * every hardware thread of those cores. The expected values are worked out here from the synthetic
 * description (cores numbered across packages, hardware threads of a core consecutive). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "cores.h"

static hwloc_topology_t synthetic(const char *desc)
{
  hwloc_topology_t t;
  cr_assert_eq(hwloc_topology_init(&t), 0);
  cr_assert_eq(hwloc_topology_set_synthetic(t, desc), 0, "%s", desc);
  cr_assert_eq(hwloc_topology_load(t), 0);
  return t;
}

/* machine of `cores` cores with `ht` hardware threads each, shared by k ranks */
static void check_machine(const char *desc, int cores, int ht)
{
  hwloc_topology_t t = synthetic(desc);
  for (int k = 1; k <= cores + 3; k++) {
    int owner[4096];
    for (int c = 0; c < cores; c++) owner[c] = -1;
    int min = 1 << 30, max = 0;
    for (int r = 0; r < k; r++) {
      sl_cores_share s;
      cr_assert_eq(sl_cores_plan(t, k, r, &s), 0, "%s k %d r %d", desc, k, r);
      int n = s.hi - s.lo;
      cr_assert(n >= 1 && s.lo >= 0 && s.hi <= cores, "%s k %d r %d: cores [%d, %d)", desc, k, r, s.lo, s.hi);
      if (n < min) min = n;
      if (n > max) max = n;
      if (k <= cores) {
        for (int c = s.lo; c < s.hi; c++) {
          cr_assert_eq(owner[c], -1, "%s k %d: core %d in the shares of ranks %d and %d", desc, k, c, owner[c], r);
          owner[c] = r;
        }
      } else {
        cr_assert_eq(n, 1, "%s k %d r %d", desc, k, r);
        cr_assert_eq(s.lo, r % cores, "%s k %d r %d", desc, k, r);
      }
      for (int i = 0; i < n; i++)
        cr_assert_eq(s.bindid[i], (unsigned)((s.lo + i) * ht), "%s k %d r %d: bind id %d", desc, k, r, i);
      cr_assert_eq(CPU_COUNT(&s.cpus), n * ht, "%s k %d r %d", desc, k, r);
      for (int p = s.lo * ht; p < s.hi * ht; p++) cr_assert(CPU_ISSET(p, &s.cpus), "%s k %d r %d: PU %d", desc, k, r, p);
    }
    cr_assert(max - min <= 1, "%s k %d: shares of %d to %d cores", desc, k, min, max);
    if (k <= cores)
      for (int c = 0; c < cores; c++) cr_assert_neq(owner[c], -1, "%s k %d: core %d in no share", desc, k, c);
  }
  sl_cores_share s;
  cr_expect_eq(sl_cores_plan(t, 2, 2, &s), -1);
  cr_expect_eq(sl_cores_plan(t, 0, 0, &s), -1);
  hwloc_topology_destroy(t);
}

Test(cores, shares_of_machines_with_and_without_hardware_threads)
{
  check_machine("core:2 pu:1", 2, 1);
  check_machine("core:16 pu:1", 16, 1);
  check_machine("core:16 pu:2", 16, 2);
  check_machine("package:2 core:8 pu:2", 16, 2);
  check_machine("package:2 l3:2 core:6 pu:4", 24, 4);
}
