/* Tests of the mallocMuZero agent (solvers/muzero/agent.h), its player (player.h) and its two
 * solvers:
 *   - checkpoint round trip: weights, config, progress and curve (with its references) come
 *     back identical and the reloaded networks give bit-identical outputs; a checkpoint without
 *     the references loads with NaN; bad files fail with a message naming them;
 *   - the dynamics/prediction shapes: policy logits over A, finite values, latent in [0, 1];
 *   - the agent's size limits (MB_AGENT_MIN_* / MB_AGENT_MAX_*, which train's options take):
 *     mb_agent_config_check accepts each end and refuses one past it, naming the field, and the
 *     game's (actions, next buffers, demand bins) are mb_game_config_check's;
 *   - mallocmuzero and mallocmuzero-exact return assignments the validator accepts, and say
 *     clearly when the checkpoint is missing;
 *   - the exact-game search is real: with the same (untrained) network, searching the real
 *     game gives a higher total return than the raw policy on small random workloads;
 *   - the player's raw-policy decision and what it records for self-play; the oracle parts;
 *   - the player's searches are mb_search_run's on reference models written from player.h
 *     (learned and exact, with and without leaf rollouts); R_ref by hand;
 *   - the checkpoint described in words (agent_describe.h: `mallocbench show AGENT.h5`);
 *   - the agent's digest: its networks and config, nothing of the run that trained them. */
#include "support.h"

#include <hdf5.h>
#include <sys/stat.h>

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_describe.h"
#include "catalogue.h"
#include "cost.h"
#include "game.h"
#include "hardware.h"
#include "player.h"
#include "random_workload.h"
#include "solver.h"
#include "train.h"
#include "train_state.h"
#include "validator.h"

static void small_config(mb_agent_config *c) { mb_test_agent_config(c, 24, 8, 8); }

static mb_workload *small_workload(uint64_t seed, int n, mb_hardware *hw) {
  mb_error err = {{0}};
  mb_hardware base;
  assert_true(mb_hardware_find("tpu-v4i", NULL, &base, &err));
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  mb_random_options o;
  mb_random_options_default(&o);
  mb_workload *w = mb_random_workload(&rng, n, &o, NULL, &err);
  assert_non_null(w);
  *hw = mb_hardware_with_capacity(&base, mb_catalogue_auto_capacity(w, &base));
  return w;
}

/* An older or damaged checkpoint, made from a saved one: a root attribute written with another
 * value, or removed (as in checkpoints written before it existed). */
static void overwrite_root_attr(const char *path, const char *name, double value) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(f >= 0);
  hid_t at = H5Aopen(f, name, H5P_DEFAULT);
  assert_true(at >= 0 && H5Awrite(at, H5T_NATIVE_DOUBLE, &value) >= 0);
  H5Aclose(at);
  H5Fclose(f);
}

static void remove_root_attr(const char *path, const char *name) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(f >= 0 && H5Adelete(f, name) >= 0);
  H5Fclose(f);
}

/* What a training run saves beside the networks: an optimiser over ag's modules, a curve of
 * two points (references unknown) and progress counters. */
#define TRAINING_PROGRESS \
  { .steps = 42, .episodes = 7, .decisions = 99, .seed = 5, .seconds = 1.5 }
static void training_extras(mb_agent *ag, mb_adam *opt, mb_agent_curve *curve) {
  mb_error err = {{0}};
  mb_nn_module *mods[4];
  mb_agent_modules(ag, mods);
  mb_adam_config ac;
  mb_adam_config_default(&ac);
  assert_true(mb_adam_create(opt, mods, 4, &ac, &err));
  mb_agent_curve_init(curve);
  assert_true(mb_agent_curve_push(curve, 0, 0, NAN, 0.01, NAN, 0, &err));
  assert_true(mb_agent_curve_push(curve, 42, 7, 0.02, 0.03, 1.25, 1.5, &err));
}

static void test_checkpoint_round_trip(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_agent_config cfg;
  small_config(&cfg);
  mb_rng rng;
  mb_rng_seed(&rng, 11);
  mb_agent ag;
  assert_true(mb_agent_create(&ag, &cfg, &rng, &err));
  mb_nn_module *mods[4];
  mb_agent_modules(&ag, mods);
  mb_adam opt;
  mb_agent_curve curve;
  training_extras(&ag, &opt, &curve);
  mb_agent_progress prog = TRAINING_PROGRESS;
  assert_true(isnan(curve.heuristic) && isnan(curve.random));
  curve.heuristic = 0.0625;
  curve.random = -0.015625;
  char *path = mb_test_temp_path("agent.h5");
  assert_true(mb_agent_save(path, &ag, &opt, &prog, &curve, "unit test", &err));

  mb_agent back;
  mb_adam opt2;
  memset(&opt2, 0, sizeof opt2);
  mb_agent_progress prog2;
  mb_agent_curve curve2;
  assert_true(mb_agent_load(path, &back, &opt2, &prog2, &curve2, &err));
  assert_int_equal(back.cfg.latent, 24);
  assert_int_equal(back.cfg.game.n_actions, 8);
  assert_int_equal(back.cfg.obs_dim, cfg.obs_dim);
  mb_nn_module *bm[4];
  mb_agent_modules(&back, bm);
  for (int i = 0; i < 4; i++)
    for (int32_t p = 0; p < mods[i]->n_params; p++)
      assert_true(mb_tensor_equal(&mods[i]->params[p].value, &bm[i]->params[p].value));
  assert_int_equal(prog2.steps, 42);
  assert_int_equal(prog2.episodes, 7);
  char kernel[256];
  mb_blas_describe(kernel, sizeof kernel);
  assert_string_equal(prog2.blas, kernel); /* recorded on write, read back on load */
  assert_int_equal(curve2.len, 2);
  assert_true(curve2.policy[1] == 0.03 && isnan(curve2.selfplay[0]) && curve2.loss[1] == 1.25);
  assert_true(curve2.heuristic == 0.0625 && curve2.random == -0.015625);

  /* same outputs from both */
  mb_agent_infer i1, i2;
  assert_true(mb_agent_infer_create(&i1, &ag, &err));
  assert_true(mb_agent_infer_create(&i2, &back, &err));
  float *obs = calloc((size_t)cfg.obs_dim, sizeof(float));
  for (int k = 0; k < cfg.obs_dim; k++) obs[k] = (float)mb_rng_uniform(&rng);
  float lat1[24], lat2[24], lg1[8], lg2[8], v1, v2, r1, r2, nl[24];
  assert_true(mb_agent_initial(&i1, obs, lat1, lg1, &v1, &err));
  assert_true(mb_agent_initial(&i2, obs, lat2, lg2, &v2, &err));
  assert_memory_equal(lat1, lat2, sizeof lat1);
  assert_memory_equal(lg1, lg2, sizeof lg1);
  assert_true(v1 == v2);
  for (int k = 0; k < 24; k++) assert_true(lat1[k] >= 0.0f && lat1[k] <= 1.0f);
  assert_true(mb_agent_recurrent(&i1, lat1, 3, NULL, nl, &r1, lg1, &v1, &err));
  assert_true(mb_agent_recurrent(&i2, lat2, 3, NULL, nl, &r2, lg2, &v2, &err));
  assert_true(r1 == r2 && v1 == v2 && isfinite(r1) && isfinite(v1));
  assert_false(mb_agent_recurrent(&i1, lat1, 8, NULL, nl, &r1, lg1, &v1, &err));
  assert_non_null(strstr(err.message, "action 8"));
  free(obs);
  mb_agent_infer_free(&i1);
  mb_agent_infer_free(&i2);
  mb_adam_free(&opt2);
  mb_agent_curve_free(&curve2);
  assert_true(curve2.len == 0 && isnan(curve2.heuristic)); /* freed: as after init */
  mb_agent_free(&back);

  /* the BLAS kernel the agent was trained on is recorded with its progress */
  mb_nn_file *nf = mb_nn_file_open(path, &err);
  assert_non_null(nf);
  char blas[256], here[256];
  assert_true(mb_nn_file_get_string(nf, "train.blas", blas, sizeof blas, &err));
  mb_nn_file_close(nf);
  mb_blas_describe(here, sizeof here);
  assert_string_equal(blas, here);
  assert_non_null(strstr(blas, ", core "));

  /* an older checkpoint, without the references or the BLAS kernel: the curve loads, its
   * references NaN, the kernel empty */
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(f >= 0);
  assert_true(H5Adelete(f, "curve.heuristic") >= 0 && H5Adelete(f, "curve.random") >= 0);
  assert_true(H5Adelete(f, "train.blas") >= 0);
  H5Fclose(f);
  if (!mb_agent_load(path, &back, NULL, &prog2, &curve2, &err)) fail_msg("%s", err.message);
  assert_string_equal(prog2.blas, "");
  assert_int_equal(prog2.steps, 42);
  assert_int_equal(curve2.len, 2);
  assert_true(isnan(curve2.heuristic) && isnan(curve2.random));
  mb_agent_curve_free(&curve2);
  mb_agent_free(&back);
  /* unknown references are not written (so such a file reads as NaN again), a known one is */
  curve.heuristic = NAN;
  assert_true(mb_agent_save(path, &ag, NULL, NULL, &curve, NULL, &err));
  f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(f >= 0);
  assert_int_equal(H5Aexists(f, "curve.heuristic"), 0);
  assert_int_equal(H5Aexists(f, "curve.random"), 1);
  H5Fclose(f);
  assert_true(mb_agent_load(path, &back, NULL, NULL, &curve2, &err));
  assert_true(isnan(curve2.heuristic) && curve2.random == -0.015625);
  mb_agent_curve_free(&curve2);
  mb_agent_free(&back);

  /* bad files */
  assert_false(mb_agent_load("/nonexistent/agent.h5", &back, NULL, NULL, NULL, &err));
  assert_non_null(strstr(err.message, "/nonexistent/agent.h5"));
  char *junk = mb_test_write_temp(".h5", "not hdf5 at all\n");
  assert_false(mb_agent_load(junk, &back, NULL, NULL, NULL, &err));
  assert_true(strlen(err.message) > 0);
  mb_test_temp_remove(junk);

  mb_adam_free(&opt);
  mb_agent_curve_free(&curve);
  mb_agent_free(&ag);
  mb_test_temp_remove(path);
}

/* next_buffers, demand_bins and gain_features are part of the observation layout: a checkpoint
 * keeps them, a checkpoint written before an option existed (no attribute) reads as without it, and
 * an attribute with a value the option cannot have is refused, naming it. */
static void set_next_buffers(mb_agent_config *c) { c->game.next_buffers = 2; }
static void set_gain_features(mb_agent_config *c) { c->game.gain_features = true; }
static void set_demand_bins(mb_agent_config *c) { c->game.demand_bins = 8; }

static void test_checkpoint_layout_options(void **state) {
  (void)state;
  const struct {
    const char *attr;
    void (*set)(mb_agent_config *c);
  } options[] = {{"game.next_buffers", set_next_buffers},
                 {"game.gain_features", set_gain_features},
                 {"game.demand_bins", set_demand_bins}};
  mb_error err = {{0}};
  char *path = mb_test_temp_path("agent_layout.h5");
  for (size_t o = 0; o < sizeof options / sizeof options[0]; o++) {
    mb_agent_config cfg, plain;
    small_config(&plain); /* without the options (the defaults have two of them) */
    plain.game.next_buffers = 0;
    plain.game.demand_bins = 0;
    plain.game.gain_features = false;
    plain.obs_dim = mb_game_observation_size(&plain.game);
    cfg = plain;
    options[o].set(&cfg);
    cfg.obs_dim = mb_game_observation_size(&cfg.game);
    assert_true(cfg.obs_dim > plain.obs_dim);
    mb_rng rng;
    mb_rng_seed(&rng, 3);
    mb_agent ag, back;
    assert_true(mb_agent_create(&ag, &cfg, &rng, &err));
    assert_true(mb_agent_save(path, &ag, NULL, NULL, NULL, NULL, &err));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644); /* shareable, not mkstemp's 0600 */
    assert_true(mb_agent_load(path, &back, NULL, NULL, NULL, &err));
    assert_int_equal(back.cfg.game.next_buffers, cfg.game.next_buffers);
    assert_int_equal(back.cfg.game.gain_features, cfg.game.gain_features);
    assert_int_equal(back.cfg.game.demand_bins, cfg.game.demand_bins);
    assert_int_equal(back.cfg.obs_dim, cfg.obs_dim);
    mb_agent_free(&back);
    mb_agent_free(&ag);
    /* an older checkpoint: the attribute removed from one without the option */
    assert_true(mb_agent_create(&ag, &plain, &rng, &err));
    assert_true(mb_agent_save(path, &ag, NULL, NULL, NULL, NULL, &err));
    remove_root_attr(path, options[o].attr);
    if (!mb_agent_load(path, &back, NULL, NULL, NULL, &err)) fail_msg("%s", err.message);
    assert_int_equal(back.cfg.game.next_buffers, 0);
    assert_false(back.cfg.game.gain_features);
    assert_int_equal(back.cfg.game.demand_bins, 0);
    assert_int_equal(back.cfg.obs_dim, plain.obs_dim);
    mb_agent_free(&back);
    /* a value out of range */
    assert_true(mb_agent_save(path, &ag, NULL, NULL, NULL, NULL, &err));
    overwrite_root_attr(path, options[o].attr, 999); /* outside every option's range */
    assert_false(mb_agent_load(path, &back, NULL, NULL, NULL, &err));
    if (!strstr(err.message, options[o].attr + 5)) fail_msg("%s: %s", options[o].attr, err.message);
    mb_agent_free(&ag);
  }
  mb_test_temp_remove(path);
}

/* Samples the learned model's next latent for an observation: it must lie in [0, 1] with a
 * 0 and a 1 (the dynamics ends in a minmax whatever its width). */
static void assert_next_latent_scaled(mb_agent *ag, const float *obs) {
  mb_error err = {{0}};
  mb_agent_infer inf;
  assert_true(mb_agent_infer_create(&inf, ag, &err));
  int32_t W = ag->cfg.latent, A = ag->cfg.game.n_actions;
  float *lat = calloc((size_t)W, sizeof(float)), *next = calloc((size_t)W, sizeof(float));
  float *logits = calloc((size_t)A, sizeof(float)), value, reward;
  assert_true(mb_agent_initial(&inf, obs, lat, logits, &value, &err));
  assert_true(mb_agent_recurrent(&inf, lat, 1, obs, next, &reward, logits, &value, &err));
  float lo = 1, hi = 0;
  for (int32_t k = 0; k < W; k++) {
    lo = fminf(lo, next[k]);
    hi = fmaxf(hi, next[k]);
  }
  assert_true(lo == 0.0f && hi == 1.0f && isfinite(reward) && isfinite(value));
  free(lat);
  free(next);
  free(logits);
  mb_agent_infer_free(&inf);
}

/* The dynamics' own width and depth: a checkpoint keeps them, one written before them loads
 * as wide and deep as the other modules, a bad value is refused naming it; mb_agent_new_model
 * replaces the dynamics and reward head, keeps the representation and prediction networks,
 * and leaves the agent as it was when the new shape is bad. */
static void test_dynamics_shape(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_agent_config cfg;
  small_config(&cfg);
  mb_rng rng;
  mb_rng_seed(&rng, 12);
  mb_agent plain, wide, back;
  assert_true(mb_agent_create(&plain, &cfg, &rng, &err));
  cfg.dyn_width = 40;
  cfg.dyn_blocks = 2;
  assert_true(mb_agent_create(&wide, &cfg, &rng, &err));
  assert_int_equal(mb_agent_dyn_width(&wide.cfg), 40);
  assert_int_equal(mb_agent_dyn_blocks(&plain.cfg), plain.cfg.blocks);
  assert_int_equal(wide.dyn.out_dim, cfg.latent);
  assert_true(mb_nn_param_count(&wide.dyn) > mb_nn_param_count(&plain.dyn));
  float *obs = calloc((size_t)cfg.obs_dim, sizeof(float));
  for (int k = 0; k < cfg.obs_dim; k++) obs[k] = (float)mb_rng_uniform(&rng);
  assert_next_latent_scaled(&wide, obs);

  char *path = mb_test_temp_path("agent_dyn.h5");
  assert_true(mb_agent_save(path, &wide, NULL, NULL, NULL, NULL, &err));
  assert_true(mb_agent_load(path, &back, NULL, NULL, NULL, &err));
  assert_int_equal(back.cfg.dyn_width, 40);
  assert_int_equal(back.cfg.dyn_blocks, 2);
  for (int32_t p = 0; p < wide.dyn.n_params; p++)
    assert_true(mb_tensor_equal(&wide.dyn.params[p].value, &back.dyn.params[p].value));
  mb_agent_free(&back);
  /* written before the attributes: the dynamics as the others */
  assert_true(mb_agent_save(path, &plain, NULL, NULL, NULL, NULL, &err));
  remove_root_attr(path, "cfg.dyn_width");
  remove_root_attr(path, "cfg.dyn_blocks");
  if (!mb_agent_load(path, &back, NULL, NULL, NULL, &err)) fail_msg("%s", err.message);
  assert_true(back.cfg.dyn_width == 0 && back.cfg.dyn_blocks == 0);
  mb_agent_free(&back);
  /* a width out of range */
  assert_true(mb_agent_save(path, &plain, NULL, NULL, NULL, NULL, &err));
  overwrite_root_attr(path, "cfg.dyn_width", 2);
  assert_false(mb_agent_load(path, &back, NULL, NULL, NULL, &err));
  assert_non_null(strstr(err.message, "dyn_width 2"));

  /* a new learned model */
  mb_agent old;
  mb_agent_config plain_cfg = plain.cfg;
  mb_rng_seed(&rng, 12);
  assert_true(mb_agent_create(&old, &plain_cfg, &rng, &err)); /* the same weights as plain */
  assert_true(mb_agent_new_model(&plain, 40, 2, &rng, &err));
  assert_true(plain.cfg.dyn_width == 40 && plain.cfg.dyn_blocks == 2);
  assert_int_equal(mb_agent_param_count(&plain), mb_agent_param_count(&wide));
  /* the count is the four networks' (what `show` and the progress line report) */
  assert_int_equal(mb_agent_param_count(&plain),
                   mb_nn_param_count(&plain.repr) + mb_nn_param_count(&plain.dyn) +
                       mb_nn_param_count(&plain.reward) + mb_nn_param_count(&plain.pred));
  for (int32_t p = 0; p < old.repr.n_params; p++)
    assert_true(mb_tensor_equal(&old.repr.params[p].value, &plain.repr.params[p].value));
  for (int32_t p = 0; p < old.pred.n_params; p++)
    assert_true(mb_tensor_equal(&old.pred.params[p].value, &plain.pred.params[p].value));
  assert_next_latent_scaled(&plain, obs);
  assert_false(mb_agent_new_model(&plain, 2, 1, &rng, &err));
  assert_non_null(strstr(err.message, "dyn_width 2"));
  assert_true(plain.cfg.dyn_width == 40 && plain.cfg.dyn_blocks == 2);
  assert_next_latent_scaled(&plain, obs);
  mb_agent_free(&old);
  free(obs);
  mb_test_temp_remove(path);
  mb_agent_free(&wide);
  mb_agent_free(&plain);
}

/* The size limits of agent.h are the checks' own: each end is accepted, one past it refused
 * with the field named (dyn_width and dyn_blocks also take 0: "as the other modules"). */
static void test_size_limits(void **state) {
  (void)state;
  static const struct {
    const char *name;
    size_t off;
    int32_t lo, hi;
    bool zero; /* 0 is "as the other modules" */
  } sizes[] = {
      {"latent", offsetof(mb_agent_config, latent), MB_AGENT_MIN_WIDTH, MB_AGENT_MAX_WIDTH, 0},
      {"blocks", offsetof(mb_agent_config, blocks), 0, MB_AGENT_MAX_BLOCKS, 0},
      {"dyn_width", offsetof(mb_agent_config, dyn_width), MB_AGENT_MIN_WIDTH, MB_AGENT_MAX_WIDTH,
       1},
      {"dyn_blocks", offsetof(mb_agent_config, dyn_blocks), 1, MB_AGENT_MAX_BLOCKS, 1},
      {"support", offsetof(mb_agent_config, support), MB_AGENT_MIN_SUPPORT, MB_AGENT_MAX_SUPPORT,
       0},
      {"n_actions", offsetof(mb_agent_config, game.n_actions), MB_AGENT_MIN_ACTIONS,
       MB_AGENT_MAX_ACTIONS, 0},
      {"next_buffers", offsetof(mb_agent_config, game.next_buffers), 0, MB_AGENT_MAX_NEXT_BUFFERS,
       0},
      {"demand_bins", offsetof(mb_agent_config, game.demand_bins), 0, MB_AGENT_MAX_DEMAND_BINS, 0},
  };
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    const int32_t lo = sizes[i].lo, hi = sizes[i].hi, values[] = {lo, hi, lo - 1, hi + 1, 0};
    for (int j = 0; j < 5; j++) {
      int32_t v = values[j];
      mb_agent_config c;
      small_config(&c);
      *(int32_t *)((char *)&c + sizes[i].off) = v;
      c.obs_dim = mb_game_observation_size(&c.game);
      mb_error err = {{0}};
      bool want = (v >= lo && v <= hi) || (v == 0 && sizes[i].zero);
      if (mb_agent_config_check(&c, &err) != want)
        fail_msg("%s %d: %s", sizes[i].name, v, want ? err.message : "accepted");
      if (!want && !strstr(err.message, sizes[i].name))
        fail_msg("%s %d: the message does not name it: %s", sizes[i].name, v, err.message);
    }
  }
  /* the support's ends and the value scale: support_min <= 0, support_max > 0, scale > 0;
   * NaN refused */
  static const struct {
    size_t off;
    float value;
    bool want;
  } reals[] = {
      {offsetof(mb_agent_config, support_min), 0.0f, true},
      {offsetof(mb_agent_config, support_min), 1e-6f, false},
      {offsetof(mb_agent_config, support_min), NAN, false},
      {offsetof(mb_agent_config, support_max), 1e-6f, true},
      {offsetof(mb_agent_config, support_max), 0.0f, false},
      {offsetof(mb_agent_config, support_max), NAN, false},
      {offsetof(mb_agent_config, value_scale), 1e-6f, true},
      {offsetof(mb_agent_config, value_scale), 0.0f, false},
      {offsetof(mb_agent_config, value_scale), NAN, false},
  };
  for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
    mb_agent_config c;
    small_config(&c);
    *(float *)((char *)&c + reals[i].off) = reals[i].value;
    mb_error err = {{0}};
    if (mb_agent_config_check(&c, &err) != reals[i].want)
      fail_msg("real %zu = %g: %s", i, (double)reals[i].value,
               reals[i].want ? err.message : "accepted");
    if (!reals[i].want) assert_non_null(strstr(err.message, "support_min"));
  }
}

/* Occurrences of needle in text. */
static int occurrences(const char *text, const char *needle) {
  int n = 0;
  for (const char *at = strstr(text, needle); at; at = strstr(at + 1, needle)) n++;
  return n;
}

/* A checkpoint damaged in each part the reader looks at is refused with a message that names
 * the file once and what is wrong (it named it twice, "a.h5: a.h5: ...", for everything read
 * after the config). */
static void test_checkpoint_errors_name_the_file_once(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_agent_config cfg;
  small_config(&cfg);
  mb_rng rng;
  mb_rng_seed(&rng, 13);
  mb_agent ag;
  assert_true(mb_agent_create(&ag, &cfg, &rng, &err));
  mb_adam opt;
  mb_agent_curve curve;
  training_extras(&ag, &opt, &curve);
  mb_agent_progress prog = TRAINING_PROGRESS;
  char *path = mb_test_temp_path("agent_damaged.h5");
  /* each damage: an attribute deleted, or a dataset deleted or overwritten (its checksum then
   * no longer matches), and what the message must say about it */
  static const struct {
    const char *attr, *dataset;
    bool overwrite;
    const char *want;
  } cases[] = {
      {"format", NULL, false,
       ": not a mallocMuZero agent checkpoint: root attribute 'format' is missing"},
      {"cfg.latent", NULL, false, "cfg.latent"},
      {"train.steps", NULL, false, "train.steps"},
      {NULL, "/repr/l0.weight", true, "/repr/l0.weight: the data do not match their SHA-256"},
      {NULL, "/reward/l0.bias", false, "reward"},
      {NULL, "/adam/dyn/l0.bias.m", false, "l0.bias.m"},
      {NULL, "/series/curve_loss", false, "curve_loss"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_true(mb_agent_save(path, &ag, &opt, &prog, &curve, "unit test", &err));
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    if (cases[i].attr) {
      assert_true(H5Adelete(f, cases[i].attr) >= 0);
    } else if (cases[i].overwrite) {
      hid_t ds = H5Dopen2(f, cases[i].dataset, H5P_DEFAULT);
      hid_t space = H5Dget_space(ds);
      float *x = calloc((size_t)H5Sget_simple_extent_npoints(space), sizeof *x);
      assert_true(ds >= 0 && x &&
                  H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
      free(x);
      H5Sclose(space);
      H5Dclose(ds);
    } else {
      assert_true(H5Ldelete(f, cases[i].dataset, H5P_DEFAULT) >= 0);
    }
    H5Fclose(f);
    mb_agent back;
    mb_adam opt2;
    memset(&opt2, 0, sizeof opt2);
    mb_agent_progress prog2;
    mb_agent_curve curve2;
    assert_false(mb_agent_load(path, &back, &opt2, &prog2, &curve2, &err));
    if (occurrences(err.message, path) != 1 || strncmp(err.message, path, strlen(path)) ||
        !strstr(err.message, cases[i].want))
      fail_msg("%s: %s", cases[i].attr ? cases[i].attr : cases[i].dataset, err.message);
  }
  mb_adam_free(&opt);
  mb_agent_curve_free(&curve);
  mb_agent_free(&ag);
  mb_test_temp_remove(path);
}

/* Reward shaping and the signed support it needs: a checkpoint keeps both, one written before
 * them (no attributes) reads as unshaped on [0, support_max], and a value neither can have is
 * refused, naming it. */
static void test_checkpoint_shaping(void **state) {
  (void)state;
  mb_error err = {{0}};
  char *path = mb_test_temp_path("agent_shaping.h5");
  mb_agent_config cfg;
  small_config(&cfg);
  cfg.game.shaping = 0.5;
  cfg.support_min = -cfg.support_max;
  mb_rng rng;
  mb_rng_seed(&rng, 5);
  mb_agent ag, back;
  assert_true(mb_agent_create(&ag, &cfg, &rng, &err));
  assert_true(ag.sup.lo == cfg.support_min);
  assert_true(mb_agent_save(path, &ag, NULL, NULL, NULL, NULL, &err));
  assert_true(mb_agent_load(path, &back, NULL, NULL, NULL, &err));
  assert_true(back.cfg.game.shaping == 0.5);
  assert_true(back.cfg.support_min == cfg.support_min);
  assert_true(back.sup.lo == cfg.support_min);
  mb_agent_free(&back);
  const char *attrs[] = {"game.shaping", "cfg.support_min"}, *names[] = {"shaping", "support_min"};
  const double bad[] = {101, 1};
  for (int i = 0; i < 2; i++) {
    assert_true(mb_agent_save(path, &ag, NULL, NULL, NULL, NULL, &err));
    overwrite_root_attr(path, attrs[i], bad[i]);
    assert_false(mb_agent_load(path, &back, NULL, NULL, NULL, &err));
    if (!strstr(err.message, names[i]) || !strstr(err.message, path))
      fail_msg("%s: %s", attrs[i], err.message);
  }
  assert_true(mb_agent_save(path, &ag, NULL, NULL, NULL, NULL, &err));
  for (int i = 0; i < 2; i++) remove_root_attr(path, attrs[i]);
  if (!mb_agent_load(path, &back, NULL, NULL, NULL, &err)) fail_msg("%s", err.message);
  assert_true(back.cfg.game.shaping == 0);
  assert_true(back.sup.lo == 0);
  mb_agent_free(&back);
  mb_agent_free(&ag);
  mb_test_temp_remove(path);
}

/* The dynamics' action features: the input grows by MB_AGENT_ACTION_FEATURES columns; x(a) is
 * a candidate slot's fields of a real observation (zeros for slow memory or a learned state;
 * nothing without the option); a checkpoint keeps the option (one written before it reads as
 * off, a bad value is refused by name); and the learned search gives them to the root's
 * children: with their weights zeroed its values and policy change. */
static void test_action_features(void **state) {
  (void)state;
  enum { F = MB_AGENT_ACTION_FEATURES };
  mb_error err = {{0}};
  mb_agent_config off, on;
  small_config(&off);
  on = off;
  on.action_features = true;
  const int32_t W = off.latent, A = off.game.n_actions, D = off.obs_dim;
  assert_int_equal(mb_agent_dynamics_inputs(&off), W + A);
  assert_int_equal(mb_agent_dynamics_inputs(&on), W + A + F);
  mb_rng rng;
  mb_rng_seed(&rng, 3);
  mb_agent a_off, a_on;
  assert_true(mb_agent_create(&a_off, &off, &rng, &err));
  assert_true(mb_agent_create(&a_on, &on, &rng, &err));
  assert_int_equal(mb_agent_param_count(&a_on) - mb_agent_param_count(&a_off), (int64_t)F * W);

  float *obs = malloc((size_t)D * sizeof *obs);
  assert_non_null(obs);
  for (int32_t i = 0; i < D; i++) obs[i] = 0.001f + (float)(i % 97) / 97.0f;
  const float *slot2 =
      obs + mb_game_candidate_block_offset(&on.game) + 2 * MB_GAME_OBS_PER_CANDIDATE;
  float x[F], zeros[F] = {0}, fives[F];
  for (int i = 0; i < F; i++) fives[i] = 5.0f;
  mb_agent_action_features(&on, obs, 2, x);
  assert_memory_equal(x, slot2, sizeof x);
  mb_agent_action_features(&on, obs, A - 1, x); /* slow memory */
  assert_memory_equal(x, zeros, sizeof x);
  memcpy(x, fives, sizeof x);
  mb_agent_action_features(&on, NULL, 2, x); /* a learned state */
  assert_memory_equal(x, zeros, sizeof x);
  memcpy(x, fives, sizeof x);
  mb_agent_action_features(&off, obs, 2, x); /* without the option: nothing written */
  assert_memory_equal(x, fives, sizeof x);

  /* the dynamics reads them for a candidate slot only, and only with the option */
  float lat[64], n1[64], n2[64], lg[16], r, v;
  assert_true(W <= 64 && A <= 16);
  mb_agent_infer inf;
  assert_true(mb_agent_infer_create(&inf, &a_on, &err));
  assert_true(mb_agent_initial(&inf, obs, lat, lg, &v, &err));
  assert_true(mb_agent_recurrent(&inf, lat, 2, obs, n1, &r, lg, &v, &err));
  assert_true(mb_agent_recurrent(&inf, lat, 2, NULL, n2, &r, lg, &v, &err));
  assert_memory_not_equal(n1, n2, (size_t)W * sizeof *n1);
  assert_true(mb_agent_recurrent(&inf, lat, A - 1, obs, n1, &r, lg, &v, &err));
  assert_true(mb_agent_recurrent(&inf, lat, A - 1, NULL, n2, &r, lg, &v, &err));
  assert_memory_equal(n1, n2, (size_t)W * sizeof *n1);
  mb_agent_infer_free(&inf);
  assert_true(mb_agent_infer_create(&inf, &a_off, &err));
  assert_true(mb_agent_initial(&inf, obs, lat, lg, &v, &err));
  assert_true(mb_agent_recurrent(&inf, lat, 2, obs, n1, &r, lg, &v, &err));
  assert_true(mb_agent_recurrent(&inf, lat, 2, NULL, n2, &r, lg, &v, &err));
  assert_memory_equal(n1, n2, (size_t)W * sizeof *n1);
  mb_agent_infer_free(&inf);

  /* checkpoints */
  char *path = mb_test_temp_path("agent_action_features.h5");
  mb_agent back;
  assert_true(mb_agent_save(path, &a_on, NULL, NULL, NULL, NULL, &err));
  assert_true(mb_agent_load(path, &back, NULL, NULL, NULL, &err));
  assert_true(back.cfg.action_features);
  assert_int_equal(mb_agent_param_count(&back), mb_agent_param_count(&a_on));
  mb_agent_free(&back);
  overwrite_root_attr(path, "cfg.action_features", 2);
  assert_false(mb_agent_load(path, &back, NULL, NULL, NULL, &err));
  if (!strstr(err.message, "cfg.action_features = 2") || !strstr(err.message, path))
    fail_msg("%s", err.message);
  assert_true(mb_agent_save(path, &a_off, NULL, NULL, NULL, NULL, &err));
  remove_root_attr(path, "cfg.action_features");
  if (!mb_agent_load(path, &back, NULL, NULL, NULL, &err)) fail_msg("%s", err.message);
  assert_false(back.cfg.action_features);
  mb_agent_free(&back);
  mb_test_temp_remove(path);

  /* the learned search: the same decision with the features' weights zeroed differs */
  mb_agent blind;
  assert_true(mb_agent_create(&blind, &on, &rng, &err));
  assert_true(mb_agent_copy_weights(&blind, &a_on, &err));
  mb_tensor *w0 = &blind.dyn.params[0].value;
  memset(mb_tensor_row(w0, W + A), 0, (size_t)F * (size_t)w0->cols * sizeof(float));
  mb_hardware hw;
  mb_workload *w = small_workload(700, 40, &hw);
  mb_search_config sc;
  mb_search_config_default(&sc);
  sc.simulations = 8;
  float policy[2][16], value[2];
  const mb_agent *agents[2] = {&a_on, &blind};
  for (int i = 0; i < 2; i++) {
    mb_game *g = mb_game_new(w, &hw, &on.game, &err);
    mb_player *p = mb_player_create(agents[i], sc.simulations, &err);
    assert_non_null(g);
    assert_non_null(p);
    mb_player_set_scale(p, mb_return_scale(w, &hw, g));
    mb_rng r2;
    mb_rng_seed(&r2, 17);
    mb_player_decision d;
    assert_true(mb_player_decide_record(p, g, &sc, false, true, &r2, &d, &err));
    memcpy(policy[i], d.policy, (size_t)A * sizeof(float));
    value[i] = d.value;
    mb_player_free(p);
    mb_game_free(g);
  }
  assert_true(value[0] != value[1] || memcmp(policy[0], policy[1], (size_t)A * sizeof(float)));
  mb_workload_free(w);
  mb_agent_free(&blind);
  free(obs);
  mb_agent_free(&a_on);
  mb_agent_free(&a_off);
}

/* The "S of D decisions searched" of a mallocMuZero solver's note. */
static void note_searched(const char *note, long long *searched, long long *decisions) {
  const char *at = strstr(note, " decisions searched");
  assert_non_null(at);
  while (at > note && at[-1] != ':') at--;
  if (sscanf(at, " %lld of %lld", searched, decisions) != 2) fail_msg("note: %s", note);
}

/* The mallocMuZero solvers: valid plays, and a note, stats and curve that say what was played. */
static void test_solvers_valid(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_agent_config cfg;
  small_config(&cfg);
  mb_rng rng;
  mb_rng_seed(&rng, 3);
  mb_agent ag;
  assert_true(mb_agent_create(&ag, &cfg, &rng, &err));
  mb_agent_progress prog = {0};
  mb_agent_curve curve;
  mb_agent_curve_init(&curve);
  assert_true(mb_agent_curve_push(&curve, 0, 0, NAN, 0.0, NAN, 0, &err));
  assert_true(mb_agent_curve_push(&curve, 500, 20, 0.1, 0.0625, 1.5, 3, &err));
  curve.heuristic = 0.25;
  char *path = mb_test_temp_path("solver-agent.h5");
  assert_true(mb_agent_save(path, &ag, NULL, &prog, &curve, NULL, &err));
  const char *names[2] = {"mallocmuzero", "mallocmuzero-exact"};
  for (int k = 0; k < 2; k++) {
    const mb_solver *s = mb_solver_find(names[k]);
    assert_non_null(s);
    for (uint64_t seed = 1; seed <= 3; seed++) {
      mb_hardware hw;
      mb_workload *w = small_workload(seed, 30, &hw);
      mb_solver_options opt;
      mb_solver_options_default(&opt);
      opt.agent_path = path;
      opt.simulations = 4;
      opt.seed = seed;
      mb_assignment *a = mb_assignment_new(w->n_buffers);
      mb_solver_stats st = {0};
      errno = ENOENT; /* a stale errno does not make the checkpoint missing */
      assert_true(s->solve(w, &hw, &opt, &rng, a, &st, &err));
      assert_true(mb_validate(w, &hw, a, &err));
      /* every decision searched within the budget, 4 simulations each */
      long long searched = -1, decisions = -1;
      note_searched(st.note, &searched, &decisions);
      assert_true(decisions > 0 && searched == decisions);
      assert_false(st.budget_hit);
      assert_null(strstr(st.note, "budget hit"));
      assert_int_equal(st.iterations, 4 * decisions);
      assert_null(strstr(st.note, "pUCT"));
      /* the checkpoint's curve and its reference */
      assert_int_equal(st.curve_len, 2);
      assert_true(st.curve_step[0] == 0 && st.curve_step[1] == 500);
      assert_true(st.curve_return[0] == 0 && st.curve_return[1] == 0.0625);
      assert_true(st.curve_heuristic == 0.25);
      mb_solver_stats_free(&st);
      /* a budget gone before the first decision: the raw policy plays them all, and says so */
      opt.budget_seconds = 1e-9;
      assert_true(s->solve(w, &hw, &opt, &rng, a, &st, &err));
      assert_true(mb_validate(w, &hw, a, &err));
      note_searched(st.note, &searched, &decisions);
      assert_true(searched == 0 && decisions > 0 && st.budget_hit && st.iterations == 0);
      assert_non_null(strstr(st.note, "(budget hit: the rest played by the raw policy net)"));
      mb_solver_stats_free(&st);
      opt.budget_seconds = 0;
      /* pUCT instead of Gumbel MuZero: still the agent's own valid play, searched with pUCT's
       * constants; an unknown kind is an error, not a silent Gumbel search */
      opt.search = MB_SOLVER_SEARCH_PUCT;
      assert_true(s->solve(w, &hw, &opt, &rng, a, &st, &err));
      assert_true(mb_validate(w, &hw, a, &err));
      assert_non_null(strstr(st.note, "search (pUCT), 4 sims/decision, c1 1.25, c2 19652"));
      mb_solver_stats_free(&st);
      opt.search = 7;
      assert_false(s->solve(w, &hw, &opt, &rng, a, &st, &err));
      assert_non_null(strstr(err.message, "search 7: expected gumbel (0) or puct (1)"));
      mb_solver_stats_free(&st);
      opt.search = MB_SOLVER_SEARCH_GUMBEL;
      if (seed == 1) {
        /* the search options: each default is the evaluation setting (search.h), each option
         * given replaces its default alone */
        const char *model = k ? "exact-game" : "learned-model";
        struct {
          int32_t sims;
          double c_scale;
          int32_t leaf_rollout;
          char note[96];
        } settings[] = {{0, 0, 0, ""}, {4, 2, MB_SOLVER_NO_LEAF_ROLLOUT, ""}, {4, 0, 5, ""}};
        snprintf(settings[0].note, sizeof settings[0].note,
                 "%s search, %d sims/decision, c_scale 1, Q spread floor 0.1, leaf rollout %d:",
                 model, MB_SEARCH_EVAL_SIMULATIONS, k ? MB_SEARCH_EVAL_EXACT_LEAF_ROLLOUT : 0);
        snprintf(
            settings[1].note, sizeof settings[1].note,
            "%s search, 4 sims/decision, c_scale 2, Q spread floor 0.1, leaf rollout 0:", model);
        snprintf(
            settings[2].note, sizeof settings[2].note,
            "%s search, 4 sims/decision, c_scale 1, Q spread floor 0.1, leaf rollout 5:", model);
        for (int i = 0; i < 3; i++) {
          opt.simulations = settings[i].sims;
          opt.c_scale = settings[i].c_scale;
          opt.leaf_rollout = settings[i].leaf_rollout;
          assert_true(s->solve(w, &hw, &opt, &rng, a, &st, &err));
          if (!strstr(st.note, settings[i].note))
            fail_msg("note '%s' lacks '%s'", st.note, settings[i].note);
          mb_solver_stats_free(&st);
        }
        opt.simulations = 4;
        opt.c_scale = 0;
        opt.leaf_rollout = 0;
        /* per-workload fine-tuning: still the agent's own (valid) play, the best of the
         * episodes played (the first one and those during fine-tuning), and the assignment
         * returned is that best episode's */
        long long updates = 0;
        int plays = 0;
        double first = -1, best = -1;
        /* a budget of wall time: on a starved machine (sanitizers, nice 19 beside training
         * runs) half a second can pass before the first update, so the budget doubles until
         * one lands; a fine-tuning that never trains still fails at 8 s */
        for (double budget = 0.5; updates == 0 && budget <= 8; budget *= 2) {
          mb_solver_stats_free(&st); /* the previous try's, if any (freeing twice is safe) */
          opt.finetune_seconds = budget;
          assert_true(s->solve(w, &hw, &opt, &rng, a, &st, &err));
          assert_true(mb_validate(w, &hw, a, &err));
          const char *ft = strstr(st.note, "fine-tuned");
          assert_non_null(ft);
          assert_int_equal(sscanf(ft, "fine-tuned %lld updates, %d more plays: first %lf, best %lf",
                                  &updates, &plays, &first, &best),
                           4);
        }
        assert_true(updates > 0 && plays >= 1 && best >= first);
        bool *in_fast = malloc((size_t)w->n_buffers * sizeof *in_fast);
        mb_assignment_fast_flags(a, in_fast);
        double t_slow = (double)mb_slow_time(w, &hw);
        double got = (t_slow - (double)mb_program_time(w, &hw, in_fast)) / t_slow;
        assert_true(fabs(got - best) < 1e-4);
        free(in_fast);
        mb_solver_stats_free(&st);
        opt.finetune_seconds = 0;
        /* fine-tuning by updates: exactly that many, 8 plays besides the first, and the same
         * episode (and note) from the same seed: reproducible, unlike seconds */
        opt.finetune_steps = 40;
        char notes[2][sizeof st.note];
        mb_assignment *again = mb_assignment_new(w->n_buffers);
        for (int run = 0; run < 2; run++) {
          mb_rng r;
          mb_rng_seed(&r, 99);
          assert_true(s->solve(w, &hw, &opt, &r, run ? again : a, &st, &err));
          memcpy(notes[run], st.note, sizeof st.note);
          mb_solver_stats_free(&st);
        }
        assert_non_null(strstr(notes[0], "fine-tuned 40 updates, 8 more plays"));
        /* the plays during fine-tuning search too: the best one searched every decision */
        note_searched(notes[0], &searched, &decisions);
        assert_true(decisions > 0 && searched == decisions);
        assert_string_equal(notes[0], notes[1]);
        assert_memory_equal(a->offset, again->offset, (size_t)w->n_buffers * sizeof *a->offset);
        assert_true(mb_validate(w, &hw, a, &err));
        mb_assignment_free(again);
        /* plays every N/8 updates also when that is not a multiple of the usual evaluation
         * period (100): 7 during fine-tuning, 1 at its end */
        opt.finetune_steps = 808;
        assert_true(s->solve(w, &hw, &opt, &rng, a, &st, &err));
        assert_non_null(strstr(st.note, "fine-tuned 808 updates, 8 more plays"));
        note_searched(st.note, &searched, &decisions);
        assert_true(decisions > 0 && searched == decisions);
        mb_solver_stats_free(&st);
        /* fewer updates than plays: one play after each */
        opt.finetune_steps = 4;
        assert_true(s->solve(w, &hw, &opt, &rng, a, &st, &err));
        assert_non_null(strstr(st.note, "fine-tuned 4 updates, 4 more plays"));
        note_searched(st.note, &searched, &decisions);
        assert_true(decisions > 0 && searched == decisions);
        mb_solver_stats_free(&st);
        /* a workload without a decision (fast memory smaller than every buffer): nothing to
         * fine-tune on, said in the note (fine-tuning by updates would otherwise never end) */
        mb_hardware none = mb_hardware_with_capacity(&hw, 1);
        assert_true(s->solve(w, &none, &opt, &rng, a, &st, &err));
        assert_non_null(strstr(st.note, "0 of 0 decisions searched"));
        assert_non_null(strstr(st.note, "not fine-tuned: no decision to learn from"));
        mb_solver_stats_free(&st);
        /* seconds and updates together: refused, naming both */
        opt.finetune_seconds = 1;
        assert_false(s->solve(w, &hw, &opt, &rng, a, &st, &err));
        assert_non_null(strstr(err.message, "give one of them"));
        opt.finetune_seconds = 0;
        opt.finetune_steps = 0;
      }
      /* a missing checkpoint: a clear error that says how to make one */
      opt.agent_path = "/nonexistent/agent.h5";
      assert_false(s->solve(w, &hw, &opt, &rng, a, &st, &err));
      assert_non_null(strstr(err.message, "mallocbench train"));
      mb_assignment_free(a);
      mb_workload_free(w);
    }
  }
  mb_agent_curve_free(&curve);
  mb_agent_free(&ag);
  mb_test_temp_remove(path);
}

static void test_exact_search_beats_raw_policy(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_agent_config cfg;
  small_config(&cfg);
  mb_rng rng;
  mb_rng_seed(&rng, 17);
  mb_agent ag;
  assert_true(mb_agent_create(&ag, &cfg, &rng, &err));
  mb_player *p = mb_player_create(&ag, 32, &err);
  assert_non_null(p);
  mb_search_config sc;
  mb_search_config_default(&sc);
  sc.gumbel_noise = false;
  sc.simulations = 32;
  double raw = 0, searched_ret = 0;
  for (uint64_t seed = 1; seed <= 4; seed++) {
    mb_hardware hw;
    mb_workload *w = small_workload(100 + seed, 40, &hw);
    mb_game *g = mb_game_new(w, &hw, &cfg.game, &err);
    assert_non_null(g);
    int64_t s = 0, d = 0;
    mb_player_set_scale(p, mb_return_scale(w, &hw, g));
    /* deadline in the past: the raw policy plays every decision */
    assert_true(mb_player_play(p, g, &sc, true, 1e-9, &rng, &s, &d, &err));
    assert_int_equal(s, 0);
    raw += mb_game_return(g);
    assert_true(mb_player_play(p, g, &sc, true, 0, &rng, &s, &d, &err));
    assert_int_equal(s, d);
    searched_ret += mb_game_return(g);
    mb_game_free(g);
    mb_workload_free(w);
  }
  print_message("exact search %.4f vs raw policy %.4f (sum of returns)\n", searched_ret, raw);
  assert_true(searched_ret > raw);
  mb_player_free(p);
  mb_agent_free(&ag);
}

/* Plays one episode by mb_player_decide, recording the actions; returns how many. */
static int32_t play_actions(mb_player *p, mb_game *g, const mb_search_config *sc, bool exact,
                            int32_t *actions, int32_t cap) {
  mb_error err = {{0}};
  mb_rng rng;
  mb_rng_seed(&rng, 3);
  mb_game_reset(g);
  int32_t n = 0;
  while (!mb_game_done(g)) {
    int32_t a;
    assert_true(mb_player_decide(p, g, sc, exact, &rng, &a, &err));
    assert_true(n < cap);
    actions[n++] = a;
    assert_true(mb_game_step(g, a, NULL, &err));
  }
  return n;
}

/* A player of `ag` with the reward scale and oracle parts given. */
static mb_player *oracle_player(const mb_agent *ag, double scale, unsigned parts) {
  mb_error err = {{0}};
  mb_player *p = mb_player_create(ag, 16, &err);
  assert_non_null(p);
  mb_player_set_scale(p, scale);
  mb_player_set_oracle(p, parts);
  return p;
}

/* The learned search with every oracle part is the exact search, move for move; without any it
 * is the plain learned search; exact masks and ends keep every expanded path in the real game. */
static void test_oracle_parts(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_agent_config cfg;
  small_config(&cfg);
  mb_rng rng;
  mb_rng_seed(&rng, 23);
  mb_agent ag;
  assert_true(mb_agent_create(&ag, &cfg, &rng, &err));
  mb_search_config sc;
  mb_search_config_evaluation(&sc, false);
  sc.simulations = 16;
  enum { CAP = 256 };
  int32_t ref[CAP], got[CAP];
  int64_t off_values = 0;
  for (uint64_t seed = 1; seed <= 3; seed++) {
    mb_hardware hw;
    mb_workload *w = small_workload(300 + seed, 40, &hw);
    mb_game *g = mb_game_new(w, &hw, &cfg.game, &err);
    assert_non_null(g);
    double scale = mb_return_scale(w, &hw, g);
    mb_player *plain = mb_player_create(&ag, 16, &err), *oracle = oracle_player(&ag, scale, 0);
    assert_non_null(plain);
    mb_player_set_scale(plain, scale);
    int64_t nodes, off;
    /* no parts: the learned search itself, and no replays counted */
    int32_t n = play_actions(plain, g, &sc, false, ref, CAP);
    assert_int_equal(play_actions(oracle, g, &sc, false, got, CAP), n);
    assert_memory_equal(ref, got, (size_t)n * sizeof *ref);
    mb_player_oracle_stats(oracle, &nodes, &off);
    assert_int_equal(nodes, 0);
    /* all parts: the exact search's moves */
    n = play_actions(plain, g, &sc, true, ref, CAP);
    mb_player_set_oracle(oracle, MB_ORACLE_ALL);
    assert_int_equal(play_actions(oracle, g, &sc, false, got, CAP), n);
    assert_memory_equal(ref, got, (size_t)n * sizeof *ref);
    mb_player_oracle_stats(oracle, &nodes, &off);
    assert_true(nodes > 0);
    assert_int_equal(off, 0);
    /* exact masks and ends: every path stays legal */
    mb_player_free(oracle);
    oracle = oracle_player(&ag, scale, MB_ORACLE_MASKS | MB_ORACLE_TERMINALS);
    play_actions(oracle, g, &sc, false, got, CAP);
    mb_player_oracle_stats(oracle, &nodes, &off);
    assert_true(nodes > 0);
    assert_int_equal(off, 0);
    /* values alone: the untrained prior leads the learned model off the real game's paths */
    mb_player_free(oracle);
    oracle = oracle_player(&ag, scale, MB_ORACLE_VALUES);
    play_actions(oracle, g, &sc, false, got, CAP);
    mb_player_oracle_stats(oracle, &nodes, &off);
    assert_true(nodes > 0 && off <= nodes);
    off_values += off;
    /* values and rewards at weight 0 keep the learned ones: the plain learned search's moves;
     * at weight 1 (the default, set explicitly) every part is the real game's again */
    n = play_actions(plain, g, &sc, false, ref, CAP);
    mb_player_free(oracle);
    oracle = oracle_player(&ag, scale, MB_ORACLE_VALUES | MB_ORACLE_REWARDS);
    mb_player_set_oracle_weight(oracle, 0);
    assert_int_equal(play_actions(oracle, g, &sc, false, got, CAP), n);
    assert_memory_equal(ref, got, (size_t)n * sizeof *ref);
    n = play_actions(plain, g, &sc, true, ref, CAP);
    mb_player_set_oracle(oracle, MB_ORACLE_ALL);
    mb_player_set_oracle_weight(oracle, 1);
    assert_int_equal(play_actions(oracle, g, &sc, false, got, CAP), n);
    assert_memory_equal(ref, got, (size_t)n * sizeof *ref);
    mb_player_free(oracle);
    mb_player_free(plain);
    mb_game_free(g);
    mb_workload_free(w);
  }
  assert_true(off_values > 0);
  mb_agent_free(&ag);
}

/* A raw-policy decision records the state's observation and mask, a one-hot policy on the
 * network's greedy move and the network's value; mb_player_raw_action picks the same move from
 * the observation alone and leaves the record alone; the reward unit is 1 / R_ref. */
static void test_player_decision(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_agent_config cfg;
  small_config(&cfg);
  mb_rng rng;
  mb_rng_seed(&rng, 31);
  mb_agent ag;
  assert_true(mb_agent_create(&ag, &cfg, &rng, &err));
  mb_agent_infer inf;
  assert_true(mb_agent_infer_create(&inf, &ag, &err));
  mb_hardware hw;
  mb_workload *w = small_workload(700, 40, &hw);
  mb_game *g = mb_game_new(w, &hw, &cfg.game, &err);
  mb_player *p = mb_player_create(&ag, 4, &err);
  assert_non_null(g);
  assert_non_null(p);
  double scale = mb_return_scale(w, &hw, g);
  assert_true(scale > 0);
  mb_player_set_scale(p, scale);
  assert_true(fabs(mb_player_reward_unit(p) * scale - 1) < 1e-12);
  const int32_t A = cfg.game.n_actions, D = cfg.obs_dim;
  float *obs = malloc((size_t)D * sizeof *obs), logits[64], v;
  uint8_t mask[64];
  assert_true(obs && A <= 64);
  int32_t decisions = 0;
  while (!mb_game_done(g)) {
    mb_player_decision d;
    assert_true(mb_player_decide_record(p, g, NULL, false, false, &rng, &d, &err));
    mb_game_observe(g, obs);
    mb_game_legal_mask(g, mask);
    assert_memory_equal(d.obs, obs, (size_t)D * sizeof *obs);
    assert_memory_equal(d.mask, mask, (size_t)A);
    assert_true(mb_agent_initial(&inf, obs, NULL, logits, &v, &err));
    assert_int_equal(d.action, mb_agent_greedy(logits, mask, A));
    assert_true(d.value == v);
    for (int32_t a = 0; a < A; a++) assert_true(d.policy[a] == (a == d.action ? 1.0f : 0.0f));
    int32_t again;
    assert_true(mb_player_raw_action(p, obs, mask, &again, &err));
    assert_int_equal(again, d.action);
    assert_memory_equal(d.obs, obs, (size_t)D * sizeof *obs);
    assert_true(mb_game_step(g, d.action, NULL, &err));
    decisions++;
  }
  assert_true(decisions > 0);
  /* the episode is over: no decision, with a message */
  mb_player_decision d;
  assert_false(mb_player_decide_record(p, g, NULL, false, false, &rng, &d, &err));
  assert_non_null(strstr(err.message, "over"));
  memset(mask, 0, sizeof mask);
  int32_t none;
  assert_true(mb_player_raw_action(p, obs, mask, &none, &err));
  assert_int_equal(none, -1);
  free(obs);
  mb_player_free(p);
  mb_game_free(g);
  mb_workload_free(w);
  mb_agent_infer_free(&inf);
  mb_agent_free(&ag);
}

/* The raw policy's return from g's state to the episode's end (g is left where it was). */
static double raw_return_to_go(mb_player *p, mb_game *g, float *obs, uint8_t *mask) {
  mb_error err = {{0}};
  mb_game_snapshot snap = mb_game_snapshot_take(g);
  double before = mb_game_return(g);
  while (!mb_game_done(g)) {
    int32_t a;
    mb_game_legal_mask(g, mask);
    mb_game_observe(g, obs);
    assert_true(mb_player_raw_action(p, obs, mask, &a, &err));
    assert_true(mb_game_step(g, a, NULL, &err));
  }
  double to_go = mb_game_return(g) - before;
  assert_true(mb_game_restore(g, snap, &err));
  return to_go;
}

/* Leaf rollouts. In the real game, with a rollout longer than the episode a node's value is the
 * raw policy's return from it: one simulation without noise visits the raw policy's move, so
 * the search's value of the state is exactly the return the raw policy plays from there, and
 * the rollouts leave the game where it was. Without a rollout (the value network of an
 * untrained agent) it is not. In the learned model a rollout changes the values and keeps them
 * finite. */
static void test_leaf_rollout(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_agent_config cfg;
  small_config(&cfg);
  mb_rng rng;
  mb_rng_seed(&rng, 29);
  mb_agent ag;
  assert_true(mb_agent_create(&ag, &cfg, &rng, &err));
  mb_player *p = mb_player_create(&ag, 8, &err);
  assert_non_null(p);
  float *obs = malloc((size_t)cfg.obs_dim * sizeof(float));
  float *obs_after = malloc((size_t)cfg.obs_dim * sizeof(float));
  uint8_t *mask = malloc((size_t)cfg.game.n_actions);
  assert_true(obs && obs_after && mask);
  mb_search_config full, none, learned;
  mb_search_config_evaluation(&full, true);
  full.simulations = 1;
  full.leaf_rollout = MB_SEARCH_MAX_LEAF_ROLLOUT;
  none = full;
  none.leaf_rollout = 0;
  mb_search_config_evaluation(&learned, false);
  learned.simulations = 8;
  int checked = 0, value_net_differs = 0, learned_differs = 0;
  for (uint64_t seed = 1; seed <= 3; seed++) {
    mb_hardware hw;
    mb_workload *w = small_workload(500 + seed, 40, &hw);
    mb_game *g = mb_game_new(w, &hw, &cfg.game, &err);
    assert_non_null(g);
    mb_player_set_scale(p, mb_return_scale(w, &hw, g));
    double unit = mb_player_reward_unit(p);
    mb_game_reset(g);
    for (int t = 0; !mb_game_done(g); t++) {
      mb_player_decision d;
      if (t % 3 == 0) {
        double to_go = raw_return_to_go(p, g, obs, mask) * unit;
        mb_game_observe(g, obs);
        assert_true(mb_player_decide_record(p, g, &full, true, true, &rng, &d, &err));
        mb_game_observe(g, obs_after);
        assert_memory_equal(obs, obs_after, (size_t)cfg.obs_dim * sizeof(float));
        if (!(fabs(d.value - to_go) <= 1e-4 * (1 + fabs(to_go))))
          fail_msg("seed %llu decision %d: searched value %.6f, raw policy's return to go %.6f",
                   (unsigned long long)seed, t, d.value, to_go);
        checked++;
        assert_true(mb_player_decide_record(p, g, &none, true, true, &rng, &d, &err));
        value_net_differs += fabs(d.value - to_go) > 1e-3 * (1 + fabs(to_go));
        float plain;
        assert_true(mb_player_decide_record(p, g, &learned, false, true, &rng, &d, &err));
        plain = d.value;
        learned.leaf_rollout = 16;
        assert_true(mb_player_decide_record(p, g, &learned, false, true, &rng, &d, &err));
        learned.leaf_rollout = 0;
        assert_true(isfinite(d.value));
        learned_differs += d.value != plain;
      }
      mb_game_legal_mask(g, mask);
      mb_game_observe(g, obs);
      int32_t a;
      assert_true(mb_player_raw_action(p, obs, mask, &a, &err));
      assert_true(mb_game_step(g, a, NULL, &err));
    }
    mb_game_free(g);
    mb_workload_free(w);
  }
  print_message(
      "%d states: rollout values equal the raw policy's return; the value network's "
      "differ at %d, learned rollouts change %d\n",
      checked, value_net_differs, learned_differs);
  assert_true(checked >= 10);
  assert_true(value_net_differs > checked / 2);
  assert_true(learned_differs > checked / 2);
  free(obs);
  free(obs_after);
  free(mask);
  mb_player_free(p);
  mb_agent_free(&ag);
}

/* R_ref by hand: the standalone benefits of the visitable buffers (not pinned, no larger than
 * the capacity, benefit above 0) over the all-slow time; 1 when no buffer is visitable, and a
 * player given a scale of 0 or below keeps the reward unit 1. */
static void test_return_scale(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_agent_config cfg;
  small_config(&cfg);
  mb_hardware hw = mb_test_hardware(100, 1);
  const mb_test_buffer bufs[] = {
      {"a", 40, 0, 1, 1000, false},     {"b", 60, 1, 2, 2500, false},
      {"huge", 200, 0, 2, 5000, false}, /* larger than the capacity */
      {"pinned", 10, 0, 0, 700, true},  {"idle", 10, 2, 2, 0, false},
  };
  struct {
    size_t first, n;
    double scale;
  } cases[] = {{0, 5, 3500.0 / 10000}, {2, 3, 1.0}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    mb_workload *w = mb_test_workload("scale", bufs + cases[c].first, cases[c].n, 3, 10000);
    mb_game *g = mb_game_new(w, &hw, &cfg.game, &err);
    if (!g) fail_msg("%s", err.message);
    double scale = mb_return_scale(w, &hw, g);
    if (!(fabs(scale - cases[c].scale) <= 1e-15))
      fail_msg("case %zu: R_ref %.17g, expected %.17g", c, scale, cases[c].scale);
    mb_game_free(g);
    mb_workload_free(w);
  }
  mb_rng rng;
  mb_rng_seed(&rng, 41);
  mb_agent ag;
  assert_true(mb_agent_create(&ag, &cfg, &rng, &err));
  mb_player *p = mb_player_create(&ag, 1, &err);
  assert_non_null(p);
  const double scales[] = {0.25, 0, -2};
  const double units[] = {4, 1, 1};
  for (int i = 0; i < 3; i++) {
    mb_player_set_scale(p, scales[i]);
    assert_true(mb_player_reward_unit(p) == units[i]);
  }
  mb_player_free(p);
  mb_agent_free(&ag);
}

/* The player's two models written again from player.h's contract, as models for mb_search_run
 * itself: the learned one keeps each node's latent in a row of its own and unrolls a leaf
 * rollout in the dynamics no further than the buffers the real episode has left to visit (the
 * current one's place in the visiting order gives them); the exact one replays the moves played
 * so far on a game of its own from its reset (no snapshots) and sums a rollout's shaped rewards
 * step by step. */
typedef struct ref_model {
  mb_agent_infer inf;
  const mb_agent_config *cfg;
  mb_game *game;          /* exact: the reference's own game */
  const int32_t *history; /* the moves played before the root */
  int32_t n_history, leaf_rollout;
  int32_t to_visit;                 /* buffers the real episode has left to visit at the root */
  double unit;                      /* 1 / R_ref */
  float *latents, *root_obs, *roll; /* (simulations + 1) x W; the root's observation; 2 x W */
  float *obs, *roll_logits;
  uint8_t *all_legal, *roll_mask;
  int64_t rollouts, cut_short, ended; /* rollouts; those cut by the episode's end: learned,
                                          exact */
} ref_model;

static bool ref_expand_learned(void *ctx, int32_t node, int32_t parent, int32_t action,
                               const int32_t *path, int32_t depth, mb_search_eval *out,
                               mb_error *err) {
  (void)path;
  ref_model *m = ctx;
  const int32_t W = m->cfg->latent, A = m->cfg->game.n_actions;
  float *lat = m->latents + (size_t)node * (size_t)W;
  out->has_mask = false;
  out->terminal = false;
  out->reward = 0;
  if (parent < 0) return mb_agent_initial(&m->inf, m->root_obs, lat, out->logits, &out->value, err);
  if (!mb_agent_recurrent(&m->inf, m->latents + (size_t)parent * (size_t)W, action,
                          depth == 1 ? m->root_obs : NULL, lat, &out->reward, out->logits,
                          &out->value, err))
    return false;
  if (m->leaf_rollout == 0) return true;
  m->rollouts++;
  int32_t left = m->to_visit - depth, steps = m->leaf_rollout;
  if (left < steps) {
    steps = left;
    m->cut_short++;
  }
  float *cur = m->roll, *next = m->roll + W, r, v = out->value;
  memcpy(cur, lat, (size_t)W * sizeof(float));
  memcpy(m->roll_logits, out->logits, (size_t)A * sizeof(float));
  double sum = 0;
  for (int32_t k = 0; k < steps; k++) {
    int32_t a = mb_agent_greedy(m->roll_logits, m->all_legal, A);
    if (!mb_agent_recurrent(&m->inf, cur, a, NULL, next, &r, m->roll_logits, &v, err)) return false;
    sum += r;
    float *t = cur;
    cur = next;
    next = t;
  }
  out->value = (float)(sum + v);
  return true;
}

static bool ref_expand_exact(void *ctx, int32_t node, int32_t parent, int32_t action,
                             const int32_t *path, int32_t depth, mb_search_eval *out,
                             mb_error *err) {
  (void)node, (void)parent, (void)action;
  ref_model *m = ctx;
  const int32_t A = m->cfg->game.n_actions;
  mb_game_reset(m->game);
  for (int32_t i = 0; i < m->n_history; i++)
    if (!mb_game_step(m->game, m->history[i], NULL, err)) return false;
  double r = 0;
  for (int32_t i = 0; i < depth; i++)
    if (!mb_game_step(m->game, path[i], &r, err)) return false;
  out->reward = (float)(r * m->unit);
  out->terminal = mb_game_done(m->game);
  out->has_mask = !out->terminal;
  if (out->terminal) {
    out->value = 0;
    memset(out->logits, 0, (size_t)A * sizeof(float));
    return true;
  }
  mb_game_observe(m->game, m->obs);
  mb_game_legal_mask(m->game, out->mask);
  if (!mb_agent_initial(&m->inf, m->obs, NULL, out->logits, &out->value, err)) return false;
  if (m->leaf_rollout == 0) return true;
  m->rollouts++;
  memcpy(m->roll_logits, out->logits, (size_t)A * sizeof(float));
  memcpy(m->roll_mask, out->mask, (size_t)A);
  double sum = 0;
  float v = out->value;
  for (int32_t k = 0; k < m->leaf_rollout; k++) {
    if (!mb_game_step(m->game, mb_agent_greedy(m->roll_logits, m->roll_mask, A), &r, err))
      return false;
    sum += r;
    if (mb_game_done(m->game)) {
      v = 0;
      m->ended++;
      break;
    }
    mb_game_observe(m->game, m->obs);
    mb_game_legal_mask(m->game, m->roll_mask);
    if (!mb_agent_initial(&m->inf, m->obs, NULL, m->roll_logits, &v, err)) return false;
  }
  out->value = (float)(sum * m->unit + v);
  return true;
}

/* Plays one episode of a small workload with the player, searching every decision, and checks
 * each against mb_search_run on the reference model from the same state and random stream: the
 * same move, and the same policy and value (bit for bit in the learned model; to float rounding
 * in the real game, where the reference sums a rollout's rewards step by step). Returns the
 * decisions; adds the reference's rollouts, and those cut by the episode's end, to counts[0..3)
 * (all; learned, cut short; exact, ended). */
static int32_t check_against_reference(const mb_agent *ag, bool exact, int32_t leaf_rollout,
                                       uint64_t seed, int64_t counts[3]) {
  enum { SIMS = 8 };
  mb_error err = {{0}};
  const mb_agent_config *cfg = &ag->cfg;
  const int32_t A = cfg->game.n_actions, W = cfg->latent, D = cfg->obs_dim;
  mb_hardware hw;
  mb_workload *w = small_workload(seed, 24, &hw);
  mb_game *g = mb_game_new(w, &hw, &cfg->game, &err);
  assert_non_null(g);
  mb_player *p = mb_player_create(ag, SIMS, &err);
  assert_non_null(p);
  double scale = mb_return_scale(w, &hw, g);
  mb_player_set_scale(p, scale);
  int32_t *history = malloc((size_t)mb_game_n_visitable(g) * sizeof *history);
  ref_model m = {.cfg = cfg,
                 .game = mb_game_new(w, &hw, &cfg->game, &err),
                 .history = history,
                 .leaf_rollout = leaf_rollout,
                 .unit = 1.0 / scale,
                 .latents = malloc((size_t)(SIMS + 1) * (size_t)W * sizeof(float)),
                 .root_obs = malloc((size_t)D * sizeof(float)),
                 .roll = malloc((size_t)2 * (size_t)W * sizeof(float)),
                 .obs = malloc((size_t)D * sizeof(float)),
                 .roll_logits = malloc((size_t)A * sizeof(float)),
                 .all_legal = malloc((size_t)A),
                 .roll_mask = malloc((size_t)A)};
  uint8_t *root_mask = malloc((size_t)A);
  assert_true(history && m.game && m.latents && m.root_obs && m.roll && m.obs && m.roll_logits &&
              m.all_legal && m.roll_mask && root_mask);
  assert_true(mb_agent_infer_create(&m.inf, ag, &err));
  memset(m.all_legal, 1, (size_t)A);
  mb_search *search = mb_search_create(A, SIMS, &err);
  assert_non_null(search);
  mb_search_model model = {.ctx = &m, .expand = exact ? ref_expand_exact : ref_expand_learned};
  mb_search_config sc;
  mb_search_config_evaluation(&sc, exact);
  sc.simulations = SIMS;
  sc.gumbel_noise = true; /* the random stream matters too */
  sc.leaf_rollout = leaf_rollout;
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  const int32_t *order = mb_game_visit_order(g), n_visitable = mb_game_n_visitable(g);
  while (!mb_game_done(g)) {
    mb_rng ref_rng = rng;
    m.to_visit = n_visitable;
    while (order[n_visitable - m.to_visit] != mb_game_current_buffer(g)) m.to_visit--;
    mb_game_observe(g, m.root_obs);
    mb_game_legal_mask(g, root_mask);
    mb_search_result res;
    if (!mb_search_run(search, &sc, &model, root_mask, &ref_rng, &res, &err))
      fail_msg("reference search: %s", err.message);
    mb_player_decision d;
    if (!mb_player_decide_record(p, g, &sc, exact, true, &rng, &d, &err))
      fail_msg("player: %s", err.message);
    char at[96]; /* where a mismatch is */
    snprintf(at, sizeof at, "%s search, rollout %d, seed %llu, decision %d",
             exact ? "exact" : "learned", leaf_rollout, (unsigned long long)seed, m.n_history);
    if (d.action != res.action)
      fail_msg("%s: the player plays %d, the reference %d", at, d.action, res.action);
    float tol = exact ? 1e-5f : 0.0f;
    if (!(fabsf(d.value - res.search_value) <= tol * (1 + fabsf(res.search_value))))
      fail_msg("%s: value %.8g, the reference's %.8g", at, d.value, res.search_value);
    for (int32_t a = 0; a < A; a++)
      if (!(fabsf(d.policy[a] - res.policy[a]) <= tol))
        fail_msg("%s: policy[%d] %.8g, the reference's %.8g", at, a, d.policy[a], res.policy[a]);
    assert_true(mb_game_step(g, d.action, NULL, &err));
    history[m.n_history++] = d.action;
  }
  counts[0] += m.rollouts;
  counts[1] += m.cut_short;
  counts[2] += m.ended;
  mb_search_free(search);
  mb_agent_infer_free(&m.inf);
  free(root_mask);
  free(m.latents);
  free(m.root_obs);
  free(m.roll);
  free(m.obs);
  free(m.roll_logits);
  free(m.all_legal);
  free(m.roll_mask);
  mb_game_free(m.game);
  free(history);
  mb_player_free(p);
  mb_game_free(g);
  mb_workload_free(w);
  return m.n_history;
}

/* The player's searches are mb_search_run's on the models player.h describes: in the learned
 * model and in the real game, without and with leaf rollouts (3 steps: a rollout that stops
 * inside the episode, and near its end one cut by it), for an agent without action features or
 * shaping and one with both (the root's children get the root's action features; the real
 * game's rollouts add their shaping terms). */
static void test_player_against_reference(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_agent_config plain, featured;
  small_config(&plain);
  featured = plain;
  featured.action_features = true;
  featured.game.shaping = 0.5;
  const mb_agent_config *configs[] = {&plain, &featured};
  mb_rng rng;
  mb_rng_seed(&rng, 37);
  for (int c = 0; c < 2; c++) {
    mb_agent ag;
    assert_true(mb_agent_create(&ag, configs[c], &rng, &err));
    for (int exact = 0; exact <= 1; exact++)
      for (int32_t rollout = 0; rollout <= 3; rollout += 3) {
        int64_t counts[3] = {0};
        int32_t decisions = 0;
        for (uint64_t seed = 1; seed <= 2; seed++)
          decisions += check_against_reference(&ag, exact, rollout, 900 + seed, counts);
        assert_true(decisions >= 20);
        /* both kinds of rollout were met: cut by the episode's end, and not */
        int64_t cut = exact ? counts[2] : counts[1];
        if (rollout > 0) assert_true(cut > 0 && cut < counts[0]);
      }
    mb_agent_free(&ag);
  }
}

/* describe_to_string: mb_agent_describe's output as a string (caller frees); NULL on failure. */
static char *describe_to_string(const char *path, mb_error *err) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_non_null(out);
  bool ok = mb_agent_describe(path, out, err);
  fclose(out);
  if (!ok) {
    assert_int_equal(len, 0); /* nothing written before the failure */
    free(text);
    return NULL;
  }
  return text;
}

static void assert_contains(const char *text, const char *want) {
  if (!strstr(text, want)) fail_msg("missing '%s' in:\n%s", want, text);
}

/* `mallocbench show AGENT.h5`: the description names what the checkpoint stores (command line,
 * counters, networks, game layout, the curve's first, last and best points, the validation
 * series only when there is one, a resumable state only when it exists) and says what is not
 * recorded; a file that is not a checkpoint fails naming it, before writing anything. */
static void test_describe(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_agent_config cfg;
  small_config(&cfg);
  cfg.game.next_buffers = 2;
  cfg.game.demand_bins = 3;
  cfg.obs_dim = mb_game_observation_size(&cfg.game);
  mb_rng rng;
  mb_rng_seed(&rng, 9);
  mb_agent ag;
  assert_true(mb_agent_create(&ag, &cfg, &rng, &err));
  mb_agent_progress prog = {.steps = 42, .episodes = 7, .decisions = 99, .seed = 5, .seconds = 1.5};
  mb_agent_curve curve;
  mb_agent_curve_init(&curve);
  assert_true(mb_agent_curve_push(&curve, 0, 0, NAN, 0.01, NAN, 0, &err));
  assert_true(mb_agent_curve_push(&curve, 21, 4, 0.02, 0.05, 1.0, 0.7, &err));
  assert_true(mb_agent_curve_push(&curve, 42, 7, 0.02, 0.03, 0.9, 1.5, &err));
  curve.heuristic = 0.0625;
  curve.random = 0.015625;
  char *path = mb_test_temp_path("described.h5");
  assert_true(mb_agent_save(path, &ag, NULL, &prog, &curve, "mallocbench train --seed 5", &err));

  char *text = describe_to_string(path, &err);
  if (!text) fail_msg("%s", err.message);
  char params[64];
  snprintf(params, sizeof params, "%lld parameters", (long long)mb_agent_param_count(&ag));
  char obs[64];
  snprintf(obs, sizeof obs, "observation      %d values", cfg.obs_dim);
  const char *want[] = {
      "trained by       mallocbench train --seed 5\n",
      "training         42 updates, 7 self-play episodes, 99 decisions, 2 s of training, seed 5\n",
      "resume state     none beside it",
      "latent 24 (minmax), 1 residual block per module",
      params,
      "8 actions (7 candidate slots + slow), buffer order heuristic",
      obs,
      "a 8 x 8 occupancy picture",
      "the next 2 buffers",
      "a demand profile of 3 time bins",
      "3 points; eval set references: heuristic 0.0625, random play 0.0156",
      "step 0 0.0100, step 42 (last) 0.0300, best 0.0500 at step 21\n",
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) assert_contains(text, want[i]);
  assert_null(strstr(text, "validation"));
  assert_null(strstr(text, "run options"));   /* the run had none */
  assert_null(strstr(text, "the dynamics:")); /* the representation's width and depth */
  free(text);

  /* a validation series and a training state beside the checkpoint */
  mb_agent_curve_set_validation(&curve, 0.04);
  assert_true(mb_agent_save(path, &ag, NULL, &prog, &curve, "mallocbench train --seed 5", &err));
  char state_path[4096];
  assert_true(mb_train_state_path(path, state_path, sizeof state_path));
  FILE *sf = fopen(state_path, "w");
  assert_non_null(sf);
  fclose(sf);
  text = describe_to_string(path, &err);
  if (!text) fail_msg("%s", err.message);
  char resume[4200];
  snprintf(resume, sizeof resume, "resume state     %s\n", state_path);
  assert_contains(text, resume);
  assert_contains(text,
                  "validation       raw policy on the held-out workloads: step 42 0.0400, "
                  "step 42 (last) 0.0400, best 0.0400 at step 42\n");
  free(text);
  remove(state_path);

  /* no counters, no curve, no command line: said so, nothing invented */
  assert_true(mb_agent_save(path, &ag, NULL, NULL, NULL, NULL, &err));
  text = describe_to_string(path, &err);
  if (!text) fail_msg("%s", err.message);
  assert_contains(text, "trained by       (not recorded)\n");
  assert_contains(text, "training curve   none stored\n");
  assert_null(strstr(text, "updates"));
  assert_null(strstr(text, "BLAS"));
  free(text);

  /* not a checkpoint */
  char *junk = mb_test_write_temp(".h5", "not hdf5 at all\n");
  assert_null(describe_to_string(junk, &err));
  assert_non_null(strstr(err.message, junk));
  mb_test_temp_remove(junk);

  mb_agent_curve_free(&curve);
  mb_agent_free(&ag);
  mb_test_temp_remove(path);
}

/* The other branches of the description: a dynamics network of its own width or depth, no next
 * buffers nor demand profile, reward shaping on and off, a resumed run's history line by line,
 * the run's options, one eval-set reference alone, and a tie for the best point (the first
 * wins). */
static void test_describe_other_configs(void **state) {
  (void)state;
  mb_error err = {{0}};
  char *path = mb_test_temp_path("described-other.h5");
  const struct {
    int32_t dyn_width, dyn_blocks;
    double shaping;
    const char *dynamics, *shaping_text;
  } cases[] = {{40, 0, 0, " (the dynamics: 40 wide, 1 block)", "no reward shaping\n"},
               {0, 2, 0.5, " (the dynamics: 24 wide, 2 blocks)", "reward shaping 0.5\n"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mb_agent_config cfg;
    small_config(&cfg);
    cfg.dyn_width = cases[i].dyn_width;
    cfg.dyn_blocks = cases[i].dyn_blocks;
    cfg.game.next_buffers = 0;
    cfg.game.demand_bins = 0;
    cfg.game.shaping = cases[i].shaping;
    cfg.obs_dim = mb_game_observation_size(&cfg.game);
    mb_rng rng;
    mb_rng_seed(&rng, 9);
    mb_agent ag;
    assert_true(mb_agent_create(&ag, &cfg, &rng, &err));
    mb_agent_progress prog = {.steps = 3, .seed = 1};
    snprintf(prog.options, sizeof prog.options, "--workloads conv --synthetic");
    mb_agent_curve curve;
    mb_agent_curve_init(&curve);
    assert_true(mb_agent_curve_push(&curve, 0, 0, NAN, 0.05, NAN, 0, &err));
    assert_true(mb_agent_curve_push(&curve, 21, 4, 0.02, 0.05, NAN, 0.7, &err));
    assert_true(mb_agent_curve_push(&curve, 42, 7, 0.02, 0.03, NAN, 1.5, &err));
    curve.heuristic = 0.0625; /* random play not measured */
    assert_true(mb_agent_save(path, &ag, NULL, &prog, &curve,
                              "mallocbench train --seed 5\nmallocbench train --resume a.h5", &err));
    char *text = describe_to_string(path, &err);
    if (!text) fail_msg("%s", err.message);
    const char *want[] = {
        "trained by       mallocbench train --seed 5\n",
        "resumed by       mallocbench train --resume a.h5\n",
        "run options      --workloads conv --synthetic\n",
        cases[i].dynamics,
        cases[i].shaping_text,
        ", 7 candidate slots, ",
        "eval set references: heuristic 0.0625, random play nan",
        "step 0 0.0500, step 42 (last) 0.0300, best 0.0500 at step 0\n",
        "checksums        SHA-256 of each dataset: all ",
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) assert_contains(text, want[k]);
    assert_null(strstr(text, "the next"));
    assert_null(strstr(text, "demand profile"));
    /* one dataset's checksum removed (as in a checkpoint written before checksums): counted
     * among all the datasets read */
    long long datasets = 0;
    const char *all = strstr(text, "SHA-256 of each dataset: all ");
    assert_true(sscanf(all + strlen("SHA-256 of each dataset: all "), "%lld", &datasets) == 1);
    free(text);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    assert_true(H5Adelete_by_name(f, "/repr/l0.weight", "sha256", H5P_DEFAULT) >= 0);
    assert_true(H5Fclose(f) >= 0);
    text = describe_to_string(path, &err);
    if (!text) fail_msg("%s", err.message);
    char unchecked[128];
    snprintf(unchecked, sizeof unchecked,
             "checksums        1 of %lld datasets read have no SHA-256", datasets);
    assert_contains(text, unchecked);
    free(text);
    mb_agent_curve_free(&curve);
    mb_agent_free(&ag);
  }
  mb_test_temp_remove(path);
}

/* One change to each field of the config the digest covers (mb_agent_digest); k < 20. */
static void change_config_field(mb_agent_config *c, int k) {
  mb_game_config *g = &c->game;
  int32_t *counts[12] = {&c->obs_dim,    &c->latent,    &c->blocks,       &c->dyn_width,
                         &c->dyn_blocks, &c->support,   &g->n_actions,    &g->addr_bins,
                         &g->time_bins,  &g->lookahead, &g->next_buffers, &g->demand_bins};
  bool *flags[3] = {&c->action_features, &g->auto_slow, &g->gain_features};
  float *reals[3] = {&c->support_min, &c->support_max, &c->value_scale};
  if (k < 12)
    (*counts[k])++;
  else if (k < 15)
    *flags[k - 12] = !*flags[k - 12];
  else if (k < 18)
    *reals[k - 15] += 0.5f;
  else if (k == 18)
    g->order = g->order == MB_GAME_ORDER_START ? MB_GAME_ORDER_SIZE : MB_GAME_ORDER_START;
  else if (k == 19)
    g->shaping += 0.25;
  else
    c->latent_norm = c->latent_norm == MB_LATENT_SIMNORM ? MB_LATENT_MINMAX : MB_LATENT_SIMNORM;
}

/* A SimNorm agent: both latent networks end in it (every group of 8 of a latent state is a
 * distribution), its checkpoint keeps it and loads to the same networks, one written before the
 * attribute loads as minmax, and a bad value, or a latent that is not a multiple of 8, is
 * refused naming it. */
static void test_latent_norm(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_agent_config cfg;
  small_config(&cfg);
  cfg.latent = 16;
  cfg.latent_norm = MB_LATENT_SIMNORM;
  mb_rng rng;
  mb_rng_seed(&rng, 21);
  mb_agent ag, back;
  if (!mb_agent_create(&ag, &cfg, &rng, &err)) fail_msg("%s", err.message);
  assert_int_equal(ag.repr.layers[ag.repr.n_layers - 1].kind, MB_LAYER_SIMNORM);
  assert_int_equal(ag.dyn.layers[ag.dyn.n_layers - 1].kind, MB_LAYER_SIMNORM);
  mb_agent_infer inf;
  assert_true(mb_agent_infer_create(&inf, &ag, &err));
  float *obs = calloc((size_t)cfg.obs_dim, sizeof(float));
  for (int k = 0; k < cfg.obs_dim; k++) obs[k] = (float)mb_rng_uniform(&rng);
  float lat[16], next[16], value, reward;
  float *logits = calloc((size_t)cfg.game.n_actions, sizeof(float));
  assert_true(mb_agent_initial(&inf, obs, lat, logits, &value, &err));
  assert_true(mb_agent_recurrent(&inf, lat, 1, obs, next, &reward, logits, &value, &err));
  for (int g = 0; g < 16; g += MB_NN_SIMNORM_GROUP) {
    double a = 0, b = 0;
    for (int j = g; j < g + MB_NN_SIMNORM_GROUP; j++) a += lat[j], b += next[j];
    assert_true(fabs(a - 1) < 1e-5 && fabs(b - 1) < 1e-5);
  }
  mb_agent_infer_free(&inf);
  free(logits);
  free(obs);

  char *path = mb_test_temp_path("agent_simnorm.h5");
  assert_true(mb_agent_save(path, &ag, NULL, NULL, NULL, NULL, &err));
  if (!mb_agent_load(path, &back, NULL, NULL, NULL, &err)) fail_msg("%s", err.message);
  assert_int_equal(back.cfg.latent_norm, MB_LATENT_SIMNORM);
  char d[65], db[65];
  mb_agent_digest(&ag, d);
  mb_agent_digest(&back, db);
  assert_string_equal(d, db);
  char *text = describe_to_string(path, &err);
  if (!text) fail_msg("%s", err.message);
  assert_contains(text, "latent 16 (simnorm)");
  free(text);
  mb_agent_free(&back);

  /* written before the attribute: minmax, as MuZero */
  mb_agent plain;
  cfg.latent_norm = MB_LATENT_MINMAX;
  assert_true(mb_agent_create(&plain, &cfg, &rng, &err));
  assert_true(mb_agent_save(path, &plain, NULL, NULL, NULL, NULL, &err));
  remove_root_attr(path, "cfg.latent_norm");
  if (!mb_agent_load(path, &back, NULL, NULL, NULL, &err)) fail_msg("%s", err.message);
  assert_int_equal(back.cfg.latent_norm, MB_LATENT_MINMAX);
  assert_int_equal(back.repr.layers[back.repr.n_layers - 1].kind, MB_LAYER_MINMAX);
  mb_agent_free(&back);
  /* a value that names no scaling */
  assert_true(mb_agent_save(path, &plain, NULL, NULL, NULL, NULL, &err));
  overwrite_root_attr(path, "cfg.latent_norm", 2);
  assert_false(mb_agent_load(path, &back, NULL, NULL, NULL, &err));
  assert_contains(err.message, "cfg.latent_norm = 2");
  mb_test_temp_remove(path);

  cfg.latent = 12;
  cfg.latent_norm = MB_LATENT_SIMNORM;
  assert_false(mb_agent_config_check(&cfg, &err));
  assert_contains(err.message, "latent 12 with simnorm: expected a multiple of 8");
  mb_agent_free(&plain);
  mb_agent_free(&ag);
}

/* The digest names the networks and nothing of the run that trained them: equal for a copy of
 * the weights and for checkpoints that differ in progress, curve, note and optimiser (as two
 * identical trainings' files do, in wall times); different when one weight of any parameter
 * moves by one ulp or any config field changes. `show` prints it. */
static void test_digest(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_agent_config cfg;
  small_config(&cfg);
  mb_rng rng;
  mb_rng_seed(&rng, 3);
  mb_agent ag, other;
  assert_true(mb_agent_create(&ag, &cfg, &rng, &err));
  assert_true(mb_agent_create(&other, &cfg, &rng, &err));
  char d[65], d_other[65];
  mb_agent_digest(&ag, d);
  mb_agent_digest(&other, d_other);
  assert_int_equal(strlen(d), 64);
  /* Published agents are cited by digest, so its text must not change for the networks it
   * already names: this agent's digest, printed by the code of 030c368 (before
   * cfg.latent_norm), is pinned. */
  assert_string_equal(d, "6e6573b8e842fd5e6f9a7af2c06d97bfc397646dba136e3acf2a75c46bb32c6c");
  assert_string_not_equal(d, d_other); /* other weights */
  assert_true(mb_agent_copy_weights(&other, &ag, &err));
  mb_agent_digest(&other, d_other);
  assert_string_equal(d, d_other);

  /* two files of the same networks, one with everything a training run adds */
  mb_nn_module *mods[4];
  mb_agent_modules(&ag, mods);
  mb_adam opt;
  mb_agent_curve curve;
  training_extras(&ag, &opt, &curve);
  mb_agent_progress prog = TRAINING_PROGRESS;
  char *full = mb_test_temp_path("digest-full.h5"), *bare = mb_test_temp_path("digest-bare.h5");
  assert_true(mb_agent_save(full, &ag, &opt, &prog, &curve, "train --out a.h5", &err));
  assert_true(mb_agent_save(bare, &ag, NULL, NULL, NULL, NULL, &err));
  const char *paths[2] = {full, bare};
  for (int i = 0; i < 2; i++) {
    mb_agent back;
    assert_true(mb_agent_load(paths[i], &back, NULL, NULL, NULL, &err));
    char db[65];
    mb_agent_digest(&back, db);
    assert_string_equal(d, db);
    mb_agent_free(&back);
    char *text = describe_to_string(paths[i], &err);
    if (!text) fail_msg("%s", err.message);
    char line[128];
    snprintf(line, sizeof line, "digest           %s (", d);
    assert_contains(text, line);
    free(text);
  }

  /* one ulp of one weight, in every parameter of every module */
  for (int i = 0; i < 4; i++)
    for (int32_t p = 0; p < mods[i]->n_params; p++) {
      mb_tensor *t = &mods[i]->params[p].value;
      float *x = &t->data[mb_tensor_size(t) - 1];
      const float was = *x;
      *x = nextafterf(was, INFINITY);
      char dc[65];
      mb_agent_digest(&ag, dc);
      if (!strcmp(dc, d))
        fail_msg("%s %s: a changed weight kept the digest", mods[i]->name, mods[i]->params[p].name);
      *x = was;
    }

  /* each config field */
  const mb_agent_config saved = ag.cfg;
  for (int k = 0; k < 21; k++) {
    change_config_field(&ag.cfg, k);
    char dc[65];
    mb_agent_digest(&ag, dc);
    if (!strcmp(dc, d)) fail_msg("config field %d: a change kept the digest", k);
    ag.cfg = saved;
  }
  char again[65];
  mb_agent_digest(&ag, again);
  assert_string_equal(d, again);

  mb_test_temp_remove(full);
  mb_test_temp_remove(bare);
  mb_adam_free(&opt);
  mb_agent_curve_free(&curve);
  mb_agent_free(&other);
  mb_agent_free(&ag);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_checkpoint_round_trip),
      cmocka_unit_test(test_oracle_parts),
      cmocka_unit_test(test_checkpoint_layout_options),
      cmocka_unit_test(test_checkpoint_shaping),
      cmocka_unit_test(test_checkpoint_errors_name_the_file_once),
      cmocka_unit_test(test_size_limits),
      cmocka_unit_test(test_dynamics_shape),
      cmocka_unit_test(test_latent_norm),
      cmocka_unit_test(test_action_features),
      cmocka_unit_test(test_solvers_valid),
      cmocka_unit_test(test_exact_search_beats_raw_policy),
      cmocka_unit_test(test_player_decision),
      cmocka_unit_test(test_leaf_rollout),
      cmocka_unit_test(test_player_against_reference),
      cmocka_unit_test(test_return_scale),
      cmocka_unit_test(test_describe),
      cmocka_unit_test(test_describe_other_configs),
      cmocka_unit_test(test_digest),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
