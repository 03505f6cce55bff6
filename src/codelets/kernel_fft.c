/* Bin weights of the FFT codelet on the CPU (kernel_fft.h). */
#include <complex.h>

#include "codelets/kernel_fft.h"

#define WEIGHTS(T)                                                                                    \
  do {                                                                                                \
    T *p = z;                                                                                         \
    for (int64_t l = lo; l < hi; l++) {                                                               \
      int64_t k = l % nb;                                                                             \
      int inner_bin = s->real && k >= 1 && k <= (s->n - 1) / 2;                                      \
      double w = s->scale * (inner_bin ? s->interior : 1.0);                                          \
      int edge = c2r_input && s->real && !inner_bin;                                                  \
      T *line = p + l * s->inner;                                                                     \
      for (int64_t i = 0; i < s->inner; i++) line[i] = edge ? creal(line[i]) * w : line[i] * w;      \
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
