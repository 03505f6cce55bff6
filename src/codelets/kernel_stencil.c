/* CPU stencil sums: kernel_stencil_tmpl.h for float and double (complex dtypes are real pairs). */
#include "codelets/kernel_stencil.h"

#define R float
#define SFX s
#include "codelets/kernel_stencil_tmpl.h"
#undef R
#undef SFX
#define R double
#define SFX d
#include "codelets/kernel_stencil_tmpl.h"
#undef R
#undef SFX

int kernel_stencil(const st_plan *p, int single, const st_input *in, int64_t s, int64_t e, void *y)
{
  /* the segments are chunks of one host buffer: the block's base address */
  size_t el = (single ? sizeof(float) : sizeof(double)) * (size_t)p->ncomp;
  for (int i = 1; i < in->nseg; i++)
    if ((const char *)in->ptr[i] != (const char *)in->ptr[i - 1] + (size_t)in->len[i - 1] * el) return -1;
  const char *base = in->nseg ? (const char *)in->ptr[0] - (size_t)in->start[0] * el : NULL;
  if (single) stencil_s(p, (const float *)base, in->glo, in->ghi, s, e, y);
  else stencil_d(p, (const double *)base, in->glo, in->ghi, s, e, y);
  return 0;
}
