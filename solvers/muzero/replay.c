/* Replay buffer in transitions (see replay.h). */
#include "replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Smallest raw priority of a decision row: p = |error| + PRIO_EPS, so no decision row is ever
 * unreachable. */
#define PRIO_EPS 1e-6

bool mb_trajectory_init(mb_trajectory *t, int32_t obs_dim, int32_t A, mb_error *err) {
  memset(t, 0, sizeof *t);
  if (obs_dim < 1 || A < 1)
    return mb_fail(err, "trajectory: obs_dim %d / actions %d: expected >= 1", obs_dim, A);
  t->obs_dim = obs_dim;
  t->A = A;
  t->obs = calloc((size_t)obs_dim, sizeof *t->obs); /* room for the final observation */
  if (!t->obs) return mb_fail(err, "trajectory: out of memory");
  return true;
}

void mb_trajectory_free(mb_trajectory *t) {
  free(t->obs);
  free(t->policy);
  free(t->mask);
  free(t->action);
  free(t->reward);
  free(t->value);
  free(t->sib_action);
  free(t->sib_reward);
  free(t->sib_obs);
  free(t->sib_len);
  free(t->sib_terminal);
  memset(t, 0, sizeof *t);
}

void mb_trajectory_clear(mb_trajectory *t) {
  t->len = 0;
  t->terminal = false;
  t->ret = 0;
}

/* Reallocates every array for cap decisions (cap >= len). */
static bool resize(mb_trajectory *t, int32_t cap, mb_error *err) {
  float *obs = realloc(t->obs, (size_t)(cap + 1) * t->obs_dim * sizeof *obs);
  if (obs) t->obs = obs;
  float *pol = realloc(t->policy, (size_t)cap * t->A * sizeof *pol);
  if (pol) t->policy = pol;
  uint8_t *mask = realloc(t->mask, (size_t)cap * t->A);
  if (mask) t->mask = mask;
  int32_t *act = realloc(t->action, (size_t)cap * sizeof *act);
  if (act) t->action = act;
  float *rew = realloc(t->reward, (size_t)cap * sizeof *rew);
  if (rew) t->reward = rew;
  float *val = realloc(t->value, (size_t)cap * sizeof *val);
  if (val) t->value = val;
  uint8_t *sl = realloc(t->sib_len, (size_t)cap);
  if (sl) t->sib_len = sl;
  bool sib_ok = true;
  if (t->sib_depth > 0) {
    size_t steps = (size_t)cap * (size_t)t->sib_depth;
    int32_t *sa = realloc(t->sib_action, steps * sizeof *sa);
    if (sa) t->sib_action = sa;
    float *sr = realloc(t->sib_reward, steps * sizeof *sr);
    if (sr) t->sib_reward = sr;
    float *so = realloc(t->sib_obs, steps * (size_t)t->obs_dim * sizeof *so);
    if (so) t->sib_obs = so;
    uint8_t *st = realloc(t->sib_terminal, (size_t)cap);
    if (st) t->sib_terminal = st;
    sib_ok = sa && sr && so && st;
  }
  if (!obs || !pol || !mask || !act || !rew || !val || !sl || !sib_ok)
    return mb_fail(err, "trajectory: out of memory growing to %d decisions", cap);
  t->cap = cap;
  return true;
}

static bool grow(mb_trajectory *t, mb_error *err) {
  return resize(t, t->cap ? t->cap * 2 : 64, err);
}

bool mb_trajectory_push(mb_trajectory *t, const float *obs, const uint8_t *mask,
                        const float *policy, int32_t action, float reward, float value,
                        mb_error *err) {
  if (action < 0 || action >= t->A)
    return mb_fail(err, "trajectory: decision %d: action %d outside [0, %d)", t->len, action, t->A);
  if (t->len == t->cap && !grow(t, err)) return false;
  int64_t i = t->len;
  memcpy(t->obs + i * t->obs_dim, obs, (size_t)t->obs_dim * sizeof *obs);
  memcpy(t->policy + i * t->A, policy, (size_t)t->A * sizeof *policy);
  memcpy(t->mask + i * t->A, mask, (size_t)t->A);
  t->action[i] = action;
  t->reward[i] = reward;
  t->value[i] = value;
  t->sib_len[i] = 0;
  t->ret += reward;
  t->len++;
  return true;
}

bool mb_trajectory_enable_siblings(mb_trajectory *t, int32_t depth, mb_error *err) {
  if (t->len > 0) return mb_fail(err, "trajectory: enable siblings before the first decision");
  if (depth < 1 || depth > MB_SIBLING_MAX_DEPTH)
    return mb_fail(err, "trajectory: sibling depth %d: expected 1..%d", depth,
                   MB_SIBLING_MAX_DEPTH);
  t->sib_depth = depth;
  /* resize reallocates the sibling arrays (if any) for the new depth */
  return t->cap == 0 || resize(t, t->cap, err);
}

bool mb_trajectory_set_sibling(mb_trajectory *t, int32_t n, const int32_t *actions,
                               const float *rewards, const float *obs, bool terminal,
                               mb_error *err) {
  if (t->sib_depth < 1) return mb_fail(err, "trajectory: sibling transitions are not enabled");
  if (t->len < 1) return mb_fail(err, "trajectory: no decision to attach a sibling to");
  int64_t i = t->len - 1;
  if (n < 1 || n > t->sib_depth)
    return mb_fail(err, "trajectory: decision %lld: sibling path of %d steps: expected 1..%d",
                   (long long)i, n, t->sib_depth);
  if (actions[0] == t->action[i])
    return mb_fail(err,
                   "trajectory: decision %lld: sibling action %d: expected another action in "
                   "[0, %d)",
                   (long long)i, actions[0], t->A);
  for (int32_t j = 0; j < n; j++)
    if (actions[j] < 0 || actions[j] >= t->A)
      return mb_fail(err,
                     "trajectory: decision %lld: sibling path step %d: action %d outside [0, %d)",
                     (long long)i, j, actions[j], t->A);
  int64_t base = i * t->sib_depth;
  for (int32_t j = 0; j < t->sib_depth; j++) {
    t->sib_action[base + j] = j < n ? actions[j] : -1;
    t->sib_reward[base + j] = j < n ? rewards[j] : 0.0f;
  }
  memcpy(t->sib_obs + base * t->obs_dim, obs, (size_t)n * t->obs_dim * sizeof *obs);
  t->sib_len[i] = (uint8_t)n;
  t->sib_terminal[i] = terminal ? 1 : 0;
  return true;
}

bool mb_trajectory_finish(mb_trajectory *t, const float *final_obs, bool terminal, mb_error *err) {
  if (t->len == t->cap && !grow(t, err)) return false;
  memcpy(t->obs + (int64_t)t->len * t->obs_dim, final_obs, (size_t)t->obs_dim * sizeof(float));
  t->terminal = terminal;
  return true;
}

bool mb_replay_init(mb_replay *r, int64_t capacity, int32_t obs_dim, int32_t A, mb_error *err) {
  memset(r, 0, sizeof *r);
  if (capacity < 2 || capacity > (int64_t)1 << 30)
    return mb_fail(err, "replay: capacity %lld transitions: expected in [2, 2^30]",
                   (long long)capacity);
  if (obs_dim < 1 || A < 1)
    return mb_fail(err, "replay: obs_dim %d / actions %d: expected >= 1", obs_dim, A);
  r->capacity = capacity;
  r->obs_dim = obs_dim;
  r->A = A;
  size_t c = (size_t)capacity;
  r->obs = malloc(c * (size_t)obs_dim * sizeof *r->obs);
  r->policy = malloc(c * (size_t)A * sizeof *r->policy);
  r->mask = malloc(c * (size_t)A);
  r->action = malloc(c * sizeof *r->action);
  r->reward = malloc(c * sizeof *r->reward);
  r->value = malloc(c * sizeof *r->value);
  r->to_final = malloc(c * sizeof *r->to_final);
  r->terminal = malloc(c);
  if (!r->obs || !r->policy || !r->mask || !r->action || !r->reward || !r->value || !r->to_final ||
      !r->terminal) {
    mb_replay_free(r);
    return mb_fail(err, "replay: out of memory for %lld transitions x %d features",
                   (long long)capacity, obs_dim);
  }
  return true;
}

/* Frees the sibling arrays and turns sibling paths off. */
static void siblings_free(mb_replay *r) {
  free(r->sib_action);
  free(r->sib_reward);
  free(r->sib_obs);
  free(r->sib_len);
  free(r->sib_terminal);
  r->sib_action = NULL;
  r->sib_reward = NULL;
  r->sib_obs = NULL;
  r->sib_len = NULL;
  r->sib_terminal = NULL;
  r->sib_depth = 0;
}

void mb_replay_free(mb_replay *r) {
  free(r->obs);
  free(r->policy);
  free(r->mask);
  free(r->action);
  free(r->reward);
  free(r->value);
  free(r->to_final);
  free(r->terminal);
  siblings_free(r);
  free(r->prio.p);
  free(r->prio.sum);
  free(r->prio.min);
  free(r->prio.max);
  memset(r, 0, sizeof *r);
}

/* ================================ priority trees ================================ */

/* Sets row's raw priority (0: not drawable) and recomputes the leaf's ancestors from their
 * children, so that every internal node is exactly the sum/min/max of its subtree. */
static void prio_set(mb_replay_priorities *t, int64_t row, double p) {
  t->p[row] = p;
  int64_t j = t->leaves + row;
  t->sum[j] = p > 0 ? pow(p, t->alpha) : 0;
  t->min[j] = p > 0 ? t->sum[j] : INFINITY;
  t->max[j] = p;
  for (j /= 2; j >= 1; j /= 2) {
    t->sum[j] = t->sum[2 * j] + t->sum[2 * j + 1];
    t->min[j] = fmin(t->min[2 * j], t->min[2 * j + 1]);
    t->max[j] = fmax(t->max[2 * j], t->max[2 * j + 1]);
  }
}

/* Priority a newly written decision row gets: the largest stored one, 1 in an empty buffer. */
static double prio_new_row(const mb_replay_priorities *t) {
  return t->max[1] > 0 ? t->max[1] : 1.0;
}

bool mb_replay_enable_priority(mb_replay *r, double alpha, mb_error *err) {
  if (!(alpha > 0 && alpha <= 1))
    return mb_fail(err, "replay: priority alpha %g: expected in (0, 1]", alpha);
  if (r->capacity < 1) return mb_fail(err, "replay: priority enabled before mb_replay_init");
  mb_replay_priorities *t = &r->prio;
  bool fresh = t->p == NULL;
  if (fresh) {
    int64_t leaves = 1;
    while (leaves < r->capacity) leaves *= 2;
    size_t n = 2 * (size_t)leaves;
    t->p = calloc((size_t)r->capacity, sizeof *t->p);
    t->sum = calloc(n, sizeof *t->sum);
    t->min = malloc(n * sizeof *t->min);
    t->max = calloc(n, sizeof *t->max);
    if (!t->p || !t->sum || !t->min || !t->max) {
      free(t->p);
      free(t->sum);
      free(t->min);
      free(t->max);
      memset(t, 0, sizeof *t);
      return mb_fail(err, "replay: out of memory for the priorities of %lld transitions",
                     (long long)r->capacity);
    }
    for (size_t j = 0; j < n; j++) t->min[j] = INFINITY;
    t->leaves = leaves;
  }
  t->alpha = alpha;
  /* rows already stored: priority 1 on a fresh tree, else their own under the new alpha */
  for (int64_t i = 0; i < r->count; i++)
    prio_set(t, i, r->action[i] < 0 ? 0 : (fresh ? 1.0 : t->p[i]));
  return true;
}

int64_t mb_replay_sample_prioritised(const mb_replay *r, mb_rng *rng, double beta,
                                     double *is_weight) {
  const mb_replay_priorities *t = &r->prio;
  if (!t->p || !(t->sum[1] > 0)) return -1;
  double u = mb_rng_uniform(rng) * t->sum[1];
  int64_t j = 1;
  while (j < t->leaves) {
    /* go left while u falls in the left sum; never into an empty subtree (rounding at the
     * edges), so the walk ends on a drawable leaf */
    int64_t left = 2 * j;
    if ((u < t->sum[left] || !(t->sum[left + 1] > 0)) && t->sum[left] > 0) {
      j = left;
    } else {
      u -= t->sum[left];
      j = left + 1;
    }
  }
  if (is_weight) {
    /* (N P(i))^-beta / (N P_min)^-beta = (P(i) / P_min)^-beta: N and the sum cancel; <= 1
     * because P(i) >= P_min */
    double w = pow(t->sum[j] / t->min[1], -beta);
    *is_weight = w < 1 ? w : 1;
  }
  return j - t->leaves;
}

void mb_replay_set_priority(mb_replay *r, int64_t row, double error) {
  if (!r->prio.p || row < 0 || row >= r->count || r->action[row] < 0 || !isfinite(error)) return;
  prio_set(&r->prio, row, fabs(error) + PRIO_EPS);
}

double mb_replay_priority(const mb_replay *r, int64_t row) {
  if (!r->prio.p || row < 0 || row >= r->count) return 0;
  return r->prio.p[row];
}

bool mb_replay_add(mb_replay *r, const mb_trajectory *t, mb_error *err) {
  if (t->obs_dim != r->obs_dim || t->A != r->A)
    return mb_fail(err, "replay: trajectory shape %d features x %d actions, buffer %d x %d",
                   t->obs_dim, t->A, r->obs_dim, r->A);
  if (t->len < 1) return mb_fail(err, "replay: empty trajectory");
  if ((int64_t)t->len + 1 > r->capacity)
    return mb_fail(err, "replay: trajectory of %d decisions does not fit %lld transitions", t->len,
                   (long long)r->capacity);
  bool prio = r->prio.p != NULL;
  double p_new = 0;
  if (prio) {
    /* evict first: the new rows get the maximum priority of the rows that stay */
    for (int32_t i = 0; i <= t->len; i++) {
      int64_t row = (r->head + i) % r->capacity;
      if (row < r->count) prio_set(&r->prio, row, 0);
    }
    p_new = prio_new_row(&r->prio);
  }
  for (int32_t i = 0; i <= t->len; i++) {
    int64_t row = r->head;
    if (row < r->count && r->action[row] >= 0) r->decision_rows--; /* evicted */
    if (i < t->len) r->decision_rows++;
    if (prio && i < t->len) prio_set(&r->prio, row, p_new);
    memcpy(r->obs + row * r->obs_dim, t->obs + (int64_t)i * r->obs_dim,
           (size_t)r->obs_dim * sizeof(float));
    if (r->sib_depth > 0) {
      int32_t P = r->sib_depth;
      int32_t n = i < t->len && t->sib_depth > 0 ? t->sib_len[i] : 0;
      if (n > P) n = P;
      int64_t src = (int64_t)i * t->sib_depth, dst = row * P;
      for (int32_t j = 0; j < P; j++) {
        r->sib_action[dst + j] = j < n ? t->sib_action[src + j] : -1;
        r->sib_reward[dst + j] = j < n ? t->sib_reward[src + j] : 0.0f;
      }
      if (n > 0)
        memcpy(r->sib_obs + dst * r->obs_dim, t->sib_obs + src * r->obs_dim,
               (size_t)n * r->obs_dim * sizeof(float));
      /* never read, but saved with the buffer (mb_replay_save): zeros, not stale memory */
      memset(r->sib_obs + (dst + n) * r->obs_dim, 0, (size_t)(P - n) * r->obs_dim * sizeof(float));
      r->sib_len[row] = (uint8_t)n;
      /* a path cut to the buffer's depth no longer reaches its end */
      r->sib_terminal[row] = n > 0 && n == t->sib_len[i] ? t->sib_terminal[i] : 0;
    }
    if (i < t->len) {
      memcpy(r->policy + row * r->A, t->policy + (int64_t)i * r->A, (size_t)r->A * sizeof(float));
      memcpy(r->mask + row * r->A, t->mask + (int64_t)i * r->A, (size_t)r->A);
      r->action[row] = t->action[i];
      r->reward[row] = t->reward[i];
      r->value[row] = t->value[i];
      r->terminal[row] = 0;
    } else {
      memset(r->policy + row * r->A, 0, (size_t)r->A * sizeof(float));
      memset(r->mask + row * r->A, 0, (size_t)r->A);
      r->action[row] = -1;
      r->reward[row] = 0;
      r->value[row] = 0;
      r->terminal[row] = t->terminal ? 1 : 0;
    }
    r->to_final[row] = t->len - i;
    r->head = (r->head + 1) % r->capacity;
    if (r->count < r->capacity) r->count++;
  }
  r->total_added += t->len;
  r->trajectories++;
  return true;
}

int64_t mb_replay_decisions(const mb_replay *r) { return r->decision_rows; }

bool mb_replay_enable_siblings(mb_replay *r, int32_t depth, mb_error *err) {
  if (depth < 1 || depth > MB_SIBLING_MAX_DEPTH)
    return mb_fail(err, "replay: sibling depth %d: expected 1..%d", depth, MB_SIBLING_MAX_DEPTH);
  if (r->sib_depth == depth) return true;
  if (r->sib_depth > 0)
    return mb_fail(err, "replay: sibling depth already %d (asked %d)", r->sib_depth, depth);
  size_t c = (size_t)r->capacity, steps = c * (size_t)depth;
  r->sib_action = malloc(steps * sizeof *r->sib_action);
  r->sib_reward = calloc(steps, sizeof *r->sib_reward);
  r->sib_obs = malloc(steps * (size_t)r->obs_dim * sizeof *r->sib_obs);
  r->sib_len = calloc(c, 1);
  r->sib_terminal = calloc(c, 1);
  if (!r->sib_action || !r->sib_reward || !r->sib_obs || !r->sib_len || !r->sib_terminal) {
    siblings_free(r);
    return mb_fail(err, "replay: out of memory for sibling paths of %d steps", depth);
  }
  for (size_t i = 0; i < steps; i++) r->sib_action[i] = -1;
  r->sib_depth = depth;
  return true;
}

bool mb_replay_sibling_target(const mb_replay *r, int64_t row, int32_t j, double gamma,
                              double *reward_sum, double *boot_discount) {
  *reward_sum = 0;
  *boot_discount = 0;
  if (r->sib_depth < 1 || row < 0 || row >= r->count) return false;
  int32_t n = r->sib_len[row];
  if (j < 0 || j >= n - 1) return false;
  const float *rew = r->sib_reward + row * r->sib_depth;
  double sum = 0, disc = 1;
  for (int32_t i = n - 1; i > j; i--) {
    sum = rew[i] + gamma * sum;
    disc *= gamma;
  }
  *reward_sum = sum;
  *boot_discount = r->sib_terminal[row] ? 0.0 : disc;
  return true;
}

int64_t mb_replay_sample(const mb_replay *r, mb_rng *rng) {
  if (r->count == 0) return -1;
  /* final rows are at most half of the rows: rejection ends quickly */
  for (int tries = 0; tries < 1000; tries++) {
    int64_t row = (int64_t)mb_rng_below(rng, (uint64_t)r->count);
    if (r->action[row] >= 0) return row;
  }
  for (int64_t i = 0; i < r->count; i++)
    if (r->action[i] >= 0) return i;
  return -1;
}

int64_t mb_replay_offset(const mb_replay *r, int64_t row, int32_t k, bool *past_end) {
  int32_t left = r->to_final[row];
  int32_t step = k <= left ? k : left;
  *past_end = k > left;
  return (row + step) % r->capacity;
}

void mb_replay_nstep(const mb_replay *r, int64_t row, int32_t n, double gamma, double *reward_sum,
                     int64_t *boot_row, double *boot_discount) {
  int32_t left = r->to_final[row];
  int32_t steps = n < left ? n : left;
  double sum = 0, disc = 1;
  for (int32_t i = 0; i < steps; i++) {
    int64_t ri = (row + i) % r->capacity;
    sum += disc * r->reward[ri];
    disc *= gamma;
  }
  int64_t end = (row + steps) % r->capacity;
  *reward_sum = sum;
  *boot_discount = disc;
  *boot_row = (steps == left && r->terminal[end]) ? -1 : end;
}

/* ================================ saving and restoring ================================ */

/* The buffer's arrays, each with its element type and elements per row (0: not stored when the
 * feature is off). */
typedef struct replay_field {
  const char *name;
  mb_nn_dtype type;
  void *data;
  int64_t per_row;
} replay_field;

#define REPLAY_MAX_FIELDS 14

static int replay_fields(mb_replay *r, replay_field *out) {
  int64_t P = r->sib_depth;
  replay_field f[] = {
      {"replay.obs", MB_NN_F32, r->obs, r->obs_dim},
      {"replay.policy", MB_NN_F32, r->policy, r->A},
      {"replay.mask", MB_NN_U8, r->mask, r->A},
      {"replay.action", MB_NN_I32, r->action, 1},
      {"replay.reward", MB_NN_F32, r->reward, 1},
      {"replay.value", MB_NN_F32, r->value, 1},
      {"replay.to_final", MB_NN_I32, r->to_final, 1},
      {"replay.terminal", MB_NN_U8, r->terminal, 1},
      {"replay.priority", MB_NN_F64, r->prio.p, r->prio.p ? 1 : 0},
      {"replay.sib_action", MB_NN_I32, r->sib_action, P},
      {"replay.sib_reward", MB_NN_F32, r->sib_reward, P},
      {"replay.sib_obs", MB_NN_F32, r->sib_obs, P * r->obs_dim},
      {"replay.sib_len", MB_NN_U8, r->sib_len, P > 0 ? 1 : 0},
      {"replay.sib_terminal", MB_NN_U8, r->sib_terminal, P > 0 ? 1 : 0},
  };
  int n = 0;
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    if (f[i].per_row > 0) out[n++] = f[i];
  return n;
}

/* The shape and counters, as attributes: the shape must match on restore. */
static const char *const REPLAY_SHAPE[] = {"replay.capacity", "replay.obs_dim", "replay.actions",
                                           "replay.sib_depth", "replay.priority_alpha"};
static const char *const REPLAY_COUNTERS[] = {"replay.head", "replay.count", "replay.total_added",
                                              "replay.trajectories", "replay.decision_rows"};

static void replay_shape(const mb_replay *r, double *v) {
  v[0] = (double)r->capacity;
  v[1] = r->obs_dim;
  v[2] = r->A;
  v[3] = r->sib_depth;
  v[4] = r->prio.p ? r->prio.alpha : 0;
}

bool mb_replay_save(const mb_replay *r, mb_nn_file *f, mb_error *err) {
  double shape[5], counters[5] = {(double)r->head, (double)r->count, (double)r->total_added,
                                  (double)r->trajectories, (double)r->decision_rows};
  replay_shape(r, shape);
  bool ok = true;
  for (int i = 0; ok && i < 5; i++) ok = mb_nn_file_set_double(f, REPLAY_SHAPE[i], shape[i], err);
  for (int i = 0; ok && i < 5; i++)
    ok = mb_nn_file_set_double(f, REPLAY_COUNTERS[i], counters[i], err);
  /* rows [0, count) are the stored ones: the ring fills from row 0 and only wraps when full */
  replay_field fields[REPLAY_MAX_FIELDS];
  int n = replay_fields((mb_replay *)r, fields);
  for (int i = 0; ok && i < n; i++)
    ok = mb_nn_file_write_array(f, fields[i].name, fields[i].type, fields[i].data,
                                r->count * fields[i].per_row, err);
  return ok;
}

bool mb_replay_load(mb_replay *r, mb_nn_file *f, mb_error *err) {
  const char *path = mb_nn_file_path(f);
  double want[5], got[5];
  int64_t c[5];
  replay_shape(r, want);
  for (int i = 0; i < 5; i++) {
    if (!mb_nn_file_get_double(f, REPLAY_SHAPE[i], &got[i], err)) return false;
    if (got[i] != want[i])
      return mb_fail(err, "%s: attribute %s = %g: this run's replay buffer has %g", path,
                     REPLAY_SHAPE[i], got[i], want[i]);
  }
  for (int i = 0; i < 5; i++)
    if (!mb_nn_file_get_count(f, REPLAY_COUNTERS[i], &c[i], err)) return false;
  /* rows within the capacity, the head where the ring left it */
  int64_t head = c[0], count = c[1];
  if (count > r->capacity || head >= r->capacity || (count < r->capacity && head != count))
    return mb_fail(err,
                   "%s: attributes replay.head %lld / replay.count %lld: inconsistent with a "
                   "ring of %lld rows",
                   path, (long long)head, (long long)count, (long long)r->capacity);
  replay_field fields[REPLAY_MAX_FIELDS];
  int n = replay_fields(r, fields);
  for (int i = 0; i < n; i++)
    if (!mb_nn_file_read_array(f, fields[i].name, fields[i].type, fields[i].data,
                               count * fields[i].per_row, err))
      return false;
  r->head = head;
  r->count = count;
  r->total_added = c[2];
  r->trajectories = c[3];
  r->decision_rows = c[4];
  /* rows that restore cannot vouch for would mislead the learner: check what it relies on */
  int64_t decisions = 0;
  for (int64_t i = 0; i < count; i++) {
    bool decision = r->action[i] >= 0;
    decisions += decision;
    if ((decision && r->action[i] >= r->A) || r->to_final[i] < 0 ||
        (int64_t)r->to_final[i] >= r->capacity || (!decision && r->to_final[i] != 0) ||
        (r->sib_depth > 0 && r->sib_len[i] > r->sib_depth))
      return mb_fail(err, "%s: /arrays/replay.*: row %lld is damaged (action %d, to_final %d)",
                     path, (long long)i, r->action[i], r->to_final[i]);
  }
  if (decisions != r->decision_rows)
    return mb_fail(err, "%s: attribute replay.decision_rows = %lld: the rows hold %lld", path,
                   (long long)r->decision_rows, (long long)decisions);
  /* the trees are a function of the raw priorities: rebuilt exactly as they were */
  if (r->prio.p)
    for (int64_t i = 0; i < count; i++) {
      double p = r->prio.p[i];
      if (!(p >= 0) || !isfinite(p) || (r->action[i] >= 0) != (p > 0))
        return mb_fail(err, "%s: /arrays/replay.priority: row %lld: priority %g", path,
                       (long long)i, p);
      prio_set(&r->prio, i, p);
    }
  return true;
}
