/* The mallocbench subcommands. Each lives in suite/cli/cmd_NAME.c and returns the process
 * exit status: 0 success, 1 a failure of the work itself (invalid assignment, mismatch),
 * 2 bad usage or bad input. Each prints its own --help. */
#ifndef MB_COMMANDS_H
#define MB_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "hardware.h"
#include "option_values.h"
#include "workload.h"

typedef int (*mb_command_fn)(int argc, char **argv);

typedef struct mb_command {
  const char *name;
  const char *summary;
  mb_command_fn run;
} mb_command;

int mb_cmd_show(int argc, char **argv);
int mb_cmd_check(int argc, char **argv);
int mb_cmd_import(int argc, char **argv);
int mb_cmd_generate(int argc, char **argv);
int mb_cmd_list(int argc, char **argv);
int mb_cmd_add(int argc, char **argv);
int mb_cmd_solve(int argc, char **argv);
int mb_cmd_pack(int argc, char **argv);
int mb_cmd_run(int argc, char **argv);
int mb_cmd_verify(int argc, char **argv);
int mb_cmd_export(int argc, char **argv);
int mb_cmd_summary(int argc, char **argv);
int mb_cmd_compare(int argc, char **argv);
int mb_cmd_plot(int argc, char **argv);
int mb_cmd_report(int argc, char **argv);
int mb_cmd_play(int argc, char **argv);
int mb_cmd_train(int argc, char **argv);
int mb_cmd_bench(int argc, char **argv);

/* Benchmarks behind `mallocbench bench TARGET`, each in the module it measures. */
int mb_bench_core(int argc, char **argv);    /* suite/cli/bench_core.c */
int mb_bench_solvers(int argc, char **argv); /* suite/cli/bench_solvers.c */
int mb_bench_nn(int argc, char **argv);      /* suite/cli/bench_nn.c */
int mb_bench_game(int argc, char **argv);    /* suite/cli/bench_game.c */
int mb_bench_muzero(int argc, char **argv);  /* suite/cli/bench_muzero.c */

/* True when argv[1..] contains -h or --help. */
int mb_wants_help(int argc, char **argv);

/* "mallocbench " and a command's argv (argv[0] its name), shell-quoted where needed so that the
 * line can be pasted back into a shell: provenance for results and agents. malloc'd (free it);
 * NULL when out of memory. */
char *mb_command_line(int argc, char **argv);

/* An option's value read with suite/option_values.h. On a bad value these print "mallocbench
 * COMMAND: FLAG 'VALUE': expected an integer in LO..HI" (a number: "in [LO, HI]", or "(LO, HI]"
 * when lo_open) and return false; COMMAND is the subcommand as typed, e.g. "run" or "bench
 * muzero". A NULL value (the flag was the last argument) prints "mallocbench COMMAND: FLAG
 * needs a value" instead, so that a parser can pass argv[i + 1] or NULL and learn whether the
 * flag is known before it asks for its value. These lines, and every other CLI line that echoes
 * an argument or a name, go through mb_diag (error.h): control bytes in them print as \xHH. */
bool mb_option_int(const char *command, const char *flag, const char *value, int64_t lo, int64_t hi,
                   int64_t *out);
bool mb_option_i32(const char *command, const char *flag, const char *value, int32_t lo, int32_t hi,
                   int32_t *out);
/* A byte count in [min, max] (mb_parse_bytes: "1048576", "4MiB"); the error line says "expected
 * bytes, e.g. 1048576 or 4MiB", with " > 0" after "bytes" for min 1 and " in MIN..MAX" for
 * other bounds than 0 and INT64_MAX. */
bool mb_option_bytes(const char *command, const char *flag, const char *value, int64_t min,
                     int64_t max, int64_t *out);
bool mb_option_u64(const char *command, const char *flag, const char *value, uint64_t *out);
bool mb_option_number(const char *command, const char *flag, const char *value, double lo,
                      bool lo_open, double hi, double *out);
/* A text value (a path, a name, a regex): any string; only NULL is an error, as above. */
bool mb_option_text(const char *command, const char *flag, const char *value, const char **out);
/* The same for a file path: an empty one is refused with a message (it names no file). */
bool mb_option_path(const char *command, const char *flag, const char *value, const char **out);

/* One of n_choices words: *index is the position of VALUE in choices; else "mallocbench
 * COMMAND: FLAG 'VALUE': expected A, B or C" (two: "A or B"), or "FLAG needs a value" for NULL. */
bool mb_option_choice(const char *command, const char *flag, const char *value,
                      const char *const *choices, int n_choices, int *index);

/* A catalogue split (mb_catalogue_splits): *split points at its name there; else
 * mb_option_choice's "mallocbench COMMAND: FLAG 'VALUE': expected train or test". */
bool mb_option_split(const char *command, const char *flag, const char *value, const char **split);

/* The mallocmuzero solvers' search kind, "gumbel" or "puct", as MB_SOLVER_SEARCH_* (solver.h);
 * else mb_option_choice's "mallocbench COMMAND: FLAG 'VALUE': expected gumbel or puct". */
bool mb_option_search(const char *command, const char *flag, const char *value, int *out);

/* argv[i] as an option chain sees it. Every command takes a value either as the next argument
 * ("--flag VALUE") or attached ("--flag=VALUE"): an argument "--NAME=VALUE" is split into flag
 * "--NAME" and value "VALUE" (a NAME of 63 bytes or more is not split: no flag is that long);
 * any other argument is the flag, and the next argument (NULL after the last) its value. A
 * parser compares o.flag with the flags that take a value and, after reading one, continues
 * after o.last (`i = o.last`): i for an attached value, i + 1 for the next argument. A flag that
 * takes no value (--force) is compared with argv[i] itself, so "--force=1" falls through to
 * mb_unknown_option(COMMAND, argv[i]), which names the whole argument. */
typedef struct mb_option_arg {
  const char *flag;  /* argv[i], or "--NAME" (in name) when argv[i] is "--NAME=VALUE" */
  const char *value; /* VALUE, else argv[i + 1], else NULL: for the readers above */
  int last;          /* the index of the last argument the flag and its value take */
  char name[64];
} mb_option_arg;
void mb_option_arg_read(int argc, char **argv, int i, mb_option_arg *o);

/* Prints "mallocbench COMMAND: unknown option 'ARG' (see mallocbench COMMAND --help)" and
 * returns 2, the exit status of bad usage. */
int mb_unknown_option(const char *command, const char *arg);

/* Where show, solve, check and play find their WORKLOAD argument and its hardware: the options
 * --hardware, --catalogue and --data, as run and list take them. NULL fields: the defaults. */
typedef struct mb_workload_arg {
  const char *hw_name;   /* NULL: tpu-v4i, or a catalogue entry's own profile */
  const char *catalogue; /* NULL: mb_catalogue_default_path */
  const char *data_dir;  /* NULL: mb_data_dir(NULL), i.e. MALLOCBENCH_DATA or ../shared/data */
} mb_workload_arg;

/* Reads FLAG's value into *wa when FLAG is --hardware, --catalogue or --data: 1 when it did,
 * 0 when FLAG is none of them (wa untouched), -1 after an error line (the value is missing, or
 * an empty path), with the conventions of mb_option_text and mb_option_path. */
int mb_option_workload_arg(const char *command, const char *flag, const char *value,
                           mb_workload_arg *wa);

/* The help lines of those three options, 79 columns wide, the first column 18 wide. */
void mb_workload_arg_usage(FILE *out);

/* The WORKLOAD argument of show, solve, check and play, with the hardware it is played on
 * (suite/cli/workload_arg.c): a file in any format mb_workload_load_any reads, on the profile
 * wa->hw_name (default tpu-v4i); or, when no file has that name and it holds no '/', the entry
 * of that name in wa->catalogue, materialised as `run` does (external data from wa->data_dir),
 * on the entry's own profile (wa->hw_name when given) with the entry's fast-memory size, as
 * `run --hardware` keeps it. *entry (may be NULL) says which. NULL with err set, naming the
 * argument, the catalogue or the profile. */
mb_workload *mb_cli_workload(const char *arg, const mb_workload_arg *wa, mb_hardware *hw,
                             bool *entry, mb_error *err);

#endif
