/* The FFT codelet's bin weights as cuFFT callbacks (lto/fft_weights_cb.cu, linked into cuFFT's kernels when a
 * plan is made): the weights of kernel_fft_weights applied as cuFFT stores each bin (complex, real-to-complex)
 * or loads it (complex-to-real), so that a transform is one pass over its output instead of two. */
#ifndef SL_KERNEL_FFT_CB_H
#define SL_KERNEL_FFT_CB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a callback reads (one copy in device memory per plan): bin k of a line (offset / inner modulo nb) is
 *  multiplied by scale, and by interior too where real and 1 <= k <= (n - 1) / 2; c2r_input zeroes the
 *  imaginary parts of the other bins (0, and n / 2 for even n). */
typedef struct fft_cb_info {
  double scale, interior;
  long long n, nb, inner;
  int real, c2r_input;
} fft_cb_info;

/** The callbacks' LTO-IR (a fatbin of lto/fft_weights_cb.cu) and its size; and the symbols' names. */
extern const unsigned char sl_fft_cb_fatbin[];
extern const size_t sl_fft_cb_fatbin_size;
#define FFT_CB_STORE_Z "sl_fft_store_z"
#define FFT_CB_STORE_C "sl_fft_store_c"
#define FFT_CB_LOAD_Z "sl_fft_load_z"
#define FFT_CB_LOAD_C "sl_fft_load_c"

#ifdef __cplusplus
}
#endif
#endif
