/* `mallocbench train`: trains a mallocMuZero agent (solvers/muzero/train.h) on catalogue
 * workloads and/or synthetic random workloads and writes its checkpoint (HDF5, atomic, every
 * --checkpoint-every updates) and its training state (every --state-every updates, removed at the
 * end). Resumable with --resume, bit for bit from a state; deterministic for a seed (the actors of
 * a round use fixed random streams, and OpenBLAS runs single-threaded). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalogue.h"
#include "commands.h"
#include "error.h"
#include "paths.h"
#include "replay.h"
#include "search.h"
#include "tensor.h"
#include "train.h"
#include "train_state.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench train [--workloads REGEX | --split train] [--synthetic]\n"
          "                         (--steps N | --minutes M) [--jobs J] [--seed S]\n"
          "                         --out AGENT.h5 [--resume AGENT.h5] [OPTIONS]\n\n"
          "Trains a mallocMuZero agent by self-play with search and K-step unroll training.\n"
          "Returns are simulated by mallocbench's cost model (the suite's ground truth).\n"
          "Progress lines (stderr, every 5 s): step, episodes, self-play return, losses,\n"
          "steps/s of wall time (the learner's and self-play's own rates beside it) and,\n"
          "with --steps, an ETA.\n\n"
          "Workloads:\n"
          "  --workloads REGEX   catalogue entries whose name matches (PCRE2)\n"
          "  --split S           catalogue entries of split S (train or test)\n"
          "  --synthetic         random workloads, curriculum from --synth-min to --synth-max\n"
          "                      buffers (with catalogue workloads: half of the episodes)\n"
          "  --max-buffers N     skip catalogue workloads with more buffers (default 20000)\n"
          "  --data DIR          external data directory; --catalogue FILE\n"
          "Validation (held-out workloads, never trained on):\n"
          "  --validate REGEX    catalogue entries whose name matches (any split) are played\n"
          "                      by the raw policy at every evaluation; the mean return is the\n"
          "                      curve's `validation` series; an overlap with the training\n"
          "                      workloads is refused\n"
          "  --validate-catalogue FILE  their catalogue (default: --catalogue, or the suite's)\n"
          "  --keep-best         also write the agent of the best validation return so far to\n"
          "                      OUT with .h5 replaced by .best.h5 (a resumed run starts from\n"
          "                      the best of its curve)\n"
          "Length and output:\n"
          "  --steps N           stop after N updates in total (counting a resumed run's)\n"
          "  --minutes M         stop after M minutes in this process\n"
          "  --out FILE          checkpoint to write (required); an existing FILE is an\n"
          "                      error unless it is the --resume FILE or --force is given\n"
          "  --force             replace an existing --out FILE (and its .best.h5)\n"
          "  --resume FILE       continue from this checkpoint (its network config is kept);\n"
          "                      from its training state instead when there is one (FILE\n"
          "                      with .h5 replaced by .state.h5): then the run continues bit\n"
          "                      for bit as if it had never stopped. The options that define\n"
          "                      the run (workloads, curriculum, validation, seed, learning\n"
          "                      rate and schedule, batch, search, replay, --freeze, ...:\n"
          "                      `show FILE` lists them) are stored and taken from FILE when\n"
          "                      not given, --steps too when neither --steps nor --minutes is.\n"
          "                      With --out FILE (one run) a different value is refused,\n"
          "                      naming the option; --steps, --minutes, --jobs, -q,\n"
          "                      --eval-every, --checkpoint-every, --state-every,\n"
          "                      --catalogue and --data may change.\n"
          "                      With --out NEW.h5 a new run branches off FILE: given values\n"
          "                      may differ (said on stderr), and a curve whose eval set\n"
          "                      changes starts again. --steps not above FILE's updates\n"
          "                      trains nothing: with --out FILE it says so and leaves FILE\n"
          "                      as it is (exit 0); with another --out it writes nothing\n"
          "                      (exit 2). The checkpoint records the command lines: the\n"
          "                      first run's, then each resume's\n"
          "  --checkpoint-every N  updates between checkpoints (default 200)\n"
          "  --state-every N     updates between training states (default 5000; 0: none): a\n"
          "                      checkpoint plus the replay buffer, written beside OUT as\n"
          "                      .state.h5 and removed when the run ends normally (also the\n"
          "                      state resumed from, with 0 too)\n"
          "  --eval-every N      updates between raw-policy evaluations (default 100)\n"
          "Agent and search (fresh agents only for the network sizes):\n"
          "  --latent W (128)  --blocks N (1)  --actions A (16)\n"
          "  --latent-norm minmax|simnorm (minmax: MuZero's scaling of the latent state to\n"
          "                    [0, 1]; simnorm: a softmax over each group of 8 of its units,\n"
          "                    as TD-MPC2; measured in datasets/agents/EXPERIMENTS.md)\n"
          "  --dyn-width W (--latent)  --dyn-blocks N (--blocks): the dynamics' own hidden\n"
          "                    width and depth (a wider one ends in a linear layer down to\n"
          "                    the latent state)\n"
          "  --new-model         with --resume: replace the checkpoint's learned model (the\n"
          "                    dynamics and reward head) by a fresh one shaped by --dyn-width\n"
          "                    and --dyn-blocks, with a fresh optimiser; the representation,\n"
          "                    policy and value networks are the checkpoint's (with --freeze\n"
          "                    repr,pred they stay so)\n"
          "  --next-buffers N (4: the observation also describes the next N buffers)\n"
          "  --demand-bins D (0: the observation also shows the whole schedule in D time bins:\n"
          "                    fast bytes placed, bytes and benefit of the buffers to come)\n"
          "  --order heuristic|start|size (heuristic: the order the agent visits the buffers\n"
          "                    in, datasets/GAME.md; the solvers play in the agent's order)\n"
          "  --gain-features 0|1 (1: the observation shows the current buffer's exact gain if\n"
          "                    placed now and the standalone benefits of it and of the next\n"
          "                    buffers, in the agent's reward unit; 0: without them)\n"
          "  --action-features 0|1 (0: the dynamics sees an action as a one-hot; 1: also the\n"
          "                    candidate slot's fields of the real observation it is chosen\n"
          "                    on, at the search's root and the first unroll step; fresh agents)\n"
          "  --simulations N (8)  --segment N (48)\n"
          "  --search gumbel|puct (gumbel: Gumbel MuZero, completed-Q policy targets; puct:\n"
          "                    MuZero's pUCT with Dirichlet noise at the root, moves sampled\n"
          "                    by visit counts, visit counts as policy targets)\n"
          "  --segment-start cover|uniform (cover: a long episode's stored segment starts so\n"
          "                    that its first decisions are stored as often as the middle ones;\n"
          "                    uniform: they are stored up to N times less often)\n"
          "  --self-play learned|exact (learned: self-play searches the learned model; exact:\n"
          "                    the real game, as mallocmuzero-exact, AlphaZero-style)\n"
          "  --leaf-rollout N (0: self-play search values a new node by the value network;\n"
          "                    N: by N greedy raw-policy steps from it in the model searched,\n"
          "                    then the value network, as solve --leaf-rollout; with\n"
          "                    --self-play exact: expert iteration with the exact variant's\n"
          "                    search as the teacher)\n"
          "  --batch B (64)  --unroll K (5)  --lr X (0.001)\n"
          "  --td-steps N (10: n-step value targets; 0: the target network's value of the\n"
          "                    observation reached itself, at every unroll step: with\n"
          "                    --freeze repr,pred the learned model's values are fitted to\n"
          "                    the value network's on the real observations; measured in\n"
          "                    datasets/agents/EXPERIMENTS.md, not the default)\n"
          "  --lr-end X (--lr: constant; else cosine decay from --lr to X over --steps, which\n"
          "                    it then requires)\n"
          "  --freeze NETS (none: comma-separated networks whose weights stay as they are:\n"
          "                    repr, dyn, reward, pred; repr,pred with --resume trains the\n"
          "                    learned model alone under a fixed policy and value network)\n"
          "  --value-weight X (0.25)  --consistency X (1: weight of the dynamics state vs the\n"
          "                    representation of the observation reached, EfficientZero; 0: off)\n"
          "  --support N (31 value/reward atoms over [0, 10.5] after h; fresh agents)\n"
          "  --shaping X (0: rewards are the time saved; X > 0: plus X times the change of\n"
          "                    the potential, the benefit of the next 32 buffers that still\n"
          "                    fit, datasets/GAME.md; the same best play, returns unshaped;\n"
          "                    the supports become [-10.5, 10.5] with 2N - 1 atoms; fresh\n"
          "                    agents)  --c-scale X (0.1)\n"
          "  --q-range X (1e-8: self-play search's floor under a node's Q spread, as\n"
          "                    bench muzero --q-range; the solvers play with 0.1)\n"
          "  --siblings W (1: per decision, one other legal action is tried in the real game\n"
          "                    and trains the dynamics' reward and consistency; 0: off)\n"
          "  --sibling-depth P (1: the sibling step only; P > 1: then P - 1 greedy moves of\n"
          "                    the raw policy, whose rewards also train the value along it)\n"
          "  --sibling-from F (random: a uniformly drawn sibling; search: the searched root\n"
          "                    action other than the move with the highest Q, its path\n"
          "                    the search tree's most visited one while legal; an option\n"
          "                    measured in datasets/agents/EXPERIMENTS.md, not the default)\n"
          "  --root-gradient X (0.5: the factor on the gradient the first dynamics step\n"
          "                    sends into the representation's state, halved as at every\n"
          "                    later step; 1: MuZero's pseudocode, which halves only the\n"
          "                    states the dynamics made; 0: the representation learns from\n"
          "                    step 0's losses alone; 1 and 0 measured in\n"
          "                    datasets/agents/EXPERIMENTS.md, not the default)\n"
          "  --replay N (50000 transitions; at least 2 x (--segment + 1), two trajectories)\n"
          "  --ratio R (4 samples per new decision)\n"
          "  --priority ALPHA (0: uniform replay; in (0, 1]: rows drawn with probability\n"
          "                    ~ |value error|^ALPHA, losses weighted by importance weights)\n"
          "  --priority-beta B (0.4: importance-weight exponent, annealed to 1 over --steps;\n"
          "                    fixed with --minutes only)\n"
          "  --actors N (2 per round)  --jobs J (1 thread)  --seed S (0)\n"
          "  --synth-min N (16)  --synth-max N (256)\n"
          "  --synth-packing P (0: of the synthetic workloads, the share that are op-less\n"
          "                    packing instances shaped like MiniMalloc's sets, capacity the\n"
          "                    perfect packing's height or a fraction of it, instead of programs)\n"
          "  -q, --quiet         no progress lines\n"
          "Exit status: 0 ok, 1 training failed, 2 bad usage/input.\n");
}

static int bad(const char *flag, const char *v, const char *what) {
  mb_diag(stderr, "mallocbench train: %s '%s': expected %s", flag, v, what);
  return 2;
}

/* The validation set: catalogue entries matching vregex (any split), none of which may be a
 * training workload (by name: the catalogue's identity of a workload). Exit 2 on failure. */
static bool load_validation(const char *cat, const char *data, const char *vregex,
                            int64_t max_buffers, const mb_train_set *train, mb_train_set *V) {
  mb_error err = {{0}};
  if (!mb_train_set_load(cat, data, vregex, NULL, max_buffers, stderr, V, &err)) {
    mb_diag(stderr, "mallocbench train: --validate: %s", err.message);
    return false;
  }
  if (V->n == 0) {
    mb_diag(stderr,
            "mallocbench train: --validate '%s': no catalogue workload selected (or all "
            "skipped)",
            vregex);
    mb_train_set_free(V);
    return false;
  }
  char names[512] = "";
  int32_t shared = 0;
  for (int32_t i = 0; i < V->n; i++)
    for (int32_t j = 0; j < train->n; j++) {
      if (strcmp(V->tw[i].name, train->tw[j].name)) continue;
      size_t used = strlen(names);
      if (shared < 3)
        snprintf(names + used, sizeof names - used, "%s%s", shared ? ", " : "", V->tw[i].name);
      else if (shared == 3)
        snprintf(names + used, sizeof names - used, ", ...");
      shared++;
      break;
    }
  if (shared > 0) {
    mb_diag(stderr,
            "mallocbench train: --validate '%s': %d validation workload%s also trained on: %s",
            vregex, shared, shared > 1 ? "s are" : " is", names);
    mb_train_set_free(V);
    return false;
  }
  return true;
}

/* Whether writing `path` would replace a file this run does not own: it exists, --force was not
 * given, and the run does not continue the checkpoint it writes (--resume OUT --out OUT). A
 * trained agent can be hours of work: never replaced by accident (as run --out). */
static bool replaces_other_run(const char *path, const mb_train_config *cfg, bool force) {
  return !force && access(path, F_OK) == 0 &&
         !(cfg->resume && mb_path_same_file(cfg->resume, cfg->out));
}

/* ---- the options ---- */

/* One `train` command line: the training configuration and what the command does around it. The
 * path buffers hold strings cfg points to, so they live as long as the command. */
#define TRAIN_OPTIONS_MAX 80 /* room for seen[]: at least TRAIN_OPTIONS_N (asserted below) */
typedef struct train_command {
  mb_train_config cfg;
  const char *regex, *split, *data, *cat; /* training workloads (catalogue) */
  const char *vregex, *vcat;              /* validation workloads */
  bool keep_best, force, quiet;
  const char *network_option; /* the first option given that shapes a fresh agent's networks */
  const char *model_option;   /* the first one that shapes only the learned model: --new-model
                                 applies it to a resumed agent */
  int64_t max_buffers;
  double minutes;
  bool seen[TRAIN_OPTIONS_MAX]; /* the TRAIN_OPTIONS given (on the command line, or taken from
                                   the resumed checkpoint) */
  char best[4096], state_out[4096];
} train_command;

/* How an option's value is read into its field of train_command, and written back as text. */
typedef enum {
  OPT_SWITCH, /* no value: sets a bool */
  OPT_I32,    /* int32_t, an integer in [lo, hi] */
  OPT_I64,    /* int64_t, an integer in [lo, hi] */
  OPT_U64,    /* uint64_t, an integer in [lo, hi] (--seed) */
  OPT_BIT,    /* bool, the integer 0 or 1 */
  OPT_NUMBER, /* double in [min, max]; NaN: not given (the default of --lr-end) */
  OPT_TEXT,   /* const char * (the argument itself), one of `choices` when there are, passing
                 `check` when there is one; NULL: not given */
  OPT_PATH,   /* the same, and not empty */
  OPT_CHOICE, /* bool: false for choices[0], true for choices[1] */
  OPT_ENUM,   /* an enum whose values index `choices` */
} opt_kind;

/* What an option is to the run stored in a checkpoint (train.options). `--resume A --out A`
 * continues one run, so a kept option it gives must have the run's value, and one it leaves out
 * is the run's; a run branched off to another file (`--resume A --out B`) takes the run's
 * values for those it leaves out and may change the others. Locations (which catalogue): taken
 * from the checkpoint when not given, and may be given otherwise (the eval set's heuristic
 * reference then checks the workloads). The plan (--steps): taken from the checkpoint when
 * neither --steps nor --minutes is given. */
typedef enum {
  RUN_NONE,      /* not stored */
  RUN_WORKLOADS, /* kept; --workloads, --split and --synthetic choose the training workloads
                    together, and are compared as one */
  RUN_KEPT,
  RUN_LOCATION,
  RUN_PLAN,
} run_role;

/* What an option shapes of a fresh agent (a resumed agent keeps its own). */
typedef enum {
  NET_NONE,
  NET_LAYOUT, /* its networks and game layout: ignored on resume (said) */
  NET_MODEL,  /* its learned model alone: applied on resume by --new-model, else ignored */
} net_role;

typedef struct train_option {
  const char *flag;
  opt_kind kind;
  size_t off;                 /* the field in train_command */
  int64_t lo, hi;             /* OPT_I32, OPT_I64, OPT_U64 */
  double min, max;            /* OPT_NUMBER */
  const char *const *choices; /* NULL-terminated: OPT_CHOICE, OPT_ENUM, and OPT_TEXT's values
                                 allowed (NULL: any) */
  bool (*check)(const char *value, mb_error *err); /* OPT_TEXT: NULL, or its check */
  run_role run;
  net_role net;
} train_option;

/* A field of train_command of the given type (another type does not compile). */
#define FIELD(m, type) _Generic(((train_command *)0)->m, type : offsetof(train_command, m))
#define SWITCH(m) .kind = OPT_SWITCH, .off = FIELD(m, bool)
#define I32(m, l, h) .kind = OPT_I32, .off = FIELD(m, int32_t), .lo = (l), .hi = (h)
#define I64(m, l, h) .kind = OPT_I64, .off = FIELD(m, int64_t), .lo = (l), .hi = (h)
#define U64(m, l, h) .kind = OPT_U64, .off = FIELD(m, uint64_t), .lo = (l), .hi = (h)
#define BIT(m) .kind = OPT_BIT, .off = FIELD(m, bool)
#define NUMBER(m, l, h) .kind = OPT_NUMBER, .off = FIELD(m, double), .min = (l), .max = (h)
#define TEXT(m) .kind = OPT_TEXT, .off = FIELD(m, const char *)
#define PATH(m) .kind = OPT_PATH, .off = FIELD(m, const char *)
#define CHOICE(m, names) .kind = OPT_CHOICE, .off = FIELD(m, bool), .choices = (names)
#define ENUM(m, type, names) .kind = OPT_ENUM, .off = FIELD(m, type), .choices = (names)
#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char *const SEARCH_KINDS[] = {
    [MB_SEARCH_GUMBEL] = "gumbel", [MB_SEARCH_PUCT] = "puct", NULL};
static const char *const GAME_ORDERS[] = {[MB_GAME_ORDER_HEURISTIC] = "heuristic",
                                          [MB_GAME_ORDER_START] = "start",
                                          [MB_GAME_ORDER_SIZE] = "size",
                                          NULL};
static const char *const LATENT_NORMS[] = {
    [MB_LATENT_MINMAX] = "minmax", [MB_LATENT_SIMNORM] = "simnorm", NULL};
_Static_assert(sizeof(mb_search_kind) == sizeof(int) && sizeof(mb_game_order) == sizeof(int) &&
                   sizeof(mb_latent_norm) == sizeof(int),
               "OPT_ENUM reads and writes an enum as an int");

/* Every option of `train` (the help describes each, as prose). The stored ones come first, in
 * the order they are stored (train.options): none may move, so that the same command stores the
 * same text. */
static const train_option TRAIN_OPTIONS[] = {
    {"--workloads", TEXT(regex), .run = RUN_WORKLOADS},
    {"--split", TEXT(split), .choices = mb_catalogue_splits, .run = RUN_WORKLOADS},
    {"--synthetic", SWITCH(cfg.synthetic), .run = RUN_WORKLOADS},
    {"--catalogue", PATH(cat), .run = RUN_LOCATION},
    {"--max-buffers", I64(max_buffers, 1, INT32_MAX), .run = RUN_KEPT},
    {"--synth-min", I32(cfg.synth_min, 2, 1000000), .run = RUN_KEPT},
    {"--synth-max", I32(cfg.synth_max, 2, 1000000), .run = RUN_KEPT},
    {"--synth-packing", NUMBER(cfg.synth_packing_share, 0, 1), .run = RUN_KEPT},
    {"--validate", TEXT(vregex), .run = RUN_KEPT},
    {"--validate-catalogue", PATH(vcat), .run = RUN_LOCATION},
    {"--seed", U64(cfg.seed, 0, INT64_MAX), .run = RUN_KEPT},
    {"--lr", NUMBER(cfg.lr, 1e-9, 1), .run = RUN_KEPT},
    {"--lr-end", NUMBER(cfg.lr_end, 0, 1), .run = RUN_KEPT},
    {"--batch", I32(cfg.batch, 1, 4096), .run = RUN_KEPT},
    {"--unroll", I32(cfg.unroll, 0, 32), .run = RUN_KEPT},
    {"--td-steps", I32(cfg.td_steps, 0, 100000), .run = RUN_KEPT},
    {"--value-weight", NUMBER(cfg.value_weight, 0, 1e6), .run = RUN_KEPT},
    {"--consistency", NUMBER(cfg.consistency_weight, 0, 1e6), .run = RUN_KEPT},
    {"--siblings", NUMBER(cfg.sibling_weight, 0, 1e6), .run = RUN_KEPT},
    {"--sibling-depth", I32(cfg.sibling_depth, 1, MB_SIBLING_MAX_DEPTH), .run = RUN_KEPT},
    {"--sibling-from", CHOICE(cfg.sibling_from_search, NAMES("random", "search")), .run = RUN_KEPT},
    {"--root-gradient", NUMBER(cfg.root_gradient, 0, 1), .run = RUN_KEPT},
    {"--replay", I64(cfg.replay_capacity, 2, (int64_t)1 << 30), .run = RUN_KEPT},
    {"--ratio", NUMBER(cfg.replay_ratio, 1e-6, 1e6), .run = RUN_KEPT},
    {"--priority", NUMBER(cfg.priority_alpha, 0, 1), .run = RUN_KEPT},
    {"--priority-beta", NUMBER(cfg.priority_beta, 0, 1), .run = RUN_KEPT},
    {"--actors", I32(cfg.actors_per_round, 1, 1024), .run = RUN_KEPT},
    {"--segment", I32(cfg.segment, 1, 1000000), .run = RUN_KEPT},
    {"--segment-start", CHOICE(cfg.segment_cover, NAMES("uniform", "cover")), .run = RUN_KEPT},
    {"--search", ENUM(cfg.search.kind, mb_search_kind, SEARCH_KINDS), .run = RUN_KEPT},
    {"--self-play", CHOICE(cfg.self_play_exact, NAMES("learned", "exact")), .run = RUN_KEPT},
    {"--simulations", I32(cfg.search.simulations, 1, 100000), .run = RUN_KEPT},
    {"--leaf-rollout", I32(cfg.search.leaf_rollout, 0, MB_SEARCH_MAX_LEAF_ROLLOUT),
     .run = RUN_KEPT},
    {"--c-scale", NUMBER(cfg.search.c_scale, 0, 1e6), .run = RUN_KEPT},
    {"--q-range", NUMBER(cfg.search.q_min_range, 1e-12, 1), .run = RUN_KEPT},
    {"--freeze", TEXT(cfg.freeze), .check = mb_train_freeze_check, .run = RUN_KEPT},
    {"--steps", I64(cfg.steps, 1, INT64_MAX / 2), .run = RUN_PLAN},
    /* a fresh agent's networks and game: the agent's own limits (agent.h) */
    {"--latent", I32(cfg.agent.latent, MB_AGENT_MIN_WIDTH, MB_AGENT_MAX_WIDTH), .net = NET_LAYOUT},
    {"--blocks", I32(cfg.agent.blocks, 0, MB_AGENT_MAX_BLOCKS), .net = NET_LAYOUT},
    {"--actions", I32(cfg.agent.game.n_actions, MB_AGENT_MIN_ACTIONS, MB_AGENT_MAX_ACTIONS),
     .net = NET_LAYOUT},
    {"--next-buffers", I32(cfg.agent.game.next_buffers, 0, MB_AGENT_MAX_NEXT_BUFFERS),
     .net = NET_LAYOUT},
    {"--demand-bins", I32(cfg.agent.game.demand_bins, 0, MB_AGENT_MAX_DEMAND_BINS),
     .net = NET_LAYOUT},
    {"--order", ENUM(cfg.agent.game.order, mb_game_order, GAME_ORDERS), .net = NET_LAYOUT},
    {"--gain-features", BIT(cfg.agent.game.gain_features), .net = NET_LAYOUT},
    {"--action-features", BIT(cfg.agent.action_features), .net = NET_LAYOUT},
    {"--latent-norm", ENUM(cfg.agent.latent_norm, mb_latent_norm, LATENT_NORMS), .net = NET_LAYOUT},
    /* N atoms, or 2N - 1 with --shaping: read in the range either allows, and checked against
     * the agent's by check_support once --shaping is known */
    {"--support", I32(cfg.agent.support, (MB_AGENT_MIN_SUPPORT + 1) / 2, MB_AGENT_MAX_SUPPORT),
     .net = NET_LAYOUT},
    {"--shaping", NUMBER(cfg.agent.game.shaping, 0, 100), .net = NET_LAYOUT},
    /* the dynamics' own width and depth: the agent's 0 ("as the others") is what leaving them
     * out gives, not a size (agent.h) */
    {"--dyn-width", I32(cfg.agent.dyn_width, MB_AGENT_MIN_WIDTH, MB_AGENT_MAX_WIDTH),
     .net = NET_MODEL},
    {"--dyn-blocks", I32(cfg.agent.dyn_blocks, 1, MB_AGENT_MAX_BLOCKS), .net = NET_MODEL},
    /* the command around the run */
    {"--data", PATH(data)},
    {"--out", PATH(cfg.out)},
    {"--resume", PATH(cfg.resume)},
    {"--force", SWITCH(force)},
    {"--new-model", SWITCH(cfg.new_model)},
    {"--keep-best", SWITCH(keep_best)},
    {"--minutes", NUMBER(minutes, 1e-4, 1e7)},
    {"--jobs", I32(cfg.jobs, 1, 64)},
    {"--state-every", I32(cfg.state_every, 0, INT32_MAX)},
    {"--checkpoint-every", I32(cfg.checkpoint_every, 0, INT32_MAX)},
    {"--eval-every", I32(cfg.eval_every, 0, INT32_MAX)},
    {"-q", SWITCH(quiet)},
    {"--quiet", SWITCH(quiet)},
};
#define TRAIN_OPTIONS_N ((int)(sizeof TRAIN_OPTIONS / sizeof TRAIN_OPTIONS[0]))
_Static_assert(TRAIN_OPTIONS_N <= TRAIN_OPTIONS_MAX, "train_command.seen is too short");

static int option_index(const char *flag) {
  for (int k = 0; k < TRAIN_OPTIONS_N; k++)
    if (!strcmp(flag, TRAIN_OPTIONS[k].flag)) return k;
  return -1;
}

/* "a or b", "a, b or c": the choices as an error line says what it expected. */
static void format_choices(const char *const *choices, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; choices[i] && used < n; i++) {
    const char *before = i == 0 ? "" : choices[i + 1] ? ", " : " or ";
    used += (size_t)snprintf(buf + used, n - used, "%s%s", before, choices[i]);
  }
}

/* The index of v among choices, or -1. */
static int choice_index(const char *const *choices, const char *v) {
  for (int i = 0; choices[i]; i++)
    if (!strcmp(v, choices[i])) return i;
  return -1;
}

/* The name of choice i, or NULL when there is no such choice. */
static const char *choice_name(const char *const *choices, int i) {
  for (int k = 0; choices[k]; k++)
    if (k == i) return choices[k];
  return NULL;
}

/* Reads option o's value v (NULL: the flag came last) into T. False after an error line. */
static bool read_value(const train_option *o, const char *v, train_command *T) {
  char *field = (char *)T + o->off;
  const char *f = o->flag;
  int64_t x = 0;
  switch (o->kind) {
    case OPT_SWITCH:
      *(bool *)field = true;
      return true;
    case OPT_I32:
      if (!mb_option_int("train", f, v, o->lo, o->hi, &x)) return false;
      *(int32_t *)field = (int32_t)x;
      return true;
    case OPT_I64:
      return mb_option_int("train", f, v, o->lo, o->hi, (int64_t *)field);
    case OPT_U64:
      if (!mb_option_int("train", f, v, o->lo, o->hi, &x)) return false;
      *(uint64_t *)field = (uint64_t)x;
      return true;
    case OPT_BIT:
      if (!mb_option_int("train", f, v, 0, 1, &x)) return false;
      *(bool *)field = x != 0;
      return true;
    case OPT_NUMBER:
      return mb_option_number("train", f, v, o->min, false, o->max, (double *)field);
    case OPT_PATH:
      return mb_option_path("train", f, v, (const char **)field);
    case OPT_TEXT:
    case OPT_CHOICE:
    case OPT_ENUM:
      break;
  }
  if (!mb_option_text("train", f, v, &v)) return false;
  int i = o->choices ? choice_index(o->choices, v) : 0;
  if (i < 0) {
    char expected[256];
    format_choices(o->choices, expected, sizeof expected);
    bad(f, v, expected);
    return false;
  }
  mb_error err = {{0}};
  if (o->check && !o->check(v, &err)) {
    mb_diag(stderr, "mallocbench train: %s", err.message);
    return false;
  }
  if (o->kind == OPT_CHOICE)
    *(bool *)field = i == 1;
  else if (o->kind == OPT_ENUM)
    memcpy(field, &i, sizeof i);
  else
    *(const char **)field = v;
  return true;
}

/* Reads the options into T (defaults first). Returns 0, or 2 after an error line. */
static int parse_options(int argc, char **argv, train_command *T) {
  memset(T, 0, sizeof *T);
  mb_train_config_default(&T->cfg);
  T->max_buffers = 20000;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-') {
      mb_diag(stderr, "mallocbench train: unexpected argument '%s'; see --help", a);
      return 2;
    }
    /* --flag VALUE or --flag=VALUE (commands.h); a switch only as itself */
    mb_option_arg arg;
    mb_option_arg_read(argc, argv, i, &arg);
    int k = option_index(arg.flag);
    if (k < 0 || (TRAIN_OPTIONS[k].kind == OPT_SWITCH && strcmp(arg.flag, a)))
      return mb_unknown_option("train", a);
    const train_option *o = &TRAIN_OPTIONS[k];
    T->seen[k] = true;
    if (!T->network_option && o->net == NET_LAYOUT) T->network_option = a;
    if (!T->model_option && o->net == NET_MODEL) T->model_option = a;
    /* the value, or NULL: the reader says that the flag needs one */
    if (!read_value(o, o->kind == OPT_SWITCH ? NULL : arg.value, T)) return 2;
    if (o->kind != OPT_SWITCH) i = arg.last;
  }
  return 0;
}

/* ---- the run's options, stored in its checkpoint and kept on resume ---- */

/* A number as the shortest text that reads back as the same double. */
static void format_number(double x, char *buf, size_t n) {
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(buf, n, "%.*g", digits, x);
    if (strtod(buf, NULL) == x) return;
  }
}

/* The value of option o in T, as the text that reads back as it (buf "" for a switch); false
 * when it is not given: a switch off, no text (no --workloads, ...), a NaN number (no --lr-end)
 * or an integer 0 where 0 cannot be given (no --steps). */
static bool render_option(const train_command *T, const train_option *o, char *buf, size_t n) {
  const char *field = (const char *)T + o->off;
  int64_t x = 0;
  int i = 0;
  buf[0] = '\0';
  switch (o->kind) {
    case OPT_SWITCH:
      return *(const bool *)field;
    case OPT_I32:
    case OPT_I64:
      x = o->kind == OPT_I32 ? *(const int32_t *)field : *(const int64_t *)field;
      if (x == 0 && o->lo > 0) return false;
      snprintf(buf, n, "%" PRId64, x);
      return true;
    case OPT_U64:
      snprintf(buf, n, "%" PRIu64, *(const uint64_t *)field);
      return true;
    case OPT_BIT:
      snprintf(buf, n, "%d", *(const bool *)field ? 1 : 0);
      return true;
    case OPT_NUMBER:
      if (isnan(*(const double *)field)) return false;
      format_number(*(const double *)field, buf, n);
      return true;
    case OPT_TEXT:
    case OPT_PATH:
      if (!*(const char *const *)field) return false;
      snprintf(buf, n, "%s", *(const char *const *)field);
      return true;
    case OPT_CHOICE:
      snprintf(buf, n, "%s", o->choices[*(const bool *)field ? 1 : 0]);
      return true;
    case OPT_ENUM:
      memcpy(&i, field, sizeof i);
      if (choice_name(o->choices, i))
        snprintf(buf, n, "%s", choice_name(o->choices, i));
      else
        snprintf(buf, n, "%d", i); /* no value of the enum: a resume refuses it */
      return true;
  }
  return false;
}

/* Appends `text` to buf (size n, at *used), single-quoted when the shell would split or expand
 * it (as mb_command_line quotes). False when it does not fit. */
static bool append_word(char *buf, size_t n, size_t *used, const char *text) {
  bool quote = !text[0] || strpbrk(text, " \t\n'\"$\\|&;()<>*?[]{}`~#!") != NULL;
  /* the separating space, the text, its quotes (a quote inside becomes '\'') and the NUL */
  size_t need = (*used > 0) + strlen(text) + 1;
  if (quote) {
    need += 2;
    for (const char *q = text; *q; q++) need += *q == '\'' ? 3 : 0;
  }
  if (*used + need > n) return false;
  char *p = buf + *used;
  if (*used > 0) *p++ = ' ';
  if (quote) *p++ = '\'';
  for (const char *q = text; *q; q++) {
    if (quote && *q == '\'') {
      memcpy(p, "'\\''", 4);
      p += 4;
    } else {
      *p++ = *q;
    }
  }
  if (quote) *p++ = '\'';
  *p = '\0';
  *used = (size_t)(p - buf);
  return true;
}

/* The stored options (with workloads_only, those that choose the training workloads) present in
 * T, in the table's order, as command-line words. False when they do not fit in n. */
static bool format_options(const train_command *T, bool workloads_only, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = '\0';
  for (int k = 0; k < TRAIN_OPTIONS_N; k++) {
    const train_option *o = &TRAIN_OPTIONS[k];
    char v[MB_AGENT_OPTIONS_MAX]; /* a value cut short here cannot fit beside its flag anyway */
    if (o->run == RUN_NONE || (workloads_only && o->run != RUN_WORKLOADS) ||
        !render_option(T, o, v, sizeof v))
      continue;
    if (!append_word(buf, n, &used, o->flag)) return false;
    if (o->kind != OPT_SWITCH && !append_word(buf, n, &used, v)) return false;
  }
  return true;
}

/* The run's options as stored (every stored option present in T). */
static bool format_run_options(const train_command *T, char *buf, size_t n) {
  return format_options(T, false, buf, n);
}

/* The training workloads of T as one text (--workloads, --split, --synthetic), "none" without
 * (cut short when it does not fit: it is only said). */
static void format_workloads(const train_command *T, char *buf, size_t n) {
  format_options(T, true, buf, n);
  if (!buf[0]) snprintf(buf, n, "none");
}

/* Splits a stored option text into words (undoing append_word's quoting), in place: words[]
 * point into text. Returns the number of words, or -1 when more than max or badly quoted. */
static int split_words(char *text, char **words, int max) {
  int n = 0;
  char *r = text, *w = text;
  while (*r) {
    while (*r == ' ') r++;
    if (!*r) break;
    if (n == max) return -1;
    words[n++] = w;
    while (*r && *r != ' ') {
      if (*r == '\'') {
        r++;
        while (*r && *r != '\'') *w++ = *r++;
        if (*r != '\'') return -1;
        r++;
      } else if (*r == '\\' && r[1]) {
        *w++ = r[1];
        r += 2;
      } else {
        *w++ = *r++;
      }
    }
    if (*r) r++;
    *w++ = '\0';
  }
  return n;
}

/* What the resumed checkpoint holds: its counters and options, and its history. */
typedef struct resumed {
  char state[4096];       /* the training state beside it ("" when none, or --new-model) */
  const char *from;       /* what mb_train reads: the state, else the checkpoint */
  mb_agent_progress prog; /* where the run stands, and the options stored */
  char *history;          /* the `training` attribute (NULL: not recorded) */
  char *words_text;       /* the stored options split into words (owned) */
  char **argv;            /* the command line merged with them (owned) */
} resumed;

static void resumed_free(resumed *R) {
  free(R->history);
  free(R->words_text);
  free(R->argv);
}

/* Reads --resume FILE (its training state when there is one). Returns 0, or 2 after an error. */
static int read_resumed(const train_command *T, resumed *R) {
  const char *path = T->cfg.resume;
  /* a new learned model starts from the checkpoint's networks alone: its optimiser and replay
   * are new, so a training state beside FILE has nothing to give it */
  if (T->cfg.new_model || !mb_train_state_path(path, R->state, sizeof R->state) ||
      access(R->state, F_OK) != 0)
    R->state[0] = '\0';
  R->from = R->state[0] ? R->state : path;
  mb_error err = {{0}};
  mb_nn_file *f = mb_nn_file_open(R->from, &err);
  mb_agent ag;
  bool ok = f && mb_agent_read(f, &ag, NULL, &R->prog, NULL, &err);
  if (ok) mb_agent_free(&ag);
  if (ok && mb_nn_file_has(f, "training")) {
    R->history = mb_nn_file_get_string_alloc(f, "training", &err);
    ok = R->history != NULL;
    if (!ok) mb_fail_prefix(&err, "%s", R->from);
  }
  if (f) mb_nn_file_close(f);
  if (ok) return 0;
  mb_fail_prefix(&err, "--resume");
  mb_diag(stderr, "mallocbench train: %s", err.message);
  return 2;
}

/* A kept option given on resume (name: its flag, or "the workloads"; given and stored: its
 * text in the command and in the run) against the run's value: true when they agree or the run
 * branches off to another file (said unless -q), false after an error line when the run
 * continues in place. */
static bool against_run(const train_command *T, const char *name, const char *given,
                        const char *stored, bool in_place) {
  if (!strcmp(given, stored)) return true;
  if (in_place) {
    mb_diag(stderr,
            "mallocbench train: --resume %s: %s: given %s, the run's %s (a resumed run keeps "
            "the options that define it: give the same or leave it out; to train on with "
            "another, write another file: --out NEW.h5)",
            T->cfg.resume, name, given, stored);
    return false;
  }
  if (!T->quiet)
    mb_diag(stderr, "train: %s: given %s, %s's run had %s (a new run branched off it)", name, given,
            T->cfg.resume, stored);
  return true;
}

/* Takes the options the command leaves out from the resumed checkpoint's (parsing the command
 * line again after them), and checks those it gives: a kept option of another value is refused
 * when the run continues in place, said when it branches off. Returns 0, or 2 after an error. */
static int apply_stored(int argc, char **argv, train_command *T, resumed *R) {
  const char *path = T->cfg.resume;
  bool in_place = mb_path_same_file(path, T->cfg.out ? T->cfg.out : "");
  if (!R->prog.options[0]) {
    mb_diag(stderr,
            "mallocbench train: warning: %s stores no training options (written before they "
            "were): this run's are those of this command line, unchecked (the command that "
            "trained it: `mallocbench show %s`)",
            R->from, path);
    return 0;
  }
  int max = 2 * TRAIN_OPTIONS_N + 2;
  char **words = calloc((size_t)max, sizeof *words);
  R->words_text = strdup(R->prog.options);
  R->argv = calloc((size_t)(argc + max + 1), sizeof *R->argv);
  if (!words || !R->words_text || !R->argv) {
    free(words);
    fprintf(stderr, "mallocbench train: out of memory\n");
    return 2;
  }
  int n = split_words(R->words_text, words, max);
  train_command *S = calloc(1, sizeof *S);
  char **sargv = calloc((size_t)(n > 0 ? n : 0) + 2, sizeof *sargv);
  int status = n < 0 || !S || !sargv ? 2 : 0;
  if (status == 0) {
    sargv[0] = "train";
    for (int i = 0; i < n; i++) sargv[i + 1] = words[i];
    status = parse_options(n + 1, sargv, S);
  }
  if (status != 0) {
    mb_diag(stderr,
            "mallocbench train: warning: %s: the stored training options '%s' cannot be read: "
            "this run's are those of this command line, unchecked",
            R->from, R->prog.options);
    free(S);
    free(sargv);
    free(words);
    return 0;
  }
  /* the options given, against the run's: the workloads as one, then each kept option */
  char given[MB_AGENT_OPTIONS_MAX], stored[MB_AGENT_OPTIONS_MAX];
  bool workloads_given = false;
  for (int k = 0; k < TRAIN_OPTIONS_N; k++)
    workloads_given |= TRAIN_OPTIONS[k].run == RUN_WORKLOADS && T->seen[k];
  if (workloads_given) {
    format_workloads(T, given, sizeof given);
    format_workloads(S, stored, sizeof stored);
    if (!against_run(T, "the workloads", given, stored, in_place)) status = 2;
  }
  for (int k = 0; k < TRAIN_OPTIONS_N; k++) {
    const train_option *o = &TRAIN_OPTIONS[k];
    if (o->run != RUN_KEPT || !T->seen[k]) continue;
    if (!render_option(T, o, given, sizeof given)) snprintf(given, sizeof given, "none");
    if (!render_option(S, o, stored, sizeof stored)) snprintf(stored, sizeof stored, "none");
    if (!against_run(T, o->flag, given, stored, in_place)) status = 2;
  }
  /* the schedule of --lr-end follows --steps: a new step limit changes it from here on */
  if (status == 0 && T->seen[option_index("--steps")] && S->cfg.steps > 0 &&
      S->cfg.steps != T->cfg.steps && !isnan(S->cfg.lr_end) && S->cfg.lr_end != S->cfg.lr)
    mb_diag(stderr,
            "mallocbench train: warning: --steps %lld: %s's run was planned for %lld updates, "
            "over which --lr-end decays the learning rate: the schedule changes from here",
            (long long)T->cfg.steps, path, (long long)S->cfg.steps);
  /* the run's options for those not given: first, so that the command line's own follow */
  int m = 0;
  if (status == 0) {
    R->argv[m++] = argv[0];
    bool limit_given = T->seen[option_index("--steps")] || T->minutes > 0;
    for (int i = 0; i < n; i++) {
      int k = option_index(words[i]);
      const train_option *o = k < 0 ? NULL : &TRAIN_OPTIONS[k];
      bool value = !o || o->kind != OPT_SWITCH;
      bool take =
          o && o->run != RUN_NONE && (o->run == RUN_WORKLOADS ? !workloads_given : !T->seen[k]);
      if (o && o->run == RUN_PLAN) take = !limit_given;
      if (take) {
        R->argv[m++] = words[i];
        if (value && i + 1 < n) R->argv[m++] = words[i + 1];
      }
      if (value) i++;
    }
    for (int i = 1; i < argc; i++) R->argv[m++] = argv[i];
    status = parse_options(m, R->argv, T);
  }
  free(S);
  free(sargv);
  free(words);
  return status;
}

/* --support N against the agent's limits on atoms: N of them, or 2N - 1 with --shaping. False
 * after an error line (in the form of the option readers'). */
static bool check_support(const mb_agent_config *a) {
  bool shaped = a->game.shaping > 0;
  int32_t atoms = shaped ? 2 * a->support - 1 : a->support;
  if (atoms >= MB_AGENT_MIN_SUPPORT && atoms <= MB_AGENT_MAX_SUPPORT) return true;
  int32_t lo = MB_AGENT_MIN_SUPPORT, hi = MB_AGENT_MAX_SUPPORT;
  int32_t shaped_lo = (lo + 1) / 2, shaped_hi = (hi + 1) / 2;
  if (shaped)
    fprintf(stderr,
            "mallocbench train: --support '%d': expected an integer in %d..%d with --shaping "
            "(2N - 1 atoms; %d..%d without)\n",
            a->support, shaped_lo, shaped_hi, lo, hi);
  else
    fprintf(stderr,
            "mallocbench train: --support '%d': expected an integer in %d..%d (%d..%d with "
            "--shaping: 2N - 1 atoms)\n",
            a->support, lo, hi, shaped_lo, shaped_hi);
  return false;
}

/* The rules between options, and the files they name: --out, and with --keep-best the best
 * agent beside it (whose path it sets); warns of the options a resumed agent ignores. Returns 0;
 * 2 after an error line; or -1 when a run resumed in place has nothing to train (said on stdout:
 * the command exits 0, writing nothing). Creates nothing (prepare_output does). */
static int check_options(train_command *T, const resumed *R) {
  if (!T->cfg.out) {
    fprintf(stderr, "mallocbench train: --out AGENT.h5 is required\n");
    return 2;
  }
  if (replaces_other_run(T->cfg.out, &T->cfg, T->force)) {
    mb_diag(stderr,
            "mallocbench train: --out %s: file exists (continue it with --resume %s, or "
            "replace it with --force)",
            T->cfg.out, T->cfg.out);
    return 2;
  }
  if (T->regex && T->split) {
    fprintf(stderr, "mallocbench train: give --workloads or --split, not both\n");
    return 2;
  }
  if (T->cfg.synth_packing_share > 0 && !T->cfg.synthetic) {
    fprintf(stderr, "mallocbench train: --synth-packing needs --synthetic\n");
    return 2;
  }
  if (!T->regex && !T->split && !T->cfg.synthetic) {
    fprintf(stderr, "mallocbench train: no workloads: give --workloads, --split or --synthetic\n");
    return 2;
  }
  if (T->keep_best && !T->vregex) {
    fprintf(stderr, "mallocbench train: --keep-best needs --validate REGEX\n");
    return 2;
  }
  if (T->keep_best) {
    if (!mb_checkpoint_beside(T->cfg.out, ".best.h5", T->best, sizeof T->best)) {
      mb_diag(stderr, "mallocbench train: --out %s: path too long", T->cfg.out);
      return 2;
    }
    T->cfg.best_out = T->best;
    /* the best agent belongs to its run: a resumed run may rewrite its own, nothing else */
    if (replaces_other_run(T->best, &T->cfg, T->force)) {
      mb_diag(stderr,
              "mallocbench train: --keep-best: %s exists (kept from another run; move it, or "
              "replace it with --force)",
              T->best);
      return 2;
    }
  }
  if (T->vcat && !T->vregex) {
    fprintf(stderr, "mallocbench train: --validate-catalogue needs --validate REGEX\n");
    return 2;
  }
  if (T->cfg.steps == 0 && T->minutes <= 0) {
    fprintf(stderr, "mallocbench train: give --steps N or --minutes M\n");
    return 2;
  }
  if (!isnan(T->cfg.lr_end) && T->cfg.steps == 0) {
    fprintf(stderr, "mallocbench train: --lr-end decays over --steps N; give --steps\n");
    return 2;
  }
  if (!isnan(T->cfg.lr_end) && T->cfg.lr_end > T->cfg.lr) {
    fprintf(stderr, "mallocbench train: --lr-end %g: expected at most --lr (%g)\n", T->cfg.lr_end,
            T->cfg.lr);
    return 2;
  }
  if (!check_support(&T->cfg.agent)) return 2;
  /* a resume past its step limit trains nothing: the checkpoint (whose SHA-256 results cite)
   * stays as it is, and no copy carries a command line that did nothing */
  if (T->cfg.resume && T->cfg.steps > 0 && R->prog.steps >= T->cfg.steps) {
    if (mb_path_same_file(T->cfg.resume, T->cfg.out)) {
      mb_diag(stdout,
              "mallocbench train: %s already has %lld updates (--steps %lld): nothing to train; "
              "%s left as it is",
              R->from, (long long)R->prog.steps, (long long)T->cfg.steps, T->cfg.out);
      return -1;
    }
    mb_diag(stderr,
            "mallocbench train: --steps %lld: %s already has %lld updates: nothing to train, "
            "so --out %s is not written (copy the file to copy the agent; give --steps above "
            "%lld to train on)",
            (long long)T->cfg.steps, R->from, (long long)R->prog.steps, T->cfg.out,
            (long long)R->prog.steps);
    return 2;
  }
  if (T->cfg.new_model && !T->cfg.resume) {
    fprintf(stderr,
            "mallocbench train: --new-model replaces a resumed agent's learned model; "
            "give --resume AGENT.h5 (a fresh agent takes --dyn-width/--dyn-blocks as "
            "they are)\n");
    return 2;
  }
  if (T->cfg.resume && T->network_option)
    mb_diag(stderr,
            "mallocbench train: warning: %s ignored: a resumed agent keeps the network and game "
            "layout of %s (see `mallocbench show %s`)",
            T->network_option, T->cfg.resume, T->cfg.resume);
  if (T->cfg.resume && !T->cfg.new_model && T->model_option)
    mb_diag(stderr,
            "mallocbench train: warning: %s ignored: a resumed agent keeps its learned model "
            "unless --new-model replaces it",
            T->model_option);
  return 0;
}

/* What follows from the options: the supports of shaped rewards, the time limit in seconds. */
static void derive_settings(train_command *T) {
  if (T->cfg.agent.game.shaping > 0) {
    /* shaped rewards and values can be negative: a symmetric support, as many atoms per unit */
    T->cfg.agent.support_min = -T->cfg.agent.support_max;
    T->cfg.agent.support = 2 * T->cfg.agent.support - 1;
  }
  T->cfg.seconds = T->minutes * 60.0;
}

/* Creates the checkpoint's folder (e.g. results/agents/) when missing. Returns 0, or 2 after an
 * error line. */
static int prepare_output(const train_command *T) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", T->cfg.out);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return 0;
  *slash = '\0';
  if (mb_mkdir_p(dir) == 0) return 0;
  mb_diag(stderr, "mallocbench train: --out %s: cannot create folder %s: %s", T->cfg.out, dir,
          strerror(errno));
  return 2;
}

static void print_plan(const train_command *T, int32_t n_catalogue) {
  const mb_train_config *cfg = &T->cfg;
  char replay[128];
  if (cfg->priority_alpha > 0)
    snprintf(replay, sizeof replay, "prioritised replay of %lld transitions, alpha %g, beta %g%s",
             (long long)cfg->replay_capacity, cfg->priority_alpha, cfg->priority_beta,
             cfg->steps > 0 ? " -> 1" : "");
  else
    snprintf(replay, sizeof replay, "uniform replay of %lld transitions",
             (long long)cfg->replay_capacity);
  char leaves[64] = "";
  if (cfg->search.leaf_rollout > 0)
    snprintf(leaves, sizeof leaves, ", %d-step leaf rollouts", cfg->search.leaf_rollout);
  mb_diag(stderr,
          "train: %d catalogue workloads%s; %s search in the %s, %d simulations%s; %s; out %s",
          n_catalogue, cfg->synthetic ? " + synthetic curriculum" : "",
          cfg->search.kind == MB_SEARCH_GUMBEL ? "gumbel" : "puct",
          cfg->self_play_exact ? "real game" : "learned model", cfg->search.simulations, leaves,
          replay, cfg->out);
}

static void print_result(const train_command *T, const mb_train_result *res, int32_t n_validation) {
  /* this run's time apart from the total, which counts the runs it resumed */
  printf("trained %lld updates in %.0f s (in total: %lld updates, %lld episodes, %.0f s)\n",
         (long long)res->updates, res->seconds, (long long)res->prog.steps,
         (long long)res->prog.episodes, res->prog.seconds);
  printf(
      "raw policy (greedy, no search), mean return on the eval set: before %.4f, after %.4f; "
      "random play %.4f; heuristic (reference) %.4f\n",
      res->untrained_policy, res->final_policy, res->random_policy, res->heuristic_play);
  /* A short run (the quick profile's 6,000 updates) often ends level with best fit; say so,
   * so that a newcomer does not read it as training that failed silently. */
  if (res->final_policy <= res->heuristic_play)
    printf(
        "note: the policy network alone does not beat the heuristic on the eval set yet; "
        "datasets/agents/README.md says how long the default agent trains and what it "
        "reaches\n");
  printf(
      "throughput: learner %.1f updates/s, self-play %.0f decisions/s; %.1f updates per second "
      "of this run's wall time\n",
      res->updates_per_s, res->decisions_per_s,
      res->seconds > 0 ? (double)res->updates / res->seconds : 0.0);
  if (n_validation > 0) {
    printf(
        "raw policy on the validation set (%d held-out workloads): after %.4f; best %.4f at "
        "step %lld",
        n_validation, res->final_validation, res->best_validation, (long long)res->best_step);
    if (T->cfg.best_out && res->best_written)
      mb_diag(stdout, ", written to %s", T->cfg.best_out);
    else if (T->cfg.best_out)
      mb_diag(stdout, " (the resumed curve's; %s not rewritten)", T->cfg.best_out);
    else
      printf("\n");
  }
  /* the digest names the networks whatever the file's wall times: equal for a reproduced agent */
  char digest[65];
  mb_agent_digest(&res->agent, digest);
  mb_diag(stdout, "checkpoint: %s (agent digest %s)", T->cfg.out, digest);
}

int mb_cmd_train(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  train_command command;
  train_command *T = &command;
  resumed R = {0};
  int status = parse_options(argc, argv, T);
  if (status == 0 && T->cfg.resume) status = read_resumed(T, &R);
  if (status == 0 && T->cfg.resume) status = apply_stored(argc, argv, T, &R);
  if (status == 0) status = check_options(T, &R);
  if (status == 0) {
    derive_settings(T);
    status = prepare_output(T);
  }
  if (status != 0) {
    resumed_free(&R);
    return status < 0 ? 0 : status; /* < 0: nothing to do */
  }
  mb_train_config *cfg = &T->cfg;
  /* the run's options, stored with it (read back by a later --resume) */
  char options[MB_AGENT_OPTIONS_MAX];
  if (!format_run_options(T, options, sizeof options)) {
    fprintf(stderr,
            "mallocbench train: the options that define the run take more than the %d "
            "characters a checkpoint stores (a shorter --workloads or --validate REGEX?)\n",
            MB_AGENT_OPTIONS_MAX - 1);
    resumed_free(&R);
    return 2;
  }
  cfg->options = options;
  /* one run continued in place: its curve's eval set must stay the same */
  cfg->keep_eval_set = cfg->resume && mb_path_same_file(cfg->resume, cfg->out);
  cfg->agent.obs_dim = mb_game_observation_size(&cfg->agent.game);
  int64_t replay_floor = mb_train_replay_floor(cfg->segment);
  if (cfg->replay_capacity < replay_floor) {
    mb_diag(stderr,
            "mallocbench train: note: --replay %lld raised to %lld, two trajectories of --segment "
            "%d decisions, each with its final observation",
            (long long)cfg->replay_capacity, (long long)replay_floor, cfg->segment);
    cfg->replay_capacity = replay_floor;
  }
  mb_blas_set_threads(1); /* determinism; the batches are small */
  mb_train_set L = {0};
  mb_error err = {{0}};
  if (T->regex || T->split) {
    if (!mb_train_set_load(T->cat, mb_data_dir(T->data), T->regex, T->split, T->max_buffers, stderr,
                           &L, &err)) {
      mb_diag(stderr, "mallocbench train: %s", err.message);
      resumed_free(&R);
      return 2;
    }
    if (L.n == 0 && !cfg->synthetic) {
      fprintf(stderr, "mallocbench train: no catalogue workload selected (or all skipped)\n");
      mb_train_set_free(&L);
      resumed_free(&R);
      return 2;
    }
  }
  mb_train_set V = {0};
  if (T->vregex && !load_validation(T->vcat ? T->vcat : T->cat, mb_data_dir(T->data), T->vregex,
                                    T->max_buffers, &L, &V)) {
    mb_train_set_free(&L);
    resumed_free(&R);
    return 2;
  }
  cfg->validation = V.tw;
  cfg->n_validation = V.n;
  /* the training state beside the checkpoint: written for OUT, resumed from beside FILE. Also
   * named with --state-every 0, which writes none: an earlier run's state there goes (at the
   * start, or at the end when this run resumed from it), or a later --resume would take it for
   * this run's and go back to its step */
  if (!mb_train_state_path(cfg->out, T->state_out, sizeof T->state_out)) {
    mb_diag(stderr, "mallocbench train: --out %s: path too long", cfg->out);
    mb_train_set_free(&V);
    mb_train_set_free(&L);
    resumed_free(&R);
    return 2;
  }
  cfg->state_out = T->state_out;
  /* the training state beside FILE when there is one (read_resumed read it: an agent) */
  if (cfg->resume && R.state[0]) cfg->resume_state = R.state;
  /* bad input is exit 2, as for the options: the settings together (mb_train would fail on
   * them too, but as a run's failure) */
  if (!mb_train_config_check(cfg, &err)) {
    mb_diag(stderr, "mallocbench train: %s", err.message);
    mb_train_set_free(&V);
    mb_train_set_free(&L);
    resumed_free(&R);
    return 2;
  }
  /* provenance: the command line, after the history of the run it resumes (one line each) */
  char *line = mb_command_line(argc, argv);
  char *command_line = line;
  if (line && cfg->resume) {
    const char *before = R.history && R.history[0] ? R.history : "(not recorded)";
    size_t n = strlen(before) + strlen(line) + 2;
    command_line = malloc(n);
    if (command_line) snprintf(command_line, n, "%s\n%s", before, line);
    free(line);
  }
  cfg->note = command_line ? command_line : "mallocbench train";
  cfg->log = T->quiet ? NULL : stderr;
  if (!T->quiet) print_plan(T, L.n);
  mb_train_result res;
  bool ok = mb_train(cfg, L.tw, L.n, NULL, &res, &err);
  if (ok) {
    print_result(T, &res, V.n);
    mb_train_result_free(&res);
  } else {
    mb_diag(stderr, "mallocbench train: %s", err.message);
  }
  free(command_line);
  mb_train_set_free(&V);
  mb_train_set_free(&L);
  resumed_free(&R);
  return ok ? 0 : 1;
}
