/* Tests of mallocMuZero training (solvers/muzero/train.h), on tiny networks and tiny synthetic
 * workloads so that they run in seconds:
 *   - the policy learns: after 500 updates the raw policy network alone (greedy, no search)
 *     plays clearly better than the same network untrained and than random play, on 8 fixed
 *     synthetic evaluation workloads (returns simulated by the cost model);
 *   - checkpoint and resume: a run stopped at N updates and resumed to 2N keeps its counters
 *     and training curve, and the checkpoint round-trips; the curve's references (heuristic and
 *     random play on the eval set) are stored, and measured again when resuming a checkpoint
 *     without them;
 *   - determinism: the same seed gives bit-identical weights with --jobs 1 (and with 2 threads:
 *     actors use fixed random streams); another seed gives other weights;
 *   - prioritised replay: a run finishes, is deterministic (weights and curve), and differs from
 *     the uniform run of the same seed;
 *   - a validation set (held-out workloads) is evaluated at every evaluation point, its last
 *     value is mb_eval_policy's on the trained agent, it does not change the weights, the best
 *     agent is kept in a loadable file whose return is the series' maximum, a resumed run
 *     continues the series, and a checkpoint without the series loads with it all NaN;
 *   - training state: a run stopped by an error after its state was written, resumed from that
 *     state, ends with the weights, optimiser step and curve returns of the run that never
 *     stopped (prioritised replay, a wrapping buffer); resumed from the checkpoint alone it
 *     does not; the state is removed when a run ends normally; a state of another buffer
 *     shape, or a plain checkpoint given as a state, is refused with the field named;
 *   - the progress line gives the wall-clock rate beside the learner's and an ETA with a step
 *     limit;
 *   - bad configurations fail with a message naming the field. */
#include "support.h"

#include <hdf5.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "catalogue.h"
#include "hardware.h"
#include "nn_io.h"
#include "random_workload.h"
#include "replay.h"
#include "tensor.h"
#include "train.h"

static void tiny_config(mb_train_config *c, uint64_t seed, int64_t steps) {
  mb_train_config_default(c);
  c->agent.latent = 32;
  c->agent.game.n_actions = 8;
  c->agent.obs_dim = mb_game_observation_size(&c->agent.game);
  c->synthetic = true;
  c->synth_min = 16;
  c->synth_max = 48;
  c->batch = 32;
  c->steps = steps;
  c->seed = seed;
  c->eval_every = 0;
  c->checkpoint_every = 0;
}

static bool same_module(const mb_nn_module *a, const mb_nn_module *b) {
  for (int32_t p = 0; p < a->n_params; p++)
    if (!mb_tensor_equal(&a->params[p].value, &b->params[p].value)) return false;
  return true;
}

static bool same_weights(mb_agent *a, mb_agent *b) {
  mb_nn_module *ma[4], *mb[4];
  mb_agent_modules(a, ma);
  mb_agent_modules(b, mb);
  for (int i = 0; i < 4; i++)
    if (!same_module(ma[i], mb[i])) return false;
  return true;
}

/* Lines of `text` that contain `needle`. */
static int count_lines(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)) != NULL; n++) {
    p = strchr(p, '\n');
    if (!p) return n + 1;
  }
  return n;
}

static void test_policy_learns(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  mb_train_config cfg;
  /* seed 4: the untrained network happens to send every buffer to slow memory (return 0),
   * so any improvement is learned, not inherited from the initialisation */
  tiny_config(&cfg, 4, 1000);
  mb_train_result res;
  mb_error err = {{0}};
  assert_true(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  print_message("raw policy: untrained %.4f, trained %.4f, random play %.4f, heuristic %.4f\n",
                res.untrained_policy, res.final_policy, res.random_policy, res.heuristic_play);
  assert_true(res.final_policy > res.untrained_policy + 0.01);
  assert_true(res.final_policy > res.random_policy + 0.005);
  assert_int_equal(res.prog.steps, 1000);
  assert_true(res.curve.len >= 2);
  mb_train_result_free(&res);
}

static void test_resume(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  char *path = mb_test_temp_path("resume.h5");
  mb_train_config cfg;
  tiny_config(&cfg, 4, 40);
  cfg.out = path;
  cfg.checkpoint_every = 20;
  cfg.eval_every = 20;
  mb_train_result res;
  mb_error err = {{0}};
  assert_true(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  int64_t len1 = res.curve.len;
  double seconds1 = res.prog.seconds;
  assert_true(res.seconds > 0 && res.seconds == seconds1);
  double first = res.curve.policy[0];
  /* the curve's references are the run's own measurements on its eval set */
  double heuristic = res.heuristic_play, random = res.random_policy;
  assert_true(isfinite(heuristic) && isfinite(random) && heuristic != random);
  assert_true(res.curve.heuristic == heuristic && res.curve.random == random);
  mb_train_result_free(&res);

  mb_agent ag;
  mb_agent_progress prog;
  mb_agent_curve curve;
  assert_true(mb_agent_load(path, &ag, NULL, &prog, &curve, &err));
  assert_int_equal(prog.steps, 40);
  assert_int_equal(curve.len, len1);
  assert_true(curve.heuristic == heuristic && curve.random == random);
  mb_agent_curve_free(&curve);
  mb_agent_free(&ag);
  /* play a checkpoint written before the references were stored: the resumed run measures
   * them again and its checkpoints carry them */
  mb_nn_file *nf = mb_nn_file_open(path, &err);
  assert_non_null(nf);
  assert_true(mb_nn_file_has(nf, "curve.heuristic") && mb_nn_file_has(nf, "curve.random"));
  mb_nn_file_close(nf);
  hid_t h5 = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(h5 >= 0);
  assert_true(H5Adelete(h5, "curve.heuristic") >= 0 && H5Adelete(h5, "curve.random") >= 0);
  H5Fclose(h5);
  assert_true(mb_agent_load(path, &ag, NULL, &prog, &curve, &err));
  assert_true(isnan(curve.heuristic) && isnan(curve.random));
  mb_agent_curve_free(&curve);
  mb_agent_free(&ag);

  cfg.resume = path;
  cfg.steps = 80;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_int_equal(res.prog.steps, 80);
  assert_int_equal(res.updates, 40);
  /* this run's wall time, and a total that also counts the run it resumed */
  assert_true(res.seconds > 0 && res.prog.seconds == seconds1 + res.seconds);
  assert_true(res.curve.len > len1);
  assert_true(res.curve.policy[0] == first);
  for (int64_t i = 1; i < res.curve.len; i++)
    assert_true(res.curve.step[i] >= res.curve.step[i - 1]);
  assert_true(res.curve.heuristic == heuristic && res.curve.random == random);
  mb_train_result_free(&res);
  assert_true(mb_agent_load(path, &ag, NULL, &prog, &curve, &err));
  assert_int_equal(prog.steps, 80);
  assert_true(curve.heuristic == heuristic && curve.random == random);
  mb_agent_curve_free(&curve);
  mb_agent_free(&ag);

  /* resuming from a missing file fails with its name */
  cfg.resume = "/nonexistent/resume.h5";
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_non_null(strstr(err.message, "/nonexistent/resume.h5"));
  mb_test_temp_remove(path);
}

/* A resumed curve keeps its eval set: resumed on other workloads (another synthetic range, so
 * other eval workloads), a run continued in place (keep_eval_set) fails naming the checkpoint and
 * both heuristic references, and a run branched off starts its curve again at the resumed step;
 * the run's options (cfg.options) are stored with it. */
static void test_resume_eval_set(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  char *path = mb_test_temp_path("evalset.h5");
  mb_train_config cfg;
  tiny_config(&cfg, 4, 20);
  cfg.out = path;
  cfg.eval_every = 10;
  cfg.options = "--synthetic --seed 4";
  mb_train_result res;
  mb_error err = {{0}};
  assert_true(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  int64_t len = res.curve.len;
  assert_true(len >= 2);
  mb_train_result_free(&res);
  mb_agent ag;
  mb_agent_progress prog;
  assert_true(mb_agent_load(path, &ag, NULL, &prog, NULL, &err));
  assert_string_equal(prog.options, "--synthetic --seed 4");
  mb_agent_free(&ag);

  cfg.resume = path;
  cfg.steps = 30;
  cfg.synth_max = 64; /* other synthetic eval workloads */
  cfg.keep_eval_set = true;
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_non_null(strstr(err.message, "eval set is not the one of its training curve"));
  assert_non_null(strstr(err.message, path));
  cfg.keep_eval_set = false;
  cfg.out = NULL;
  cfg.options = NULL; /* kept as loaded */
  assert_true(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_true(res.curve.step[0] == 20.0 && res.curve.len < len + 2);
  assert_string_equal(res.prog.options, "--synthetic --seed 4");
  mb_train_result_free(&res);
  mb_test_temp_remove(path);
}

/* A checkpoint written before `train` stored the run's options (train.options deleted, as an
 * older binary wrote it) still resumes through the CLI: with a warning, the options taken from
 * the command line as before (without workload options: refused as before); the checkpoint it
 * writes then stores them. */
static void test_resume_old_checkpoint(void **state) {
  (void)state;
  char *path = mb_test_temp_path("old-agent.h5");
  char *errp = mb_test_temp_path("old-agent.err");
  const char *net =
      "--synthetic --latent 16 --actions 8 --synth-min 16 --synth-max 32 --batch 16 -q";
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' train %s --steps 10 --seed 3 --out '%s' >/dev/null 2>&1",
           MB_TEST_BINARY, net, path);
  assert_int_equal(system(cmd), 0);
  hid_t h5 = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(h5 >= 0);
  assert_true(H5Aexists(h5, "train.options") > 0);
  assert_true(H5Adelete(h5, "train.options") >= 0);
  H5Fclose(h5);
  char text[8192];
  snprintf(cmd, sizeof cmd, "'%s' train --steps 20 --resume '%s' --out '%s' >/dev/null 2>'%s'",
           MB_TEST_BINARY, path, path, errp);
  int status = system(cmd);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 2);
  FILE *f = fopen(errp, "r");
  assert_non_null(f);
  text[fread(text, 1, sizeof text - 1, f)] = '\0';
  fclose(f);
  assert_non_null(strstr(text, "stores no training options (written before they were)"));
  assert_non_null(strstr(text, "no workloads: give --workloads, --split or --synthetic"));
  snprintf(cmd, sizeof cmd,
           "'%s' train %s --steps 20 --seed 3 --resume '%s' --out '%s' >/dev/null 2>'%s'",
           MB_TEST_BINARY, net, path, path, errp);
  assert_int_equal(system(cmd), 0);
  mb_agent ag;
  mb_agent_progress prog;
  mb_error err = {{0}};
  assert_true(mb_agent_load(path, &ag, NULL, &prog, NULL, &err));
  assert_int_equal(prog.steps, 20);
  assert_non_null(strstr(prog.options, "--synthetic "));
  assert_non_null(strstr(prog.options, "--seed 3 "));
  mb_agent_free(&ag);
  mb_test_temp_remove(errp);
  mb_test_temp_remove(path);
}

/* The progress line: wall-clock steps/s with the learner's and self-play's own rates beside
 * it, and an ETA when the run has a step limit (none with only a time limit). */
/* --freeze: resumed with the representation and prediction networks frozen, only the learned
 * model (dynamics, reward) changes; their weights are bit for bit the checkpoint's. An unknown
 * network is refused with its name. */
static void test_freeze(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  char *first = mb_test_temp_path("freeze-first.h5"), *second = mb_test_temp_path("freeze.h5");
  mb_train_config cfg;
  tiny_config(&cfg, 4, 40);
  cfg.out = first;
  mb_train_result res;
  mb_error err = {{0}};
  assert_true(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  mb_train_result_free(&res);
  cfg.resume = first;
  cfg.out = second;
  cfg.steps = 80;
  cfg.freeze = "repr,pred";
  assert_true(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_int_equal(res.updates, 40);
  mb_train_result_free(&res);
  mb_agent a, b;
  assert_true(mb_agent_load(first, &a, NULL, NULL, NULL, &err));
  assert_true(mb_agent_load(second, &b, NULL, NULL, NULL, &err));
  mb_nn_module *ma[4], *mb[4];
  mb_agent_modules(&a, ma);
  mb_agent_modules(&b, mb);
  for (int i = 0; i < 4; i++) {
    bool same = same_module(ma[i], mb[i]);
    bool frozen = !strcmp(ma[i]->name, "repr") || !strcmp(ma[i]->name, "pred");
    if (same != frozen) fail_msg("module %s: same %d, frozen %d", ma[i]->name, same, frozen);
  }
  mb_agent_free(&a);
  mb_agent_free(&b);
  cfg.freeze = "repr,policy";
  cfg.steps = 100;
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_non_null(strstr(err.message, "--freeze 'repr,policy'"));
  assert_non_null(strstr(err.message, "no module named 'policy'"));
  mb_test_temp_remove(first);
  mb_test_temp_remove(second);
}

/* --new-model: resumed with a fresh learned model of another shape, trained alone under the
 * checkpoint's frozen representation and prediction networks. The checkpoint written keeps
 * the new shape, the frozen networks are bit for bit the first run's, and the learned model
 * is not the first run's (it could not be: its dynamics is another size). A new model without
 * a checkpoint to resume is refused. */
static void test_new_model(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  char *first = mb_test_temp_path("newmodel-first.h5"), *second = mb_test_temp_path("newmodel.h5");
  mb_train_config cfg;
  tiny_config(&cfg, 5, 40);
  cfg.out = first;
  mb_train_result res;
  mb_error err = {{0}};
  assert_true(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  mb_train_result_free(&res);
  cfg.resume = first;
  cfg.out = second;
  cfg.steps = 80;
  cfg.freeze = "repr,pred";
  cfg.new_model = true;
  cfg.agent.dyn_width = 48;
  cfg.agent.dyn_blocks = 2;
  if (!mb_train(&cfg, NULL, 0, NULL, &res, &err)) fail_msg("%s", err.message);
  assert_int_equal(res.updates, 40);
  assert_int_equal(res.prog.steps, 80);
  assert_int_equal(res.opt.step, 40); /* a fresh optimiser */
  mb_train_result_free(&res);
  mb_agent a, b;
  assert_true(mb_agent_load(first, &a, NULL, NULL, NULL, &err));
  assert_true(mb_agent_load(second, &b, NULL, NULL, NULL, &err));
  assert_int_equal(a.cfg.dyn_width, 0);
  assert_int_equal(b.cfg.dyn_width, 48);
  assert_int_equal(b.cfg.dyn_blocks, 2);
  assert_true(same_module(&a.repr, &b.repr) && same_module(&a.pred, &b.pred));
  assert_true(mb_agent_param_count(&b) > mb_agent_param_count(&a));
  assert_false(same_module(&a.reward, &b.reward));
  mb_agent_free(&a);
  mb_agent_free(&b);
  tiny_config(&cfg, 5, 40);
  cfg.new_model = true;
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_non_null(strstr(err.message, "new_model"));
  mb_test_temp_remove(first);
  mb_test_temp_remove(second);
}

static void test_progress_line(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  for (int limit = 0; limit < 2; limit++) {
    mb_train_config cfg;
    tiny_config(&cfg, 5, limit == 0 ? 30 : 0);
    if (limit == 1) cfg.seconds = 1.5; /* room for some updates under the sanitizers */
    cfg.eval_every = 10;               /* curve points log the raw policy's return */
    cfg.log = tmpfile();
    assert_non_null(cfg.log);
    cfg.log_every_s = 0;
    mb_train_result res;
    mb_error err = {{0}};
    assert_true(mb_train(&cfg, NULL, 0, NULL, &res, &err));
    assert_true(res.seconds > 0 && res.updates > 0);
    mb_train_result_free(&res);
    rewind(cfg.log);
    char line[1024];
    int progress = 0, eta = 0, moving = 0, slower = 0, points = 0;
    while (fgets(line, sizeof line, cfg.log)) {
      assert_null(strstr(line, "validation")); /* a run without a validation set */
      points += strstr(line, ": raw policy (greedy, no search) ") != NULL;
      if (!strstr(line, "train: step ") || !strstr(line, " episodes ")) continue;
      progress++;
      const char *p = strstr(line, "steps/s (learner ");
      assert_non_null(p);
      const char *q = p - 1; /* the space before "steps/s"; the rate is the word before it */
      while (q > line && q[-1] != ' ') q--;
      double rate = atof(q), learner = atof(p + strlen("steps/s (learner "));
      /* the wall-clock rate also pays for self-play, so it is below the learner's (both 0
       * before the replay buffer holds a batch) */
      assert_true(rate >= 0 && learner >= rate);
      moving += rate > 0;
      slower += rate > 0 && rate < learner; /* not the learner's rate under another name */
      assert_non_null(strstr(line, "decisions/s)"));
      const char *e = strstr(line, "  ETA ");
      if (e) { /* mm:ss (or h:mm:ss), as run's: whole minutes said "1 min" with 0.2 s left */
        int mm = -1, ss = -1;
        assert_int_equal(sscanf(e, "  ETA %d:%d", &mm, &ss), 2);
        assert_true(mm >= 0 && ss >= 0 && ss < 60);
        assert_null(strstr(line, " min"));
        eta++;
      }
    }
    fclose(cfg.log);
    assert_true(progress > 0 && moving > 0 && slower > 0);
    if (limit == 0) assert_int_equal(points, 3); /* steps 10, 20, 30 */
    /* every line with a rate has an ETA under a step limit; none under a time limit */
    assert_true(limit == 0 ? eta >= moving : eta == 0);
  }
  /* log_every_s apart: a 30-update run an hour apart logs no progress line */
  mb_train_config cfg;
  tiny_config(&cfg, 5, 30);
  cfg.log = tmpfile();
  assert_non_null(cfg.log);
  cfg.log_every_s = 3600;
  mb_train_result res;
  mb_error err = {{0}};
  if (!mb_train(&cfg, NULL, 0, NULL, &res, &err)) fail_msg("%s", err.message);
  mb_train_result_free(&res);
  char *log = mb_test_stream_text(cfg.log);
  fclose(cfg.log);
  assert_non_null(strstr(log, "train: "));             /* it logs, */
  assert_int_equal(count_lines(log, " episodes "), 0); /* but no progress line */
  free(log);
}

static void test_determinism(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  mb_train_config cfg;
  tiny_config(&cfg, 9, 60);
  mb_train_result a, b, c, d;
  mb_error err = {{0}};
  assert_true(mb_train(&cfg, NULL, 0, NULL, &a, &err));
  assert_true(mb_train(&cfg, NULL, 0, NULL, &b, &err));
  assert_true(same_weights(&a.agent, &b.agent));
  assert_true(a.final_policy == b.final_policy);
  cfg.jobs = 2;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &c, &err));
  assert_true(same_weights(&a.agent, &c.agent));
  cfg.jobs = 1;
  cfg.seed = 10;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &d, &err));
  assert_false(same_weights(&a.agent, &d.agent));
  mb_train_result_free(&a);
  mb_train_result_free(&b);
  mb_train_result_free(&c);
  mb_train_result_free(&d);
}

static bool same_curve(const mb_agent_curve *a, const mb_agent_curve *b) {
  if (a->len != b->len) return false;
  for (int64_t i = 0; i < a->len; i++)
    if (a->step[i] != b->step[i] || memcmp(&a->policy[i], &b->policy[i], sizeof(double)) ||
        memcmp(&a->loss[i], &b->loss[i], sizeof(double)) ||
        memcmp(&a->selfplay[i], &b->selfplay[i], sizeof(double)))
      return false;
  return true;
}

static void test_priority_replay(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  mb_train_config cfg;
  tiny_config(&cfg, 9, 60);
  cfg.eval_every = 20; /* a curve with losses to compare */
  cfg.priority_alpha = 0.6;
  mb_train_result a, b, u;
  mb_error err = {{0}};
  assert_true(mb_train(&cfg, NULL, 0, NULL, &a, &err));
  assert_int_equal(a.prog.steps, 60);
  assert_true(isfinite(a.final_policy));
  assert_true(mb_train(&cfg, NULL, 0, NULL, &b, &err));
  assert_true(same_weights(&a.agent, &b.agent));
  assert_true(same_curve(&a.curve, &b.curve));
  cfg.priority_alpha = 0;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &u, &err));
  assert_false(same_weights(&a.agent, &u.agent));
  print_message("60 updates: loss at the last point, prioritised %.4f, uniform %.4f\n",
                a.curve.loss[a.curve.len - 1], u.curve.loss[u.curve.len - 1]);
  mb_train_result_free(&a);
  mb_train_result_free(&b);
  mb_train_result_free(&u);
}

/* Per-workload fine-tuning's configuration (the solvers' and bench muzero's): valid by updates
 * and by seconds, in both models, with the documented batch, no checkpoint and the caller's seed;
 * the rest is the defaults. */
static void test_finetune_config(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_train_config d, c;
  mb_train_config_default(&d);
  for (int exact = 0; exact < 2; exact++) {
    mb_train_config_finetune(&c, 0, 2000, 7, exact);
    assert_true(mb_train_config_check(&c, &err));
    assert_int_equal(c.steps, 2000);
    assert_true(c.seconds == 0);
    assert_int_equal(c.seed, 7);
    assert_int_equal(c.batch, 32);
    assert_int_equal(c.checkpoint_every, 0);
    assert_true(c.self_play_exact == (exact == 1));
    assert_int_equal(c.unroll, d.unroll);
    assert_true(c.lr == d.lr);
    assert_null(c.out);
    mb_train_config_finetune(&c, 30, 0, 7, exact);
    assert_true(mb_train_config_check(&c, &err));
    assert_true(c.seconds == 30);
    assert_int_equal(c.steps, 0);
  }
}

/* bench muzero --finetune-model: the learned model alone, against the frozen networks' values
 * (test_freeze checks that the frozen networks stay as they are) */
static void test_model_only_config(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_train_config d, c;
  mb_train_config_finetune(&d, 0, 100, 3, false);
  c = d;
  mb_train_config_model_only(&c);
  assert_string_equal(c.freeze, "repr,pred");
  assert_true(mb_train_freeze_check(c.freeze, &err));
  assert_int_equal(c.td_steps, 0);
  assert_true(c.value_weight == 1);
  assert_true(d.value_weight != 1 && d.td_steps != 0 && d.freeze == NULL);
  assert_true(mb_train_config_check(&c, &err));
  assert_int_equal(c.batch, d.batch);
  assert_int_equal(c.steps, d.steps);
  assert_int_equal(c.seed, d.seed);
}

/* Sibling transitions (and the consistency loss): training with them finishes, is deterministic
 * (the sibling is drawn from the actor's stream), changes the weights, and works with prioritised
 * replay too. */
static void test_sibling_transitions(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  mb_train_config cfg;
  /* the measured default (datasets/agents/EXPERIMENTS.md): one sibling step per decision,
   * weight 1 */
  mb_train_config_default(&cfg);
  assert_true(cfg.sibling_weight == 1.0);
  assert_int_equal(cfg.sibling_depth, 1);
  tiny_config(&cfg, 5, 50);
  cfg.sibling_weight = 1.0;
  mb_train_result a, b, u;
  mb_error err = {{0}};
  assert_true(mb_train(&cfg, NULL, 0, NULL, &a, &err));
  assert_int_equal(a.prog.steps, 50);
  assert_true(mb_train(&cfg, NULL, 0, NULL, &b, &err));
  assert_true(same_weights(&a.agent, &b.agent));
  assert_true(same_curve(&a.curve, &b.curve));
  cfg.sibling_weight = 0;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &u, &err));
  assert_false(same_weights(&a.agent, &u.agent));
  /* the consistency loss (on by default) reaches the weights too */
  mb_train_result c0;
  cfg.consistency_weight = 0;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &c0, &err));
  assert_false(same_weights(&c0.agent, &u.agent));
  mb_train_result_free(&c0);
  cfg.consistency_weight = 1;
  mb_train_result_free(&b);
  cfg.sibling_weight = 1.0;
  cfg.priority_alpha = 0.6;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &b, &err));
  assert_false(same_weights(&a.agent, &b.agent));
  mb_train_result_free(&b);
  /* sibling paths of 3 steps (raw-policy moves after the sibling, value targets along them):
   * deterministic, and not the one-step weights */
  cfg.priority_alpha = 0;
  cfg.sibling_depth = 3;
  mb_train_result d;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &b, &err));
  assert_true(mb_train(&cfg, NULL, 0, NULL, &d, &err));
  assert_int_equal(b.prog.steps, 50);
  assert_true(same_weights(&b.agent, &d.agent));
  assert_false(same_weights(&a.agent, &b.agent));
  mb_train_result_free(&d);
  /* every step of the path counts: depth 2 gives other weights than depth 3 */
  cfg.sibling_depth = 2;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &d, &err));
  assert_false(same_weights(&b.agent, &d.agent));
  mb_train_result_free(&d);
  mb_train_result_free(&a);
  mb_train_result_free(&b);
  mb_train_result_free(&u);
}

/* An option changed from tiny_config(6, 40): the run is deterministic and reaches the weights
 * (other weights than the plain run's). */
static void assert_option_reaches_weights(const mb_train_config *changed) {
  mb_blas_set_threads(1);
  mb_train_config cfg;
  tiny_config(&cfg, 6, 40);
  mb_train_result base, a, b;
  mb_error err = {{0}};
  assert_true(mb_train(&cfg, NULL, 0, NULL, &base, &err));
  assert_true(mb_train(changed, NULL, 0, NULL, &a, &err));
  assert_true(mb_train(changed, NULL, 0, NULL, &b, &err));
  assert_int_equal(a.prog.steps, 40);
  assert_true(same_weights(&a.agent, &b.agent));
  assert_false(same_weights(&a.agent, &base.agent));
  mb_train_result_free(&a);
  mb_train_result_free(&b);
  mb_train_result_free(&base);
}

/* Self-play searching the real game trains deterministically and reaches the weights (other
 * weights than self-play in the learned model). With leaf rollouts (expert iteration), two
 * actor threads train the same agent as one: each actor's rollouts restore its own game. */
static void test_self_play_exact(void **state) {
  (void)state;
  mb_train_config cfg;
  tiny_config(&cfg, 6, 40);
  cfg.self_play_exact = true;
  assert_option_reaches_weights(&cfg);

  cfg.search.leaf_rollout = 4;
  mb_train_result one, two;
  mb_error err = {{0}};
  assert_true(mb_train(&cfg, NULL, 0, NULL, &one, &err));
  cfg.jobs = 2;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &two, &err));
  assert_true(same_weights(&one.agent, &two.agent));
  mb_train_result_free(&one);
  mb_train_result_free(&two);
}

/* Packing instances in the synthetic curriculum: deterministic, and they reach the weights
 * (share 0 draws nothing, so it is the plain curriculum). */
static void test_synth_packing(void **state) {
  (void)state;
  mb_train_config cfg;
  tiny_config(&cfg, 6, 40);
  cfg.synth_packing_share = 1;
  assert_option_reaches_weights(&cfg);
}

/* The synthetic workloads' fast memory: a program gets the catalogue's capacity rule; a packing
 * instance the perfect packing's height half the time, otherwise a whole number of quanta in
 * [1/4, 1) of it. */
static void test_synthetic_capacity(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_hardware base, hw;
  assert_true(mb_hardware_find("tpu-v4i", NULL, &base, &err));
  mb_packing_options po;
  mb_packing_options_default(&po);
  mb_rng rng;
  mb_rng_seed(&rng, 21);
  enum { DRAWS = 4000 }; /* each of the 768 drawn capacities about 2.6 times */
  int full = 0;
  int64_t lo = INT64_MAX, hi = 0;
  for (int i = 0; i < DRAWS; i++) {
    mb_workload *w = mb_train_synthetic_workload(&rng, 12, true, NULL, &base, &hw, &err);
    if (!w) fail_msg("%s", err.message);
    assert_true(hw.capacity <= po.height);
    if (hw.capacity == po.height) {
      full++;
    } else {
      assert_int_equal(hw.capacity % po.quantum, 0);
      lo = hw.capacity < lo ? hw.capacity : lo;
      hi = hw.capacity > hi ? hw.capacity : hi;
    }
    mb_workload_free(w);
  }
  assert_true(full > DRAWS * 2 / 5 && full < DRAWS * 3 / 5);
  assert_true(lo >= po.height / 4 && lo < po.height / 4 + po.height / 16);
  assert_true(hi < po.height && hi > po.height - po.height / 16);
  for (int i = 0; i < 20; i++) {
    mb_workload *w = mb_train_synthetic_workload(&rng, 10 + i, false, NULL, &base, &hw, &err);
    if (!w) fail_msg("%s", err.message);
    int64_t rule = mb_catalogue_auto_capacity(w, &base);
    assert_int_equal(hw.capacity, rule > 0 ? rule : base.capacity);
    mb_workload_free(w);
  }
}

/* Held-out random programs on the TPU-v4-like profile with the catalogue's capacity rule. */
static void make_validation(mb_train_workload *tw, mb_workload **w, int32_t n) {
  mb_error err = {{0}};
  mb_hardware base;
  assert_true(mb_hardware_find("tpu-v4i", NULL, &base, &err));
  mb_random_options o;
  mb_random_options_default(&o);
  mb_rng rng;
  mb_rng_seed(&rng, 77);
  for (int32_t i = 0; i < n; i++) {
    w[i] = mb_random_workload(&rng, 20 + 8 * i, &o, NULL, &err);
    assert_non_null(w[i]);
    int64_t cap = mb_catalogue_auto_capacity(w[i], &base);
    tw[i] = (mb_train_workload){.name = w[i]->name,
                                .w = w[i],
                                .hw = mb_hardware_with_capacity(&base, cap > 0 ? cap : 1 << 20)};
  }
}

/* Workloads without a single decision (fast memory smaller than every buffer): training bounded
 * by updates stops with an error naming the cause instead of waiting forever for data. */
static void test_no_decisions(void **state) {
  (void)state;
  mb_train_workload tw[2];
  mb_workload *w[2];
  make_validation(tw, w, 2);
  for (int i = 0; i < 2; i++) tw[i].hw = mb_hardware_with_capacity(&tw[i].hw, 1);
  mb_train_config cfg;
  tiny_config(&cfg, 5, 10);
  cfg.synthetic = false;
  mb_train_result res;
  mb_error err = {{0}};
  assert_false(mb_train(&cfg, tw, 2, NULL, &res, &err));
  assert_non_null(strstr(err.message, "episodes without a decision"));
  for (int i = 0; i < 2; i++) mb_workload_free(w[i]);
}

static double series_max(const double *x, int64_t n) {
  double m = NAN;
  for (int64_t i = 0; i < n; i++)
    if (!isnan(x[i]) && (isnan(m) || x[i] > m)) m = x[i];
  return m;
}

static void test_validation(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  enum { NV = 3 };
  mb_train_workload val[NV];
  mb_workload *vw[NV];
  make_validation(val, vw, NV);
  char *out = mb_test_temp_path("val.h5"), *best = mb_test_temp_path("val.best.h5");
  remove(best);
  mb_train_config cfg;
  /* seed 10: the validation return peaks mid-run (step 40), so the kept agent is not the last */
  tiny_config(&cfg, 10, 60);
  cfg.eval_every = 20;
  cfg.out = out;
  mb_train_result plain, res;
  mb_error err = {{0}};
  assert_true(mb_train(&cfg, NULL, 0, NULL, &plain, &err));
  assert_true(isnan(plain.final_validation));
  for (int64_t i = 0; i < plain.curve.len; i++) assert_true(isnan(plain.curve.validation[i]));
  /* a checkpoint of a run without validation has no series, and loads with it all NaN (as
   * checkpoints written before validation sets existed) */
  mb_nn_file *f = mb_nn_file_open(out, &err);
  assert_non_null(f);
  assert_false(mb_nn_file_has_series(f, "curve_validation"));
  assert_true(mb_nn_file_has_series(f, "curve_policy"));
  mb_nn_file_close(f);
  mb_agent ag;
  mb_agent_progress prog;
  mb_agent_curve curve;
  assert_true(mb_agent_load(out, &ag, NULL, &prog, &curve, &err));
  assert_int_equal(curve.len, plain.curve.len);
  for (int64_t i = 0; i < curve.len; i++) assert_true(isnan(curve.validation[i]));
  mb_agent_curve_free(&curve);
  mb_agent_free(&ag);

  /* best_out without a validation set is refused */
  cfg.best_out = best;
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_non_null(strstr(err.message, "best_out"));

  cfg.validation = val;
  cfg.n_validation = NV;
  cfg.log = tmpfile();
  assert_non_null(cfg.log);
  assert_true(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  /* evaluation draws from no training stream: the same weights as without validation */
  assert_true(same_weights(&plain.agent, &res.agent));
  /* every evaluation point (0, 20, 40, 60) has a validation return, and the log gives it */
  assert_int_equal(res.curve.len, 4);
  char *log = mb_test_stream_text(cfg.log);
  fclose(cfg.log);
  cfg.log = NULL;
  for (int64_t i = 0; i < res.curve.len; i++) {
    assert_true(res.curve.step[i] == 20.0 * (double)i);
    assert_true(isfinite(res.curve.validation[i]));
    char want[160];
    if (i == 0)
      snprintf(want, sizeof want, "train: validation set %d workloads: raw policy %.4f (step 0)\n",
               NV, res.curve.validation[0]);
    else
      snprintf(want, sizeof want,
               "train: step %lld: raw policy (greedy, no search) %.4f on the eval set, validation "
               "%.4f\n",
               (long long)(20 * i), res.curve.policy[i], res.curve.validation[i]);
    if (!strstr(log, want)) fail_msg("the log lacks '%s'", want);
  }
  /* a new best only when strictly better: at step 0, then at 40 (20 ties step 0's 0.0000) */
  assert_int_equal(count_lines(log, "best validation return so far"), 2);
  char best_line[4200];
  for (int k = 0; k < 2; k++) {
    snprintf(best_line, sizeof best_line,
             "train: step %d: best validation return so far %.4f, "
             "written to %s\n",
             40 * k, res.curve.validation[2 * k], best);
    if (!strstr(log, best_line)) fail_msg("the log lacks '%s'", best_line);
  }
  free(log);
  double direct;
  assert_true(mb_eval_policy(&res.agent, val, NV, MB_EVAL_POLICY, cfg.seed, &direct, &err));
  assert_true(res.curve.validation[res.curve.len - 1] == direct);
  assert_true(res.final_validation == direct);
  double mx = series_max(res.curve.validation, res.curve.len);
  print_message("validation: %.4f %.4f %.4f %.4f; best %.4f at step %lld\n",
                res.curve.validation[0], res.curve.validation[1], res.curve.validation[2],
                res.curve.validation[3], res.best_validation, (long long)res.best_step);
  assert_true(res.best_written);
  assert_true(res.best_validation == mx);
  assert_true(res.best_step == 40);
  /* the kept agent: loadable, at the best step, and its validation return is the maximum */
  assert_true(mb_agent_load(best, &ag, NULL, &prog, &curve, &err));
  assert_int_equal(prog.steps, res.best_step);
  assert_true(curve.validation[curve.len - 1] == mx);
  assert_true(curve.heuristic == res.heuristic_play && curve.random == res.random_policy);
  assert_true(mb_eval_policy(&ag, val, NV, MB_EVAL_POLICY, cfg.seed, &direct, &err));
  assert_true(direct == mx);
  mb_agent_curve_free(&curve);
  mb_agent_free(&ag);
  /* the checkpoint stores the series */
  assert_true(mb_agent_load(out, &ag, NULL, &prog, &curve, &err));
  assert_int_equal(curve.len, res.curve.len);
  for (int64_t i = 0; i < curve.len; i++)
    assert_true(curve.validation[i] == res.curve.validation[i]);
  mb_agent_curve_free(&curve);
  mb_agent_free(&ag);

  /* the final validation return is the last point's: checked on a 40-step run, where it is
   * not 0 as the 60-step run's is (an array slot past the curve's end could read as 0 too) */
  mb_train_config shorter = cfg;
  shorter.steps = 40;
  shorter.out = shorter.best_out = NULL;
  mb_train_result short_run;
  assert_true(mb_train(&shorter, NULL, 0, NULL, &short_run, &err));
  assert_int_equal(short_run.curve.len, 3);
  assert_true(short_run.final_validation == short_run.curve.validation[2]);
  assert_true(short_run.final_validation > 0);
  mb_train_result_free(&short_run);

  /* resumed: the series continues; the best so far starts from the resumed curve's */
  cfg.resume = out;
  cfg.steps = 100;
  mb_train_result more;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &more, &err));
  assert_int_equal(more.curve.len, 6);
  for (int64_t i = 0; i < more.curve.len; i++) {
    assert_true(isfinite(more.curve.validation[i]));
    if (i < res.curve.len) assert_true(more.curve.validation[i] == res.curve.validation[i]);
  }
  assert_true(more.best_validation == series_max(more.curve.validation, more.curve.len));
  assert_true(more.best_written == (more.best_step > 60));
  assert_true(mb_agent_load(best, &ag, NULL, &prog, NULL, &err));
  assert_int_equal(prog.steps, more.best_step);
  mb_agent_free(&ag);
  mb_train_result_free(&more);
  mb_train_result_free(&res);
  mb_train_result_free(&plain);
  for (int32_t i = 0; i < NV; i++) mb_workload_free(vw[i]);
  mb_test_temp_remove(out);
  mb_test_temp_remove(best);
}

/* What the on_eval hook saw: the steps, whether the call was the final one, and a copy of the
 * weights it was given. */
typedef struct hook_log {
  int32_t calls, finals;
  int64_t steps[8];
  mb_agent *seen;         /* NULL: not copied */
  int32_t fail_at;        /* 1-based call that returns false (0: never) */
  const char *checkpoint; /* NULL: not read; else the steps of the checkpoint there at each
                             call go into checkpoint_steps (-1: none yet) */
  int64_t checkpoint_steps[8];
  double checkpoint_seconds[8]; /* its training seconds */
} hook_log;

static bool record_eval(void *ctx, const mb_agent *ag, int64_t step, bool final, mb_error *err) {
  hook_log *h = ctx;
  if (h->calls < 8) h->steps[h->calls] = step;
  if (h->checkpoint && h->calls < 8) {
    h->checkpoint_steps[h->calls] = -1;
    if (access(h->checkpoint, F_OK) == 0) {
      mb_agent stored;
      mb_agent_progress prog;
      if (!mb_agent_load(h->checkpoint, &stored, NULL, &prog, NULL, err)) return false;
      mb_agent_free(&stored);
      h->checkpoint_steps[h->calls] = prog.steps;
      h->checkpoint_seconds[h->calls] = prog.seconds;
    }
  }
  h->calls++;
  h->finals += final;
  if (h->seen && !mb_agent_copy_weights(h->seen, ag, err)) return false;
  if (h->calls == h->fail_at) return mb_fail(err, "hook refused at step %lld", (long long)step);
  return true;
}

static bool finite_weights(mb_agent *ag) {
  mb_nn_module *m[4];
  mb_agent_modules(ag, m);
  for (int i = 0; i < 4; i++)
    for (int32_t p = 0; p < m[i]->n_params; p++) {
      const mb_tensor *t = &m[i]->params[p].value;
      for (int64_t j = 0; j < mb_tensor_size(t); j++)
        if (!isfinite(t->data[j])) return false;
    }
  return true;
}

/* A run bounded by time alone, with prioritised replay: the curriculum grows from synth_min
 * to synth_max by the clock (test_schedules has the exact sizes), and training stays finite. */
static void test_time_limit(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  mb_train_config cfg;
  tiny_config(&cfg, 5, 0);
  cfg.seconds = 1.5;
  cfg.synth_min = 4;
  cfg.synth_max = 64;
  cfg.priority_alpha = 0.6;
  mb_train_result res;
  mb_error err = {{0}};
  if (!mb_train(&cfg, NULL, 0, NULL, &res, &err)) fail_msg("%s", err.message);
  double per_episode = (double)res.prog.decisions / (double)res.prog.episodes;
  print_message("time limit: %lld updates, %lld episodes, %.1f decisions each\n",
                (long long)res.updates, (long long)res.prog.episodes, per_episode);
  assert_true(res.updates > 0);
  /* 4-buffer episodes have at most 4 decisions; past half the time sizes reach 64 */
  assert_true(per_episode > 6);
  assert_true(finite_weights(&res.agent));
  mb_train_result_free(&res);
}

static void test_eval_hook(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  mb_train_config cfg;
  tiny_config(&cfg, 5, 60);
  cfg.eval_every = 20;
  mb_train_result plain, res;
  mb_error err = {{0}};
  assert_true(mb_train(&cfg, NULL, 0, NULL, &plain, &err));
  mb_agent seen;
  mb_rng rng;
  mb_rng_seed(&rng, 1);
  assert_true(mb_agent_create(&seen, &cfg.agent, &rng, &err));
  hook_log h = {.seen = &seen};
  cfg.on_eval = record_eval;
  cfg.on_eval_ctx = &h;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  /* steps 20, 40, 60 during training, then once more at the end (final) */
  assert_int_equal(h.calls, 4);
  assert_int_equal(h.finals, 1);
  assert_int_equal(h.steps[0], 20);
  assert_int_equal(h.steps[1], 40);
  assert_int_equal(h.steps[2], 60);
  assert_int_equal(h.steps[3], 60);
  /* the hook is given the current weights (the last call: the trained ones) and does not
   * change training */
  assert_true(same_weights(&seen, &res.agent));
  assert_true(same_weights(&plain.agent, &res.agent));
  mb_agent_free(&seen);
  mb_train_result_free(&res);
  /* a hook that fails stops training with its error */
  hook_log f = {.fail_at = 2};
  cfg.on_eval_ctx = &f;
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_non_null(strstr(err.message, "hook refused at step 40"));
  assert_int_equal(f.calls, 2);
  mb_train_result_free(&plain);
}

/* Checkpoints fall on their grid, at the update that reaches a multiple of checkpoint_every
 * (not one later), and the curve's seconds are the run's own wall clock. */
static void test_checkpoint_grid(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  char *path = mb_test_temp_path("grid.h5");
  mb_train_config cfg;
  tiny_config(&cfg, 5, 30);
  cfg.eval_every = 10;
  cfg.checkpoint_every = 10;
  cfg.out = path;
  hook_log h = {.checkpoint = path};
  cfg.on_eval = record_eval;
  cfg.on_eval_ctx = &h;
  mb_train_result res;
  mb_error err = {{0}};
  if (!mb_train(&cfg, NULL, 0, NULL, &res, &err)) fail_msg("%s", err.message);
  /* the hook runs at a curve point, before that step's checkpoint is written */
  assert_int_equal(h.calls, 4);
  const int64_t want[4] = {-1, 10, 20, 30};
  for (int i = 0; i < 4; i++) assert_int_equal(h.checkpoint_steps[i], want[i]);
  for (int i = 1; i < 4; i++) /* the training seconds so far, stored with each checkpoint */
    assert_true(h.checkpoint_seconds[i] >= 0 && h.checkpoint_seconds[i] <= res.seconds + 1e-6);
  /* the start and steps 10, 20, 30 (the last is the end): within this run's wall time, in
   * order */
  assert_int_equal(res.curve.len, 4);
  for (int64_t i = 0; i < res.curve.len; i++) {
    double t = res.curve.seconds[i];
    assert_true(t >= 0 && t <= res.seconds + 1e-6);
    if (i > 0) assert_true(t >= res.curve.seconds[i - 1]);
  }
  mb_train_result_free(&res);
  mb_test_temp_remove(path);
}

/* The log says when a training state is written, and removes a state an earlier run left at
 * state_out only when there is one. */
static void test_state_log(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  char *st = mb_test_temp_path("log.state.h5");
  for (int earlier = 1; earlier >= 0; earlier--) {
    if (earlier) mb_test_write_bytes(st, "not a state", 11);
    mb_train_config cfg;
    tiny_config(&cfg, 5, 20);
    cfg.target_period = 10;
    cfg.state_every = 10;
    cfg.state_out = st;
    cfg.log = tmpfile();
    assert_non_null(cfg.log);
    mb_train_result res;
    mb_error err = {{0}};
    if (!mb_train(&cfg, NULL, 0, NULL, &res, &err)) fail_msg("%s", err.message);
    mb_train_result_free(&res);
    char *log = mb_test_stream_text(cfg.log);
    fclose(cfg.log);
    char want[4200];
    snprintf(want, sizeof want, "train: removed %s, the training state of an earlier run\n", st);
    if (earlier)
      assert_non_null(strstr(log, want));
    else
      assert_null(strstr(log, "train: removed "));
    snprintf(want, sizeof want, "train: step 10: training state written to %s (", st);
    assert_non_null(strstr(log, want));
    assert_int_equal(access(st, F_OK), -1); /* removed when the run ends normally */
    free(log);
  }
  mb_test_temp_remove(st);
}

static void assert_same_curve_returns(const mb_agent_curve *a, const mb_agent_curve *b) {
  assert_int_equal(a->len, b->len);
  const size_t n = (size_t)a->len * sizeof(double);
  assert_memory_equal(a->step, b->step, n);
  assert_memory_equal(a->episodes, b->episodes, n);
  assert_memory_equal(a->selfplay, b->selfplay, n);
  assert_memory_equal(a->policy, b->policy, n);
  assert_memory_equal(a->loss, b->loss, n);
}

static void test_state_resume(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  char *ref_out = mb_test_temp_path("st_ref.h5"), *ref_state = mb_test_temp_path("st_ref.state.h5");
  char *out = mb_test_temp_path("st.h5"), *st = mb_test_temp_path("st.state.h5");
  char *alone = mb_test_temp_path("st_alone.h5");
  mb_train_config cfg;
  tiny_config(&cfg, 6, 120);
  cfg.priority_alpha = 0.6;
  cfg.replay_capacity = 400; /* wraps within the run */
  cfg.eval_every = 20;
  cfg.checkpoint_every = 20;
  cfg.target_period = 20;
  cfg.state_every = 40;
  mb_error err = {{0}};
  mb_train_result ref, res;
  cfg.out = ref_out;
  cfg.state_out = ref_state;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &ref, &err));
  assert_int_equal(access(ref_state, F_OK), -1); /* a finished run leaves no state */

  /* a fresh run removes a stale state at its state path at once (stopped here at step 20, before
   * its own first state) */
  cfg.out = out;
  cfg.state_out = st;
  FILE *stale = fopen(st, "w");
  assert_non_null(stale);
  fclose(stale);
  hook_log h0 = {.fail_at = 1};
  cfg.on_eval = record_eval;
  cfg.on_eval_ctx = &h0;
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_int_equal(access(st, F_OK), -1);

  /* the same run, stopped by an error at step 100: its last state is at step 80 */
  hook_log h = {.fail_at = 5};
  cfg.on_eval = record_eval;
  cfg.on_eval_ctx = &h;
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_non_null(strstr(err.message, "hook refused at step 100"));
  mb_agent ag;
  mb_agent_progress prog;
  mb_agent_curve curve;
  assert_true(mb_agent_load(st, &ag, NULL, &prog, &curve, &err)); /* a state is a checkpoint */
  assert_int_equal(prog.steps, 80);
  assert_true(curve.heuristic == ref.heuristic_play && curve.random == ref.random_policy);
  mb_agent_curve_free(&curve);
  mb_agent_free(&ag);
  cfg.on_eval = NULL;

  /* from the checkpoint alone: an empty buffer, another run */
  cfg.resume = out;
  cfg.out = alone;
  cfg.state_out = NULL;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_int_equal(res.prog.steps, 120);
  assert_false(same_weights(&ref.agent, &res.agent));
  mb_train_result_free(&res);

  /* a state of another buffer shape, or a checkpoint that is no state, is refused */
  cfg.resume_state = st;
  cfg.replay_capacity = 500;
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_non_null(strstr(err.message, "replay.capacity"));
  assert_non_null(strstr(err.message, st));
  cfg.replay_capacity = 400;
  cfg.resume_state = ref_out;
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_non_null(strstr(err.message, "not a training state"));

  /* from the state: the run that never stopped, bit for bit */
  cfg.resume_state = st;
  cfg.out = out;
  cfg.state_out = st;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_int_equal(res.prog.steps, 120);
  assert_int_equal(res.updates, 40);
  assert_true(same_weights(&ref.agent, &res.agent));
  assert_int_equal(res.opt.step, ref.opt.step);
  assert_int_equal(res.prog.episodes, ref.prog.episodes);
  assert_int_equal(res.prog.decisions, ref.prog.decisions);
  assert_same_curve_returns(&ref.curve, &res.curve);
  assert_true(res.final_policy == ref.final_policy);
  assert_int_equal(access(st, F_OK), -1);
  mb_train_result_free(&res);

  cfg.resume = NULL;
  cfg.resume_state = st;
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err)); /* a state needs its checkpoint */
  assert_non_null(strstr(err.message, "resume_state"));
  mb_train_result_free(&ref);
  mb_test_temp_remove(ref_out);
  mb_test_temp_remove(ref_state);
  mb_test_temp_remove(out);
  mb_test_temp_remove(st);
  mb_test_temp_remove(alone);
}

static double mean_self_play(const mb_agent_curve *c) {
  double sum = 0;
  int n = 0;
  for (int64_t i = 0; i < c->len; i++)
    if (!isnan(c->selfplay[i])) sum += c->selfplay[i], n++;
  return n ? sum / n : NAN;
}

/* The self-play column of a run played in segments is the segments' own return, not the
 * episode's return up to the segment's end: with 2-decision segments of 16-48-decision
 * episodes it is a fraction of the whole episodes' return. The segments are played by an
 * agent trained first on whole episodes, so that the raw policy's moves before a segment earn
 * some return. */
static void test_segment_returns(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  mb_train_config cfg;
  tiny_config(&cfg, 3, 300);
  cfg.eval_every = 100;
  cfg.segment = 64; /* every episode whole */
  mb_train_result whole, segments;
  mb_error err = {{0}};
  if (!mb_train(&cfg, NULL, 0, NULL, &whole, &err)) fail_msg("%s", err.message);
  cfg.steps = 60;
  cfg.eval_every = 20;
  cfg.segment = 2;
  if (!mb_train(&cfg, NULL, 0, &whole.agent, &segments, &err)) fail_msg("%s", err.message);
  double mean_whole = whole.curve.selfplay[whole.curve.len - 1]; /* the trained agent's */
  double mean_segments = mean_self_play(&segments.curve);
  print_message("self-play return: whole episodes %.4f, then 2-decision segments %.4f\n",
                mean_whole, mean_segments);
  /* a segment stores its 2 decisions, or fewer at an episode's end */
  assert_true(segments.prog.decisions <= 2 * segments.prog.episodes);
  assert_true(segments.prog.decisions > segments.prog.episodes);
  assert_true(mean_whole > 0.01);
  /* measured 0.26 times; the episodes' return up to the segments' end was 3.2 times */
  assert_true(mean_segments >= 0 && mean_segments < 0.5 * mean_whole);
  mb_train_result_free(&whole);
  mb_train_result_free(&segments);
}

/* Segment starts: how often each decision of an episode is stored. Uniform starts store the
 * first decision S times less often than a middle one; covering starts store every
 * decision at least as often as a middle one (those near either end up to twice); both stay
 * inside the episode, and episodes no longer than a segment start at 0. */
static void test_segment_start(void **state) {
  (void)state;
  enum { N = 200, S = 48, DRAWS = 200000 };
  mb_rng rng;
  mb_rng_seed(&rng, 9);
  for (int cover = 0; cover <= 1; cover++) {
    static int64_t stored[N];
    memset(stored, 0, sizeof stored);
    for (int i = 0; i < DRAWS; i++) {
      int32_t s = mb_segment_start(N, S, cover, &rng);
      assert_true(s >= 0 && s <= N - S);
      for (int32_t d = s; d < s + S; d++) stored[d]++;
    }
    double middle = (double)stored[N / 2];
    if (!cover) {
      assert_true(stored[0] < middle / 20); /* S = 48 times less, expected */
    } else {
      for (int32_t d = 0; d < N; d++) {
        assert_true(stored[d] > 0.95 * middle);
        assert_true(stored[d] < 2.1 * middle);
      }
      assert_true(stored[S - 1] > 1.8 * middle); /* S - 1 + S starts of 2S - 1 reach it */
      /* the first and the last decision: S starts each, as a middle one (sd 0.5%) */
      assert_true(fabs(stored[0] / middle - 1) < 0.02);
      assert_true(fabs(stored[N - 1] / middle - 1) < 0.02);
    }
    mb_rng twin = rng; /* an episode no longer than a segment draws nothing */
    assert_int_equal(mb_segment_start(S, S, cover, &rng), 0);
    assert_int_equal(mb_segment_start(3, S, cover, &rng), 0);
    assert_true(mb_rng_next(&twin) == mb_rng_next(&rng));
  }
}

/* The schedules over a run. The cosine learning rate: lr at the start, lr_end at the step
 * limit, their mean half-way, non-increasing; constant without lr_end or without a step limit.
 * Training applies it: the optimiser ends at the last update's rate and the weights differ from a
 * constant-rate run. The importance exponent and the curriculum's sizes, by step and by time. */
static void test_schedules(void **state) {
  (void)state;
  mb_train_config cfg;
  tiny_config(&cfg, 9, 1000);
  assert_true(mb_train_lr(&cfg, 0) == cfg.lr && mb_train_lr(&cfg, 999) == cfg.lr);
  cfg.lr_end = 1e-4;
  assert_true(fabs(mb_train_lr(&cfg, 0) - 1e-3) < 1e-12);
  assert_true(fabs(mb_train_lr(&cfg, 500) - 5.5e-4) < 1e-12);
  assert_true(fabs(mb_train_lr(&cfg, 1000) - 1e-4) < 1e-12);
  assert_true(fabs(mb_train_lr(&cfg, 5000) - 1e-4) < 1e-12);
  for (int64_t s = 1; s <= 1000; s++) assert_true(mb_train_lr(&cfg, s) <= mb_train_lr(&cfg, s - 1));
  cfg.steps = 0;
  assert_true(mb_train_lr(&cfg, 500) == cfg.lr);

  /* the importance exponent: priority_beta to 1 over the step limit; constant by time */
  tiny_config(&cfg, 9, 1000);
  cfg.priority_beta = 0.4;
  assert_true(mb_train_priority_beta(&cfg, 0) == 0.4);
  assert_true(fabs(mb_train_priority_beta(&cfg, 500) - 0.7) < 1e-12);
  assert_true(mb_train_priority_beta(&cfg, 1000) == 1 && mb_train_priority_beta(&cfg, 5000) == 1);
  cfg.steps = 0;
  cfg.seconds = 10;
  assert_true(mb_train_priority_beta(&cfg, 0) == 0.4 && mb_train_priority_beta(&cfg, 500) == 0.4);

  /* the curriculum: synth_min to synth_max over the first half, by updates or else by time */
  tiny_config(&cfg, 9, 1000); /* sizes 16..48 */
  const int64_t at_step[] = {0, 125, 250, 499, 500, 999, 5000};
  const int32_t by_step[] = {16, 24, 32, 48, 48, 48, 48};
  for (int i = 0; i < 7; i++)
    assert_int_equal(mb_train_curriculum_max(&cfg, at_step[i], 1e9), by_step[i]);
  cfg.steps = 0;
  cfg.seconds = 10;
  const double at_s[] = {0, 1.25, 2.5, 5, 100};
  const int32_t by_s[] = {16, 24, 32, 48, 48};
  assert_int_equal(mb_train_curriculum_max(&cfg, 0, -1), 16); /* clamped, not below synth_min */
  for (int i = 0; i < 5; i++) {
    assert_int_equal(mb_train_curriculum_max(&cfg, 0, at_s[i]), by_s[i]);
    assert_int_equal(mb_train_curriculum_max(&cfg, 777, at_s[i]), by_s[i]);
  }

  mb_blas_set_threads(1);
  mb_train_result constant, cosine;
  mb_error err = {{0}};
  tiny_config(&cfg, 9, 40);
  assert_true(mb_train(&cfg, NULL, 0, NULL, &constant, &err));
  cfg.lr_end = 0;
  assert_true(mb_train(&cfg, NULL, 0, NULL, &cosine, &err));
  assert_true(constant.opt.cfg.lr == cfg.lr);
  assert_true(cosine.opt.cfg.lr == mb_train_lr(&cfg, 39) && cosine.opt.cfg.lr < 1e-5);
  assert_false(same_weights(&constant.agent, &cosine.agent));
  mb_train_result_free(&constant);
  mb_train_result_free(&cosine);
}

/* Catalogue workloads by name and split: only the selected ones, in catalogue order, with
 * their hardware; too big ones skipped with a note; a bad regex refused naming the option.
 * (The builtin Strassen traces need no external data.) */
static void test_train_set_load(void **state) {
  (void)state;
  mb_train_set set;
  mb_error err = {{0}};
  const char *data = mb_test_data_dir();
  assert_true(mb_train_set_load(NULL, data, "^strassen2_", NULL, INT64_MAX, NULL, &set, &err));
  assert_int_equal(set.n, 3);
  const char *names[] = {"strassen2_8192_bf16-tpu", "strassen2_16384_bf16-tpu",
                         "strassen2_4096_f32-gpu"};
  for (int32_t i = 0; i < set.n; i++) {
    assert_string_equal(set.tw[i].name, names[i]);
    assert_ptr_equal(set.tw[i].w, set.w[i]);
    assert_true(set.w[i]->n_buffers > 0);
    assert_string_equal(set.tw[i].hw.name, i < 2 ? "tpu-v4i" : "gpu-l2");
  }
  int32_t smallest = set.w[0]->n_buffers;
  mb_train_set_free(&set);
  assert_int_equal(set.n, 0);
  /* the split filters too: these are test workloads */
  assert_true(mb_train_set_load(NULL, data, "^strassen2_", "train", INT64_MAX, NULL, &set, &err));
  assert_int_equal(set.n, 0);
  mb_train_set_free(&set);
  /* as many buffers as the limit: loaded; more: skipped, each with a note */
  assert_true(mb_train_set_load(NULL, data, "^strassen2_8192", NULL, smallest, NULL, &set, &err));
  assert_int_equal(set.n, 1);
  mb_train_set_free(&set);
  char *log_path = mb_test_temp_path("skip.log");
  FILE *log = fopen(log_path, "w+");
  assert_non_null(log);
  assert_true(
      mb_train_set_load(NULL, data, "^strassen2_8192", NULL, smallest - 1, log, &set, &err));
  assert_int_equal(set.n, 0);
  mb_train_set_free(&set);
  rewind(log);
  char line[512] = "";
  assert_non_null(fgets(line, sizeof line, log));
  char want[256];
  snprintf(want, sizeof want, "note: skipping strassen2_8192_bf16-tpu: %d buffers > the limit %d",
           smallest, smallest - 1);
  assert_non_null(strstr(line, want));
  assert_null(fgets(line, sizeof line, log));
  fclose(log);
  mb_test_temp_remove(log_path);
  assert_false(mb_train_set_load(NULL, data, "(", NULL, INT64_MAX, NULL, &set, &err));
  assert_non_null(strstr(err.message, "--workloads"));
}

/* --freeze's list: the agent's network names, comma-separated, each once or more; anything
 * else (an unknown or empty name, a stray comma) refused naming the list and the names. */
static void test_freeze_check(void **state) {
  (void)state;
  mb_error err = {{0}};
  const char *good[] = {"repr",      "dyn",    "reward", "pred", "repr,dyn,reward,pred",
                        "pred,repr", "dyn,dyn"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++)
    if (!mb_train_freeze_check(good[i], &err)) fail_msg("'%s': %s", good[i], err.message);
  const char *bad[] = {"",          "dy",        "dynamics", "dyn,",     ",dyn",
                       "dyn,,pred", "repr,nope", "DYN",      "dyn pred", "dyn,pred,"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    mb_error_clear(&err);
    assert_false(mb_train_freeze_check(bad[i], &err));
    char want[160];
    snprintf(want, sizeof want, "--freeze '%s': expected networks among repr, dyn, reward, pred",
             bad[i]);
    assert_string_equal(err.message, want);
  }
}

static void test_bad_config(void **state) {
  (void)state;
  mb_train_config cfg;
  tiny_config(&cfg, 1, 10);
  mb_error err = {{0}};
  mb_train_result res;
  cfg.batch = 0;
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_non_null(strstr(err.message, "batch"));
  tiny_config(&cfg, 1, 0);
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_non_null(strstr(err.message, "limit"));
  tiny_config(&cfg, 1, 10);
  cfg.synthetic = false;
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_non_null(strstr(err.message, "no workloads"));
  tiny_config(&cfg, 1, 10);
  cfg.synth_packing_share = -0.5;
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_non_null(strstr(err.message, "synth_packing_share"));
  tiny_config(&cfg, 1, 10);
  cfg.priority_alpha = 1.5;
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_non_null(strstr(err.message, "priority_alpha"));
  tiny_config(&cfg, 1, 10);
  cfg.sibling_weight = -1;
  assert_false(mb_train(&cfg, NULL, 0, NULL, &res, &err));
  assert_non_null(strstr(err.message, "sibling weight"));
  /* the ends of ranges are taken, one past them refused by the configuration check itself
   * (not by a later one that happens to name the field too) */
  const struct {
    const char *field;
    double value;
    const char *error; /* NULL: taken */
  } edges[] = {
      {"batch", 1, NULL},
      {"batch", 4096, NULL},
      {"batch", 4097, "train config: batch 4097: expected in [1, 4096]"},
      {"sibling_depth", 1, NULL},
      {"sibling_depth", MB_SIBLING_MAX_DEPTH, NULL},
      {"sibling_depth", 0, "train config: sibling depth 0: expected 1.."},
      {"sibling_depth", MB_SIBLING_MAX_DEPTH + 1, "train config: sibling depth "},
      {"lr", 0, "train config: lr 0, "},
      {"gamma", 1, NULL},
      {"gamma", 0, "train config: gamma 0: expected in (0, 1]"},
      {"actors_per_round", 1, NULL},
      {"actors_per_round", 0, "train config: target period 1000, actors 0,"},
      {"state_every", 0, NULL},
      {"synth_min", 2, NULL},
      {"synth_min", 1, "train config: synthetic sizes 1..48: expected 2 <= min <= max"},
      {"synth_max", 15, "train config: synthetic sizes 16..15: expected 2 <= min <= max"},
      {"root_gradient", 0, NULL},
      {"root_gradient", 1, NULL},
      {"root_gradient", 1.5, "train config: root gradient 1.5: expected in [0, 1]"},
      {"replay_ratio", 0, "train config: replay ratio 0: expected > 0"},
      {"priority_beta", -0.1, "train config: priority_beta -0.1: expected in [0, 1]"},
      {"priority_beta", 1.5, "train config: priority_beta 1.5: expected in [0, 1]"},
      {"lr_end", 0, NULL},
      {"lr_end", 1, "train config: lr_end 1: expected in [0, lr = "},
      {"value_weight", 0, NULL},
      {"value_weight", -1, "train config: lr 0.001, weight decay"},
      {"unroll", 0, NULL},
      {"unroll", 32, NULL},
      {"unroll", 33, "train config: unroll 33: expected in [0, 32]"},
      {"lr_end", 1e-3, NULL}, /* = lr */
      {"td_steps", 0, NULL},  /* the target network's value of the state itself */
      {"td_steps", -1, "train config: td_steps -1: expected >= 0"},
      {"synth_share", 0, NULL},
      {"synth_share", 1, NULL},
      {"synth_share", -0.1, "train config: synth_share -0.1: expected in [0, 1]"},
      {"synth_share", 1.1, "train config: synth_share 1.1: expected in [0, 1]"},
      {"synth_packing_share", 0, NULL},
      {"synth_packing_share", 1, NULL},
      {"synth_packing_share", 1.1, "train config: synth_packing_share 1.1: expected in [0, 1]"},
      {"n_validation", -1, "train config: validation set of -1 workloads without workloads"},
      {"n_validation", 1, "train config: validation set of 1 workloads without workloads"},
      /* a fresh agent's config is the agent's to check: SimNorm needs whole groups of 8 */
      {"simnorm_latent", 32, NULL},
      {"simnorm_latent", 12, "train config: agent config: latent 12 with simnorm: expected a "},
  };
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
    tiny_config(&cfg, 1, 10);
    cfg.target_period = 1000;
    const char *f = edges[i].field;
    double v = edges[i].value;
    if (!strcmp(f, "batch"))
      cfg.batch = (int32_t)v;
    else if (!strcmp(f, "sibling_depth"))
      cfg.sibling_depth = (int32_t)v;
    else if (!strcmp(f, "lr"))
      cfg.lr = v;
    else if (!strcmp(f, "gamma"))
      cfg.gamma = v;
    else if (!strcmp(f, "actors_per_round"))
      cfg.actors_per_round = (int32_t)v;
    else if (!strcmp(f, "state_every"))
      cfg.state_every = (int32_t)v;
    else if (!strcmp(f, "synth_min"))
      cfg.synth_min = (int32_t)v;
    else if (!strcmp(f, "root_gradient"))
      cfg.root_gradient = v;
    else if (!strcmp(f, "replay_ratio"))
      cfg.replay_ratio = v;
    else if (!strcmp(f, "priority_beta"))
      cfg.priority_beta = v;
    else if (!strcmp(f, "lr_end"))
      cfg.lr_end = v;
    else if (!strcmp(f, "value_weight"))
      cfg.value_weight = v;
    else if (!strcmp(f, "synth_max"))
      cfg.synth_max = (int32_t)v;
    else if (!strcmp(f, "td_steps"))
      cfg.td_steps = (int32_t)v;
    else if (!strcmp(f, "unroll"))
      cfg.unroll = (int32_t)v;
    else if (!strcmp(f, "synth_share"))
      cfg.synth_share = v;
    else if (!strcmp(f, "synth_packing_share"))
      cfg.synth_packing_share = v;
    else if (!strcmp(f, "n_validation"))
      cfg.n_validation = (int32_t)v; /* with no validation workloads */
    else if (!strcmp(f, "simnorm_latent")) {
      cfg.agent.latent_norm = MB_LATENT_SIMNORM;
      cfg.agent.latent = (int32_t)v;
    } else
      fail_msg("edge %zu: no field %s", i, f);
    mb_error_clear(&err);
    bool ok = mb_train_config_check(&cfg, &err);
    if (!edges[i].error) {
      if (!ok) fail_msg("%s %g: %s", f, v, err.message);
    } else {
      assert_false(ok);
      if (strncmp(err.message, edges[i].error, strlen(edges[i].error)) != 0)
        fail_msg("%s %g: '%s', expected '%s...'", f, v, err.message, edges[i].error);
    }
  }
  /* the replay holds at least two segments of segment + 1 transitions; priority_beta 1 and
   * eval_max 1, the ends of their ranges, are taken */
  tiny_config(&cfg, 1, 10);
  cfg.replay_capacity = 2 * (int64_t)(cfg.segment + 1);
  assert_int_equal(mb_train_replay_floor(cfg.segment), cfg.replay_capacity); /* train's raise */
  cfg.priority_beta = 1;
  cfg.eval_max = 1;
  if (!mb_train_config_check(&cfg, &err)) fail_msg("%s", err.message);
  cfg.replay_capacity--;
  assert_false(mb_train_config_check(&cfg, &err));
  char want[128];
  snprintf(want, sizeof want, "train config: replay capacity %lld < two segments of %d",
           (long long)cfg.replay_capacity, cfg.segment);
  assert_string_equal(err.message, want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_policy_learns),
      cmocka_unit_test(test_resume),
      cmocka_unit_test(test_resume_eval_set),
      cmocka_unit_test(test_resume_old_checkpoint),
      cmocka_unit_test(test_freeze),
      cmocka_unit_test(test_model_only_config),
      cmocka_unit_test(test_new_model),
      cmocka_unit_test(test_determinism),
      cmocka_unit_test(test_priority_replay),
      cmocka_unit_test(test_sibling_transitions),
      cmocka_unit_test(test_bad_config),
      cmocka_unit_test(test_train_set_load),
      cmocka_unit_test(test_freeze_check),
      cmocka_unit_test(test_self_play_exact),
      cmocka_unit_test(test_synth_packing),
      cmocka_unit_test(test_validation),
      cmocka_unit_test(test_eval_hook),
      cmocka_unit_test(test_checkpoint_grid),
      cmocka_unit_test(test_time_limit),
      cmocka_unit_test(test_state_log),
      cmocka_unit_test(test_no_decisions),
      cmocka_unit_test(test_state_resume),
      cmocka_unit_test(test_finetune_config),
      cmocka_unit_test(test_segment_start),
      cmocka_unit_test(test_synthetic_capacity),
      cmocka_unit_test(test_segment_returns),
      cmocka_unit_test(test_schedules),
      cmocka_unit_test(test_progress_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
