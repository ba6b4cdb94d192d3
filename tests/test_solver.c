/* The solver registry: every entry is complete and its name fits every place that stores or
 * prints it (solver.h): results files (31 bytes), --solvers lists (no comma or blank) and the
 * paper's LaTeX macros (letters only, so two names must differ in their letters). Lookups by
 * name find each entry and nothing else; the options' defaults are the documented ones. */
#include <ctype.h>
#include <string.h>

#include "results.h"
#include "solver.h"
#include "support.h"

/* The macro name report.c derives (letters kept, each run of them capitalised): computed here
 * independently, as the rule solver.h states. */
static void letters_macro(const char *s, char *out, size_t n) {
  size_t j = 0;
  bool upper = true;
  for (; *s && j + 1 < n; s++) {
    if (isalpha((unsigned char)*s)) {
      out[j++] = upper ? (char)toupper((unsigned char)*s) : *s;
      upper = false;
    } else {
      upper = true;
    }
  }
  out[j] = '\0';
}

static void test_registry_entries(void **state) {
  (void)state;
  int n = 0;
  const mb_solver *all = mb_solver_list(&n);
  assert_true(n >= 4);
  for (int i = 0; i < n; i++) {
    const mb_solver *s = &all[i];
    assert_non_null(s->name);
    assert_non_null(s->solve);
    assert_true(s->summary && strlen(s->summary) > 0);
    assert_true(strlen(s->name) > 0 && strlen(s->name) < MB_RES_SOLVER);
    assert_null(strpbrk(s->name, ", \t\n"));
    /* an agent-playing solver is checked before a run solves anything */
    if (s->uses_agent) assert_non_null(s->check);
    assert_ptr_equal(mb_solver_find(s->name), s);
    char a[64], b[64];
    letters_macro(s->name, a, sizeof a);
    assert_true(strlen(a) > 0);
    for (int k = 0; k < i; k++) {
      assert_string_not_equal(all[k].name, s->name);
      letters_macro(all[k].name, b, sizeof b);
      if (!strcmp(a, b))
        fail_msg("solvers '%s' and '%s' share the macro name %s", all[k].name, s->name, a);
    }
  }
  assert_null(mb_solver_find("nope"));
  assert_null(mb_solver_find(""));
  assert_null(mb_solver_find("Heuristic")); /* names are exact */
}

/* The rule itself: names that differ only outside their letters collide (the reason for the
 * check above). */
static void test_macro_rule(void **state) {
  (void)state;
  char a[64], b[64];
  letters_macro("bestfit-v2", a, sizeof a);
  letters_macro("bestfit-v3", b, sizeof b);
  assert_string_equal(a, b);
  letters_macro("mallocmuzero-exact", a, sizeof a);
  assert_string_equal(a, "MallocmuzeroExact");
}

static void test_options_default(void **state) {
  (void)state;
  mb_solver_options o;
  memset(&o, 0x5a, sizeof o);
  mb_solver_options_default(&o);
  assert_int_equal(o.seed, 1);
  assert_true(o.budget_seconds == 0);
  assert_null(o.agent_path);
  assert_string_equal(o.order, "heuristic");
  assert_int_equal(o.simulations, 0);
  assert_int_equal(o.search, MB_SOLVER_SEARCH_GUMBEL);
  assert_int_equal(o.finetune_steps, 0);
}

/* The search kinds by name, both ways, as runs store and resume them. */
static void test_search_names(void **state) {
  (void)state;
  int search = -7;
  assert_true(mb_solver_search_parse("gumbel", &search));
  assert_int_equal(search, MB_SOLVER_SEARCH_GUMBEL);
  assert_true(mb_solver_search_parse("puct", &search));
  assert_int_equal(search, MB_SOLVER_SEARCH_PUCT);
  static const char *const bad[] = {"", "Gumbel", "gumbel ", "pucT", "mcts"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    search = -7;
    assert_false(mb_solver_search_parse(bad[i], &search));
    assert_int_equal(search, -7);
  }
  assert_string_equal(mb_solver_search_name(MB_SOLVER_SEARCH_GUMBEL), "gumbel");
  assert_string_equal(mb_solver_search_name(MB_SOLVER_SEARCH_PUCT), "puct");
  assert_null(mb_solver_search_name(-1));
  assert_null(mb_solver_search_name(2));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_registry_entries),
      cmocka_unit_test(test_macro_rule),
      cmocka_unit_test(test_options_default),
      cmocka_unit_test(test_search_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
