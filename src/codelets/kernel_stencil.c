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
  if (single) return stencil_s(p, in, s, e, (float *)y);
  return stencil_d(p, in, s, e, (double *)y);
}
