/* Stacked arrays: a list of distributed arrays (any dims, distributions and masks, one dtype) treated as
 * one vector by the vector operations, the reductions and the solvers; the layout of the stacked
 * operators (VStack, HStack, BlockDiag over operators, Gradient). */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

int sl_array_stack(sl_array **out, int n, sl_array **parts)
{
  SL_CHECK_INIT();
  SL_CHECK_ARG(out != NULL, SL_E_INVALID, "sl_array_stack: argument 1 (out) is NULL");
  SL_CHECK_ARG(n >= 1, SL_E_INVALID, "sl_array_stack: argument 2 (n) must be >= 1, got %d", n);
  SL_CHECK_ARG(parts != NULL, SL_E_INVALID, "sl_array_stack: argument 3 (parts) is NULL");
  for (int i = 0; i < n; i++) {
    SL_CHECK_ARG(parts[i] != NULL, SL_E_INVALID, "sl_array_stack: argument 3 (parts): part %d is NULL", i);
    char part[48];
    snprintf(part, sizeof part, "argument 3 (parts): part %d", i);
    SL_TRY(sl_array_check_session("sl_array_stack", parts[i], part));
    SL_CHECK_ARG(!parts[i]->in_stack, SL_E_INVALID, "sl_array_stack: %s is a part of another stacked array (the stack owns "
                 "it): stack the stacked array itself, or a copy of the part", part);
    SL_CHECK_ARG(parts[i]->dtype == parts[0]->dtype, SL_E_DTYPE, "sl_array_stack: part %d is %s, part 0 is %s", i,
                 sl_dtype_name(parts[i]->dtype), sl_dtype_name(parts[0]->dtype));
    for (int j = 0; j < i; j++)
      SL_CHECK_ARG(parts[j] != parts[i], SL_E_INVALID, "sl_array_stack: parts %d and %d are the same array", j, i);
  }
  sl_array *s = calloc(1, sizeof *s);
  if (!s) return sl_error(SL_E_NOMEM, "sl_array_stack: out of memory");
  s->parts = calloc((size_t)n, sizeof *s->parts);
  s->pscal = calloc((size_t)n, sizeof *s->pscal);
  if (!s->parts || !s->pscal) {
    free(s->parts);
    free(s->pscal);
    free(s);
    return sl_error(SL_E_NOMEM, "sl_array_stack: out of memory");
  }
  s->nparts = n;
  s->session = sl_session();
  s->dtype = parts[0]->dtype;
  s->elsize = parts[0]->elsize;
  s->ndim = 1;
  s->partition = SL_SCATTER;
  for (int i = 0; i < n; i++) {
    parts[i]->in_stack = 1;
    s->parts[i] = parts[i];
    parts[i] = NULL; /* the stack owns them now */
    s->dims[0] += sl_array_global_size(s->parts[i]);
    s->ldims[0] += sl_array_local_size(s->parts[i]);
  }
  for (int i = 0; i < n; i++) {
    int rc = sl_scalar_create(&s->pscal[i], s->dtype);
    if (rc != SL_SUCCESS) {
      sl_stack_free(s);
      return rc;
    }
  }
  *out = s;
  return SL_SUCCESS;
}

int sl_stack_clone(sl_array **a, const sl_array *like, int storage)
{
  sl_array **parts = calloc((size_t)like->nparts, sizeof *parts);
  if (!parts) return sl_error(SL_E_NOMEM, "sl_array_create_like: out of memory");
  int rc = SL_SUCCESS;
  for (int i = 0; i < like->nparts && rc == SL_SUCCESS; i++) rc = sl_array_clone(&parts[i], like->parts[i], storage);
  if (rc == SL_SUCCESS) rc = sl_array_stack(a, like->nparts, parts);
  for (int i = 0; i < like->nparts; i++) sl_array_destroy(&parts[i]); /* NULL when the stack took them */
  free(parts);
  return rc;
}

void sl_stack_free(sl_array *a)
{
  for (int i = 0; i < a->nparts; i++) {
    if (a->parts[i]) a->parts[i]->in_stack = 0;
    sl_array_destroy(&a->parts[i]);
    sl_scalar_destroy(&a->pscal[i]);
  }
  free(a->parts);
  free(a->pscal);
  free(a);
}

int sl_array_stack_nparts(const sl_array *a) { return a ? a->nparts : 0; }

sl_array *sl_array_stack_part(const sl_array *a, int i)
{
  return a && i >= 0 && i < a->nparts ? a->parts[i] : NULL;
}
