/* Bin weights of the FFT codelet on the CPU (kernel_fft.h). */
#include <complex.h>

#include "codelets/kernel_fft.h"

/* The real kinds' bins: line l holds bin l % nb (counted along, not divided); the interior bins get the
 * extra weight, the two edge bins of a complex-to-real input lose their imaginary parts. */
#define WEIGHTS(T)                                                                                    \
  do {                                                                                                \
    T *p = z;                                                                                         \
    const double w_in = s->scale * s->interior, w_edge = s->scale;                                     \
    for (int64_t l = lo, k = lo % nb; l < hi; l++, k = k + 1 == nb ? 0 : k + 1) {                     \
      int inner_bin = k >= 1 && k <= (s->n - 1) / 2;                                                 \
      double w = inner_bin ? w_in : w_edge;                                                           \
      T *line = p + l * s->inner;                                                                     \
      if (c2r_input && !inner_bin)                                                                    \
        for (int64_t i = 0; i < s->inner; i++) line[i] = creal(line[i]) * w;                          \
      else                                                                                            \
        for (int64_t i = 0; i < s->inner; i++) line[i] *= w;                                          \
    }                                                                                                 \
  } while (0)

int64_t kernel_fft_weight_lines(const fft_shape *s, int c2r_input)
{
  if (s->scale == 1.0 && (!s->real || (s->interior == 1.0 && !c2r_input))) return 0;
  return s->outer * (s->real ? s->n / 2 + 1 : s->n);
}

void kernel_fft_weights_range(const fft_shape *s, void *z, int c2r_input, int64_t lo, int64_t hi)
{
  if (!s->real) { /* one factor for every bin: the lines' real and imaginary parts in one streaming loop */
    int64_t a = 2 * lo * s->inner, b = 2 * hi * s->inner;
    if (s->dbl) {
      double *p = z, w = s->scale;
      for (int64_t i = a; i < b; i++) p[i] *= w;
    } else {
      float *p = z, w = (float)s->scale;
      for (int64_t i = a; i < b; i++) p[i] *= w;
    }
    return;
  }
  int64_t nb = s->n / 2 + 1;
  if (s->dbl) WEIGHTS(double complex);
  else WEIGHTS(float complex);
}

void kernel_fft_weights(const fft_shape *s, void *z, int c2r_input)
{
  kernel_fft_weights_range(s, z, c2r_input, 0, kernel_fft_weight_lines(s, c2r_input));
}
