/* What the examples share: a checked-call macro that reports the error on the failing rank. */
#ifndef EXAMPLE_UTIL_H
#define EXAMPLE_UTIL_H

#include <stdio.h>

#include "starlops.h"

#define TRY(call)                                                                                     \
  do {                                                                                                \
    int rc_ = (call);                                                                                 \
    if (rc_ != SL_SUCCESS) {                                                                          \
      fprintf(stderr, "[rank %d] %s: %s\n  %s\n", sl_rank(), #call, sl_strerror(rc_), sl_last_error()); \
      return 1;                                                                                       \
    }                                                                                                 \
  } while (0)

#endif
