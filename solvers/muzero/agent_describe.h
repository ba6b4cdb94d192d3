/* An agent checkpoint in words: what `mallocbench show AGENT.h5` prints, so that a user can
 * tell which agent a file holds (how it was trained, on what, how far, and the game it plays)
 * without h5dump. */
#ifndef MB_AGENT_DESCRIBE_H
#define MB_AGENT_DESCRIBE_H

#include <stdbool.h>
#include <stdio.h>

#include "agent.h"
#include "error.h"

/* Reads the checkpoint at `path` and writes to `out`:
 *   - how it was trained: the stored command lines (the run's, then each resume's), the run's
 *     options (train.options), updates, episodes, decisions, wall time,
 *     seed and BLAS kernel (each only when the checkpoint has it), and whether a resumable
 *     training state lies beside it (OUT.state.h5, train_state.h);
 *   - its networks: latent width, residual blocks, parameters, the value/reward support, and
 *     their digest (mb_agent_digest);
 *   - the game it plays: actions, buffer order, the observation's blocks and length, shaping;
 *   - its training curve in brief: points, the raw policy's first, last and best mean return on
 *     the eval set with the heuristic and random-play references, and the validation set's
 *     last and best when the run had one (all simulated by the cost model).
 * Fails (err names the file and the attribute or series) on anything mb_agent_load refuses,
 * before writing anything. */
bool mb_agent_describe(const char *path, FILE *out, mb_error *err);

/* The description's two lines on the game an agent plays ("game": actions, buffer order,
 * shaping; "observation": its length and blocks), each line starting with `prefix` (e.g.
 * "train: " in a training log; "" in show). */
void mb_agent_describe_game(FILE *out, const mb_agent_config *c, const char *prefix);

#endif
