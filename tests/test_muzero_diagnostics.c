/* Tests of mallocMuZero's search probes (solvers/muzero/diagnostics.h), the contract behind
 * `mallocbench bench muzero --model-error | --search-regret | --unroll-error | --next-window`:
 *   - on a few small random workloads each probe returns true and prints its table to the
 *     stream it is given (its title naming the set), the same table on a second run;
 *   - with action features (the first learned step sees the root's observation) too;
 *   - when no decision can be examined (fast memory too small for any buffer: every decision
 *     has the one legal move "slow") each returns false with a message saying so and prints
 *     nothing;
 *   - each table's numbers are those of a reference written here from the probes' contracts
 *     (states reached by replaying moves, no snapshot; ops counted one by one), for an agent
 *     without and with action features, ones whose raw policy leans to "slow" (so that the
 *     searches change moves of each kind) or to action 0, and on a tight fast memory (decisions
 *     of two legal moves). */
#include "support.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "assignment.h"
#include "catalogue.h"
#include "diagnostics.h"
#include "game.h"
#include "hardware.h"
#include "nn.h"
#include "player.h"
#include "random_workload.h"
#include "search.h"
#include "train.h"

enum { N_SET = 3, N_PROBES = 4 };

/* N_SET random workloads of `first`, first + step, ... buffers with the catalogue's capacity
 * rule, or with `capacity` bytes of fast memory when it is > 0. */
static void make_set_of(mb_workload *w[N_SET], mb_train_workload set[N_SET], int64_t capacity,
                        int32_t first, int32_t step) {
  mb_error err = {{0}};
  mb_hardware base;
  assert_true(mb_hardware_find("tpu-v4i", NULL, &base, &err));
  for (int e = 0; e < N_SET; e++) {
    mb_rng rng;
    mb_rng_seed(&rng, 500 + (uint64_t)e);
    mb_random_options o;
    mb_random_options_default(&o);
    w[e] = mb_random_workload(&rng, first + step * e, &o, "probe", &err);
    assert_non_null(w[e]);
    int64_t cap = capacity > 0 ? capacity : mb_catalogue_auto_capacity(w[e], &base);
    set[e] = (mb_train_workload){
        .name = w[e]->name, .w = w[e], .hw = mb_hardware_with_capacity(&base, cap)};
  }
}

/* Workloads of 32, 48 and 64 buffers. */
static void make_set(mb_workload *w[N_SET], mb_train_workload set[N_SET], int64_t capacity) {
  make_set_of(w, set, capacity, 32, 16);
}

static void free_set(mb_workload *w[N_SET]) {
  for (int e = 0; e < N_SET; e++) mb_workload_free(w[e]);
}

enum { STRIDE = 2 }; /* every probe examines every STRIDE-th decision */

/* The searches --search-regret compares: evaluation searches of 4 simulations, [0] in the learned
 * model, [1] in the real game. */
static void probe_searches(mb_search_config scfg[2]) {
  mb_search_config_evaluation(&scfg[0], false);
  mb_search_config_evaluation(&scfg[1], true);
  scfg[0].simulations = scfg[1].simulations = 4;
}

/* Probe k (0 model error, 1 search regret, 2 unroll error, 3 next window) of the set with
 * stride STRIDE, its table in *text (caller frees). */
static bool run_probe(int k, const mb_agent *ag, const mb_train_workload *set, char **text,
                      mb_error *err) {
  size_t len = 0;
  FILE *out = open_memstream(text, &len);
  assert_non_null(out);
  mb_search_config scfg[2];
  probe_searches(scfg);
  bool ok = false;
  switch (k) {
    case 0:
      ok = mb_muzero_probe_model_error(ag, set, N_SET, STRIDE, "the set", out, err);
      break;
    case 1:
      ok = mb_muzero_probe_search_regret(ag, set, N_SET, STRIDE, scfg, "the set", out, err);
      break;
    case 2:
      ok = mb_muzero_probe_unroll_error(ag, set, N_SET, STRIDE, "the set", out, err);
      break;
    default:
      ok = mb_muzero_probe_next_window(ag, set, N_SET, STRIDE, "the set", out, err);
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
    /* every number printed is one: no row for what was never measured (0 / 0) */
    if (strstr(first, "nan") || strstr(first, "inf")) fail_msg("probe %d: %s", k, first);
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

/* Episodes shorter than the deepest path the unroll probe measures (12 steps): its table ends
 * at the deepest path measured, with no row for the depths never reached. */
static void test_unroll_probe_on_short_episodes(void **state) {
  (void)state;
  mb_workload *w[N_SET];
  mb_train_workload set[N_SET];
  make_set_of(w, set, 0, 6, 1); /* at most 8 decisions */
  mb_agent ag;
  make_agent(&ag, false);
  mb_error err = {{0}};
  char *text = NULL;
  if (!run_probe(2, &ag, set, &text, &err)) fail_msg("%s", err.message);
  if (strstr(text, "nan") || strstr(text, "inf")) fail_msg("%s", text);
  assert_non_null(strstr(text, "\n   0 "));
  assert_null(strstr(text, "\n   8 ")); /* no path is longer than its episode (8 decisions) */
  free(text);
  mb_agent_free(&ag);
  free_set(w);
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

/* ---- Each probe's numbers computed again from its contract (diagnostics.h, and the comment
 * above each probe in diagnostics.c), by a reference written for this test: every state is
 * reached by replaying the episode's moves from the game's reset (no snapshot), ops are counted
 * one by one (no interval arithmetic), and the sums are taken after each root's values are all
 * known. The probe's table must show the same counts and, in every decimal it prints, the same
 * value to one unit in the last printed place (the sums may be taken in another order). */

enum { MAX_VALUES = 128, MAX_PHRASES = 48, UNROLL_DEPTH = 12 };

/* What a probe's table must show: its decimals in order, and lines or phrases with its counts. */
typedef struct expected_table {
  double value[MAX_VALUES];
  int n;
  char phrase[MAX_PHRASES][96],
      line[MAX_PHRASES][48]; /* each phrase in the line containing line[i] ("": any) */
  int n_phrases;
} expected_table;

static void want_value(expected_table *x, double v) {
  assert_true(x->n < MAX_VALUES);
  x->value[x->n++] = v;
}

static void want_in_line(expected_table *x, const char *line, const char *fmt, long long a) {
  assert_true(x->n_phrases < MAX_PHRASES);
  snprintf(x->line[x->n_phrases], sizeof x->line[0], "%s", line);
  snprintf(x->phrase[x->n_phrases++], sizeof x->phrase[0], fmt, a);
}

static void want_phrase(expected_table *x, const char *fmt, long long a) {
  want_in_line(x, "", fmt, a);
}

/* The table's decimals: its tokens (parentheses, commas and colons stripped) that are numbers
 * with a decimal point; each against x's, to one unit in its last place. */
static void assert_table(const char *table, const expected_table *x, const char *probe) {
  for (int i = 0; i < x->n_phrases; i++) {
    const char *line = strstr(table, x->line[i]), *found = line ? strstr(line, x->phrase[i]) : NULL;
    if (!found || (x->line[i][0] && memchr(line, '\n', (size_t)(found - line))))
      fail_msg("%s: '%s' not in the table's line '%s':\n%s", probe, x->phrase[i], x->line[i],
               table);
  }
  char *copy = strdup(table);
  assert_non_null(copy);
  int n = 0;
  for (char *save = NULL, *tok = strtok_r(copy, " \n", &save); tok;
       tok = strtok_r(NULL, " \n", &save)) {
    while (*tok == '(') tok++;
    size_t len = strlen(tok);
    while (len > 0 && strchr("),:", tok[len - 1])) tok[--len] = '\0';
    char *dot = strchr(tok, '.'), *end;
    double v = strtod(tok, &end);
    if (!dot || len == 0 || *end) continue;
    double unit = pow(10.0, -(double)(len - 1 - (size_t)(dot - tok)));
    if (n >= x->n) fail_msg("%s: more decimals than the %d expected:\n%s", probe, x->n, table);
    if (!(fabs(v - x->value[n]) <= 1.01 * unit))
      fail_msg("%s: decimal %d is %s, the reference's %.9f:\n%s", probe, n, tok, x->value[n],
               table);
    n++;
  }
  if (n != x->n) fail_msg("%s: %d decimals, expected %d:\n%s", probe, n, x->n, table);
  free(copy);
}

/* A game replayed by the reference, with the agent's networks. */
typedef struct ref_game {
  mb_agent_infer inf;
  mb_game *g;
  int32_t A, D, W, slow;
  double rs;      /* 1 / R_ref */
  int32_t *moves; /* the episode's moves so far */
  float *obs, *lat, *logits, *vec;
  uint8_t *mask;
} ref_game;

static void ref_open(ref_game *r, const mb_agent *ag, const mb_train_workload *wl) {
  mb_error err = {{0}};
  assert_true(mb_agent_infer_create(&r->inf, ag, &err));
  r->g = mb_game_new(wl->w, &wl->hw, &ag->cfg.game, &err);
  assert_non_null(r->g);
  r->A = ag->cfg.game.n_actions;
  r->D = ag->cfg.obs_dim;
  r->W = ag->cfg.latent;
  r->slow = mb_game_slow_action(r->g);
  r->rs = 1.0 / mb_return_scale(wl->w, &wl->hw, r->g);
  r->moves = calloc((size_t)mb_game_n_visitable(r->g) + 1, sizeof(int32_t));
  r->obs = calloc((size_t)r->D, sizeof(float));
  r->lat = calloc((size_t)r->W, sizeof(float));
  r->logits = calloc((size_t)r->A, sizeof(float));
  r->vec = calloc((size_t)(r->A > r->W ? r->A : r->W), sizeof(float));
  r->mask = calloc((size_t)r->A, 1);
  assert_true(r->moves && r->obs && r->lat && r->logits && r->vec && r->mask);
}

static void ref_close(ref_game *r) {
  mb_agent_infer_free(&r->inf);
  mb_game_free(r->g);
  free(r->moves);
  free(r->obs);
  free(r->lat);
  free(r->logits);
  free(r->vec);
  free(r->mask);
}

/* The state after the episode's first t moves. */
static void ref_reach(ref_game *r, int32_t t) {
  mb_error err = {{0}};
  mb_game_reset(r->g);
  for (int32_t i = 0; i < t; i++) assert_true(mb_game_step(r->g, r->moves[i], NULL, &err));
}

/* The raw policy in the current state: observation, mask, h's latent and f's logits and value
 * (normalised, into *value) in r's arrays; returns its greedy move, *n_legal the legal moves. */
static int32_t ref_raw(ref_game *r, double *value, int32_t *n_legal) {
  mb_error err = {{0}};
  int32_t n = mb_game_legal_mask(r->g, r->mask);
  if (n_legal) *n_legal = n;
  mb_game_observe(r->g, r->obs);
  float v;
  assert_true(mb_agent_initial(&r->inf, r->obs, r->lat, r->logits, &v, &err));
  if (value) *value = v;
  return mb_agent_greedy(r->logits, r->mask, r->A);
}

/* Normalised: a's reward after the first t moves, plus the raw policy's return after it. */
static double ref_rollout(ref_game *r, int32_t t, int32_t a) {
  mb_error err = {{0}};
  ref_reach(r, t);
  double first = 0, rest = 0;
  assert_true(mb_game_step(r->g, a, &first, &err));
  while (!mb_game_done(r->g)) {
    double x = 0;
    int32_t m = ref_raw(r, NULL, NULL);
    assert_true(mb_game_step(r->g, m, &x, &err));
    rest += x;
  }
  return (first + rest) * r->rs;
}

static int sign_of(double x, double eps) { return x > eps ? 1 : x < -eps ? -1 : 0; }

/* The first legal action of largest x (A entries). */
static int32_t first_argmax(const double *x, const uint8_t *legal, int32_t A, int32_t skip) {
  int32_t best = -1;
  for (int32_t a = 0; a < A; a++)
    if (legal[a] && a != skip && (best < 0 || x[a] > x[best])) best = a;
  return best;
}

/* --model-error over the set (see mb_muzero_probe_model_error). */
static void ref_model_error(const mb_agent *ag, const mb_train_workload *set, int32_t stride,
                            expected_table *x) {
  const double TIE = 1e-9;
  double r_err = 0, r_spread = 0, q_err = 0, q_spread = 0, q_rel = 0, vq = 0, r_greedy = 0,
         q_greedy = 0, ret = 0;
  long long n_act = 0, n_greedy = 0, roots = 0, pairs = 0, agree[3] = {0}, top2 = 0,
            top2_agree[3] = {0}, best[3] = {0};
  for (int32_t e = 0; e < N_SET; e++) {
    ref_game r;
    ref_open(&r, ag, &set[e]);
    int32_t A = r.A;
    float *root_obs = calloc((size_t)r.D, sizeof(float)),
          *root_lat = calloc((size_t)r.W, sizeof(float));
    double q1[64], q1l[64], qr[64], lg[64], rr[64];
    uint8_t legal[64];
    assert_true(A <= 64 && root_obs && root_lat);
    for (int32_t t = 0;; t++) {
      ref_reach(&r, t);
      if (mb_game_done(r.g)) break;
      int32_t n_legal;
      int32_t move = ref_raw(&r, NULL, &n_legal), greedy = move;
      if (t % stride == 0 && n_legal >= 2) {
        memcpy(root_obs, r.obs, (size_t)r.D * sizeof(float));
        memcpy(root_lat, r.lat, (size_t)r.W * sizeof(float));
        memcpy(legal, r.mask, (size_t)A);
        for (int32_t a = 0; a < A; a++) lg[a] = r.logits[a];
        for (int32_t a = 0; a < A; a++) {
          if (!legal[a]) continue;
          qr[a] = ref_rollout(&r, t, a);
          mb_error err = {{0}};
          ref_reach(&r, t);
          double reward = 0, next_value = 0;
          assert_true(mb_game_step(r.g, a, &reward, &err));
          if (!mb_game_done(r.g)) ref_raw(&r, &next_value, NULL);
          rr[a] = reward * r.rs;
          q1[a] = rr[a] + next_value;
          float rhat, vhat;
          assert_true(mb_agent_recurrent(&r.inf, root_lat, a, root_obs, r.vec, &rhat, r.logits,
                                         &vhat, &err));
          q1l[a] = (double)rhat + vhat;
          r_err += fabs(rhat - rr[a]);
          q_err += fabs(q1l[a] - q1[a]);
          vq += fabs(q1[a] - qr[a]);
          n_act++;
          if (a == greedy) {
            r_greedy += fabs(rhat - rr[a]);
            q_greedy += fabs(q1l[a] - q1[a]);
            n_greedy++;
          }
        }
        double mr = 0, mq = 0, mql = 0;
        for (int32_t a = 0; a < A; a++)
          if (legal[a]) mr += rr[a] / n_legal, mq += q1[a] / n_legal, mql += q1l[a] / n_legal;
        for (int32_t a = 0; a < A; a++) {
          if (!legal[a]) continue;
          r_spread += fabs(rr[a] - mr);
          q_spread += fabs(q1[a] - mq);
          q_rel += fabs((q1l[a] - mql) - (q1[a] - mq));
        }
        /* rollout-best: the raw policy's move unless another's rollout is better by a tie */
        int32_t rb = first_argmax(qr, legal, A, -1);
        if (qr[rb] > qr[greedy] + TIE) move = rb;
        const double *est[3] = {q1, q1l, lg};
        for (int32_t a = 0; a < A; a++)
          for (int32_t b = a + 1; b < A; b++) {
            if (!legal[a] || !legal[b] || !sign_of(qr[a] - qr[b], TIE)) continue;
            pairs++;
            for (int i = 0; i < 3; i++)
              agree[i] += sign_of(est[i][a] - est[i][b], 0) == sign_of(qr[a] - qr[b], TIE);
          }
        int32_t fav = first_argmax(lg, legal, A, -1), second = first_argmax(lg, legal, A, fav);
        if (sign_of(qr[fav] - qr[second], TIE)) {
          top2++;
          for (int i = 0; i < 3; i++)
            top2_agree[i] +=
                sign_of(est[i][fav] - est[i][second], 0) == sign_of(qr[fav] - qr[second], TIE);
        }
        for (int i = 0; i < 3; i++)
          best[i] += qr[first_argmax(est[i], legal, A, -1)] >= qr[move] - TIE;
        roots++;
      }
      r.moves[t] = move;
    }
    ret += mb_game_return(r.g);
    free(root_obs);
    free(root_lat);
    ref_close(&r);
  }
  double per_act[] = {r_err, r_spread, q_err, q_spread, q_rel};
  for (int i = 0; i < 5; i++) want_value(x, per_act[i] / (double)n_act);
  want_value(x, r_greedy / (double)n_greedy);
  want_value(x, q_greedy / (double)n_greedy);
  want_value(x, vq / (double)n_act);
  for (int i = 0; i < 3; i++) want_value(x, (double)agree[i] / (double)pairs);
  for (int i = 0; top2 > 0 && i < 3; i++) want_value(x, (double)top2_agree[i] / (double)top2);
  want_value(x, ret / N_SET);
  for (int i = 0; i < 3; i++) want_value(x, (double)best[i] / (double)roots);
  want_phrase(x, ": %lld roots (every 2-th", roots);
  want_phrase(x, "), %lld legal actions", n_act);
  want_phrase(x, "ordered like the rollouts (%lld pairs)", pairs);
  if (top2 > 0) want_phrase(x, "two favourites, ordered like the rollouts (%lld pairs)", top2);
}

/* --search-regret over the set (see mb_muzero_probe_search_regret): the searches are the
 * player's own (tested in test_agent); what is checked is what the probe makes of their moves. */
static void ref_search_regret(const mb_agent *ag, const mb_train_workload *set, int32_t stride,
                              const mb_search_config scfg[2], expected_table *x) {
  double regret[3] = {0}, gain[3] = {0}, loss[3] = {0}, exact_net[3] = {0};
  long long roots = 0, changed[3] = {0}, exact_changed[3] = {0};
  for (int32_t e = 0; e < N_SET; e++) {
    ref_game r;
    ref_open(&r, ag, &set[e]);
    mb_error err = {{0}};
    mb_player *p[2];
    for (int i = 0; i < 2; i++) {
      p[i] = mb_player_create(ag, scfg[i].simulations, &err);
      assert_non_null(p[i]);
      mb_player_set_scale(p[i], 1.0 / r.rs);
    }
    for (int32_t t = 0;; t++) {
      ref_reach(&r, t);
      if (mb_game_done(r.g)) break;
      int32_t n_legal, raw = ref_raw(&r, NULL, &n_legal);
      if (t % stride == 0 && n_legal >= 2) {
        int32_t searched[2];
        for (int i = 0; i < 2; i++) {
          mb_rng rng;
          mb_rng_seed(&rng, 1);
          ref_reach(&r, t);
          assert_true(mb_player_decide(p[i], r.g, &scfg[i], i == 1, &rng, &searched[i], &err));
        }
        double qr[64], top = -INFINITY;
        uint8_t legal[64];
        memcpy(legal, r.mask, (size_t)r.A);
        for (int32_t a = 0; a < r.A; a++)
          if (legal[a]) top = fmax(top, qr[a] = ref_rollout(&r, t, a));
        roots++;
        regret[0] += top - qr[raw];
        for (int i = 0; i < 2; i++) {
          int32_t m = searched[i];
          regret[1 + i] += top - qr[m];
          if (m == raw) continue;
          int kind = (raw == r.slow) == (m == r.slow) ? 0 : m == r.slow ? 1 : 2;
          if (i == 1) {
            exact_changed[kind]++;
            exact_net[kind] += qr[m] - qr[raw];
          } else {
            changed[kind]++;
            gain[kind] += fmax(qr[m] - qr[raw], 0);
            loss[kind] += fmax(qr[raw] - qr[m], 0);
          }
        }
      }
      r.moves[t] = raw;
    }
    for (int i = 0; i < 2; i++) mb_player_free(p[i]);
    ref_close(&r);
  }
  for (int i = 0; i < 3; i++) want_value(x, 1e3 * regret[i] / (double)roots);
  const char *kind[3] = {"another offset", "fast to slow", "slow to fast"};
  for (int k = 0; k < 3; k++) {
    want_value(x, 1e3 * gain[k]);
    want_value(x, 1e3 * loss[k]);
    want_value(x, 1e3 * (gain[k] - loss[k]));
    want_value(x, 1e3 * exact_net[k]);
    char line[32];
    snprintf(line, sizeof line, "moves changed, %s ", kind[k]);
    want_in_line(x, line, "learned: %5lld,", changed[k]);
    want_in_line(x, line, "exact: %5lld,", exact_changed[k]);
  }
  want_phrase(x, ": %lld roots (every 2-th", roots);
}

/* --unroll-error over the set (see mb_muzero_probe_unroll_error). */
static void ref_unroll_error(const mb_agent *ag, const mb_train_workload *set, int32_t stride,
                             expected_table *x) {
  long long n[UNROLL_DEPTH + 1] = {0}, roots = 0;
  double exact_err[UNROLL_DEPTH + 1] = {0}, learned_err[UNROLL_DEPTH + 1] = {0},
                                  gap[UNROLL_DEPTH + 1] = {0}, bias[UNROLL_DEPTH + 1] = {0},
                                  reward_bias[UNROLL_DEPTH + 1] = {0};
  for (int32_t e = 0; e < N_SET; e++) {
    ref_game r;
    ref_open(&r, ag, &set[e]);
    int32_t cap = mb_game_n_visitable(r.g) + 1, T = 0;
    float *obs = calloc((size_t)cap * (size_t)r.D, sizeof(float)),
          *lat = calloc((size_t)cap * (size_t)r.W, sizeof(float)),
          *cur = calloc((size_t)r.W, sizeof(float));
    double *rew = calloc((size_t)cap, sizeof(double)), *val = calloc((size_t)cap, sizeof(double));
    assert_true(obs && lat && cur && rew && val);
    mb_error err = {{0}};
    for (; !mb_game_done(r.g); T++) { /* the raw policy's episode, its values normalised */
      assert_true(T < cap);
      r.moves[T] = ref_raw(&r, &val[T], NULL);
      memcpy(obs + (size_t)T * r.D, r.obs, (size_t)r.D * sizeof(float));
      memcpy(lat + (size_t)T * r.W, r.lat, (size_t)r.W * sizeof(float));
      double reward = 0;
      assert_true(mb_game_step(r.g, r.moves[T], &reward, &err));
      rew[T] = reward * r.rs;
    }
    for (int32_t t = 0; t < T; t += stride) {
      roots++;
      double to_go = 0;
      for (int32_t i = t; i < T; i++) to_go += rew[i];
      memcpy(cur, lat + (size_t)t * r.W, (size_t)r.W * sizeof(float));
      double sum_rhat = 0, leaf = val[t];
      for (int32_t k = 0; k <= UNROLL_DEPTH && t + k <= T; k++) {
        if (k > 0) { /* the first step from h(o_t) is told o_t (its action features) */
          float rhat, vhat;
          assert_true(mb_agent_recurrent(&r.inf, cur, r.moves[t + k - 1],
                                         k == 1 ? obs + (size_t)t * r.D : NULL, r.vec, &rhat,
                                         r.logits, &vhat, &err));
          memcpy(cur, r.vec, (size_t)r.W * sizeof(float));
          sum_rhat += rhat;
          leaf = vhat;
        }
        double sum_r = 0;
        for (int32_t i = t; i < t + k; i++) sum_r += rew[i];
        double exact = sum_r + (t + k < T ? val[t + k] : 0), learned = sum_rhat + leaf;
        n[k]++;
        exact_err[k] += fabs(exact - to_go);
        learned_err[k] += fabs(learned - to_go);
        gap[k] += fabs(learned - exact);
        bias[k] += learned - exact;
        reward_bias[k] += sum_rhat - sum_r;
      }
    }
    free(obs);
    free(lat);
    free(cur);
    free(rew);
    free(val);
    ref_close(&r);
  }
  for (int k = 0; k <= UNROLL_DEPTH && n[k] > 0; k++) {
    double per[5] = {exact_err[k], learned_err[k], gap[k], bias[k], reward_bias[k]};
    for (int i = 0; i < 5; i++) want_value(x, per[i] / (double)n[k]);
    char fmt[32];
    snprintf(fmt, sizeof fmt, "\n  %2d  %%6lld   ", k);
    want_phrase(x, fmt, n[k]);
  }
  want_phrase(x, ": %lld roots (every 2-th", roots);
}

/* The ops of [a0, a0 + a_len) that are also in [b0, b0 + b_len) and in the buffer's
 * [start, end], counted one by one (b_len < 0: no second window). */
static int64_t ops_in(int32_t a0, int32_t a_len, int32_t b0, int32_t b_len, int32_t start,
                      int32_t end) {
  int64_t n = 0;
  for (int32_t o = a0; o < a0 + a_len; o++)
    n += (b_len < 0 || (o >= b0 && o < b0 + b_len)) && o >= start && o <= end;
  return n;
}

/* --next-window over the set (see mb_muzero_probe_next_window). */
static void ref_next_window(const mb_agent *ag, const mb_train_workload *set, int32_t stride,
                            expected_table *x) {
  long long decisions = 0, disjoint = 0, occupied = 0;
  double covered = 0, unseen = 0;
  for (int32_t e = 0; e < N_SET; e++) {
    ref_game r;
    ref_open(&r, ag, &set[e]);
    const mb_workload *w = set[e].w;
    mb_assignment *placed = mb_assignment_new(w->n_buffers);
    assert_non_null(placed);
    mb_error err = {{0}};
    for (int32_t t = 0; !mb_game_done(r.g); t++) {
      int32_t c0, cl, n0, nl;
      mb_game_window(r.g, &c0, &cl);
      assert_true(mb_game_step(r.g, ref_raw(&r, NULL, NULL), NULL, &err));
      if (mb_game_done(r.g) || t % stride) continue;
      mb_game_window(r.g, &n0, &nl);
      int64_t common = ops_in(n0, nl, c0, cl, 0, INT32_MAX);
      decisions++;
      covered += (double)common / nl;
      disjoint += common == 0;
      assert_true(mb_game_assignment(r.g, placed, &err));
      double in_next = 0, in_both = 0;
      for (int32_t b = 0; b < w->n_buffers; b++) {
        if (placed->offset[b] == MB_SLOW) continue;
        const mb_buffer *buf = &w->buffers[b];
        in_next += (double)buf->size * (double)ops_in(n0, nl, 0, -1, buf->start, buf->end);
        in_both += (double)buf->size * (double)ops_in(n0, nl, c0, cl, buf->start, buf->end);
      }
      if (in_next > 0) {
        occupied++;
        unseen += 1 - in_both / in_next;
      }
    }
    mb_assignment_free(placed);
    ref_close(&r);
  }
  want_value(x, covered / (double)decisions);
  want_value(x, (double)disjoint / (double)decisions);
  want_value(x, occupied ? unseen / (double)occupied : 0.0);
  want_phrase(x, ": %lld decisions (every 2-th)", decisions);
  want_phrase(x, "over %lld decisions with some)", occupied);
}

/* lean: added to the policy's logit of action `favoured` (-1: "slow") through the prediction's
 * output bias, so that the raw policy plays it where a search may not (leaning to slow: the
 * search changes of kind "slow to fast"), or where the plain agent's logits never favour it. */
static void probes_match_the_reference(bool action_features, int32_t favoured, float lean,
                                       int64_t capacity) {
  mb_workload *w[N_SET];
  mb_train_workload set[N_SET];
  make_set(w, set, capacity);
  mb_agent ag;
  make_agent(&ag, action_features);
  mb_nn_module *mods[4];
  mb_agent_modules(&ag, mods);
  mb_tensor *out_bias = &mods[3]->params[mods[3]->n_params - 1].value;
  assert_int_equal(out_bias->cols, mods[3]->out_dim);
  out_bias->data[favoured < 0 ? ag.cfg.game.n_actions - 1 : favoured] += lean;
  mb_search_config scfg[2];
  probe_searches(scfg);
  static const char *const name[N_PROBES] = {"--model-error", "--search-regret", "--unroll-error",
                                             "--next-window"};
  for (int k = 0; k < N_PROBES; k++) {
    expected_table *x = calloc(1, sizeof *x);
    assert_non_null(x);
    if (k == 0) ref_model_error(&ag, set, STRIDE, x);
    if (k == 1) ref_search_regret(&ag, set, STRIDE, scfg, x);
    if (k == 2) ref_unroll_error(&ag, set, STRIDE, x);
    if (k == 3) ref_next_window(&ag, set, STRIDE, x);
    mb_error err = {{0}};
    char *table = NULL;
    if (!run_probe(k, &ag, set, &table, &err)) fail_msg("%s: %s", name[k], err.message);
    assert_table(table, x, name[k]);
    free(table);
    free(x);
  }
  mb_agent_free(&ag);
  free_set(w);
}

static void test_probes_match_the_reference(void **state) {
  (void)state;
  probes_match_the_reference(false, -1, 0, 0);
}

static void test_probes_match_the_reference_with_action_features(void **state) {
  (void)state;
  probes_match_the_reference(true, -1, 0, 0);
}

static void test_probes_match_the_reference_leaning_slow(void **state) {
  (void)state;
  probes_match_the_reference(false, -1, 2.5f, 0);
}

static void test_probes_match_the_reference_leaning_to_action_0(void **state) {
  (void)state;
  probes_match_the_reference(false, 0, 2.0f, 0);
}

/* 64 KiB of fast memory: many decisions have two legal moves, one offset and slow */
static void test_probes_match_the_reference_in_a_tight_memory(void **state) {
  (void)state;
  probes_match_the_reference(false, -1, 0, 65536);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_probes_print_their_tables),
      cmocka_unit_test(test_probes_with_action_features),
      cmocka_unit_test(test_probes_refuse_a_set_without_decisions),
      cmocka_unit_test(test_unroll_probe_on_short_episodes),
      cmocka_unit_test(test_probes_match_the_reference),
      cmocka_unit_test(test_probes_match_the_reference_with_action_features),
      cmocka_unit_test(test_probes_match_the_reference_leaning_slow),
      cmocka_unit_test(test_probes_match_the_reference_leaning_to_action_0),
      cmocka_unit_test(test_probes_match_the_reference_in_a_tight_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
