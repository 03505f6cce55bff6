/* Helpers for the multi-rank test programs: checks that count failures, the same verdict on every rank,
 * and conversions between double complex references and the four dtypes. */
#ifndef MPI_CHECK_H
#define MPI_CHECK_H

#include <complex.h>
#include <stdint.h>

#include "starlops.h"

extern int mc_failures;
#define CHECK(cond, ...)                                                                              \
  do {                                                                                                \
    if (!(cond)) {                                                                                    \
      mc_failures++;                                                                                  \
      mc_report(__FILE__, __LINE__, __VA_ARGS__);                                                     \
    }                                                                                                 \
  } while (0)
/* Checks a starlops call succeeded. */
#define CHECK_OK(call)                                                                                \
  do {                                                                                                \
    int rc_ = (call);                                                                                 \
    CHECK(rc_ == SL_SUCCESS, "%s returned %s: %s", #call, sl_strerror(rc_), sl_last_error());        \
  } while (0)

void mc_report(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/** Starts starlops with small chunks so that every block is split among several tasks. */
void mc_init(int *argc, char ***argv);
/** Prints the verdict, finalises, and returns the exit status (the same on every rank). */
int mc_finish(const char *name);

/** A deterministic test value for global element g (imaginary part zero for real dtypes). */
double complex mc_value(sl_dtype dt, int64_t g, int seed);
/** dst (dtype dt) = src, and back. */
void mc_to_dtype(sl_dtype dt, int64_t n, const double complex *src, void *dst);
void mc_from_dtype(sl_dtype dt, int64_t n, const void *src, double complex *dst);
/** Relative tolerance of dt for results of modest condition. */
double mc_tol(sl_dtype dt);
/** The four dtypes, in the order the test programs run them. */
extern const sl_dtype mc_dtypes[4];
/** Gathers a to every rank and compares with ref (n elements); returns the number of mismatches. */
int mc_compare(sl_array *a, const double complex *ref, const char *what);
/** The same with |a - ref| <= tol max(1, mag) element by element: mag, the sum of the magnitudes of the terms
 *  that make each element (sums that cancel), or NULL for |ref|. */
int mc_compare_mag(sl_array *a, const double complex *ref, const double *mag, const char *what, double tol);
/** Creates a and sets it to mc_value(dt, g, seed) for every global g (scatter from every rank). */
sl_array *mc_array(int ndim, const int64_t *dims, sl_dtype dt, const sl_dist *dist, int seed, double complex **global);
/** The global array gathered on every rank, as double complex (malloc'd; free it). */
double complex *mc_gather(sl_array *a);
/* x = M^-1 b for a dense n x n M (column-major), by LAPACKE_zgesv (a failure is a failed check) */
void mc_solve_dense(int64_t n, const double complex *M, const double complex *b, double complex *x);
/** This rank's share of n split over the ranks as the tests do: on 4 ranks the last owns nothing. */
int64_t mc_share(int64_t n);
/** The host allocation cache's default cap on this rank, as docs/install.md states it: an eighth of the node's
 *  memory (the cgroup's limit where lower) over the communicator's ranks on the node. Collective. */
double mc_host_cache_default_bytes(void);
/** 1 if every rank passes the same nonzero code and the same message. */
int mc_same_error_everywhere(int rc, int expected);

#endif
