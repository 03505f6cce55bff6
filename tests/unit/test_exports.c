/* The shared library exports exactly the functions the public headers declare: every defined dynamic
 * symbol is an sl_ function named in include/starlops.h or include/starlops_ext.h, and the headers'
 * functions are all there. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path)
{
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  char *s = calloc(1, 1 << 20);
  size_t n = fread(s, 1, (1 << 20) - 1, f);
  s[n] = '\0';
  fclose(f);
  return s;
}

/* 1 if text declares name as a function ("name(" preceded by a space or '*') */
static int declares(const char *text, const char *name)
{
  size_t len = strlen(name);
  for (const char *p = strstr(text, name); p; p = strstr(p + 1, name))
    if (p > text && (p[-1] == ' ' || p[-1] == '*') && p[len] == '(') return 1;
  return 0;
}

Test(exports, only_the_public_functions)
{
  const char *build = getenv("STARLOPS_BUILD");
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "nm -D --defined-only %s/lib/libstarlops.so", build ? build : "build");
  char *h1 = slurp("include/starlops.h"), *h2 = slurp("include/starlops_ext.h");
  cr_assert(h1 && h2, "the public headers are readable from the repository root");
  FILE *p = popen(cmd, "r");
  cr_assert(p != NULL, "%s", cmd);
  char line[512], addr[64], type[8], name[400];
  int count = 0, bad = 0;
  while (fgets(line, sizeof line, p)) {
    if (sscanf(line, "%63s %7s %399s", addr, type, name) != 3) continue;
    if (strchr(name, '@')) *strchr(name, '@') = '\0'; /* a version suffix */
    count++;
    if (strncmp(name, "sl_", 3) != 0 || !(declares(h1, name) || declares(h2, name))) {
      cr_log_error("exported but not public: %s (%s)", name, type);
      bad++;
    }
  }
  pclose(p);
  cr_expect_eq(bad, 0, "%d exported symbols are not declared by the public headers", bad);
  cr_expect_gt(count, 100, "only %d exported symbols: is %s the library?", count, cmd);
  /* and the other way: a sample of the API, the extension API included */
  const char *want[] = {"sl_init", "sl_op_apply", "sl_solve_cg", "sl_op_shell", "sl_task_submit", "sl_array_chunk_extent",
                        "sl_op_domain"};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    snprintf(cmd, sizeof cmd, "nm -D --defined-only %s/lib/libstarlops.so | grep -qw %s", build ? build : "build", want[i]);
    cr_expect_eq(system(cmd), 0, "%s is not exported", want[i]);
  }
  free(h1);
  free(h2);
}
