/* What custom_operator.c and its CUDA kernel share: the arguments of one convolution task. */
#ifndef CUSTOM_OPERATOR_H
#define CUSTOM_OPERATOR_H

#include <stdint.h>

#define CONV_MAX_TAPS 15
#define CONV_MAX_SEGS 16

/* One task writes output elements [s, e) of the local block (one chunk of y) from the input chunks that
 * hold [s - h stride, e + h stride): their local starts in seg_start[0..nseg) and the end of the last in
 * seg_start[nseg]. Output element i is sum_k f[k] x[i + sign (k - center) stride] over the taps that stay
 * inside the axis (sign +1 forward, -1 adjoint). */
typedef struct {
  int64_t s, e;
  int64_t n, stride; /* the axis length and the distance between neighbours along it */
  int ntaps, center, sign, nseg;
  double f[CONV_MAX_TAPS];
  int64_t seg_start[CONV_MAX_SEGS + 1];
} conv_task;

typedef struct {
  const double *p[CONV_MAX_SEGS];
} conv_inputs;

#ifdef __cplusplus
extern "C"
#endif
/* Launches the CUDA kernel of one task on stream (custom_operator_cuda.cu). */
void conv_cuda_launch(const conv_task *t, conv_inputs x, double *y, void *stream);

/* The value of output element i (shared by the CPU loop and the CUDA kernel). */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline double conv_value(const conv_task *t, const conv_inputs *x, int64_t i)
{
  int64_t ia = (i / t->stride) % t->n;
  double acc = 0;
  for (int k = 0; k < t->ntaps; k++) {
    int64_t d = (int64_t)t->sign * (k - t->center), ja = ia + d;
    if (ja < 0 || ja >= t->n) continue;
    int64_t j = i + d * t->stride;
    int q = 0;
    while (q + 1 < t->nseg && j >= t->seg_start[q + 1]) q++;
    acc += t->f[k] * x->p[q][j - t->seg_start[q]];
  }
  return acc;
}

#endif
