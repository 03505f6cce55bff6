/* The FFT codelet's shapes and the bin weighting shared by its CPU and CUDA sides (codelet_fft.c). */
#ifndef SL_KERNEL_FFT_H
#define SL_KERNEL_FFT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { FFT_FORWARD = 0, FFT_BACKWARD = 1, FFT_R2C = 2, FFT_C2R = 3 };

#define FFT_MAX_RANK 8

/** Transforms over `rank` consecutive axes (dims) of a C-order block (outer, dims..., inner): n = the product
 *  of dims samples per transform. The real kinds are 1-D (rank 1), their complex side holds n / 2 + 1 bins per
 *  line. */
typedef struct fft_shape {
  int dbl;          /* double precision (else single) */
  int real;         /* a real-to-complex or complex-to-real transform */
  int rank;
  int64_t dims[FFT_MAX_RANK];
  int64_t outer, n, inner;
  double scale;     /* every bin */
  double interior;  /* real kinds: the bins 1 .. (n - 1) / 2 once more */
} fft_shape;

/** Multiplies the complex side z of s (n bins per line, n / 2 + 1 when real) by the weights; c2r_input
 *  also zeroes the imaginary parts of bins 0 and n / 2 (even n). Nothing when every weight is 1. */
void kernel_fft_weights(const fft_shape *s, void *z, int c2r_input);
/** The lines (outer x bins, inner elements each) kernel_fft_weights scales: 0 when every weight is 1. */
int64_t kernel_fft_weight_lines(const fft_shape *s, int c2r_input);
/** kernel_fft_weights on the lines [lo, hi) only. */
void kernel_fft_weights_range(const fft_shape *s, void *z, int c2r_input, int64_t lo, int64_t hi);
/** The same on the GPU, on stream (a cudaStream_t); returns the cudaError_t. */
int kernel_fft_weights_cuda(const fft_shape *s, void *z, int c2r_input, void *stream);

#ifdef __cplusplus
}
#endif
#endif
