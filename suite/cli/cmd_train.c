/* `mallocbench train`: trains a mallocMuZero agent (solvers/muzero/train.h) on catalogue
 * workloads and/or synthetic random workloads and writes its checkpoint (HDF5, atomic, every
 * --checkpoint-every updates) and its training state (every --state-every updates, removed at the
 * end). Resumable with --resume, bit for bit from a state; deterministic for a seed (the actors of
 * a round use fixed random streams, and OpenBLAS runs single-threaded). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
          "                      --eval-every, --checkpoint-every, --state-every and\n"
          "                      --catalogue may change.\n"
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
          "                      .state.h5 and removed when the run ends normally\n"
          "  --eval-every N      updates between raw-policy evaluations (default 100)\n"
          "Agent and search (fresh agents only for the network sizes):\n"
          "  --latent W (128)  --blocks N (1)  --actions A (16)\n"
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
          "  --replay N (50000 transitions)  --ratio R (4 samples per new decision)\n"
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

/* Whether two paths name the same existing file (links and spellings aside). */
static bool same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Whether writing `path` would replace a file this run does not own: it exists, --force was not
 * given, and the run does not continue the checkpoint it writes (--resume OUT --out OUT). A
 * trained agent can be hours of work: never replaced by accident (as run --out). */
static bool replaces_other_run(const char *path, const mb_train_config *cfg, bool force) {
  return !force && access(path, F_OK) == 0 && !(cfg->resume && same_file(cfg->resume, cfg->out));
}

/* The options that define a training run, in the order they are stored (the checkpoint's
 * train.options). Kept: `--resume A --out A` continues one run, so an option it gives must have
 * the run's value, and one it leaves out is the run's; a run branched off to another file
 * (`--resume A --out B`) takes the run's values for those it leaves out and may change the
 * others. Locations (which catalogue): taken from the checkpoint when not given, and may be
 * given otherwise (the eval set's heuristic reference then checks the workloads). The plan
 * (--steps): taken from the checkpoint when neither --steps nor --minutes is given. */
typedef enum { RUN_KEPT, RUN_LOCATION, RUN_PLAN } run_kind;
typedef struct run_option {
  const char *flag;
  run_kind kind;
} run_option;
static const run_option RUN_OPTIONS[] = {
    {"--workloads", RUN_KEPT},     {"--split", RUN_KEPT},
    {"--synthetic", RUN_KEPT},     {"--catalogue", RUN_LOCATION},
    {"--max-buffers", RUN_KEPT},   {"--synth-min", RUN_KEPT},
    {"--synth-max", RUN_KEPT},     {"--synth-packing", RUN_KEPT},
    {"--validate", RUN_KEPT},      {"--validate-catalogue", RUN_LOCATION},
    {"--seed", RUN_KEPT},          {"--lr", RUN_KEPT},
    {"--lr-end", RUN_KEPT},        {"--batch", RUN_KEPT},
    {"--unroll", RUN_KEPT},        {"--td-steps", RUN_KEPT},
    {"--value-weight", RUN_KEPT},  {"--consistency", RUN_KEPT},
    {"--siblings", RUN_KEPT},      {"--sibling-depth", RUN_KEPT},
    {"--sibling-from", RUN_KEPT},  {"--replay", RUN_KEPT},
    {"--ratio", RUN_KEPT},         {"--priority", RUN_KEPT},
    {"--priority-beta", RUN_KEPT}, {"--actors", RUN_KEPT},
    {"--segment", RUN_KEPT},       {"--segment-start", RUN_KEPT},
    {"--search", RUN_KEPT},        {"--self-play", RUN_KEPT},
    {"--simulations", RUN_KEPT},   {"--leaf-rollout", RUN_KEPT},
    {"--c-scale", RUN_KEPT},       {"--q-range", RUN_KEPT},
    {"--freeze", RUN_KEPT},        {"--steps", RUN_PLAN}};
#define RUN_OPTIONS_N ((int)(sizeof RUN_OPTIONS / sizeof RUN_OPTIONS[0]))
/* The first three choose the training workloads together: compared as one. */
#define RUN_WORKLOAD_OPTIONS 3

static int run_option_index(const char *flag) {
  for (int k = 0; k < RUN_OPTIONS_N; k++)
    if (!strcmp(flag, RUN_OPTIONS[k].flag)) return k;
  return -1;
}

/* One `train` command line: the training configuration and what the command does around it. The
 * path buffers hold strings cfg points to, so they live as long as the command. */
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
  bool seen[RUN_OPTIONS_N]; /* the RUN_OPTIONS given (on the command line, or taken from the
                               resumed checkpoint) */
  char best[4096], state_out[4096];
} train_command;

/* The options that shape a fresh agent's networks and game (a resumed agent keeps its own). */
static bool is_network_option(const char *a) {
  static const char *const names[] = {
      "--latent", "--blocks",        "--actions",         "--next-buffers", "--demand-bins",
      "--order",  "--gain-features", "--action-features", "--support",      "--shaping"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
    if (!strcmp(a, names[k])) return true;
  return false;
}

/* Reads the options into T (defaults first). Returns 0, or 2 after an error line. */
static int parse_options(int argc, char **argv, train_command *T) {
  memset(T, 0, sizeof *T);
  mb_train_config_default(&T->cfg);
  T->max_buffers = 20000;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int run = run_option_index(a);
    if (run >= 0) T->seen[run] = true;
    if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
      T->quiet = true;
      continue;
    }
    if (!strcmp(a, "--synthetic")) {
      T->cfg.synthetic = true;
      continue;
    }
    if (!strcmp(a, "--keep-best")) {
      T->keep_best = true;
      continue;
    }
    if (!strcmp(a, "--force")) {
      T->force = true;
      continue;
    }
    if (!strcmp(a, "--new-model")) {
      T->cfg.new_model = true;
      continue;
    }
    if (a[0] != '-') {
      mb_diag(stderr, "mallocbench train: unexpected argument '%s'; see --help", a);
      return 2;
    }
    const char *v = i + 1 < argc ? argv[i + 1] : NULL; /* the other options take a value */
    bool ok = true;
    if (!T->network_option && is_network_option(a)) T->network_option = a;
    bool model_option = !strcmp(a, "--dyn-width") || !strcmp(a, "--dyn-blocks");
    if (!T->model_option && model_option) T->model_option = a;
    if (!strcmp(a, "--workloads"))
      ok = mb_option_text("train", a, v, &T->regex);
    else if (!strcmp(a, "--split")) {
      if (!mb_option_text("train", a, v, &v)) return 2;
      if (strcmp(v, "train") && strcmp(v, "test")) return bad(a, v, "train or test");
      T->split = v;
    } else if (!strcmp(a, "--data"))
      ok = mb_option_text("train", a, v, &T->data);
    else if (!strcmp(a, "--catalogue"))
      ok = mb_option_text("train", a, v, &T->cat);
    else if (!strcmp(a, "--validate"))
      ok = mb_option_text("train", a, v, &T->vregex);
    else if (!strcmp(a, "--validate-catalogue"))
      ok = mb_option_text("train", a, v, &T->vcat);
    else if (!strcmp(a, "--out"))
      ok = mb_option_path("train", a, v, &T->cfg.out);
    else if (!strcmp(a, "--resume"))
      ok = mb_option_path("train", a, v, &T->cfg.resume);
    else if (!strcmp(a, "--steps"))
      ok = mb_option_int("train", a, v, 1, INT64_MAX / 2, &T->cfg.steps);
    else if (!strcmp(a, "--minutes"))
      ok = mb_option_number("train", a, v, 1e-4, false, 1e7, &T->minutes);
    else if (!strcmp(a, "--max-buffers"))
      ok = mb_option_int("train", a, v, 1, INT32_MAX, &T->max_buffers);
    else if (!strcmp(a, "--jobs"))
      ok = mb_option_i32("train", a, v, 1, 64, &T->cfg.jobs);
    else if (!strcmp(a, "--seed")) {
      int64_t sd = 0;
      ok = mb_option_int("train", a, v, 0, INT64_MAX, &sd);
      T->cfg.seed = (uint64_t)sd;
    } else if (!strcmp(a, "--latent"))
      ok = mb_option_i32("train", a, v, 4, 4096, &T->cfg.agent.latent);
    else if (!strcmp(a, "--blocks"))
      ok = mb_option_i32("train", a, v, 0, 16, &T->cfg.agent.blocks);
    else if (!strcmp(a, "--dyn-width"))
      ok = mb_option_i32("train", a, v, 4, 4096, &T->cfg.agent.dyn_width);
    else if (!strcmp(a, "--dyn-blocks"))
      ok = mb_option_i32("train", a, v, 1, 16, &T->cfg.agent.dyn_blocks);
    else if (!strcmp(a, "--actions"))
      ok = mb_option_i32("train", a, v, 2, 1024, &T->cfg.agent.game.n_actions);
    else if (!strcmp(a, "--next-buffers"))
      ok = mb_option_i32("train", a, v, 0, 64, &T->cfg.agent.game.next_buffers);
    else if (!strcmp(a, "--demand-bins"))
      ok = mb_option_i32("train", a, v, 0, 256, &T->cfg.agent.game.demand_bins);
    else if (!strcmp(a, "--order")) {
      if (!mb_option_text("train", a, v, &v)) return 2;
      ok = mb_game_order_parse(v, &T->cfg.agent.game.order);
      if (!ok) return bad(a, v, "heuristic, start or size");
    } else if (!strcmp(a, "--action-features")) {
      int32_t on = 0;
      ok = mb_option_i32("train", a, v, 0, 1, &on);
      T->cfg.agent.action_features = on != 0;
    } else if (!strcmp(a, "--gain-features")) {
      int32_t on = 0;
      ok = mb_option_i32("train", a, v, 0, 1, &on);
      T->cfg.agent.game.gain_features = on != 0;
    } else if (!strcmp(a, "--simulations"))
      ok = mb_option_i32("train", a, v, 1, 100000, &T->cfg.search.simulations);
    else if (!strcmp(a, "--search")) {
      if (!mb_option_text("train", a, v, &v)) return 2;
      ok = mb_search_kind_parse(v, &T->cfg.search.kind);
      if (!ok) return bad(a, v, "gumbel or puct");
    } else if (!strcmp(a, "--self-play")) {
      if (!mb_option_text("train", a, v, &v)) return 2;
      ok = !strcmp(v, "learned") || !strcmp(v, "exact");
      if (!ok) return bad(a, v, "learned or exact");
      T->cfg.self_play_exact = ok && !strcmp(v, "exact");
    } else if (!strcmp(a, "--leaf-rollout"))
      ok = mb_option_i32("train", a, v, 0, MB_SEARCH_MAX_LEAF_ROLLOUT, &T->cfg.search.leaf_rollout);
    else if (!strcmp(a, "--segment"))
      ok = mb_option_i32("train", a, v, 1, 1000000, &T->cfg.segment);
    else if (!strcmp(a, "--segment-start")) {
      if (!mb_option_text("train", a, v, &v)) return 2;
      ok = !strcmp(v, "uniform") || !strcmp(v, "cover");
      if (!ok) return bad(a, v, "uniform or cover");
      T->cfg.segment_cover = !strcmp(v, "cover");
    } else if (!strcmp(a, "--batch"))
      ok = mb_option_i32("train", a, v, 1, 4096, &T->cfg.batch);
    else if (!strcmp(a, "--unroll"))
      ok = mb_option_i32("train", a, v, 0, 32, &T->cfg.unroll);
    else if (!strcmp(a, "--td-steps"))
      ok = mb_option_i32("train", a, v, 0, 100000, &T->cfg.td_steps);
    else if (!strcmp(a, "--lr"))
      ok = mb_option_number("train", a, v, 1e-9, false, 1, &T->cfg.lr);
    else if (!strcmp(a, "--lr-end"))
      ok = mb_option_number("train", a, v, 0, false, 1, &T->cfg.lr_end);
    else if (!strcmp(a, "--freeze")) {
      if (!mb_option_text("train", a, v, &v)) return 2;
      mb_error err;
      if (!mb_train_freeze_check(v, &err)) {
        mb_diag(stderr, "mallocbench train: %s", err.message);
        return 2;
      }
      T->cfg.freeze = v;
    } else if (!strcmp(a, "--value-weight"))
      ok = mb_option_number("train", a, v, 0, false, 1e6, &T->cfg.value_weight);
    else if (!strcmp(a, "--consistency"))
      ok = mb_option_number("train", a, v, 0, false, 1e6, &T->cfg.consistency_weight);
    else if (!strcmp(a, "--siblings"))
      ok = mb_option_number("train", a, v, 0, false, 1e6, &T->cfg.sibling_weight);
    else if (!strcmp(a, "--sibling-from")) {
      ok = mb_option_text("train", a, v, &v);
      if (ok && strcmp(v, "random") && strcmp(v, "search")) {
        mb_diag(stderr, "mallocbench train: --sibling-from '%s': expected random or search", v);
        ok = false;
      }
      if (ok) T->cfg.sibling_from_search = !strcmp(v, "search");
    } else if (!strcmp(a, "--sibling-depth"))
      ok = mb_option_i32("train", a, v, 1, MB_SIBLING_MAX_DEPTH, &T->cfg.sibling_depth);
    else if (!strcmp(a, "--support"))
      ok = mb_option_i32("train", a, v, 2, 100000, &T->cfg.agent.support);
    else if (!strcmp(a, "--shaping"))
      ok = mb_option_number("train", a, v, 0, false, 100, &T->cfg.agent.game.shaping);
    else if (!strcmp(a, "--c-scale"))
      ok = mb_option_number("train", a, v, 0, false, 1e6, &T->cfg.search.c_scale);
    else if (!strcmp(a, "--q-range"))
      ok = mb_option_number("train", a, v, 1e-12, false, 1, &T->cfg.search.q_min_range);
    else if (!strcmp(a, "--replay"))
      ok = mb_option_int("train", a, v, 2, (int64_t)1 << 30, &T->cfg.replay_capacity);
    else if (!strcmp(a, "--ratio"))
      ok = mb_option_number("train", a, v, 1e-6, false, 1e6, &T->cfg.replay_ratio);
    else if (!strcmp(a, "--priority"))
      ok = mb_option_number("train", a, v, 0, false, 1, &T->cfg.priority_alpha);
    else if (!strcmp(a, "--priority-beta"))
      ok = mb_option_number("train", a, v, 0, false, 1, &T->cfg.priority_beta);
    else if (!strcmp(a, "--actors"))
      ok = mb_option_i32("train", a, v, 1, 1024, &T->cfg.actors_per_round);
    else if (!strcmp(a, "--state-every"))
      ok = mb_option_i32("train", a, v, 0, INT32_MAX, &T->cfg.state_every);
    else if (!strcmp(a, "--checkpoint-every"))
      ok = mb_option_i32("train", a, v, 0, INT32_MAX, &T->cfg.checkpoint_every);
    else if (!strcmp(a, "--eval-every"))
      ok = mb_option_i32("train", a, v, 0, INT32_MAX, &T->cfg.eval_every);
    else if (!strcmp(a, "--synth-min"))
      ok = mb_option_i32("train", a, v, 2, 1000000, &T->cfg.synth_min);
    else if (!strcmp(a, "--synth-max"))
      ok = mb_option_i32("train", a, v, 2, 1000000, &T->cfg.synth_max);
    else if (!strcmp(a, "--synth-packing"))
      ok = mb_option_number("train", a, v, 0, false, 1, &T->cfg.synth_packing_share);
    else {
      return mb_unknown_option("train", a);
    }
    if (!ok) return 2; /* the reader printed what was expected */
    i++;               /* the value */
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

/* The value of RUN_OPTIONS[k] in T, as its canonical text (buf "" for --synthetic); false when
 * the option is absent (no --workloads, no --lr-end, ...). */
static bool render_option(const train_command *T, int k, char *buf, size_t n) {
  const mb_train_config *c = &T->cfg;
  const char *f = RUN_OPTIONS[k].flag;
  const char *text = NULL;
  bool is_text = true;
  double num = 0;
  bool is_int = false;
  buf[0] = '\0';
  if (!strcmp(f, "--workloads"))
    text = T->regex;
  else if (!strcmp(f, "--split"))
    text = T->split;
  else if (!strcmp(f, "--synthetic"))
    return c->synthetic;
  else if (!strcmp(f, "--catalogue"))
    text = T->cat;
  else if (!strcmp(f, "--validate"))
    text = T->vregex;
  else if (!strcmp(f, "--validate-catalogue"))
    text = T->vcat;
  else if (!strcmp(f, "--sibling-from"))
    text = c->sibling_from_search ? "search" : "random";
  else if (!strcmp(f, "--segment-start"))
    text = c->segment_cover ? "cover" : "uniform";
  else if (!strcmp(f, "--search"))
    text = c->search.kind == MB_SEARCH_GUMBEL ? "gumbel" : "puct";
  else if (!strcmp(f, "--self-play"))
    text = c->self_play_exact ? "exact" : "learned";
  else if (!strcmp(f, "--freeze"))
    text = c->freeze;
  else if (!strcmp(f, "--seed")) {
    snprintf(buf, n, "%llu", (unsigned long long)c->seed);
    return true;
  } else {
    is_text = false;
    is_int = true;
    if (!strcmp(f, "--max-buffers"))
      num = (double)T->max_buffers;
    else if (!strcmp(f, "--synth-min"))
      num = c->synth_min;
    else if (!strcmp(f, "--synth-max"))
      num = c->synth_max;
    else if (!strcmp(f, "--batch"))
      num = c->batch;
    else if (!strcmp(f, "--unroll"))
      num = c->unroll;
    else if (!strcmp(f, "--td-steps"))
      num = c->td_steps;
    else if (!strcmp(f, "--sibling-depth"))
      num = c->sibling_depth;
    else if (!strcmp(f, "--replay"))
      num = (double)c->replay_capacity;
    else if (!strcmp(f, "--actors"))
      num = c->actors_per_round;
    else if (!strcmp(f, "--segment"))
      num = c->segment;
    else if (!strcmp(f, "--simulations"))
      num = c->search.simulations;
    else if (!strcmp(f, "--leaf-rollout"))
      num = c->search.leaf_rollout;
    else if (!strcmp(f, "--steps")) {
      if (c->steps == 0) return false;
      snprintf(buf, n, "%lld", (long long)c->steps);
      return true;
    } else {
      is_int = false;
      if (!strcmp(f, "--synth-packing"))
        num = c->synth_packing_share;
      else if (!strcmp(f, "--lr"))
        num = c->lr;
      else if (!strcmp(f, "--lr-end")) {
        if (isnan(c->lr_end)) return false;
        num = c->lr_end;
      } else if (!strcmp(f, "--value-weight"))
        num = c->value_weight;
      else if (!strcmp(f, "--consistency"))
        num = c->consistency_weight;
      else if (!strcmp(f, "--siblings"))
        num = c->sibling_weight;
      else if (!strcmp(f, "--ratio"))
        num = c->replay_ratio;
      else if (!strcmp(f, "--priority"))
        num = c->priority_alpha;
      else if (!strcmp(f, "--priority-beta"))
        num = c->priority_beta;
      else if (!strcmp(f, "--c-scale"))
        num = c->search.c_scale;
      else if (!strcmp(f, "--q-range"))
        num = c->search.q_min_range;
    }
  }
  if (is_text) {
    if (!text) return false;
    snprintf(buf, n, "%s", text);
  } else if (is_int) {
    snprintf(buf, n, "%lld", (long long)num);
  } else {
    format_number(num, buf, n);
  }
  return true;
}

/* Appends `text` to buf (size n, at *used), single-quoted when the shell would split or expand
 * it (as mb_command_line quotes). False when it does not fit. */
static bool append_word(char *buf, size_t n, size_t *used, const char *text) {
  bool quote = !text[0] || strpbrk(text, " \t\n'\"$\\|&;()<>*?[]{}`~#!") != NULL;
  size_t need = strlen(text) * 4 + 4;
  if (*used + need >= n) return false;
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

/* RUN_OPTIONS[first..end) present in T, in their order, as command-line words. False when they
 * do not fit in n. */
static bool format_options(const train_command *T, int first, int end, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = '\0';
  for (int k = first; k < end; k++) {
    char v[4096];
    if (!render_option(T, k, v, sizeof v)) continue;
    if (!append_word(buf, n, &used, RUN_OPTIONS[k].flag)) return false;
    if (strcmp(RUN_OPTIONS[k].flag, "--synthetic") && !append_word(buf, n, &used, v)) return false;
  }
  return true;
}

/* The run's options as stored (every RUN_OPTIONS present in T). */
static bool format_run_options(const train_command *T, char *buf, size_t n) {
  return format_options(T, 0, RUN_OPTIONS_N, buf, n);
}

/* The training workloads of T as one text (--workloads, --split, --synthetic), "none" without
 * (cut short when it does not fit: it is only said). */
static void format_workloads(const train_command *T, char *buf, size_t n) {
  format_options(T, 0, RUN_WORKLOAD_OPTIONS, buf, n);
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

/* Takes the options the command leaves out from the resumed checkpoint's (parsing the command
 * line again after them), and checks those it gives: a kept option of another value is refused
 * when the run continues in place, said when it branches off. Returns 0, or 2 after an error. */
static int apply_stored(int argc, char **argv, train_command *T, resumed *R) {
  const char *path = T->cfg.resume;
  bool in_place = same_file(path, T->cfg.out ? T->cfg.out : "");
  if (!R->prog.options[0]) {
    mb_diag(stderr,
            "mallocbench train: warning: %s stores no training options (written before they "
            "were): this run's are those of this command line, unchecked (the command that "
            "trained it: `mallocbench show %s`)",
            R->from, path);
    return 0;
  }
  int max = 2 * RUN_OPTIONS_N + 2;
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
  /* the options given, against the run's */
  char given[4096], stored[4096];
  bool workloads_given = false;
  for (int k = 0; k < RUN_WORKLOAD_OPTIONS; k++) workloads_given |= T->seen[k];
  for (int k = 0; k < RUN_OPTIONS_N; k++) {
    bool group = k < RUN_WORKLOAD_OPTIONS;
    if (RUN_OPTIONS[k].kind != RUN_KEPT || (group ? k > 0 || !workloads_given : !T->seen[k]))
      continue;
    const char *name = RUN_OPTIONS[k].flag;
    if (group) {
      format_workloads(T, given, sizeof given);
      format_workloads(S, stored, sizeof stored);
      name = "the workloads";
    } else {
      if (!render_option(T, k, given, sizeof given)) snprintf(given, sizeof given, "none");
      if (!render_option(S, k, stored, sizeof stored)) snprintf(stored, sizeof stored, "none");
    }
    if (!strcmp(given, stored)) continue;
    if (in_place) {
      mb_diag(stderr,
              "mallocbench train: --resume %s: %s: given %s, the run's %s (a resumed run "
              "keeps the options that define it: give the same or leave it out; to train on "
              "with another, write another file: --out NEW.h5)",
              path, name, given, stored);
      status = 2;
    } else if (!T->quiet) {
      mb_diag(stderr, "train: %s: given %s, %s's run had %s (a new run branched off it)", name,
              given, path, stored);
    }
  }
  /* the schedule of --lr-end follows --steps: a new step limit changes it from here on */
  if (status == 0 && T->seen[run_option_index("--steps")] && S->cfg.steps > 0 &&
      S->cfg.steps != T->cfg.steps && !isnan(S->cfg.lr_end) && S->cfg.lr_end != S->cfg.lr)
    mb_diag(stderr,
            "mallocbench train: warning: --steps %lld: %s's run was planned for %lld updates, "
            "over which --lr-end decays the learning rate: the schedule changes from here",
            (long long)T->cfg.steps, path, (long long)S->cfg.steps);
  /* the run's options for those not given: first, so that the command line's own follow */
  int m = 0;
  if (status == 0) {
    R->argv[m++] = argv[0];
    bool limit_given = T->seen[run_option_index("--steps")] || T->minutes > 0;
    for (int i = 0; i < n; i++) {
      int k = run_option_index(words[i]);
      bool value = k < 0 || strcmp(words[i], "--synthetic");
      bool take = k >= 0 && (k < RUN_WORKLOAD_OPTIONS ? !workloads_given : !T->seen[k]);
      if (k >= 0 && RUN_OPTIONS[k].kind == RUN_PLAN) take = !limit_given;
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

/* The rules between options, and what follows from them (the shaped supports, the seconds, the
 * checkpoint's folder). Returns 0, or 2 after an error line. */
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
  /* a resume past its step limit trains nothing: the checkpoint (whose SHA-256 results cite)
   * stays as it is, and no copy carries a command line that did nothing */
  if (T->cfg.resume && T->cfg.steps > 0 && R->prog.steps >= T->cfg.steps) {
    if (same_file(T->cfg.resume, T->cfg.out)) {
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
  if (T->cfg.agent.game.shaping > 0) {
    /* shaped rewards and values can be negative: a symmetric support, as many atoms per unit */
    T->cfg.agent.support_min = -T->cfg.agent.support_max;
    T->cfg.agent.support = 2 * T->cfg.agent.support - 1;
  }
  T->cfg.seconds = T->minutes * 60.0;
  {
    /* the checkpoint's folder (e.g. results/agents/) is created when missing */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", T->cfg.out);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
      *slash = '\0';
      if (mb_mkdir_p(dir) != 0) {
        mb_diag(stderr, "mallocbench train: --out %s: cannot create folder %s: %s", T->cfg.out, dir,
                strerror(errno));
        return 2;
      }
    }
  }
  return 0;
}

static void print_plan(const train_command *T, int32_t n_catalogue) {
  const mb_train_config *cfg = &T->cfg;
  char replay[96] = "uniform replay";
  if (cfg->priority_alpha > 0)
    snprintf(replay, sizeof replay, "prioritised replay alpha %g, beta %g%s", cfg->priority_alpha,
             cfg->priority_beta, cfg->steps > 0 ? " -> 1" : "");
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
  mb_diag(stdout, "checkpoint: %s", T->cfg.out);
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
  cfg->keep_eval_set = cfg->resume && same_file(cfg->resume, cfg->out);
  cfg->agent.obs_dim = mb_game_observation_size(&cfg->agent.game);
  if (cfg->segment + 1 > cfg->replay_capacity / 2) cfg->replay_capacity = 2 * (cfg->segment + 1);
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
  /* the training state beside the checkpoint: written for OUT, resumed from beside FILE */
  if (cfg->state_every > 0) {
    if (!mb_train_state_path(cfg->out, T->state_out, sizeof T->state_out)) {
      mb_diag(stderr, "mallocbench train: --out %s: path too long", cfg->out);
      mb_train_set_free(&V);
      mb_train_set_free(&L);
      resumed_free(&R);
      return 2;
    }
    cfg->state_out = T->state_out;
  }
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
