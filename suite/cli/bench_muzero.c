/* `mallocbench bench muzero`: how fast mallocMuZero runs on this machine and, with an agent,
 * what its search gains and why.
 *
 * Throughput (the default). Measures, in one run and on the same synthetic workload
 * (random_workload.h, TPU-v4-like profile, catalogue capacity rule):
 *   - search simulations per second in the learned model (batch-1 network calls: dynamics,
 *     reward, prediction per simulation) and in the real game (mallocmuzero-exact: each
 *     simulation replays its path from the root snapshot, then representation + prediction);
 *   - raw-policy decisions per second (one representation + prediction call and a game step);
 *   - training: learner updates per second (batch B, K-step unroll, AdamW) and self-play
 *     decisions per second, from a short synthetic training run (mb_train).
 * Each rate is printed beside its ratio to a reference measured in the same run: simulations/s to
 * the learned-model search's, decisions/s to the raw policy's. The machine is shared and noisy,
 * so absolute rates drift between runs; ratios measured side by side are what to compare. The
 * agent is --agent's checkpoint or a fresh one of the default size. OpenBLAS runs
 * single-threaded (as in training).
 *
 * With --agent: --returns LIST compares the returns the agent's search reaches at each
 * simulation count (paired per workload); --model-error, --search-regret, --unroll-error and
 * --next-window run the probes of why search does or does not help (solvers/muzero/
 * diagnostics.h) and print their tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "atomic_file.h"
#include "catalogue.h"
#include "clock.h"
#include "commands.h"
#include "diagnostics.h"
#include "error.h"
#include "game.h"
#include "hardware.h"
#include "option_values.h"
#include "paths.h"
#include "player.h"
#include "search.h"
#include "solver.h"
#include "stats.h"
#include "tensor.h"
#include "train.h"

/* --returns LIST: at most MAX_BUDGETS simulation counts, comma-separated, each in
 * 0..MAX_SIMULATIONS. */
enum { MAX_BUDGETS = 16, MAX_SIMULATIONS = 4096 };

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: mallocbench bench muzero [--agent FILE] [--buffers 256] [--simulations 16]\n"
      "                                [--seconds 3] [--jobs 1] [--seed 0]\n"
      "       mallocbench bench muzero --agent FILE --returns 0,2,8,32\n"
      "                                [--split S | --workloads REGEX | --episodes 8\n"
      "                                 --buffers 256 --seed 1000] [--rescale node]\n"
      "                                [--catalogue FILE] [--data DIR]\n"
      "                                [--c-visit 50 --c-scale 1 --considered 16]\n"
      "                                [--q-range 0.1] [--max-depth 0] [--oracle PARTS]\n"
      "                                [--oracle-weight 1]\n"
      "                                [--leaf-rollout N] [--search gumbel]\n"
      "                                [--c-puct 1.25]\n"
      "                                [--finetune-steps N [--finetune-model] [--jobs 1]]\n"
      "                                [--per-workload FILE]\n"
      "       mallocbench bench muzero --agent FILE --model-error N [workload options]\n"
      "       mallocbench bench muzero --agent FILE --unroll-error N [workload options]\n"
      "       mallocbench bench muzero --agent FILE --next-window N [workload options]\n"
      "       mallocbench bench muzero --agent FILE --search-regret N [--simulations 16]\n"
      "                                [workload and search options]\n\n"
      "Prints mallocMuZero's search simulations per second (learned model; exact game with\n"
      "the value network at the leaves and with the solvers' leaf rollouts),\n"
      "raw-policy decisions per second, and training updates and self-play decisions per\n"
      "second, on one synthetic workload of --buffers buffers: rates per second of wall\n"
      "clock on this machine, each beside its ratio to a reference measured in the same run\n"
      "(vs learned: simulations/s over the learned-model search's; vs raw: decisions/s over\n"
      "the raw policy's). Compare the ratios: the rates drift with the machine's load.\n"
      "--seconds is the wall time per measurement, in seconds (fractional allowed, e.g. 0.5;\n"
      "at most 3600; the training measurement takes twice it); --jobs the self-play threads\n"
      "of the training measurement. Without --agent a fresh agent of the default size\n"
      "(latent 128, 1 residual block) is used.\n\n"
      "--returns LIST plays one episode per workload with the agent at each number of\n"
      "simulations per decision (0: the raw policy network alone, no search; at most %d\n"
      "different numbers, each 0..%d), in the learned model and in the exact game, and\n"
      "prints mean returns (simulated) beside random play, the untrained network training\n"
      "starts from (seed 0) and the heuristic (best fit in the agent's buffer order; the\n"
      "heuristic solver in the default order). Then, since the same workloads are played at\n"
      "every budget, paired per-workload differences: each budget against the first listed,\n"
      "each against the one before and the largest against the smallest search budget, as\n"
      "mean +- standard error, workloads higher / level / lower and a two-sided exact sign\n"
      "test (is a rise more than noise?). Workloads: the catalogue's --split (train or\n"
      "test) or --workloads (--catalogue FILE and --data DIR as for run), else --episodes\n"
      "synthetic ones of 32..--buffers buffers, spread evenly, from seed --seed (keep them\n"
      "apart from training's streams; one episode has 32 buffers).\n"
      "--search puct plays MuZero's pUCT instead of Gumbel MuZero (the most visited move, no\n"
      "root noise; c_scale, --considered and --rescale are then unused; --c-puct 1.25 is its\n"
      "c1, the weight of the prior against Q); --rescale node|tree picks the Gumbel Q\n"
      "normalisation, --c-visit 50 --c-scale 1 the weight of Q against the prior,\n"
      "--considered 16 the Gumbel root's m and --q-range the smallest spread the per-node\n"
      "min-max divides by, --max-depth D stops the tree D steps below the root (0: no limit),\n"
      "--leaf-rollout N values each new node by N raw-policy steps from it plus the value\n"
      "network where they stop, in both columns (0: the value network alone); the defaults\n"
      "are what the mallocmuzero solvers play with (mb_search_config_evaluation,\n"
      "solvers/muzero/search.h: a %d-step rollout in the exact game, none in the learned\n"
      "model). --oracle PARTS (a comma list of values, priors, rewards, masks, terminals, or\n"
      "all) makes the learned-model column take those parts from the real game at every node\n"
      "whose path is legal there (values and priors: the networks on the real observation),\n"
      "the rest from the learned model: what the search gains from a part is what the learned\n"
      "model's version of it costs. With all of them the column equals the exact game's (both\n"
      "then without a leaf rollout). --oracle-weight W (0..1) moves the oracle's values and\n"
      "rewards only part of the way: (1 - W) x^ + W x, so that the learned model's error at\n"
      "those nodes shrinks by 1 - W: how precise it would have to be for its search to gain.\n"
      "--finetune-steps N plays each workload with a copy of the agent fine-tuned on it alone\n"
      "for N updates, at every budget and in both columns: the training of the solvers'\n"
      "--finetune-steps (learned-model self-play, 32-row batches), seeded by the workload's\n"
      "place in the set, with --jobs self-play threads (the same network for any --jobs).\n"
      "Does the learned search gain once its model is fitted to the one workload it plays?\n"
      "--finetune-model fits the learned model alone instead (dynamics and reward; the\n"
      "representation and prediction networks frozen, as train --freeze repr,pred), to the\n"
      "frozen value network's values of the observations reached (train --td-steps 0\n"
      "--value-weight 1): the raw policy and the exact game's column stay the agent's.\n"
      "--per-workload FILE also writes every workload's returns, a tab-separated table with\n"
      "a header: index (the workload's place in the set; synthetic workload i is drawn from\n"
      "seed --seed + i), workload, buffers, simulations, learned, exact; one row per\n"
      "workload and budget, returns to 17 digits, for paired tests across runs (the same\n"
      "workloads played by agents of several seeds). Replaced whole, after the table.\n\n"
      "--model-error N (with --agent; same workload options) measures the search's one-step\n"
      "evaluations at every N-th decision of the raw policy's episodes: for each legal action,\n"
      "the learned model's reward and r^ + v^ against the exact game's r + v(next state)\n"
      "(also relative to the siblings' mean: what a root's comparison sees) and against a\n"
      "raw-policy rollout (the truth for one step of policy improvement), and how often each,\n"
      "and the policy's logits, orders sibling actions like the rollouts (all pairs, and the\n"
      "policy's two favourites: the pair a 2-simulation search compares).\n\n"
      "--unroll-error N (with --agent; same workload options) follows the raw policy's own\n"
      "episodes and, from every N-th decision, values the path of its next k = 0..12 moves\n"
      "as a search of depth k would: in the exact game (true rewards + v of the state\n"
      "reached) and in the learned model (predicted rewards + v^ after k dynamics steps),\n"
      "against the true return to go; shows how the learned model drifts with depth.\n\n"
      "--next-window N (with --agent; same workload options) follows the raw policy's own\n"
      "episodes and, at every N-th decision, compares the time window of the next\n"
      "observation's occupancy picture with the current one's: how much of it, and of the\n"
      "fast memory in use there, the current observation shows (what a learned dynamics\n"
      "model cannot see but must predict).\n\n"
      "--search-regret N (with --agent; same workload and search options) compares, at every\n"
      "N-th decision of the raw policy's episodes, the move of the raw policy, of search in\n"
      "the learned model and of search in the exact game (--simulations each) by the\n"
      "rollouts above: mean regret against the rollout-best move (one step of policy\n"
      "improvement, normalised units 1 / R_ref), and where the learned search departs from\n"
      "the raw policy, what it gains or loses by kind of change (another offset, to slow,\n"
      "to fast).\n",
      MAX_BUDGETS, MAX_SIMULATIONS, MB_SEARCH_EVAL_EXACT_LEAF_ROLLOUT);
}

/* Plays episodes (restarting when done) until `seconds` pass; returns decisions/s and
 * the simulations done. Leaf rollouts of leaf_rollout steps (0: the value network alone);
 * gemv: the networks' batch-1 products through sgemv, as the solvers play (else sgemm, as
 * self-play in training). */
static bool measure_play(const mb_agent *ag, mb_game *g, double scale, int sims, bool exact,
                         int leaf_rollout, bool search, bool gemv, double seconds, mb_rng *rng,
                         double *decisions_per_s, double *sims_per_s, mb_error *err) {
  mb_player *p = mb_player_create(ag, sims, err);
  if (!p) return false;
  mb_player_set_scale(p, scale);
  mb_player_use_gemv(p, gemv);
  mb_search_config sc;
  mb_search_config_evaluation(&sc, exact);
  sc.simulations = sims;
  sc.leaf_rollout = leaf_rollout;
  double t0 = mb_wall_seconds(), t = t0;
  int64_t dec = 0;
  bool ok = true;
  while (ok && t - t0 < seconds) {
    int64_t s = 0, d = 0;
    /* play one episode; a deadline in the past makes it raw-policy play */
    ok = mb_player_play(p, g, &sc, exact, search ? 0 : 1e-9, rng, &s, &d, err);
    dec += d;
    t = mb_wall_seconds();
  }
  mb_player_free(p);
  *decisions_per_s = dec / (t - t0);
  *sims_per_s = search ? dec * (double)sims / (t - t0) : 0;
  return ok;
}

/* The learned model's search with oracle parts (mb_player_set_oracle), and what it saw. */
typedef struct oracle_use {
  unsigned parts;          /* MB_ORACLE_* (0: none) */
  double weight;           /* mb_player_set_oracle_weight (1: the real game's values, rewards) */
  int64_t nodes, off_game; /* summed over the episodes played (mb_player_oracle_stats) */
} oracle_use;

/* --oracle's part names; "all" last, so that printing can name the single parts first. */
static const struct {
  const char *name;
  unsigned part;
} oracle_names[] = {{"values", MB_ORACLE_VALUES},       {"priors", MB_ORACLE_PRIORS},
                    {"rewards", MB_ORACLE_REWARDS},     {"masks", MB_ORACLE_MASKS},
                    {"terminals", MB_ORACLE_TERMINALS}, {"all", MB_ORACLE_ALL}};
#define N_ORACLE_NAMES (sizeof oracle_names / sizeof oracle_names[0])

/* Parses --oracle's comma list into MB_ORACLE_* parts. */
static bool parse_oracle(const char *v, unsigned *parts) {
  *parts = 0;
  const char *p = v;
  for (;;) {
    size_t len = strcspn(p, ",");
    size_t i = 0;
    while (i < N_ORACLE_NAMES &&
           !(strlen(oracle_names[i].name) == len && !strncmp(p, oracle_names[i].name, len)))
      i++;
    if (i == N_ORACLE_NAMES) {
      mb_diag(stderr,
              "mallocbench bench muzero: --oracle '%s': unknown part '%.*s'; expected a comma "
              "list of values, priors, rewards, masks, terminals, or all",
              v, (int)len, p);
      return false;
    }
    *parts |= oracle_names[i].part;
    if (!p[len]) return true;
    p += len + 1;
  }
}

/* The oracle parts as the comma list --oracle takes. */
static void oracle_name(unsigned parts, char *out, size_t cap) {
  out[0] = 0;
  if (parts == MB_ORACLE_ALL) {
    snprintf(out, cap, "all");
    return;
  }
  for (size_t i = 0; i + 1 < N_ORACLE_NAMES; i++)
    if (parts & oracle_names[i].part)
      snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? "," : "",
               oracle_names[i].name);
}

/* One episode of g by `ag` with `sims` simulations per decision (0: raw policy), learned model
 * (with `oracle`'s parts when given) or exact game; returns the true return (simulated). */
static bool play_return(const mb_agent *ag, mb_game *g, double scale, int sims, bool exact,
                        const mb_search_config *scfg, oracle_use *oracle, uint64_t seed,
                        double *ret, mb_error *err) {
  mb_player *pl = mb_player_create(ag, sims > 0 ? sims : 1, err);
  if (!pl) return false;
  mb_player_set_scale(pl, scale);
  mb_player_use_gemv(pl, true); /* as the solvers play */
  if (oracle) {
    mb_player_set_oracle(pl, oracle->parts);
    mb_player_set_oracle_weight(pl, oracle->weight);
  }
  mb_search_config sc = *scfg;
  sc.gumbel_noise = false;
  sc.simulations = sims > 0 ? sims : 1;
  int64_t s = 0, d = 0;
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  bool ok = mb_player_play(pl, g, &sc, exact, sims > 0 ? 0 : 1e-9, &rng, &s, &d, err);
  if (oracle) {
    int64_t nodes, off;
    mb_player_oracle_stats(pl, &nodes, &off);
    oracle->nodes += nodes;
    oracle->off_game += off;
  }
  mb_player_free(pl);
  if (ok) *ret = mb_game_return(g);
  return ok;
}

/* Uniformly random legal play. */
static double random_return(mb_game *g, uint64_t seed) {
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  uint8_t mask[1024];
  mb_game_reset(g);
  while (!mb_game_done(g)) {
    mb_game_legal_mask(g, mask);
    int32_t a = mb_rng_pick(&rng, mask, mb_game_n_actions(g), -1);
    if (!mb_game_step(g, a, NULL, NULL)) break;
  }
  return mb_game_return(g);
}

static double mean_of(const double *x, int32_t n) {
  double sum = 0;
  for (int32_t i = 0; i < n; i++) sum += x[i];
  return n > 0 ? sum / n : 0;
}

/* One paired comparison between two rows of the returns table, learned model and exact game. */
static void paired_row(const int *sims, int from, int to, const double *per_wl, int32_t n_set) {
  char label[40];
  snprintf(label, sizeof label, "%d vs %d", sims[to], sims[from]);
  printf("  %-14s", label);
  for (int ex = 0; ex < 2; ex++) {
    /* returns are sums of integer time drops over T_slow: equal episodes give equal doubles */
    mb_paired_stats s =
        mb_paired_compare(per_wl + (size_t)(from * 2 + ex) * (size_t)n_set,
                          per_wl + (size_t)(to * 2 + ex) * (size_t)n_set, n_set, 1e-12);
    char p[32], se[32] = "-"; /* one workload has no standard error */
    mb_format_p(p, sizeof p, s.sign_p);
    if (n_set > 1) snprintf(se, sizeof se, "%.4f", s.std_error);
    printf("  %+.4f +- %6s %3d / %3d / %3d  %6s", s.mean, se, s.higher, s.level, s.lower, p);
  }
  printf("\n");
}

/* Whether the differences between budgets are more than workload-to-workload noise: each
 * budget against the first row (normally the raw policy), each against the one before, and the
 * largest against the smallest search budget. */
static void paired_table(const int *sims, int n, const double *per_wl, int32_t n_set) {
  if (n < 2 || n_set < 1) return;
  printf(
      "paired per-workload differences: mean +- standard error, workloads higher / level /\n"
      "lower, two-sided sign test p (a small p: more workloads moved one way than chance\n"
      "would make)\n");
  printf("  %-14s  %-44s  %s\n", "simulations", "learned model", "exact game");
  for (int k = 1; k < n; k++) paired_row(sims, 0, k, per_wl, n_set);
  for (int k = 2; k < n; k++) paired_row(sims, k - 1, k, per_wl, n_set);
  int lo = -1, hi = -1; /* the smallest and largest search budgets (not the raw policy) */
  for (int k = 0; k < n; k++)
    if (sims[k] > 0) {
      if (lo < 0 || sims[k] < sims[lo]) lo = k;
      if (hi < 0 || sims[k] > sims[hi]) hi = k;
    }
  bool shown = lo == 0 || hi == 0 || hi == lo + 1; /* a row above already compares them */
  if (lo >= 0 && sims[lo] < sims[hi] && !shown) paired_row(sims, lo, hi, per_wl, n_set);
}

/* Reads --returns' list into sims[0..*n); false after a message naming the list (and the bound
 * when it holds more than MAX_BUDGETS counts). */
static bool parse_simulation_list(const char *list, int sims[MAX_BUDGETS], int *n) {
  int items = 1;
  for (const char *c = list; *c; c++) items += *c == ',';
  if (items > MAX_BUDGETS) {
    mb_diag(stderr,
            "mallocbench bench muzero: --returns '%s': %d simulation counts, at most %d in one run",
            list, items, MAX_BUDGETS);
    return false;
  }
  *n = 0;
  for (const char *p = list;; p++) {
    size_t len = strcspn(p, ",");
    char item[32];
    int64_t v = 0;
    bool ok = len < sizeof item;
    if (ok) {
      memcpy(item, p, len);
      item[len] = 0;
      ok = mb_parse_int(item, 0, MAX_SIMULATIONS, &v);
    }
    if (!ok) {
      mb_diag(stderr,
              "mallocbench bench muzero: --returns '%s': expected simulation counts in 0..%d "
              "separated by commas, like 0,2,8,32",
              list, MAX_SIMULATIONS);
      return false;
    }
    for (int k = 0; k < *n; k++)
      if (sims[k] == (int)v) {
        /* the same count twice plays the same episodes twice: only a duplicate row */
        mb_diag(stderr, "mallocbench bench muzero: --returns '%s': %d is listed twice", list,
                (int)v);
        return false;
      }
    sims[(*n)++] = (int)v;
    p += len;
    if (!*p) return true;
  }
}

/* What returns_table measures: the references' summed returns, and per simulation count k,
 * model (0 learned, 1 exact) and workload e the agent's return per_wl[(k * 2 + exact) * n_set +
 * e] and the summed wall seconds. */
typedef struct returns_measured {
  double heur, rnd, untrained;
  double t_learned[MAX_BUDGETS], t_exact[MAX_BUDGETS];
  double *per_wl;
  int64_t buffers, decisions; /* the set's, summed */
  oracle_use oracle;
  /* --finetune-steps: updates per workload (0: none), the updates made and their summed wall
   * seconds, and the workloads left as they were because they have no decision to learn from */
  int64_t finetune_steps, updates;
  int32_t finetune_jobs, not_tuned;
  bool finetune_model; /* --finetune-model: the learned model alone, value-equivalence targets */
  double t_finetune;
} returns_measured;

/* One workload played at every simulation count in both models, into m->per_wl. */
typedef struct budgets_play {
  const int *sims;
  int n;
  const mb_search_config *scfg; /* [2]: learned model, real game */
  mb_game *g;
  double scale;
  int32_t e, n_set; /* the workload's place in the set, and the set's size */
  returns_measured *m;
  bool played;
  double tuned_at; /* --finetune-steps: when training ended and the plays began (wall seconds) */
} budgets_play;

static bool play_budgets(const mb_agent *ag, budgets_play *p, mb_error *err) {
  returns_measured *m = p->m;
  for (int k = 0; k < p->n; k++)
    for (int ex = 0; ex < 2; ex++) {
      double t0 = mb_wall_seconds(), r = 0;
      oracle_use *o = ex == 0 && m->oracle.parts ? &m->oracle : NULL;
      if (!play_return(ag, p->g, p->scale, p->sims[k], ex == 1, &p->scfg[ex], o, (uint64_t)p->e, &r,
                       err))
        return false;
      m->per_wl[(k * 2 + ex) * p->n_set + p->e] = r;
      (ex ? m->t_exact : m->t_learned)[k] += mb_wall_seconds() - t0;
    }
  p->played = true;
  return true;
}

/* The train loop's on_eval hook of --finetune-steps: the budgets are played by the weights
 * training ends with. */
static bool play_budgets_when_tuned(void *ctx, const mb_agent *ag, int64_t step, bool final,
                                    mb_error *err) {
  (void)step;
  if (!final) return true;
  budgets_play *p = ctx;
  p->tuned_at = mb_wall_seconds();
  return play_budgets(ag, p, err);
}

/* Fine-tunes a copy of ag on workload p->e alone (m->finetune_steps updates, seeded by e) and
 * plays the budgets with it. */
static bool play_budgets_tuned(const mb_agent *ag, const mb_train_workload *tw, budgets_play *p,
                               mb_error *err) {
  returns_measured *m = p->m;
  mb_train_config tc;
  mb_train_config_finetune(&tc, 0, m->finetune_steps, (uint64_t)p->e, false);
  tc.jobs = m->finetune_jobs;
  if (m->finetune_model) mb_train_config_model_only(&tc);
  tc.eval_every = 0; /* the hook plays once, at the end */
  tc.on_eval = play_budgets_when_tuned;
  tc.on_eval_ctx = p;
  double t0 = mb_wall_seconds();
  mb_train_result tr;
  if (!mb_train(&tc, tw, 1, ag, &tr, err)) return false;
  m->updates += tr.updates;
  mb_train_result_free(&tr);
  if (!p->played) return mb_fail(err, "fine-tuning ended without playing its network");
  m->t_finetune += p->tuned_at - t0; /* the plays, at the end, are not fine-tuning */
  return true;
}

/* Plays every workload of the set with the references, the untrained network and the agent at
 * every simulation count in both models. 0, or 1 after a message. */
static int measure_returns(const mb_agent *ag, const int *sims, int n,
                           const mb_search_config scfg[2], const mb_train_workload *set,
                           int32_t n_set, returns_measured *m) {
  mb_error err = {{0}};
  /* the network `mallocbench train --seed 0` starts from (same derivation as mb_train) */
  mb_agent fresh;
  mb_rng base;
  mb_rng_seed(&base, 0);
  mb_rng r0 = mb_rng_split(&base, 0x5eed);
  if (!mb_agent_create(&fresh, &ag->cfg, &r0, &err)) {
    mb_diag(stderr, "mallocbench bench muzero: %s", err.message);
    return 1;
  }
  int rc = 0;
  for (int32_t e = 0; e < n_set && rc == 0; e++) {
    mb_game *g = mb_game_new(set[e].w, &set[e].hw, &ag->cfg.game, &err);
    if (!g) {
      mb_diag(stderr, "mallocbench bench muzero: %s: %s", set[e].name, err.message);
      rc = 1;
      break;
    }
    double scale = mb_return_scale(set[e].w, &set[e].hw, g), r = 0;
    m->buffers += set[e].w->n_buffers;
    int64_t decisions = 0;
    for (; !mb_game_done(g); decisions++) mb_game_step(g, mb_game_heuristic_action(g), NULL, &err);
    m->decisions += decisions;
    m->heur += mb_game_return(g);
    m->rnd += random_return(g, (uint64_t)e);
    if (!play_return(&fresh, g, scale, 0, false, &scfg[0], NULL, 0, &r, &err)) rc = 1;
    m->untrained += r;
    budgets_play p = {
        .sims = sims, .n = n, .scfg = scfg, .g = g, .scale = scale, .e = e, .n_set = n_set, .m = m};
    /* a workload without a decision has nothing to fine-tune on (as in the solvers) */
    bool tune = m->finetune_steps > 0 && decisions > 0;
    m->not_tuned += m->finetune_steps > 0 && !tune;
    if (rc == 0 && !(tune ? play_budgets_tuned(ag, &set[e], &p, &err) : play_budgets(ag, &p, &err)))
      rc = 1;
    if (rc) mb_diag(stderr, "mallocbench bench muzero: %s: %s", set[e].name, err.message);
    mb_game_free(g);
  }
  mb_agent_free(&fresh);
  return rc;
}

/* Mean return on the set: references (random, heuristic, the untrained network training starts
 * from) and the agent at each simulation count, learned model and exact game. */
static void print_returns(const mb_agent *ag, const int *sims, int n,
                          const mb_search_config scfg[2], int32_t n_set, const char *what,
                          const returns_measured *m) {
  printf(
      "mean episode return (T_slow - T) / T_slow over %s: %d workloads (%lld buffers), %lld "
      "decisions per pass (simulated by the cost model)\n",
      what, n_set, (long long)m->buffers, (long long)m->decisions);
  if (m->finetune_steps > 0) {
    printf(
        "  the agent: fine-tuned on each workload alone for %lld updates before playing it (the\n"
        "  solvers' --finetune-steps training): %lld updates in %.1f s in all\n",
        (long long)m->finetune_steps, (long long)m->updates, m->t_finetune);
    if (m->finetune_model)
      printf(
          "  only its learned model was trained (dynamics and reward, value-equivalence "
          "targets)\n");
    if (m->not_tuned)
      printf("  (%d workload%s without a decision, played by the agent as it is)\n", m->not_tuned,
             m->not_tuned == 1 ? "" : "s");
  }
  printf("  random legal play              %.4f\n", m->rnd / n_set);
  printf("  untrained network (raw policy) %.4f\n", m->untrained / n_set);
  /* Best fit in the agent's order is the heuristic solver only in the heuristic order. */
  if (ag->cfg.game.order == MB_GAME_ORDER_HEURISTIC)
    printf("  heuristic (reference)          %.4f\n", m->heur / n_set);
  else
    printf("  best fit in %s order (reference) %.4f (not the heuristic solver)\n",
           mb_game_order_name(ag->cfg.game.order), m->heur / n_set);
  char learned_label[96] = "learned model (wall s)";
  if (m->oracle.parts) {
    char parts[64];
    oracle_name(m->oracle.parts, parts, sizeof parts);
    if (m->oracle.weight != 1)
      snprintf(learned_label, sizeof learned_label, "learned + oracle %s x %g (wall s)", parts,
               m->oracle.weight);
    else
      snprintf(learned_label, sizeof learned_label, "learned + oracle %s (wall s)", parts);
    printf(
        "  oracle %s: the learned-model column takes them from the real game at %lld of\n"
        "  the %lld nodes its searches expanded below the root; the rest (%.2f%%) lie on paths\n"
        "  the real game does not allow or that run past its end\n",
        parts, (long long)(m->oracle.nodes - m->oracle.off_game), (long long)m->oracle.nodes,
        m->oracle.nodes ? 100.0 * (double)m->oracle.off_game / (double)m->oracle.nodes : 0.0);
    if (m->oracle.weight != 1)
      printf("  at weight %g: its values and rewards there are %g x learned + %g x real\n",
             m->oracle.weight, 1 - m->oracle.weight, m->oracle.weight);
  }
  if (scfg[0].leaf_rollout || scfg[1].leaf_rollout)
    printf(
        "  leaf rollouts: learned model %d steps, exact game %d steps (0: value network alone)\n",
        scfg[0].leaf_rollout, scfg[1].leaf_rollout);
  if (scfg[0].kind == MB_SEARCH_PUCT)
    printf("  search: pUCT (c1 %g, c2 %g), the most visited move, no root noise\n", scfg[0].c1,
           scfg[0].c2);
  int width = (int)strlen(learned_label) + 2; /* the learned-model column */
  if (width < 25) width = 25;
  printf("  %-30s %-*s%s\n", "agent, simulations/decision", width, learned_label,
         "exact game (wall s)");
  for (int k = 0; k < n; k++) {
    char label[32];
    snprintf(label, sizeof label, sims[k] ? "%d" : "0 (raw policy, no search)", sims[k]);
    char cell[64];
    snprintf(cell, sizeof cell, "%.4f (%8.2f)", mean_of(m->per_wl + (size_t)(k * 2) * n_set, n_set),
             m->t_learned[k]);
    printf("  %-30s %-*s%.4f (%8.2f)\n", label, width, cell,
           mean_of(m->per_wl + (size_t)(k * 2 + 1) * n_set, n_set), m->t_exact[k]);
  }
}

/* --per-workload FILE: m's returns, one row per workload and simulation count, into `out`
 * (opened before the measurement, so that a path it cannot write fails at once). Commits or
 * aborts out. */
static bool write_per_workload(mb_atomic_file *out, const int *sims, int n,
                               const mb_train_workload *set, int32_t n_set,
                               const returns_measured *m, mb_error *err) {
  FILE *f = mb_atomic_file_stream(out);
  fprintf(f, "index\tworkload\tbuffers\tsimulations\tlearned\texact\n");
  for (int32_t e = 0; e < n_set; e++)
    for (int k = 0; k < n; k++)
      fprintf(f, "%d\t%s\t%d\t%d\t%.17g\t%.17g\n", e, set[e].name, set[e].w->n_buffers, sims[k],
              m->per_wl[(size_t)(k * 2) * n_set + e], m->per_wl[(size_t)(k * 2 + 1) * n_set + e]);
  return mb_atomic_file_commit(out, err);
}

/* --returns LIST: the agent at each of the n simulation counts sims[] on the set, beside the
 * references, then the paired per-workload differences; with per_workload (NULL: none) every
 * workload's returns into that file too. 0, or 1 after a message. */
static int returns_table(const mb_agent *ag, const int *sims, int n, const mb_search_config scfg[2],
                         unsigned oracle_parts, double oracle_weight, int64_t finetune_steps,
                         bool finetune_model, int32_t finetune_jobs, const mb_train_workload *set,
                         int32_t n_set, const char *what, const char *per_workload) {
  returns_measured m = {.oracle = {.parts = oracle_parts, .weight = oracle_weight},
                        .finetune_steps = finetune_steps,
                        .finetune_model = finetune_model,
                        .finetune_jobs = finetune_jobs};
  m.per_wl = calloc((size_t)n * 2 * (size_t)(n_set > 0 ? n_set : 1), sizeof *m.per_wl);
  if (!m.per_wl) {
    fprintf(stderr, "mallocbench bench muzero: out of memory\n");
    return 1;
  }
  mb_error err = {{0}};
  mb_atomic_file *out = per_workload ? mb_atomic_file_open(per_workload, NULL, &err) : NULL;
  if (per_workload && !out) {
    mb_diag(stderr, "mallocbench bench muzero: --per-workload %s", err.message);
    free(m.per_wl);
    return 1;
  }
  int rc = measure_returns(ag, sims, n, scfg, set, n_set, &m);
  if (rc == 0) {
    print_returns(ag, sims, n, scfg, n_set, what, &m);
    paired_table(sims, n, m.per_wl, n_set);
    fflush(stdout); /* the table stands whatever happens to the file */
  }
  if (out && rc == 0 && !write_per_workload(out, sims, n, set, n_set, &m, &err)) {
    mb_diag(stderr, "mallocbench bench muzero: --per-workload %s", err.message);
    rc = 1;
  } else if (out && rc != 0) {
    mb_atomic_file_abort(out);
  }
  free(m.per_wl);
  return rc;
}

/* `episodes` synthetic workloads with sizes spread over 32..max_buffers, workload e drawn from
 * seed + e (its own stream, not training's: the published --episodes 200 sets stay as they
 * were). */
static bool synthetic_set(long episodes, long max_buffers, long seed, mb_train_set *set) {
  mb_error err = {{0}};
  mb_hardware base;
  set->tw = calloc((size_t)episodes, sizeof *set->tw);
  set->w = calloc((size_t)episodes, sizeof *set->w);
  if (!set->tw || !set->w || !mb_hardware_find("tpu-v4i", NULL, &base, &err)) {
    mb_diag(stderr, "mallocbench bench muzero: %s", err.message[0] ? err.message : "out of memory");
    return false;
  }
  for (long e = 0; e < episodes; e++) {
    mb_rng rng;
    mb_rng_seed(&rng, (uint64_t)(seed + e));
    int32_t nb = (int32_t)(32 + (max_buffers - 32) * e / (episodes > 1 ? episodes - 1 : 1));
    mb_hardware hw;
    mb_workload *w = mb_train_synthetic_workload(&rng, nb, false, "synthetic", &base, &hw, &err);
    if (!w) {
      mb_diag(stderr, "mallocbench bench muzero: %s", err.message);
      return false;
    }
    set->w[set->n] = w;
    set->tw[set->n] = (mb_train_workload){.name = w->name, .w = w, .hw = hw};
    set->n++;
  }
  return true;
}

/* One `bench muzero` command line. */
typedef struct bench_options {
  const char *agent_path, *returns, *split, *regex, *catalogue, *data;
  int budgets[MAX_BUDGETS], n_budgets;                           /* --returns' simulation counts */
  int32_t model_error, search_regret, unroll_error, next_window; /* diagnostics: every Nth
                                                                    decision */
  unsigned oracle_parts;                                         /* --oracle: MB_ORACLE_* bits */
  double oracle_weight;                                          /* --oracle-weight (1) */
  int64_t finetune_steps; /* --finetune-steps: updates per workload before it is played (0: none) */
  bool finetune_model;    /* --finetune-model: fine-tune the learned model alone */
  const char *per_workload; /* --per-workload FILE: every workload's returns (NULL: none) */
  int32_t buffers, sims, jobs, episodes;
  int64_t seed; /* -1: the mode's default */
  /* --returns measures what the solvers play: the learned model's setting, and the real game's
   * (which differs in its leaf rollout) unless --leaf-rollout (>= 0) sets both */
  mb_search_config scfg;
  int32_t leaf_rollout; /* -1: the solvers' own */
  double seconds;
} bench_options;

/* Reads the options into O (defaults first) and checks the rules between them. Returns 0, or 2
 * after an error line. */
static int parse_options(int argc, char **argv, bench_options *O) {
  *O = (bench_options){.buffers = 256,
                       .sims = 16,
                       .jobs = 1,
                       .seed = -1,
                       .episodes = 8,
                       .leaf_rollout = -1,
                       .oracle_weight = 1,
                       .seconds = 3};
  mb_search_config_evaluation(&O->scfg, false);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--finetune-model")) { /* a switch, as run's --force */
      O->finetune_model = true;
      continue;
    }
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o); /* every other option takes a value */
    const char *a = o.flag, *v = o.value;
    if (!strcmp(a, "--agent")) {
      if (!mb_option_path("bench muzero", a, v, &O->agent_path)) return 2;
    } else if (!strcmp(a, "--returns")) {
      if (!mb_option_text("bench muzero", a, v, &O->returns)) return 2;
      if (!parse_simulation_list(O->returns, O->budgets, &O->n_budgets)) return 2;
    } else if (!strcmp(a, "--split")) {
      if (!mb_option_split("bench muzero", a, v, &O->split)) return 2;
    } else if (!strcmp(a, "--workloads")) {
      if (!mb_option_text("bench muzero", a, v, &O->regex)) return 2;
    } else if (!strcmp(a, "--catalogue")) {
      if (!mb_option_path("bench muzero", a, v, &O->catalogue)) return 2;
    } else if (!strcmp(a, "--data")) {
      if (!mb_option_path("bench muzero", a, v, &O->data)) return 2;
    } else if (!strcmp(a, "--model-error")) {
      if (!mb_option_i32("bench muzero", a, v, 1, 1000000, &O->model_error)) return 2;
    } else if (!strcmp(a, "--search-regret")) {
      if (!mb_option_i32("bench muzero", a, v, 1, 1000000, &O->search_regret)) return 2;
    } else if (!strcmp(a, "--unroll-error")) {
      if (!mb_option_i32("bench muzero", a, v, 1, 1000000, &O->unroll_error)) return 2;
    } else if (!strcmp(a, "--next-window")) {
      if (!mb_option_i32("bench muzero", a, v, 1, 1000000, &O->next_window)) return 2;
    } else if (!strcmp(a, "--search")) {
      static const char *const kinds[] = {"gumbel", "puct"};
      int k;
      if (!mb_option_choice("bench muzero", a, v, kinds, 2, &k)) return 2;
      mb_search_kind_parse(kinds[k], &O->scfg.kind);
    } else if (!strcmp(a, "--rescale")) {
      static const char *const rescales[] = {"node", "tree"};
      int k;
      if (!mb_option_choice("bench muzero", a, v, rescales, 2, &k)) return 2;
      O->scfg.rescale = k == 0 ? MB_Q_NODE : MB_Q_TREE;
    } else if (!strcmp(a, "--q-range")) {
      if (!mb_option_number("bench muzero", a, v, 0, true, 1, &O->scfg.q_min_range)) return 2;
    } else if (!strcmp(a, "--c-scale")) {
      if (!mb_option_number("bench muzero", a, v, 0, false, 1e6, &O->scfg.c_scale)) return 2;
    } else if (!strcmp(a, "--c-puct")) {
      if (!mb_option_number("bench muzero", a, v, 0, false, 1e6, &O->scfg.c1)) return 2;
    } else if (!strcmp(a, "--c-visit")) {
      if (!mb_option_number("bench muzero", a, v, 0, false, 1e6, &O->scfg.c_visit)) return 2;
    } else if (!strcmp(a, "--max-depth")) {
      if (!mb_option_i32("bench muzero", a, v, 0, 4096, &O->scfg.max_depth)) return 2;
    } else if (!strcmp(a, "--leaf-rollout")) {
      if (!mb_option_i32("bench muzero", a, v, 0, MB_SEARCH_MAX_LEAF_ROLLOUT, &O->leaf_rollout))
        return 2;
    } else if (!strcmp(a, "--oracle")) {
      if (!mb_option_text("bench muzero", a, v, &v)) return 2;
      if (!parse_oracle(v, &O->oracle_parts)) return 2;
    } else if (!strcmp(a, "--oracle-weight")) {
      if (!mb_option_number("bench muzero", a, v, 0, false, 1, &O->oracle_weight)) return 2;
    } else if (!strcmp(a, "--finetune-steps")) {
      if (!mb_option_int("bench muzero", a, v, 1, MB_SOLVER_MAX_FINETUNE_STEPS, &O->finetune_steps))
        return 2;
    } else if (!strcmp(a, "--per-workload")) {
      if (!mb_option_path("bench muzero", a, v, &O->per_workload)) return 2;
    } else if (!strcmp(a, "--considered")) {
      if (!mb_option_i32("bench muzero", a, v, 1, 4096, &O->scfg.max_considered)) return 2;
    } else if (!strcmp(a, "--episodes")) {
      if (!mb_option_i32("bench muzero", a, v, 1, 100000, &O->episodes)) return 2;
    } else if (!strcmp(a, "--buffers")) {
      if (!mb_option_i32("bench muzero", a, v, 2, 1000000, &O->buffers)) return 2;
    } else if (!strcmp(a, "--simulations")) {
      if (!mb_option_i32("bench muzero", a, v, 1, 100000, &O->sims)) return 2;
    } else if (!strcmp(a, "--jobs")) {
      if (!mb_option_i32("bench muzero", a, v, 1, 64, &O->jobs)) return 2;
    } else if (!strcmp(a, "--seed")) {
      if (!mb_option_int("bench muzero", a, v, 0, (int64_t)1 << 40, &O->seed)) return 2;
    } else if (!strcmp(a, "--seconds")) {
      if (!mb_option_number("bench muzero", a, v, 0, true, 3600, &O->seconds)) return 2;
    } else {
      return mb_unknown_option("bench muzero", argv[i]);
    }
    i = o.last;
  }
  bool returns_mode =
      O->returns && !O->model_error && !O->search_regret && !O->unroll_error && !O->next_window;
  const char *returns_only = O->oracle_parts     ? "--oracle"
                             : O->finetune_steps ? "--finetune-steps"
                             : O->per_workload   ? "--per-workload"
                                                 : NULL;
  if (returns_only && !returns_mode) {
    fprintf(stderr, "mallocbench bench muzero: %s applies to --returns LIST only\n", returns_only);
    return 2;
  }
  if (O->finetune_model && !O->finetune_steps) {
    fprintf(stderr, "mallocbench bench muzero: --finetune-model needs --finetune-steps N\n");
    return 2;
  }
  if (O->oracle_weight != 1 && !(O->oracle_parts & (MB_ORACLE_VALUES | MB_ORACLE_REWARDS))) {
    fprintf(stderr,
            "mallocbench bench muzero: --oracle-weight %g needs --oracle values or "
            "rewards (it mixes those)\n",
            O->oracle_weight);
    return 2;
  }
  if (O->oracle_parts && O->leaf_rollout > 0) {
    fprintf(stderr,
            "mallocbench bench muzero: --oracle and --leaf-rollout %d: the oracle replaces parts "
            "of the learned model's nodes, not of its rollouts; give one of them\n",
            O->leaf_rollout);
    return 2;
  }
  if ((O->model_error || O->search_regret || O->unroll_error || O->next_window) && !O->returns)
    O->returns = "0";
  if (O->returns && !O->agent_path) {
    mb_diag(stderr, "mallocbench bench muzero: --%s needs --agent FILE",
            O->model_error     ? "model-error"
            : O->search_regret ? "search-regret"
            : O->unroll_error  ? "unroll-error"
            : O->next_window   ? "next-window"
                               : "returns");
    return 2;
  }
  if (O->returns && O->buffers < 32) O->buffers = 32;
  if (O->seed < 0) O->seed = O->returns ? 1000 : 0;
  return 0;
}

/* --returns and the diagnostics: the agent plays a catalogue selection or synthetic workloads. */
static int evaluate(const bench_options *O, mb_agent *ag) {
  mb_error err = {{0}};
  mb_train_set set = {0};
  char what[256];
  int rc = 0;
  if (O->split || O->regex) {
    if (!mb_train_set_load(O->catalogue, mb_data_dir(O->data), O->regex, O->split, INT32_MAX,
                           stderr, &set, &err)) {
      mb_diag(stderr, "mallocbench bench muzero: %s", err.message);
      rc = 2;
    }
    snprintf(what, sizeof what, "catalogue %s '%s'", O->split ? "split" : "workloads",
             O->split ? O->split : O->regex);
  } else {
    rc = synthetic_set(O->episodes, O->buffers, O->seed, &set) ? 0 : 1;
    /* one episode is the first size of the spread, 32 */
    if (O->episodes == 1)
      snprintf(what, sizeof what, "a synthetic workload of 32 buffers (seed %lld)",
               (long long)O->seed);
    else
      snprintf(what, sizeof what, "synthetic workloads of 32..%d buffers (seeds %lld..%lld)",
               O->buffers, (long long)O->seed, (long long)(O->seed + O->episodes - 1));
  }
  if (rc == 0 && set.n == 0) {
    fprintf(stderr, "mallocbench bench muzero: no workload selected\n");
    rc = 2;
  }
  mb_search_config by_model[2] = {O->scfg, O->scfg}; /* learned model, real game */
  by_model[0].leaf_rollout = O->leaf_rollout >= 0 ? O->leaf_rollout : 0;
  /* with an oracle both columns value nodes alike (no rollout), so that with all its parts the
   * learned column is the exact one */
  by_model[1].leaf_rollout = O->leaf_rollout >= 0 ? O->leaf_rollout
                             : O->oracle_parts    ? 0
                                                  : MB_SEARCH_EVAL_EXACT_LEAF_ROLLOUT;
  bool probed = true; /* false: a probe failed, err says why */
  if (rc == 0 && O->model_error)
    probed = mb_muzero_probe_model_error(ag, set.tw, set.n, O->model_error, what, stdout, &err);
  else if (rc == 0 && O->unroll_error)
    probed = mb_muzero_probe_unroll_error(ag, set.tw, set.n, O->unroll_error, what, stdout, &err);
  else if (rc == 0 && O->next_window)
    probed = mb_muzero_probe_next_window(ag, set.tw, set.n, O->next_window, what, stdout, &err);
  else if (rc == 0 && O->search_regret) {
    /* --returns takes its budgets from its list */
    by_model[0].simulations = by_model[1].simulations = O->sims;
    probed = mb_muzero_probe_search_regret(ag, set.tw, set.n, O->search_regret, by_model, what,
                                           stdout, &err);
  } else if (rc == 0)
    rc = returns_table(ag, O->budgets, O->n_budgets, by_model, O->oracle_parts, O->oracle_weight,
                       O->finetune_steps, O->finetune_model, O->jobs, set.tw, set.n, what,
                       O->per_workload);
  if (!probed) {
    mb_diag(stderr, "mallocbench bench muzero: %s", err.message);
    rc = 1;
  }
  mb_train_set_free(&set);
  return rc;
}

/* x / ref with 3 significant digits ("1.00", "0.0354"), or "-" without a reference. */
static void format_ratio(char *out, size_t cap, double x, double ref) {
  if (ref > 0)
    snprintf(out, cap, "%#.3g", x / ref);
  else
    snprintf(out, cap, "-");
}

/* Without --returns: decisions, simulations and training updates per second on one synthetic
 * workload, each with its ratio to a reference measured in the same run (the raw policy's
 * decisions/s, the learned-model search's simulations/s). */
static int throughput(const bench_options *O, mb_agent *ag) {
  mb_error err = {{0}};
  mb_hardware base;
  if (!mb_hardware_find("tpu-v4i", NULL, &base, &err)) {
    mb_diag(stderr, "mallocbench bench muzero: %s", err.message);
    return 2;
  }
  mb_rng rng;
  mb_rng_seed(&rng, (uint64_t)O->seed);
  mb_hardware hw;
  mb_workload *w =
      mb_train_synthetic_workload(&rng, O->buffers, false, "bench-muzero", &base, &hw, &err);
  mb_game *g = w ? mb_game_new(w, &hw, &ag->cfg.game, &err) : NULL;
  if (!g) {
    mb_diag(stderr, "mallocbench bench muzero: %s", err.message);
    mb_workload_free(w);
    return 1;
  }
  double scale = mb_return_scale(w, &hw, g);
  char blas[256];
  mb_blas_describe(blas, sizeof blas);
  printf(
      "mallocMuZero throughput: rates per second of wall clock on this machine, %g s per "
      "measurement\n(%s; 1 BLAS thread)\n",
      O->seconds, blas);
  printf(
      "agent: %s, latent %d (%s), %d residual block(s) (the dynamics: %d wide, %d), %lld "
      "parameters, A = %d\n",
      O->agent_path ? O->agent_path : "fresh (untrained)", ag->cfg.latent,
      mb_latent_norm_name(ag->cfg.latent_norm), ag->cfg.blocks, mb_agent_dyn_width(&ag->cfg),
      mb_agent_dyn_blocks(&ag->cfg), (long long)mb_agent_param_count(ag), ag->cfg.game.n_actions);
  printf("workload: synthetic, %d buffers (%d visitable), capacity %lld B\n", w->n_buffers,
         mb_game_n_visitable(g), (long long)hw.capacity);
  /* the play measurements, one after the other on the same workload: the raw policy, the
   * learned-model search (the references of the ratios), the exact-game search without and with
   * leaf rollouts, all with the solvers' sgemv products; then the raw policy with training's
   * sgemm products */
  const int roll = MB_SEARCH_EVAL_EXACT_LEAF_ROLLOUT;
  const struct {
    bool exact, search, gemv;
    int leaf_rollout;
  } runs[5] = {{false, false, true, 0},
               {false, true, true, 0},
               {true, true, true, 0},
               {true, true, true, roll},
               {false, false, false, 0}};
  printf("  %-44s %14s %11s %12s %9s\n", "measurement", "simulations/s", "vs learned",
         "decisions/s", "vs raw");
  double raw_dps = 0, learned_sps = 0; /* the references */
  bool ok = true;
  for (int k = 0; ok && k < 5; k++) {
    double dps, sps;
    ok = measure_play(ag, g, scale, O->sims, runs[k].exact, runs[k].leaf_rollout, runs[k].search,
                      runs[k].gemv, O->seconds, &rng, &dps, &sps, &err);
    if (!ok) break;
    if (k == 0) raw_dps = dps;
    if (k == 1) learned_sps = sps;
    char label[96];
    if (k == 0)
      snprintf(label, sizeof label, "raw policy (no search)");
    else if (k == 1)
      snprintf(label, sizeof label, "learned-model search, %d sims", O->sims);
    else if (!runs[k].gemv)
      snprintf(label, sizeof label, "raw policy, sgemm products (as self-play)");
    else if (runs[k].leaf_rollout == 0)
      snprintf(label, sizeof label, "exact-game search, %d sims, value network", O->sims);
    else
      snprintf(label, sizeof label, "exact-game search, %d sims, %d-step rollouts", O->sims,
               runs[k].leaf_rollout);
    char rate[32] = "-", vs_learned[32] = "-", vs_raw[32];
    if (runs[k].search) {
      snprintf(rate, sizeof rate, "%.0f", sps);
      format_ratio(vs_learned, sizeof vs_learned, sps, learned_sps);
    }
    format_ratio(vs_raw, sizeof vs_raw, dps, raw_dps);
    printf("  %-44s %14s %11s %12.0f %9s\n", label, rate, vs_learned, dps, vs_raw);
    fflush(stdout);
  }
  mb_game_free(g);
  if (ok) {
    mb_train_config tc;
    mb_train_config_default(&tc);
    tc.agent = ag->cfg;
    tc.synthetic = true;
    tc.seconds = O->seconds * 2;
    tc.jobs = O->jobs;
    tc.actors_per_round = O->jobs > 2 ? O->jobs : 2;
    tc.eval_every = 0;
    tc.eval_max = 1;
    tc.seed = (uint64_t)O->seed;
    mb_train_result tr;
    ok = mb_train(&tc, NULL, 0, NULL, &tr, &err);
    if (ok) {
      char vs_raw[32];
      format_ratio(vs_raw, sizeof vs_raw, tr.decisions_per_s, raw_dps);
      printf(
          "  training (B %d, K %d, %d sims self-play, %d job(s)): %.1f updates/s, %.0f "
          "self-play decisions/s (vs raw %s)\n",
          tc.batch, tc.unroll, tc.search.simulations, O->jobs, tr.updates_per_s, tr.decisions_per_s,
          vs_raw);
      printf(
          "(vs learned: the row's simulations/s over the learned-model search's; vs raw: its\n"
          "decisions/s over the raw policy's; all measured in this run, one after the other:\n"
          "compare ratios, the rates drift with the machine's load. The exact-game search\n"
          "values its leaves by the value network, or by %d-step raw-policy rollouts and then\n"
          "the value network, as mallocmuzero-exact plays. Play multiplies one row at a time\n"
          "through sgemv, as the solvers do; self-play in training through sgemm, which packs\n"
          "the weights at every call: the last play row, and training's self-play, show it.)\n",
          roll);
      mb_train_result_free(&tr);
    }
  }
  mb_workload_free(w);
  if (!ok) {
    mb_diag(stderr, "mallocbench bench muzero: %s", err.message);
    return 1;
  }
  return 0;
}

int mb_bench_muzero(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  bench_options options;
  bench_options *O = &options;
  int status = parse_options(argc, argv, O);
  if (status != 0) return status;
  mb_blas_set_threads(1);
  mb_error err = {{0}};
  mb_agent ag;
  if (O->agent_path) {
    if (!mb_agent_load(O->agent_path, &ag, NULL, NULL, NULL, &err)) {
      mb_diag(stderr, "mallocbench bench muzero: %s", err.message);
      return 2;
    }
  } else {
    mb_agent_config c;
    mb_agent_config_default(&c);
    mb_rng r;
    mb_rng_seed(&r, (uint64_t)O->seed);
    if (!mb_agent_create(&ag, &c, &r, &err)) {
      mb_diag(stderr, "mallocbench bench muzero: %s", err.message);
      return 1;
    }
  }
  status = O->returns ? evaluate(O, &ag) : throughput(O, &ag);
  mb_agent_free(&ag);
  return status;
}
