/* The options of `mallocbench train` (suite/cli/cmd_train.c): one table, TRAIN_OPTIONS, reads
 * each of them, writes the stored ones back (the checkpoint's train.options, which `train
 * --resume` reads again and keeps) and says which shape a fresh agent. Checked entry by entry,
 * so that an option added to the table is covered without a word here:
 *   - every flag is in `train --help`;
 *   - a value other than the default, read and written back, is the same text, and that text
 *     read again writes the same (before the table, a stored option without its own line in the
 *     writer was stored as "--flag 0", which a resume then applied); no other option changes;
 *   - the stored options together survive writing, splitting into words and reading again;
 *   - the agent's sizes are read in the agent's own limits (agent.h): their ends are accepted by
 *     mb_agent_config_check and one past either end refused (but the dynamics' 0, "as the other
 *     modules", which the options do not take); --support N (2N - 1 atoms with --shaping) is
 *     refused with the option readers' line when the agent would refuse it.
 * The CLI is not in the library, so the command's file is compiled into this test, with the
 * CLI's option readers (options.c) and stand-ins for main.c's two helpers it calls. */
#include "support.h"

#include "../suite/cli/cmd_train.c"
#include "../suite/cli/options.c"

int mb_wants_help(int argc, char **argv) { return 0; }
char *mb_command_line(int argc, char **argv) { return NULL; }

/* `train WORDS...` read into a fresh *T (freed by the caller); parse_options' status. */
static int parse_words(train_command **T, int n, const char *const *words) {
  char *argv[2 * TRAIN_OPTIONS_MAX + 2];
  assert_true(n + 1 <= (int)(sizeof argv / sizeof argv[0]));
  argv[0] = "train";
  for (int i = 0; i < n; i++) argv[i + 1] = (char *)words[i];
  *T = calloc(1, sizeof **T);
  assert_non_null(*T);
  return parse_options(n + 1, argv, *T);
}

/* The text of option o in T, or "(not given)". */
static const char *rendered(const train_command *T, const train_option *o, char *buf, size_t n) {
  if (!render_option(T, o, buf, n)) snprintf(buf, n, "(not given)");
  return buf;
}

/* A value of o other than its value in T0 (the default), as the text that reads it ("" for a
 * switch); false when the test knows none. Integers and numbers: an end of the range or the
 * middle; choices: another one; text: one the shell would quote, or one o->check accepts. */
static bool other_value(const train_option *o, const train_command *T0, char *buf, size_t n) {
  char def[4096];
  rendered(T0, o, def, sizeof def);
  char cand[8][128];
  int nc = 0;
  switch (o->kind) {
    case OPT_SWITCH:
      snprintf(buf, n, "%s", "");
      return !render_option(T0, o, def, sizeof def);
    case OPT_I32:
    case OPT_I64:
    case OPT_U64:
      snprintf(cand[nc++], sizeof cand[0], "%" PRId64, o->hi);
      snprintf(cand[nc++], sizeof cand[0], "%" PRId64, o->lo);
      snprintf(cand[nc++], sizeof cand[0], "%" PRId64, o->lo + (o->hi - o->lo) / 2);
      break;
    case OPT_BIT:
      snprintf(cand[nc++], sizeof cand[0], "0");
      snprintf(cand[nc++], sizeof cand[0], "1");
      break;
    case OPT_NUMBER:
      format_number(o->max, cand[nc++], sizeof cand[0]);
      format_number(o->min, cand[nc++], sizeof cand[0]);
      format_number(o->min + (o->max - o->min) / 2, cand[nc++], sizeof cand[0]);
      break;
    case OPT_CHOICE:
    case OPT_ENUM:
    case OPT_TEXT:
    case OPT_PATH:
      if (o->choices) {
        for (int i = 0; o->choices[i] && nc < 8; i++)
          snprintf(cand[nc++], sizeof cand[0], "%s", o->choices[i]);
      } else {
        snprintf(cand[nc++], sizeof cand[0], "a dir/it's $x*");
        for (int i = 0; i < 4; i++)
          snprintf(cand[nc++], sizeof cand[0], "%s", MB_AGENT_NETWORKS[i]);
      }
      break;
  }
  for (int i = 0; i < nc; i++) {
    mb_error err = {{0}};
    if (!strcmp(cand[i], def) || (o->check && !o->check(cand[i], &err))) continue;
    snprintf(buf, n, "%s", cand[i]);
    return true;
  }
  return false;
}

/* Every flag of the table is in the help, as a word of its own. */
static void test_every_option_in_help(void **state) {
  char *help = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&help, &len);
  assert_non_null(f);
  usage(f);
  assert_int_equal(fclose(f), 0);
  for (int k = 0; k < TRAIN_OPTIONS_N; k++) {
    const char *flag = TRAIN_OPTIONS[k].flag;
    bool found = false;
    for (const char *p = strstr(help, flag); p && !found; p = strstr(p + 1, flag)) {
      char before = p == help ? ' ' : p[-1], after = p[strlen(flag)];
      found = before != '-' && after != '-' && !(after >= 'a' && after <= 'z');
    }
    if (!found) fail_msg("%s is an option of train, but its help does not show it", flag);
  }
  free(help);
}

/* Each option alone: another value than the default reads, writes back as given, reads again
 * to the same, and leaves every other option as it was. */
static void test_each_option_round_trip(void **state) {
  train_command *T0;
  assert_int_equal(parse_words(&T0, 0, NULL), 0);
  int aliases = 0;
  for (int k = 0; k < TRAIN_OPTIONS_N; k++) {
    const train_option *o = &TRAIN_OPTIONS[k];
    char v[256], got[4096], again[4096], before[4096], other[4096];
    if (!other_value(o, T0, v, sizeof v))
      fail_msg("%s: the test knows no value other than the default (%s)", o->flag,
               rendered(T0, o, before, sizeof before));
    const char *words[] = {o->flag, v};
    train_command *T1, *T2;
    int n = o->kind == OPT_SWITCH ? 1 : 2;
    if (parse_words(&T1, n, words) != 0) fail_msg("%s '%s' was refused", o->flag, v);
    if (!render_option(T1, o, got, sizeof got)) fail_msg("%s '%s': not written back", o->flag, v);
    if (strcmp(got, v)) fail_msg("%s '%s' was written back as '%s'", o->flag, v, got);
    if (!strcmp(got, rendered(T0, o, before, sizeof before)))
      fail_msg("%s '%s': the default writes the same", o->flag, v);
    const char *words2[] = {o->flag, got};
    assert_int_equal(parse_words(&T2, n, words2), 0);
    if (strcmp(rendered(T2, o, again, sizeof again), got))
      fail_msg("%s '%s' read back from '%s' writes '%s'", o->flag, v, got, again);
    for (int j = 0; j < TRAIN_OPTIONS_N; j++) {
      const train_option *p = &TRAIN_OPTIONS[j];
      if (j == k) continue;
      if (p->off == o->off) { /* one field, two names: -q and --quiet alone */
        aliases++;
        if (o->kind != OPT_SWITCH || p->kind != OPT_SWITCH)
          fail_msg("%s and %s read into the same field", o->flag, p->flag);
        continue;
      }
      if (strcmp(rendered(T1, p, other, sizeof other), rendered(T0, p, before, sizeof before)))
        fail_msg("%s '%s' changed %s from %s to %s", o->flag, v, p->flag, before, other);
    }
    free(T1);
    free(T2);
  }
  assert_int_equal(aliases, 2); /* -q and --quiet, each seen from the other */
  free(T0);
}

/* All stored options at once, none at its default: written, split into words and read again,
 * they write the same text, which has every one of them. */
static void test_stored_options_round_trip(void **state) {
  train_command *T0, *T1, *T2;
  assert_int_equal(parse_words(&T0, 0, NULL), 0);
  static char values[TRAIN_OPTIONS_MAX][256];
  const char *words[2 * TRAIN_OPTIONS_MAX];
  int n = 0, stored = 0;
  for (int k = 0; k < TRAIN_OPTIONS_N; k++) {
    const train_option *o = &TRAIN_OPTIONS[k];
    if (o->run == RUN_NONE) continue;
    stored++;
    assert_true(other_value(o, T0, values[k], sizeof values[k]));
    words[n++] = o->flag;
    if (o->kind != OPT_SWITCH) words[n++] = values[k];
  }
  assert_true(stored >= 36);
  assert_int_equal(parse_words(&T1, n, words), 0);
  static char text[MB_AGENT_OPTIONS_MAX], copy[MB_AGENT_OPTIONS_MAX], again[MB_AGENT_OPTIONS_MAX];
  assert_true(format_run_options(T1, text, sizeof text));
  for (int k = 0; k < TRAIN_OPTIONS_N; k++) {
    const train_option *o = &TRAIN_OPTIONS[k];
    if (o->run == RUN_NONE) continue;
    char word[512];
    snprintf(word, sizeof word, "%s%s", o->flag, o->kind == OPT_SWITCH ? "" : " ");
    if (!strstr(text, word)) fail_msg("%s is not in the stored options: %s", o->flag, text);
  }
  snprintf(copy, sizeof copy, "%s", text);
  char *split[2 * TRAIN_OPTIONS_MAX + 2];
  int m = split_words(copy, split, 2 * TRAIN_OPTIONS_N + 2);
  assert_int_equal(m, n);
  for (int i = 0; i < m; i++) assert_string_equal(split[i], words[i]);
  assert_int_equal(parse_words(&T2, m, (const char *const *)split), 0);
  assert_true(format_run_options(T2, again, sizeof again));
  assert_string_equal(again, text);
  free(T0);
  free(T1);
  free(T2);
}

/* The agent's sizes: the ends of each option's range make an agent config that
 * mb_agent_config_check accepts, and one past the top one that it refuses (one below the
 * bottom too, but for the dynamics' 0, "as the other modules", which the options do not take). */
static void test_agent_sizes_in_agent_limits(void **state) {
  int checked = 0;
  for (int k = 0; k < TRAIN_OPTIONS_N; k++) {
    const train_option *o = &TRAIN_OPTIONS[k];
    if (o->net == NET_NONE || o->kind != OPT_I32 || !strcmp(o->flag, "--support")) continue;
    int64_t values[] = {o->lo, o->hi, o->hi + 1, o->lo - 1};
    for (int i = 0; i < 4; i++) {
      train_command *T;
      assert_int_equal(parse_words(&T, 0, NULL), 0);
      *(int32_t *)((char *)T + o->off) = (int32_t)values[i];
      T->cfg.agent.obs_dim = mb_game_observation_size(&T->cfg.agent.game);
      mb_error err = {{0}};
      bool ok = mb_agent_config_check(&T->cfg.agent, &err);
      bool dyn_zero = o->net == NET_MODEL && values[i] == 0;
      if (ok != (i < 2 || dyn_zero))
        fail_msg("%s %" PRId64 ": the agent %s it: %s", o->flag, values[i],
                 ok ? "accepts" : "refuses", err.message);
      free(T);
    }
    checked++;
  }
  assert_int_equal(checked, 7); /* latent, blocks, actions, next buffers, demand bins, dyn x 2 */
}

/* --support N: N atoms, 2N - 1 with --shaping; a value the agent refuses is refused before
 * training, with the option readers' line. */
static void test_support_range(void **state) {
  static const struct {
    const char *support, *shaping;
    bool ok;
  } cases[] = {{"3", "0", true},   {"2", "0", false},  {"1001", "0", true}, {"1002", "0", false},
               {"2", "0.5", true}, {"501", "1", true}, {"502", "1", false}, {"1", "0", false},
               {"31", "0", true},  {"31", "1", true}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *words[] = {"--support", cases[i].support, "--shaping", cases[i].shaping};
    train_command *T;
    bool ok = parse_words(&T, 4, words) == 0 && check_support(&T->cfg.agent);
    if (ok != cases[i].ok)
      fail_msg("--support %s --shaping %s: %s", cases[i].support, cases[i].shaping,
               ok ? "accepted" : "refused");
    if (ok) {
      derive_settings(T);
      T->cfg.agent.obs_dim = mb_game_observation_size(&T->cfg.agent.game);
      mb_error err = {{0}};
      if (!mb_agent_config_check(&T->cfg.agent, &err))
        fail_msg("--support %s --shaping %s: the agent refuses it: %s", cases[i].support,
                 cases[i].shaping, err.message);
    }
    free(T);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_option_in_help),
      cmocka_unit_test(test_each_option_round_trip),
      cmocka_unit_test(test_stored_options_round_trip),
      cmocka_unit_test(test_agent_sizes_in_agent_limits),
      cmocka_unit_test(test_support_range),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
