/* Tests of mallocMuZero's search probes (solvers/muzero/diagnostics.h), the contract behind
 * `mallocbench bench muzero --model-error | --search-regret | --unroll-error | --next-window`:
 *   - on a few small random workloads each probe returns true and prints its table to the
 *     stream it is given (its title naming the set), the same table on a second run;
 *   - with action features (the first learned step sees the root's observation) too;
 *   - when no decision can be examined (fast memory too small for any buffer: every decision
 *     has the one legal move "slow") each returns false with a message saying so and prints
 *     nothing. */
#include "support.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "catalogue.h"
#include "diagnostics.h"
#include "hardware.h"
#include "random_workload.h"
#include "search.h"
#include "train.h"

enum { N_SET = 3, N_PROBES = 4 };

/* N_SET random workloads of 32, 48 and 64 buffers with the catalogue's capacity rule, or with
 * `capacity` bytes of fast memory when it is > 0. */
static void make_set(mb_workload *w[N_SET], mb_train_workload set[N_SET], int64_t capacity) {
  mb_error err = {{0}};
  mb_hardware base;
  assert_true(mb_hardware_find("tpu-v4i", NULL, &base, &err));
  for (int e = 0; e < N_SET; e++) {
    mb_rng rng;
    mb_rng_seed(&rng, 500 + (uint64_t)e);
    mb_random_options o;
    mb_random_options_default(&o);
    w[e] = mb_random_workload(&rng, 32 + 16 * e, &o, "probe", &err);
    assert_non_null(w[e]);
    int64_t cap = capacity > 0 ? capacity : mb_catalogue_auto_capacity(w[e], &base);
    set[e] = (mb_train_workload){
        .name = w[e]->name, .w = w[e], .hw = mb_hardware_with_capacity(&base, cap)};
  }
}

static void free_set(mb_workload *w[N_SET]) {
  for (int e = 0; e < N_SET; e++) mb_workload_free(w[e]);
}

/* Probe k (0 model error, 1 search regret, 2 unroll error, 3 next window) of the set with
 * stride 2, its table in *text (caller frees). */
static bool run_probe(int k, const mb_agent *ag, const mb_train_workload *set, char **text,
                      mb_error *err) {
  size_t len = 0;
  FILE *out = open_memstream(text, &len);
  assert_non_null(out);
  mb_search_config scfg[2];
  mb_search_config_evaluation(&scfg[0], false);
  mb_search_config_evaluation(&scfg[1], true);
  scfg[0].simulations = scfg[1].simulations = 4;
  bool ok = false;
  switch (k) {
    case 0:
      ok = mb_muzero_probe_model_error(ag, set, N_SET, 2, "the set", out, err);
      break;
    case 1:
      ok = mb_muzero_probe_search_regret(ag, set, N_SET, 2, scfg, "the set", out, err);
      break;
    case 2:
      ok = mb_muzero_probe_unroll_error(ag, set, N_SET, 2, "the set", out, err);
      break;
    default:
      ok = mb_muzero_probe_next_window(ag, set, N_SET, 2, "the set", out, err);
      break;
  }
  assert_int_equal(fclose(out), 0);
  return ok;
}

static void make_agent(mb_agent *ag, bool action_features) {
  mb_error err = {{0}};
  mb_agent_config cfg;
  mb_test_agent_config(&cfg, 24, 8, 8);
  cfg.action_features = action_features;
  mb_rng rng;
  mb_rng_seed(&rng, 3);
  assert_true(mb_agent_create(ag, &cfg, &rng, &err));
}

static const char *const TITLES[N_PROBES] = {
    "one-step model accuracy over the set: ", "one step of policy improvement over the set: ",
    "path values k steps deep along the raw policy's episodes over the set: ",
    /* one title in two literals (parenthesised: not two elements missing a comma) */
    ("the next observation's occupancy picture against the current one along the raw policy's "
     "episodes over the set: ")};

static void probes_print_their_tables(bool action_features) {
  mb_workload *w[N_SET];
  mb_train_workload set[N_SET];
  make_set(w, set, 0);
  mb_agent ag;
  make_agent(&ag, action_features);
  for (int k = 0; k < N_PROBES; k++) {
    mb_error err = {{0}};
    char *first = NULL, *second = NULL;
    bool ok = run_probe(k, &ag, set, &first, &err);
    if (!ok) fail_msg("probe %d: %s", k, err.message);
    assert_true(!strncmp(first, TITLES[k], strlen(TITLES[k])));
    assert_true(strchr(first, '\n') < first + strlen(first) - 1); /* a title and rows */
    assert_true(run_probe(k, &ag, set, &second, &err));
    assert_string_equal(first, second);
    free(first);
    free(second);
  }
  mb_agent_free(&ag);
  free_set(w);
}

static void test_probes_print_their_tables(void **state) {
  (void)state;
  probes_print_their_tables(false);
}

static void test_probes_with_action_features(void **state) {
  (void)state;
  probes_print_their_tables(true);
}

static void test_probes_refuse_a_set_without_decisions(void **state) {
  (void)state;
  mb_workload *w[N_SET];
  mb_train_workload set[N_SET];
  make_set(w, set, 1); /* 1 byte: no buffer fits, "slow" is every decision's only move */
  mb_agent ag;
  make_agent(&ag, false);
  static const char *const why[N_PROBES] = {
      "no decision with two legal actions", "no decision with two legal actions",
      "no decision to unroll from", "no decision with a next one"};
  for (int k = 0; k < N_PROBES; k++) {
    mb_error err = {{0}};
    char *text = NULL;
    assert_false(run_probe(k, &ag, set, &text, &err));
    assert_string_equal(err.message, why[k]);
    assert_string_equal(text, ""); /* nothing printed */
    free(text);
  }
  mb_agent_free(&ag);
  free_set(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_probes_print_their_tables),
      cmocka_unit_test(test_probes_with_action_features),
      cmocka_unit_test(test_probes_refuse_a_set_without_decisions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
