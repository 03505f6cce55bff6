/* The host allocation cache (src/host_cache.c) through its two hooks, without StarPU: a freed block of 1 MiB
 * or more comes back to the next allocation of the same size and memory node (the most recently freed first),
 * never to another size or node; smaller blocks, blocks freed without their size and blocks over the cap go
 * back to the system; the cached bytes never pass the cap (the oldest go first); stopping frees everything
 * (the valgrind run checks that nothing is lost). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

#define MIB ((size_t)1 << 20)

static void *take(size_t n, unsigned node)
{
  void *p = NULL;
  cr_assert_eq(sl_host_cache_malloc(node, &p, n, 0), 0);
  cr_assert_not_null(p);
  cr_assert_eq((uintptr_t)p % 64, 0, "blocks are 64-byte aligned");
  memset(p, 1, n < 4096 ? n : 4096); /* writable */
  return p;
}

static void give(void *p, size_t n, unsigned node) { cr_assert_eq(sl_host_cache_free(node, p, n, 0), 0); }

Test(host_cache, same_size_comes_back)
{
  sl_host_cache_set_cap(64 * MIB);
  void *a = take(2 * MIB, 0), *b = take(2 * MIB, 0);
  give(a, 2 * MIB, 0);
  give(b, 2 * MIB, 0);
  cr_assert_eq(sl_host_cache_bytes(), 4 * MIB);
  cr_assert_eq(take(2 * MIB, 0), b, "the most recently freed block first");
  cr_assert_eq(sl_host_cache_bytes(), 2 * MIB);
  void *c = take(3 * MIB, 0); /* another size: a new block */
  cr_assert_neq(c, a);
  cr_assert_eq(sl_host_cache_bytes(), 2 * MIB);
  void *d = take(2 * MIB, 1); /* another memory node: a new block */
  cr_assert_neq(d, a);
  cr_assert_eq(take(2 * MIB, 0), a);
  cr_assert_eq(sl_host_cache_bytes(), 0);
  give(a, 2 * MIB, 0);
  give(b, 2 * MIB, 0);
  give(c, 3 * MIB, 0);
  give(d, 2 * MIB, 1);
  cr_assert_eq(sl_host_cache_bytes(), 9 * MIB);
  sl_host_cache_stop();
  cr_assert_eq(sl_host_cache_bytes(), 0);
}

Test(host_cache, small_unsized_and_oversized_blocks_are_not_kept)
{
  sl_host_cache_set_cap(8 * MIB);
  give(take(MIB - 1, 0), MIB - 1, 0);
  give(take(4096, 0), 4096, 0);
  give(take(2 * MIB, 0), 0, 0); /* starpu_free passes no size */
  give(take(9 * MIB, 0), 9 * MIB, 0);
  cr_assert_eq(sl_host_cache_bytes(), 0);
  give(NULL, 2 * MIB, 0);
  cr_assert_eq(sl_host_cache_bytes(), 0);
  give(take(MIB, 0), MIB, 0); /* exactly 1 MiB is kept */
  cr_assert_eq(sl_host_cache_bytes(), MIB);
  sl_host_cache_stop();
}

Test(host_cache, the_cap_drops_the_oldest)
{
  sl_host_cache_set_cap(5 * MIB);
  void *a = take(2 * MIB, 0), *b = take(2 * MIB, 0), *c = take(2 * MIB, 0);
  give(a, 2 * MIB, 0);
  give(b, 2 * MIB, 0);
  cr_assert_eq(sl_host_cache_bytes(), 4 * MIB);
  give(c, 2 * MIB, 0); /* 6 MiB would pass the cap: a goes */
  cr_assert_eq(sl_host_cache_bytes(), 4 * MIB);
  void *x = take(2 * MIB, 0), *y = take(2 * MIB, 0);
  cr_assert_eq(x, c);
  cr_assert_eq(y, b);
  cr_assert_eq(sl_host_cache_bytes(), 0);
  give(x, 2 * MIB, 0);
  give(y, 2 * MIB, 0);
  /* many blocks: the slots run out before the cap, the cache stays within both */
  sl_host_cache_set_cap(1024 * MIB);
  void *many[80];
  for (int i = 0; i < 80; i++) many[i] = take(MIB + 64 * (size_t)i, 0);
  for (int i = 0; i < 80; i++) give(many[i], MIB + 64 * (size_t)i, 0);
  size_t kept = sl_host_cache_bytes(), want = 64 * MIB + 64 * (size_t)(3160 - 120); /* blocks 16 .. 79 */
  cr_assert_eq(kept, want, "%zu bytes kept, want the last 64 blocks' %zu", kept, want);
  sl_host_cache_stop();
  cr_assert_eq(sl_host_cache_bytes(), 0);
}
