/* The proximal-operator object: a table of functions per kind, its parameters and scratch arrays. */
#ifndef SL_PROX_INTERNAL_H
#define SL_PROX_INTERNAL_H

#include "internal.h"

/* What a kind of function provides; arguments already checked (x and y alike; y may be x). NULL dual:
 * Moreau's identity; NULL grad: not smooth; NULL lipschitz: unknown. */
typedef struct sl_prox_ops {
  int (*prox)(sl_prox *p, double tau, const sl_array *x, sl_array *y);
  int (*dual)(sl_prox *p, double tau, const sl_array *x, sl_array *y);
  int (*value)(sl_prox *p, const sl_array *x, sl_scalar *s);
  int (*grad)(sl_prox *p, const sl_array *x, sl_array *g);
  int (*lipschitz)(sl_prox *p, const sl_array *like, double *L);
  int (*check)(const sl_prox *p, const sl_array *x, const char *an); /* layout checks beyond the generic ones */
  void (*destroy)(sl_prox *p);
} sl_prox_ops;

#define PROX_NSCRATCH 4 /* the last one is Moreau's */

struct sl_prox {
  const sl_prox_ops *ops;
  char name[64];
  int refs;
  unsigned session;      /* sl_session() at creation: one of an earlier session is refused */
  double sigma;          /* L1, L2, L21: the weight */
  double lo, hi;         /* Box */
  /* L2 */
  sl_op *op;             /* NULL: the identity */
  sl_array *b;           /* NULL: zero */
  sl_array *opb;         /* Op^H b (computed at the first prox) */
  sl_op *normal;         /* I + tau_n sigma Op^H Op for the last tau */
  double tau_n;
  int cg_niter;
  double lip;            /* sigma ||Op||^2 once estimated (0: not yet) */
  /* compositions */
  sl_prox *f;
  double a, shift;
  /* L21 over one group (a 1-D array): its layout, and the scalar the group's norm and factor go through */
  sl_array *layout;
  sl_scalar *gs;
  /* scratch arrays, each made at first use like the array it is used with (and remade for another layout) */
  sl_array *scratch[PROX_NSCRATCH];
};

/** prox_new in a collective constructor, after its arguments' agreement: the ranks agree the allocation (one
 *  failing fails all); *p is set only on success. */
int prox_make(sl_prox **p, const sl_prox_ops *ops, const char *name);
/** *t = tau p->sigma (a threshold or a weighted step), which must be finite; the error names p. */
int prox_weighted_step(const sl_prox *p, double tau, double *t);
/** Scratch array i of p laid out like `like` (kept between calls). */
int prox_scratch(sl_prox *p, int i, const sl_array *like, sl_array **out);
/** A new object of the given kind (refs 1); name printf-style. */
int prox_new(sl_prox **p, const sl_prox_ops *ops, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/** s = a s + b (after sqrt when root): a scalar task on the result of a reduction. */
int prox_scalar_affine(sl_scalar *s, double a, double b, int root);
/** The unchecked applies the solvers call (arguments agreed once by the solver). */
int prox_apply_p(sl_prox *p, double tau, const sl_array *x, sl_array *y);
int prox_dual_p(sl_prox *p, double tau, const sl_array *x, sl_array *y);
int prox_value_p(sl_prox *p, const sl_array *x, sl_scalar *s);
int prox_grad_p(sl_prox *p, const sl_array *x, sl_array *g);
int prox_lipschitz_p(sl_prox *p, const sl_array *like, double *L);
/** The layout checks of p for x (an names x in errors); local. */
int prox_check_p(const sl_prox *p, const sl_array *x, const char *an);
/** A digest of what p computes, agreed across ranks where p is an argument: its kind (name), weights, bounds,
 *  composition factors, inner CG iterations, its operator and data layouts, and what it composes. */
uint64_t prox_key(const sl_prox *p);
/** sl_prox_l2; check_b = 0 skips b's finiteness check (a collective reduction) for a caller that has just made
 *  it (ADMM-L2's cost term on its own b). */
int prox_l2_make(sl_prox **p, sl_op *Op, const sl_array *b, double sigma, int cg_niter, int check_b);
/** 1 when p (or what it composes) has a gradient. */
int prox_smooth(const sl_prox *p);

#endif
