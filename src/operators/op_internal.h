/* The operator object shared by src/operators/ (not by the rest of starlops). */
#ifndef SL_OP_INTERNAL_H
#define SL_OP_INTERNAL_H

#include "internal.h"

enum { SL_STACK_NONE, SL_STACK_V, SL_STACK_H };

/** Submits the tasks of y = op x (mode SL_FORWARD) or y = op^H x; arguments already checked. */
typedef int (*sl_op_apply_fn)(sl_op *op, sl_op_mode mode, const sl_array *x, sl_array *y);

struct sl_op {
  int refs;
  char name[160];
  sl_dtype dtype;
  sl_array *dom, *rng;    /* templates of the layouts, also usable as temporaries by the operator */
  sl_op_apply_fn apply;
  sl_op *a, *b;           /* parts (composites) */
  sl_array *tmp;          /* one intermediate (product: a's domain) */
  sl_array *data;         /* an operator's own data (diagonal: d, conj(d)) */
  sl_array *data_conj;
  double sign;            /* sum: +1, difference: -1 */
  void *mat;              /* MatrixMult: this rank's block (row-major nr x nc); Restriction: its indices */
  starpu_data_handle_t mat_handle;
  int64_t nr, nc, nrhs;
  int64_t nbatch;         /* Fredholm1: this rank's slices */
  void *aux[2];           /* CSR: row pointers and column indices, and their handles */
  starpu_data_handle_t aux_handle[2];
  int kind;               /* MatrixMult arrangement: SL_STACK_NONE (block diagonal), SL_STACK_V, SL_STACK_H */
  sl_cscalar scale;       /* scaled */
};

/** A new operator of the given layouts (templates created like dom_like and rng_like) with one reference. */
int sl_op_new(sl_op **out, const char *name, const sl_array *dom_like, const sl_array *rng_like, sl_op_apply_fn fn);
/** The chunk handles of a's local block (*h NULL and *n 0 when this rank owns nothing); free *h. */
int sl_op_chunks(const sl_array *a, starpu_data_handle_t **h, int *n);
/** Takes one more reference to op. */
sl_op *sl_op_ref(sl_op *op);

#endif
