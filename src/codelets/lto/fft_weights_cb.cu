/* cuFFT callbacks applying the FFT codelet's bin weights (kernel_fft_cb.h), compiled to LTO-IR and linked into
 * cuFFT's kernels at plan time (cufftXtSetJITCallback): the stores of complex and real-to-complex transforms,
 * the loads of complex-to-real ones. One source for both precisions. The callbacks keep C++ linkage: cuFFT
 * declares the named function itself and links to that declaration (an extern "C" one fails the plan). */
#include <cufftXt.h>

#include "codelets/kernel_fft_cb.h"

template <typename C>
__device__ __forceinline__ C weigh(C v, unsigned long long off, const fft_cb_info *w)
{
  double f = w->scale;
  if (w->real) {
    const long long k = (long long)((off / (unsigned long long)w->inner) % (unsigned long long)w->nb);
    const bool interior = k >= 1 && k <= (w->n - 1) / 2;
    if (interior) f *= w->interior;
    if (w->c2r_input && !interior) v.y = 0;
  }
  const decltype(v.x) r = (decltype(v.x))f; /* the weight in the transform's precision, as kernel_fft.cu */
  v.x *= r;
  v.y *= r;
  return v;
}

__device__ void sl_fft_store_z(void *out, unsigned long long off, cufftDoubleComplex v, void *info, void *sh)
{
  (void)sh;
  ((cufftDoubleComplex *)out)[off] = weigh(v, off, (const fft_cb_info *)info);
}

__device__ void sl_fft_store_c(void *out, unsigned long long off, cufftComplex v, void *info, void *sh)
{
  (void)sh;
  ((cufftComplex *)out)[off] = weigh(v, off, (const fft_cb_info *)info);
}

__device__ cufftDoubleComplex sl_fft_load_z(void *in, unsigned long long off, void *info, void *sh)
{
  (void)sh;
  return weigh(((const cufftDoubleComplex *)in)[off], off, (const fft_cb_info *)info);
}

__device__ cufftComplex sl_fft_load_c(void *in, unsigned long long off, void *info, void *sh)
{
  (void)sh;
  return weigh(((const cufftComplex *)in)[off], off, (const fft_cb_info *)info);
}
