/* Training state files (see train_state.h). */
#include "train_state.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "nn_io.h"

#define STATE_FORMAT "mallocmuzero-train-state-1"

/* The rng's 256 bits as 64 hex digits: metadata numbers are doubles, which hold 53 bits. */
static void rng_to_hex(const mb_rng *r, char out[65]) {
  for (int i = 0; i < 4; i++) snprintf(out + 16 * i, 17, "%016" PRIx64, r->s[i]);
}

static bool rng_from_hex(const char *s, mb_rng *r) {
  if (strlen(s) != 64) return false;
  for (int i = 0; i < 4; i++) {
    uint64_t x = 0;
    for (int j = 0; j < 16; j++) {
      char ch = s[16 * i + j];
      int d = ch >= '0' && ch <= '9' ? ch - '0' : (ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1);
      if (d < 0) return false;
      x = x << 4 | (uint64_t)d;
    }
    r->s[i] = x;
  }
  return true;
}

bool mb_train_state_save(const char *path, const mb_agent *ag, const mb_adam *opt,
                         const mb_agent_progress *prog, const mb_agent_curve *curve,
                         const char *note, const mb_replay *rb, const mb_train_counters *c,
                         mb_error *err) {
  mb_nn_file *f = mb_nn_file_create(path, err);
  if (!f) return false;
  char rng[65];
  rng_to_hex(&c->learner_rng, rng);
  bool ok = mb_agent_write(f, ag, opt, prog, curve, note, err) &&
            mb_nn_file_set_string(f, "state.format", STATE_FORMAT, err) &&
            mb_nn_file_set_string(f, "state.learner_rng", rng, err) &&
            mb_nn_file_set_double(f, "state.owed", c->owed, err) &&
            mb_nn_file_set_double(f, "state.selfplay_sum", c->selfplay_sum, err) &&
            mb_nn_file_set_double(f, "state.selfplay_n", (double)c->selfplay_n, err) &&
            mb_nn_file_set_double(f, "state.loss_sum", c->loss_sum, err) &&
            mb_nn_file_set_double(f, "state.loss_n", (double)c->loss_n, err) &&
            mb_replay_save(rb, f, err);
  if (!ok) {
    mb_nn_file_close(f);
    return mb_fail_prefix(err, "training state");
  }
  return mb_nn_file_commit(f, err);
}

bool mb_train_state_load(const char *path, mb_replay *rb, mb_train_counters *c, mb_error *err) {
  mb_nn_file *f = mb_nn_file_open(path, err);
  if (!f) return false;
  char fmt[64], rng[80];
  mb_train_counters k;
  memset(&k, 0, sizeof k);
  bool ok = mb_nn_file_get_string(f, "state.format", fmt, sizeof fmt, err);
  if (!ok)
    mb_fail_prefix(err, "%s: not a training state (written by train beside its checkpoint)", path);
  else if (strcmp(fmt, STATE_FORMAT))
    ok = mb_fail(err, "%s: attribute state.format '%s': expected %s", path, fmt, STATE_FORMAT);
  ok = ok && mb_nn_file_get_string(f, "state.learner_rng", rng, sizeof rng, err);
  if (ok && !rng_from_hex(rng, &k.learner_rng))
    ok = mb_fail(err, "%s: attribute state.learner_rng '%s': expected 64 hex digits", path, rng);
  ok = ok && mb_nn_file_get_double(f, "state.owed", &k.owed, err) &&
       mb_nn_file_get_double(f, "state.selfplay_sum", &k.selfplay_sum, err) &&
       mb_nn_file_get_count(f, "state.selfplay_n", &k.selfplay_n, err) &&
       mb_nn_file_get_double(f, "state.loss_sum", &k.loss_sum, err) &&
       mb_nn_file_get_count(f, "state.loss_n", &k.loss_n, err);
  if (ok && !(k.owed >= 0 && k.owed < 1e9))
    ok = mb_fail(err, "%s: attribute state.owed = %g: expected in [0, 1e9)", path, k.owed);
  ok = ok && mb_replay_load(rb, f, err);
  mb_nn_file_close(f);
  if (ok) *c = k;
  return ok;
}

bool mb_checkpoint_beside(const char *checkpoint, const char *suffix, char *out, size_t n) {
  size_t len = strlen(checkpoint);
  bool h5 = len >= 3 && !strcmp(checkpoint + len - 3, ".h5");
  int w = snprintf(out, n, "%.*s%s", (int)(h5 ? len - 3 : len), checkpoint, suffix);
  return w >= 0 && (size_t)w < n;
}

bool mb_train_state_path(const char *checkpoint, char *out, size_t n) {
  return mb_checkpoint_beside(checkpoint, ".state.h5", out, n);
}
