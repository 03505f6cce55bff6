/* What language bindings ask the library: its version, and the sizes of the public structs (the Python
 * package checks its ctypes mirrors against them at import). */
#include <string.h>

#include "starlops.h"

size_t sl_abi_size(const char *type)
{
  if (!type) return 0;
  if (!strcmp(type, "sl_options")) return sizeof(sl_options);
  if (!strcmp(type, "sl_dist")) return sizeof(sl_dist);
  if (!strcmp(type, "sl_cscalar")) return sizeof(sl_cscalar);
  if (!strcmp(type, "sl_solver_options")) return sizeof(sl_solver_options);
  if (!strcmp(type, "sl_solver_info")) return sizeof(sl_solver_info);
  return 0;
}

const char *sl_version(void) { return SL_VERSION_STRING; }
