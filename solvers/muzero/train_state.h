/* mallocMuZero's training state: what an agent checkpoint leaves out, so that a killed training
 * run resumes exactly as if it had never stopped.
 *
 * Why. A checkpoint (agent.h) holds the weights, the optimiser, the counters and the curve. A run
 * resumed from it alone starts with an empty replay buffer and a new learner stream: it learns
 * from other samples than the uninterrupted run would have, so its weights differ (measured: a
 * 200,000-update run resumed at 42,400 was not bit-identical). The state file holds, besides a
 * full checkpoint of the same step, the replay buffer (every stored row, raw priorities, sibling
 * paths: replay.h), the learner's random stream and the counters between curve points.
 *
 * The file is an agent checkpoint with more in it (mb_agent_load reads it as one), written
 * atomically like a checkpoint, conventionally beside it (mb_train_state_path: OUT.h5 ->
 * OUT.state.h5). The trainer writes it at steps where the target network has just been copied
 * (so the target equals the weights and needs no storage) and removes it when the run ends
 * normally: a finished run has nothing to resume, and the buffer is large (about 3 KB per
 * transition before compression with the default observation and sibling depth). */
#ifndef MB_TRAIN_STATE_H
#define MB_TRAIN_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adam.h"
#include "agent.h"
#include "error.h"
#include "replay.h"
#include "rng.h"

/* The trainer's counters between updates. */
typedef struct mb_train_counters {
  double owed;         /* learner updates the replay ratio still owes (fractional) */
  mb_rng learner_rng;  /* the learner's sampling stream */
  double selfplay_sum; /* self-play returns since the last curve point ... */
  int64_t selfplay_n;  /* ... and how many */
  double loss_sum;     /* total losses since the last curve point ... */
  int64_t loss_n;      /* ... and how many */
} mb_train_counters;

/* The agent parts are those of mb_agent_save (note: its `training` attribute). */
bool mb_train_state_save(const char *path, const mb_agent *ag, const mb_adam *opt,
                         const mb_agent_progress *prog, const mb_agent_curve *curve,
                         const char *note, const mb_replay *rb, const mb_train_counters *c,
                         mb_error *err);
/* Restores the replay buffer (freshly initialised by the caller with the run's shape: see
 * mb_replay_load) and the counters from a state file; its agent parts load with mb_agent_load.
 * Fails naming the file and field at fault, e.g. a buffer of another shape. */
bool mb_train_state_load(const char *path, mb_replay *rb, mb_train_counters *c, mb_error *err);
/* A file that belongs beside `checkpoint`: its name with ".h5" replaced by (or, without it,
 * followed by) `suffix`, e.g. ".best.h5". False when it does not fit in n bytes. */
bool mb_checkpoint_beside(const char *checkpoint, const char *suffix, char *out, size_t n);
/* The state file that belongs beside `checkpoint`: mb_checkpoint_beside with ".state.h5". */
bool mb_train_state_path(const char *checkpoint, char *out, size_t n);

#endif
