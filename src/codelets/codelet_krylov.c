/* Fused steps of a Krylov iteration on vectors of one chunk: reductions, the coefficient step of
 * solvers/solver_prog.h, the history row and the vector updates that use the coefficients, all in one task
 * (on a GPU: kernels queued on the worker's stream, the scalars never leaving the device). A solve thus
 * runs an iteration in a few tasks instead of one per operation. On one rank the reductions land in the
 * solver's state (no allreduce between a reduction and its step); on several ranks (one chunk each) a fused
 * step reads the allreduced scalars of the previous reduction and writes its own partial into a scalar
 * handle, which the solver then allreduces. A chunk op is one of several tasks over a rank's chunks: it
 * reads the state (the step ran before it) and writes the chunk's partials. Each fused step is a short program
 * of the instructions below, run by the CPU and the CUDA implementations alike. */
#include <stdlib.h>

#include "codelets/codelets.h"
#include "solvers/solver_prog.h"

typedef enum {
  KI_END,
  KI_RED,  /* reduction result a (a state slot or a scalar handle: scred) = x^H y (b: x, c: y), ||x||^2 (c < 0) */
  KI_STEP, /* solver_prog.h step a on (state, the three reduction results) */
  KI_REC,  /* the history row */
  KI_AXPY, /* vector a = (slot c) vector b + (slot d) vector a; a slot < 0 is the coefficient 1 */
  KI_SCALE, /* vector a *= slot c */
  KI_PCG,   /* pipelined CG's six updates of vectors (r, w, q, z, s, p, x) = 0..6 (pcg_axpy below); a = 1: then
               reduction results 0 and 1 = ||r||^2 and w^H r of the new r and w. On the CPU one pass over the seven
               vectors (kernel_pcg_update), on a GPU the six updates and two reductions one kernel each */
} kinstr_kind;
typedef struct {
  kinstr_kind k;
  int a, b, c, d;
} kinstr;

/* KI_PCG's updates as KI_AXPY instructions: z = q + beta z, s = w + beta s, p = r + beta p, x += alpha p,
 * r -= alpha s, w -= alpha z */
static const kinstr pcg_axpy[6] = {{KI_AXPY, 3, 2, -1, CG_BETA},   {KI_AXPY, 4, 1, -1, CG_BETA},
                                   {KI_AXPY, 5, 0, -1, CG_BETA},   {KI_AXPY, 6, 5, CG_ALPHA, -1},
                                   {KI_AXPY, 0, 4, CG_MALPHA, -1}, {KI_AXPY, 1, 3, CG_MALPHA, -1}};

#define KMAX 12 /* instructions per fused step, KI_END included */
#define KVEC 8  /* vectors per fused step */
static const struct {
  const char *name;
  int nvec;
  enum starpu_data_access_mode modes[KVEC];
  kinstr prog[KMAX];
  int nsc; /* scalar handles holding reduction results */
  enum starpu_data_access_mode scmodes[2];
  int scred[3]; /* reduction result i: scalar handle scred[i] - 1, or the state's slot S_RED + i when 0 */
  int chunk;    /* one of several tasks over the chunks: the state read only, no history ring (no KI_STEP, KI_REC) */
} ops[SL_KRY_NOPS] = {
  [SL_KRY_CG] = {"sl_cg_update", 4, {STARPU_RW, STARPU_R, STARPU_RW, STARPU_RW}, /* c, Ac, x, r */
                 {{KI_RED, 0, 0, 1, 0}, {KI_STEP, SL_PROG_CG_ALPHA, 0, 0, 0}, {KI_AXPY, 2, 0, CG_ALPHA, -1},
                  {KI_AXPY, 3, 1, CG_MALPHA, -1}, {KI_RED, 0, 3, -1, 0}, {KI_STEP, SL_PROG_CG_BETA, 0, 0, 0},
                  {KI_REC, 0, 0, 0, 0}, {KI_AXPY, 0, 3, -1, CG_BETA}, {KI_END, 0, 0, 0, 0}}},
  [SL_KRY_CGLS_ALPHA] = {"sl_cgls_alpha", 4, {STARPU_R, STARPU_R, STARPU_RW, STARPU_RW}, /* q, c, x, s */
                         {{KI_RED, 0, 0, -1, 0}, {KI_RED, 1, 1, -1, 0}, {KI_STEP, SL_PROG_CGLS_ALPHA, 0, 0, 0},
                          {KI_AXPY, 2, 1, CGLS_ALPHA, -1}, {KI_AXPY, 3, 0, CGLS_MALPHA, -1}, {KI_END, 0, 0, 0, 0}}},
  [SL_KRY_CGLS_BETA] = {"sl_cgls_beta", 4, {STARPU_R, STARPU_R, STARPU_R, STARPU_RW}, /* r, s, x, c */
                        {{KI_RED, 0, 0, -1, 0}, {KI_RED, 1, 1, -1, 0}, {KI_RED, 2, 2, -1, 0},
                         {KI_STEP, SL_PROG_CGLS_BETA, 0, 0, 0}, {KI_REC, 0, 0, 0, 0}, {KI_AXPY, 3, 0, -1, CGLS_BETA},
                         {KI_END, 0, 0, 0, 0}}},
  [SL_KRY_LSQR_U] = {"sl_lsqr_u", 2, {STARPU_RW, STARPU_R}, /* u, A v */
                     {{KI_AXPY, 0, 1, -1, LSQR_MALPHA}, {KI_RED, 0, 0, -1, 0}, {KI_STEP, SL_PROG_LSQR_STEP_A, 0, 0, 0},
                      {KI_SCALE, 0, 0, LSQR_INV_BETA, 0}, {KI_END, 0, 0, 0, 0}}},
  [SL_KRY_LSQR_V] = {"sl_lsqr_v", 4, {STARPU_RW, STARPU_R, STARPU_RW, STARPU_RW}, /* v, A^H u, w, x */
                     {{KI_AXPY, 0, 1, LSQR_CU, LSQR_CV}, {KI_RED, 0, 0, -1, 0}, {KI_RED, 1, 2, -1, 0},
                      {KI_STEP, SL_PROG_LSQR_STEP_B, 0, 0, 0}, {KI_SCALE, 0, 0, LSQR_INV_ALPHA, 0},
                      {KI_AXPY, 3, 2, LSQR_T1, -1}, {KI_AXPY, 2, 0, -1, LSQR_T2}, {KI_REC, 0, 0, 0, 0}, {KI_END, 0, 0, 0, 0}}},
  /* pipelined CG after the first iteration, after q = A w */
  [SL_KRY_PCG] = {"sl_pcg_update", 7, {STARPU_RW, STARPU_RW, STARPU_R, STARPU_RW, STARPU_RW, STARPU_RW, STARPU_RW},
                  /* r, w, q, z, s, p, x */
                  {{KI_RED, 0, 0, -1, 0}, {KI_RED, 1, 1, 0, 0}, {KI_STEP, SL_PROG_PCG_COEFFS, 0, 0, 0},
                   {KI_REC, 0, 0, 0, 0}, {KI_PCG, 1, 0, 0, 0}, {KI_END, 0, 0, 0, 0}}},
  /* the same after an SL_KRY_PCG or SL_KRY_PCG_NEXT step, whose pass left ||r||^2 and w^H r in the state */
  [SL_KRY_PCG_NEXT] = {"sl_pcg_update_next", 7, {STARPU_RW, STARPU_RW, STARPU_R, STARPU_RW, STARPU_RW, STARPU_RW, STARPU_RW},
                       /* r, w, q, z, s, p, x */
                       {{KI_STEP, SL_PROG_PCG_COEFFS, 0, 0, 0}, {KI_REC, 0, 0, 0, 0}, {KI_PCG, 1, 0, 0, 0},
                        {KI_END, 0, 0, 0, 0}}},
  /* several ranks: scalars c^H A c (allreduced, R) and ||r||^2 (this rank's part, W) */
  [SL_KRY_CG_DIST_A] = {"sl_cg_update_x_r", 4, {STARPU_R, STARPU_R, STARPU_RW, STARPU_RW}, /* c, Ac, x, r */
                        {{KI_STEP, SL_PROG_CG_ALPHA, 0, 0, 0}, {KI_AXPY, 2, 0, CG_ALPHA, -1}, {KI_AXPY, 3, 1, CG_MALPHA, -1},
                         {KI_RED, 1, 3, -1, 0}, {KI_END, 0, 0, 0, 0}},
                        2, {STARPU_R, STARPU_W}, {1, 2, 0}},
  /* scalar ||r||^2 (allreduced, R) */
  [SL_KRY_CG_DIST_B] = {"sl_cg_update_c", 2, {STARPU_R, STARPU_RW}, /* r, c */
                        {{KI_STEP, SL_PROG_CG_BETA, 0, 0, 0}, {KI_REC, 0, 0, 0, 0}, {KI_AXPY, 1, 0, -1, CG_BETA},
                         {KI_END, 0, 0, 0, 0}},
                        1, {STARPU_R}, {1, 0, 0}},
  /* CGLS on several ranks, the domain's vectors whole on every rank, the range's split: ||q||^2 (allreduced, R) */
  [SL_KRY_CGLS_DIST_A] = {"sl_cgls_alpha_dist", 4, {STARPU_R, STARPU_R, STARPU_RW, STARPU_RW}, /* q, c, x, s */
                          {{KI_RED, 1, 1, -1, 0}, {KI_STEP, SL_PROG_CGLS_ALPHA, 0, 0, 0}, {KI_AXPY, 2, 1, CGLS_ALPHA, -1},
                           {KI_AXPY, 3, 0, CGLS_MALPHA, -1}, {KI_END, 0, 0, 0, 0}},
                          1, {STARPU_R}, {1, 0, 0}},
  /* LSQR on several ranks, the range split: u = Av - alpha u and this rank's part of ||u||^2 (W) ... */
  [SL_KRY_LSQR_DIST_U1] = {"sl_lsqr_u_update", 2, {STARPU_RW, STARPU_R}, /* u, A v */
                           {{KI_AXPY, 0, 1, -1, LSQR_MALPHA}, {KI_RED, 0, 0, -1, 0}, {KI_END, 0, 0, 0, 0}},
                           1, {STARPU_W}, {1, 0, 0}},
  /* ... then, ||u||^2 allreduced (R): step A, u /= beta */
  [SL_KRY_LSQR_DIST_U2] = {"sl_lsqr_u_scale", 1, {STARPU_RW}, /* u */
                           {{KI_STEP, SL_PROG_LSQR_STEP_A, 0, 0, 0}, {KI_SCALE, 0, 0, LSQR_INV_BETA, 0}, {KI_END, 0, 0, 0, 0}},
                           1, {STARPU_R}, {1, 0, 0}},
  /* ||s||^2 (allreduced, R) */
  [SL_KRY_CGLS_DIST_B] = {"sl_cgls_beta_dist", 4, {STARPU_R, STARPU_R, STARPU_R, STARPU_RW}, /* r, s, x, c */
                          {{KI_RED, 0, 0, -1, 0}, {KI_RED, 2, 2, -1, 0}, {KI_STEP, SL_PROG_CGLS_BETA, 0, 0, 0},
                           {KI_REC, 0, 0, 0, 0}, {KI_AXPY, 3, 0, -1, CGLS_BETA}, {KI_END, 0, 0, 0, 0}},
                          1, {STARPU_R}, {0, 1, 0}},
  /* pipelined CG on several ranks: gamma and delta allreduced (RW), the updates, then this rank's parts of the
   * next gamma and delta into the same scalars (allreduced while the next q = A w runs) */
  [SL_KRY_PCG_DIST] = {"sl_pcg_update_dist", 7, {STARPU_RW, STARPU_RW, STARPU_R, STARPU_RW, STARPU_RW, STARPU_RW, STARPU_RW},
                       /* r, w, q, z, s, p, x */
                       {{KI_STEP, SL_PROG_PCG_COEFFS, 0, 0, 0}, {KI_REC, 0, 0, 0, 0}, {KI_PCG, 1, 0, 0, 0},
                        {KI_END, 0, 0, 0, 0}},
                       2, {STARPU_RW, STARPU_RW}, {1, 2, 0}},
  /* pipelined CG on one chunk of several, after the step: the updates, then the chunk's parts of the next gamma
   * and delta (W) */
  [SL_KRY_PCG_CHUNK] = {"sl_pcg_update_chunk", 7, {STARPU_RW, STARPU_RW, STARPU_R, STARPU_RW, STARPU_RW, STARPU_RW, STARPU_RW},
                        /* r, w, q, z, s, p, x */
                        {{KI_PCG, 1, 0, 0, 0}, {KI_END, 0, 0, 0, 0}},
                        2, {STARPU_W, STARPU_W}, {1, 2, 0}, 1},
};

struct krylov_args {
  sl_krylov_op op;
  sl_dtype dt;
  sl_prog_arg a; /* the steps' parameters and the history row (k, flag, rows) */
};

static struct starpu_codelet cl_krylov[SL_KRY_NOPS];
static struct starpu_perfmodel pm_krylov[SL_KRY_NOPS];

/* buffers: state, ring (not for a chunk op), the scalar handles, the vectors, the reductions' device scratch */
struct krylov_bufs {
  double *state, *ring, *work;
  double *red[3]; /* the reduction results: (re, im) pairs */
  void *v[KVEC];
  int64_t n[KVEC];
};

static struct krylov_bufs unpack(void *buffers[], sl_krylov_op op)
{
  int nv = ops[op].nvec, ns = ops[op].nsc, o = ops[op].chunk ? 1 : 2; /* o: the first scalar handle's buffer */
  struct krylov_bufs b = {.state = (double *)STARPU_VARIABLE_GET_PTR(buffers[0]),
                          .ring = ops[op].chunk ? NULL : (double *)STARPU_VARIABLE_GET_PTR(buffers[1]),
                          .work = (double *)STARPU_VECTOR_GET_PTR(buffers[o + ns + nv])};
  for (int i = 0; i < 3; i++)
    b.red[i] = ops[op].scred[i] ? (double *)STARPU_VARIABLE_GET_PTR(buffers[o + ops[op].scred[i] - 1]) : b.state + slot(S_RED + i);
  for (int i = 0; i < nv; i++) {
    b.v[i] = (void *)STARPU_VECTOR_GET_PTR(buffers[o + ns + i]);
    b.n[i] = (int64_t)STARPU_VECTOR_GET_NX(buffers[o + ns + i]);
  }
  return b;
}

static const double one[2] = {1, 0};
static const double *coef(const struct krylov_bufs *b, int s) { return s < 0 ? NULL : b->state + slot(s); }

static void krylov_cpu(void *buffers[], void *cl_arg)
{
  const struct krylov_args *ka = cl_arg;
  struct krylov_bufs b = unpack(buffers, ka->op);
  double *const step[4] = {b.state, b.red[0], b.red[1], b.red[2]};
  double *const rec[2] = {b.state, b.ring};
  for (const kinstr *i = ops[ka->op].prog; i->k != KI_END; i++) {
    switch (i->k) {
    case KI_RED:
      kernel_reduce(ka->dt, i->c < 0 ? SL_RED_ABSPOW : SL_RED_VDOT, b.n[i->b], b.v[i->b], i->c < 0 ? NULL : b.v[i->c],
                    2.0, step[1 + i->a]);
      break;
    case KI_STEP: sl_prog_run(i->a, step, ka->a); break;
    case KI_REC: sl_prog_run(SL_PROG_RECORD, rec, ka->a); break;
    case KI_AXPY: {
      const double *ca = coef(&b, i->c), *cb = coef(&b, i->d);
      kernel_axpby(ka->dt, b.n[i->a], b.v[i->a], b.v[i->b], ca ? ca : one, cb ? cb : one);
      break;
    }
    case KI_SCALE: kernel_scale(ka->dt, b.n[i->a], b.v[i->a], coef(&b, i->c)); break;
    case KI_PCG:
      kernel_pcg_update(ka->dt, b.n[0], b.v, coef(&b, CG_ALPHA), coef(&b, CG_MALPHA), coef(&b, CG_BETA),
                        i->a ? step[1] : NULL, i->a ? step[2] : NULL);
      break;
    default: break;
    }
  }
}

#ifdef SL_HAVE_CUDA
#include <cuda_runtime_api.h>
static void krylov_cuda(void *buffers[], void *cl_arg)
{
  const struct krylov_args *ka = cl_arg;
  struct krylov_bufs b = unpack(buffers, ka->op);
  void *s = starpu_cuda_get_local_stream();
  double *const step[4] = {b.state, b.red[0], b.red[1], b.red[2]};
  double *const rec[2] = {b.state, b.ring};
  int rc = cudaSuccess;
  for (const kinstr *i = ops[ka->op].prog; i->k != KI_END && rc == cudaSuccess; i++) {
    switch (i->k) {
    case KI_RED:
      rc = kernel_cuda_reduce(ka->dt, i->c < 0 ? SL_RED_ABSPOW : SL_RED_VDOT, b.n[i->b], b.v[i->b],
                              i->c < 0 ? NULL : b.v[i->c], 2.0, 0.0, b.work, step[1 + i->a], s);
      break;
    case KI_STEP: rc = kernel_cuda_prog(i->a, step, 4, ka->a, s); break;
    case KI_REC: rc = kernel_cuda_prog(SL_PROG_RECORD, rec, 2, ka->a, s); break;
    case KI_AXPY:
      rc = kernel_cuda_axpbys(ka->dt, b.n[i->a], b.v[i->a], b.v[i->b], one, one, coef(&b, i->c), coef(&b, i->d), s);
      break;
    case KI_SCALE: rc = kernel_cuda_scales(ka->dt, b.n[i->a], b.v[i->a], one, coef(&b, i->c), s); break;
    case KI_PCG:
      for (int j = 0; j < 6 && rc == cudaSuccess; j++) {
        const kinstr *u = &pcg_axpy[j];
        rc = kernel_cuda_axpbys(ka->dt, b.n[u->a], b.v[u->a], b.v[u->b], one, one, coef(&b, u->c), coef(&b, u->d), s);
      }
      if (i->a && rc == cudaSuccess)
        rc = kernel_cuda_reduce(ka->dt, SL_RED_ABSPOW, b.n[0], b.v[0], NULL, 2.0, 0.0, b.work, step[1], s);
      if (i->a && rc == cudaSuccess) rc = kernel_cuda_reduce(ka->dt, SL_RED_VDOT, b.n[1], b.v[1], b.v[0], 2.0, 0.0, b.work, step[2], s);
      break;
    default: break;
    }
  }
  if (rc != cudaSuccess) sl_async_error(SL_E_RUNTIME, "%s (CUDA): %s", ops[ka->op].name, cudaGetErrorString((cudaError_t)rc));
}
#endif

void codelet_krylov_init(void)
{
  for (int op = 0; op < SL_KRY_NOPS; op++) {
    struct starpu_perfmodel *pm = &pm_krylov[op];
    *pm = (struct starpu_perfmodel){.type = STARPU_HISTORY_BASED, .symbol = ops[op].name};
    struct starpu_codelet *cl = &cl_krylov[op];
    starpu_codelet_init(cl);
    cl->name = ops[op].name;
    cl->cpu_funcs[0] = krylov_cpu;
    cl->cpu_funcs_name[0] = "krylov_cpu";
#ifdef SL_HAVE_CUDA
    cl->cuda_funcs[0] = krylov_cuda;
    cl->cuda_flags[0] = STARPU_CUDA_ASYNC;
#endif
    int nb = 0;
    cl->modes[nb++] = ops[op].chunk ? STARPU_R : STARPU_RW; /* state */
    if (!ops[op].chunk) cl->modes[nb++] = STARPU_RW;        /* history ring */
    for (int i = 0; i < ops[op].nsc; i++) cl->modes[nb++] = ops[op].scmodes[i];
    for (int i = 0; i < ops[op].nvec; i++) cl->modes[nb++] = ops[op].modes[i];
    cl->modes[nb++] = STARPU_SCRATCH;
    cl->nbuffers = nb;
    cl->model = pm;
    cl->where = codelet_where();
  }
}

int codelet_krylov_submit(sl_krylov_op op, sl_dtype dt, starpu_data_handle_t state, starpu_data_handle_t ring,
                          const starpu_data_handle_t *sc, const starpu_data_handle_t *vec, sl_prog_arg a)
{
  struct krylov_args *ka = malloc(sizeof *ka);
  if (!ka) return sl_error(SL_E_NOMEM, "%s: out of memory", ops[op].name);
  *ka = (struct krylov_args){op, dt, a};
  struct starpu_task *t = starpu_task_create();
  t->cl = &cl_krylov[op];
  t->cl_arg = ka;
  t->cl_arg_size = sizeof *ka;
  t->cl_arg_free = 1;
  t->priority = STARPU_MAX_PRIO;
  int i = 0;
  t->handles[i++] = state;
  if (!ops[op].chunk) t->handles[i++] = ring;
  for (int j = 0; j < ops[op].nsc; j++) t->handles[i++] = sc[j];
  for (int j = 0; j < ops[op].nvec; j++) t->handles[i++] = vec[j];
  t->handles[i++] = codelet_reduce_scratch();
  return codelet_task_submit(t);
}
