#include "model_spec.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"
#include "text_lines.h"

static const char *const family_names[MB_FAMILY_COUNT] = {
    "mlp",         "bert",         "gpt2", "t5",   "vit",  "llama", "resnet",   "alexnet",
    "mobilenetv2", "efficientnet", "unet", "lstm", "dlrm", "gcn",   "graphsage"};

const char *mb_model_family_name(mb_model_family f) {
  return (unsigned)f < MB_FAMILY_COUNT ? family_names[f] : "?";
}

typedef enum { K_FAMILY, K_MODE, K_DTYPE, K_INT, K_LIST, K_FLOAT, K_STRING } ktype;

#define F(x) (1u << MB_FAMILY_##x)
#define ALL ((1u << MB_FAMILY_COUNT) - 1)
#define TRANSFORMERS (F(BERT) | F(GPT2) | F(T5) | F(VIT) | F(LLAMA))
#define CNNS (F(VIT) | F(RESNET) | F(ALEXNET) | F(MOBILENETV2) | F(EFFICIENTNET) | F(UNET))
#define GRAPHS (F(GCN) | F(GRAPHSAGE))
#define TEXT (F(BERT) | F(GPT2) | F(T5) | F(LLAMA) | F(LSTM))
#define STACKS (F(MLP) | TRANSFORMERS | F(LSTM) | GRAPHS)

typedef struct keydef {
  const char *key;
  ktype type;
  size_t off;       /* field in mb_model_spec */
  size_t count_off; /* K_LIST: its int32_t count */
  int64_t max;      /* K_INT, K_LIST: values in [1, max] keep every tensor size in int64 */
  uint32_t allowed, required;
} keydef;

#define OFF(f) offsetof(mb_model_spec, f)
#define INT_KEY(k, mx, al, rq) \
  { #k, K_INT, OFF(k), 0, (mx), (al), (rq) }
#define LIST_KEY(k, mx, al, rq) \
  { #k, K_LIST, OFF(k), OFF(n_##k), (mx), (al), (rq) }

static const keydef keys[] = {
    {"family", K_FAMILY, OFF(family), 0, 0, ALL, ALL},
    {"name", K_STRING, OFF(name), 0, 0, ALL, 0},
    {"mode", K_MODE, OFF(training), 0, 0, ALL, ALL},
    {"dtype", K_DTYPE, OFF(dtype), 0, 0, ALL, ALL},
    {"opt_dtype", K_DTYPE, OFF(opt_dtype), 0, 0, ALL, 0},
    INT_KEY(batch, 1 << 12, ALL, ALL),
    INT_KEY(seq, 1 << 15, TEXT, TEXT),
    INT_KEY(tgt_seq, 1 << 15, F(T5), F(T5)),
    INT_KEY(layers, 512, STACKS, STACKS),
    INT_KEY(dec_layers, 512, F(T5), F(T5)),
    INT_KEY(hidden, 1 << 16, STACKS, STACKS),
    INT_KEY(heads, 256, TRANSFORMERS, TRANSFORMERS),
    INT_KEY(kv_heads, 256, F(LLAMA), 0),
    INT_KEY(ffn, 1 << 18, TRANSFORMERS, TRANSFORMERS),
    INT_KEY(vocab, 1 << 20, TEXT, TEXT),
    INT_KEY(image, 1 << 12, CNNS, CNNS),
    INT_KEY(patch, 1 << 10, F(VIT), F(VIT)),
    INT_KEY(channels, 1 << 12, CNNS, CNNS),
    INT_KEY(classes, 1 << 20, F(MLP) | F(BERT) | CNNS | GRAPHS, F(MLP) | F(BERT) | CNNS | GRAPHS),
    INT_KEY(depth, 1 << 10, F(RESNET), F(RESNET)),
    INT_KEY(width, 1 << 12, F(UNET), F(UNET)),
    INT_KEY(levels, 8, F(UNET), F(UNET)),
    INT_KEY(features, 1 << 16, F(MLP) | GRAPHS | F(DLRM), F(MLP) | GRAPHS | F(DLRM)),
    INT_KEY(nodes, INT64_C(1) << 31, GRAPHS, GRAPHS),
    INT_KEY(edges, INT64_C(1) << 34, GRAPHS, GRAPHS),
    INT_KEY(embed_dim, 1 << 12, F(DLRM), F(DLRM)),
    LIST_KEY(table_rows, INT64_C(1) << 34, F(DLRM), F(DLRM)),
    LIST_KEY(bottom_mlp, 1 << 16, F(DLRM), F(DLRM)),
    LIST_KEY(top_mlp, 1 << 16, F(DLRM), F(DLRM)),
    {"reference_gflops", K_FLOAT, OFF(reference_gflops), 0, 0, ALL, 0},
    {"reference", K_STRING, OFF(reference), 0, 0, ALL, 0},
};
#define NKEYS ((int32_t)(sizeof keys / sizeof *keys))

static int32_t find_key(const char *k) {
  for (int32_t i = 0; i < NKEYS; i++)
    if (!strcmp(keys[i].key, k)) return i;
  return -1;
}

/* Strict integer in [1, max]: digits only (no sign, no exponent, no trailing text). */
static bool parse_int(const char *s, int64_t max, int64_t *out) {
  if (!*s) return false;
  for (const char *p = s; *p; p++)
    if (*p < '0' || *p > '9') return false;
  errno = 0;
  char *end;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v < 1 || v > max) return false;
  *out = v;
  return true;
}

static bool set_value(const keydef *k, const char *v, size_t vlen, bool quoted, mb_model_spec *s,
                      const char *path, int line, mb_error *err) {
  char *field = (char *)s + k->off;
  if (vlen == 0 && !quoted)
    return mb_fail(err, "%s:%d: key '%s': missing value", path, line, k->key);
  if (quoted && k->type != K_STRING)
    return mb_fail(err, "%s:%d: key '%s': quoted value where a %s is expected", path, line, k->key,
                   k->type == K_INT || k->type == K_FLOAT ? "number" : "word");
  switch (k->type) {
    case K_STRING: {
      size_t cap = k->off == OFF(name) ? sizeof s->name : sizeof s->reference;
      if (vlen >= cap)
        return mb_fail(err, "%s:%d: key '%s': value longer than %zu characters", path, line, k->key,
                       cap - 1);
      if (k->off == OFF(name)) {
        for (size_t i = 0; i < vlen; i++)
          if (!(v[i] == '_' || v[i] == '-' || v[i] == '.' || (v[i] >= '0' && v[i] <= '9') ||
                (v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z')))
            return mb_fail(err,
                           "%s:%d: key 'name': '%s' may only contain letters, digits, "
                           "'_', '-' and '.'",
                           path, line, v);
        if (vlen == 0) return mb_fail(err, "%s:%d: key 'name': empty", path, line);
      }
      memcpy(field, v, vlen);
      field[vlen] = '\0';
      return true;
    }
    case K_FAMILY:
      for (int32_t f = 0; f < MB_FAMILY_COUNT; f++) {
        if (!strcmp(v, family_names[f])) {
          s->family = (mb_model_family)f;
          return true;
        }
      }
      return mb_fail(err,
                     "%s:%d: key 'family': unknown family '%s' (known: mlp, bert, gpt2, t5, "
                     "vit, llama, resnet, alexnet, mobilenetv2, efficientnet, unet, lstm, dlrm, "
                     "gcn, graphsage)",
                     path, line, v);
    case K_MODE:
      if (!strcmp(v, "inference") || !strcmp(v, "training")) {
        s->training = !strcmp(v, "training");
        return true;
      }
      return mb_fail(err, "%s:%d: key 'mode': '%s' is neither 'inference' nor 'training'", path,
                     line, v);
    case K_DTYPE: {
      mb_dtype d;
      if (!mb_dtype_from_name(v, &d) || d == MB_DTYPE_S32)
        return mb_fail(err, "%s:%d: key '%s': unknown dtype '%s' (f32, bf16 or f16)", path, line,
                       k->key, v);
      *(mb_dtype *)(void *)field = d;
      return true;
    }
    case K_INT:
      if (!parse_int(v, k->max, (int64_t *)(void *)field))
        return mb_fail(err, "%s:%d: key '%s': bad number '%s' (expected an integer in [1, %lld])",
                       path, line, k->key, v, (long long)k->max);
      return true;
    case K_FLOAT: {
      errno = 0;
      char *end;
      double d = strtod(v, &end);
      if (errno || *end || !isfinite(d) || d <= 0)
        return mb_fail(err, "%s:%d: key '%s': bad number '%s' (expected a positive number)", path,
                       line, k->key, v);
      *(double *)(void *)field = d;
      return true;
    }
    case K_LIST: {
      int64_t *list = (int64_t *)(void *)field;
      int32_t *count = (int32_t *)(void *)((char *)s + k->count_off);
      const char *p = v;
      *count = 0;
      for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        const char *q = p;
        while (*q && *q != ',' && *q != ' ' && *q != '\t') q++;
        char item[32];
        size_t ilen = (size_t)(q - p);
        if (ilen == 0 || ilen >= sizeof item)
          return mb_fail(err,
                         "%s:%d: key '%s': bad list '%s' (expected comma-separated "
                         "integers)",
                         path, line, k->key, v);
        memcpy(item, p, ilen);
        item[ilen] = '\0';
        if (*count >= MB_SPEC_LIST_MAX)
          return mb_fail(err, "%s:%d: key '%s': more than %d entries", path, line, k->key,
                         MB_SPEC_LIST_MAX);
        if (!parse_int(item, k->max, &list[*count]))
          return mb_fail(err,
                         "%s:%d: key '%s': bad number '%s' in list (expected an integer in "
                         "[1, %lld])",
                         path, line, k->key, item, (long long)k->max);
        (*count)++;
        while (*q == ' ' || *q == '\t') q++;
        if (!*q) return true;
        if (*q != ',')
          return mb_fail(err,
                         "%s:%d: key '%s': bad list '%s' (expected comma-separated "
                         "integers)",
                         path, line, k->key, v);
        p = q + 1;
      }
    }
  }
  return false;
}

/* Checks that relate several keys; `line_of` gives each key's line for the message. */
static bool check_spec(const mb_model_spec *s, const int32_t *line_of, const char *path,
                       mb_error *err) {
#define LINE(k) line_of[find_key(k)]
  uint32_t fam = 1u << s->family;
  if ((fam & TRANSFORMERS) && s->hidden % s->heads)
    return mb_fail(err, "%s:%d: key 'heads': %lld heads do not divide hidden = %lld", path,
                   LINE("heads"), (long long)s->heads, (long long)s->hidden);
  if (s->family == MB_FAMILY_LLAMA && s->heads % s->kv_heads)
    return mb_fail(err, "%s:%d: key 'kv_heads': %lld does not divide heads = %lld", path,
                   LINE("kv_heads") ? LINE("kv_heads") : LINE("heads"), (long long)s->kv_heads,
                   (long long)s->heads);
  if (s->family == MB_FAMILY_VIT && (s->image % s->patch || s->patch > s->image))
    return mb_fail(err, "%s:%d: key 'patch': %lld does not divide image = %lld", path,
                   LINE("patch"), (long long)s->patch, (long long)s->image);
  if ((fam & CNNS) && s->image < mb_model_min_image(s->family))
    return mb_fail(err,
                   "%s:%d: key 'image': %lld is too small for family '%s' (at least %lld: "
                   "every convolution and pooling window must fit)",
                   path, LINE("image"), (long long)s->image, family_names[s->family],
                   (long long)mb_model_min_image(s->family));
  if (s->family == MB_FAMILY_RESNET && s->depth != 50 && s->depth != 101 && s->depth != 152)
    return mb_fail(err, "%s:%d: key 'depth': %lld is not a bottleneck ResNet (50, 101 or 152)",
                   path, LINE("depth"), (long long)s->depth);
  if (s->family == MB_FAMILY_UNET && s->image % (INT64_C(1) << s->levels))
    return mb_fail(err, "%s:%d: key 'image': %lld is not divisible by 2^levels = %lld", path,
                   LINE("image"), (long long)s->image, (long long)(INT64_C(1) << s->levels));
  if (s->family == MB_FAMILY_DLRM && s->bottom_mlp[s->n_bottom_mlp - 1] != s->embed_dim)
    return mb_fail(err,
                   "%s:%d: key 'bottom_mlp': last width %lld must equal embed_dim = %lld "
                   "(the dense vector joins the embeddings in the interaction)",
                   path, LINE("bottom_mlp"), (long long)s->bottom_mlp[s->n_bottom_mlp - 1],
                   (long long)s->embed_dim);
  if (s->family == MB_FAMILY_LSTM && s->seq * s->layers > 100000)
    return mb_fail(err, "%s:%d: key 'seq': seq x layers = %lld LSTM steps, at most 100000", path,
                   LINE("seq"), (long long)(s->seq * s->layers));
  return true;
#undef LINE
}

static void default_name(const char *path, char *out, size_t n) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t len = strlen(base);
  if (len >= 5 && !strcmp(base + len - 5, ".spec")) len -= 5; /* ".spec" alone: "model" */
  if (len >= n) len = n - 1;
  memcpy(out, base, len);
  out[len] = '\0';
  if (!out[0]) snprintf(out, n, "model");
}

bool mb_model_spec_parse(const char *text, size_t len, const char *path, mb_model_spec *out,
                         mb_error *err) {
  if (!path) path = "<spec>";
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s", path);
  if (!mb_text_check_no_nul(text, len, path, err)) return false;
  out->opt_dtype = MB_DTYPE_F32;
  int errcode;
  PCRE2_SIZE erroff;
  /* key = value | key = "quoted value", optional trailing comment; or blank / comment */
  pcre2_code *re = pcre2_compile(
      (PCRE2_SPTR) "^[ \\t]*(?:#.*)?$|^[ \\t]*([A-Za-z_][A-Za-z0-9_]*)[ \\t]*=[ \\t]*"
                   "(?:\"([^\"]*)\"|([^\"#]*?))[ \\t]*(?:#.*)?$",
      PCRE2_ZERO_TERMINATED, PCRE2_DOTALL, &errcode, &erroff, NULL);
  if (!re) return mb_fail(err, "%s: internal error: spec pattern does not compile", path);
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
  if (!md) {
    pcre2_code_free(re);
    return mb_fail(err, "%s: out of memory", path);
  }
  int32_t line_of[NKEYS] = {0};
  bool ok = true;
  mb_text_lines it;
  mb_text_lines_init(&it, text, len);
  const char *start;
  size_t llen;
  while (ok && mb_text_lines_next(&it, &start, &llen)) {
    int line = (int)it.line_no;
    int rc = pcre2_match(re, (PCRE2_SPTR)start, llen, 0, 0, md, NULL);
    if (rc < 0) {
      ok = mb_fail(err, "%s:%d: expected 'key = value' or a '#' comment", path, line);
      break;
    }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    if (rc < 2 || ov[2] == PCRE2_UNSET) continue; /* blank or comment */
    char key[64];
    size_t klen = ov[3] - ov[2];
    if (klen >= sizeof key) {
      ok = mb_fail(err, "%s:%d: key '%.40s...': unknown key", path, line, start + ov[2]);
      break;
    }
    memcpy(key, start + ov[2], klen);
    key[klen] = '\0';
    int32_t k = find_key(key);
    if (k < 0) {
      ok = mb_fail(err, "%s:%d: key '%s': unknown key", path, line, key);
      break;
    }
    if (line_of[k]) {
      ok = mb_fail(err, "%s:%d: key '%s': duplicate (first set on line %d)", path, line, key,
                   line_of[k]);
      break;
    }
    line_of[k] = line;
    bool quoted = rc >= 3 && ov[4] != PCRE2_UNSET;
    size_t vs = quoted ? ov[4] : ov[6], ve = quoted ? ov[5] : ov[7];
    char value[MB_SPEC_TEXT_MAX];
    size_t vlen = ve - vs;
    if (vlen >= sizeof value) {
      ok = mb_fail(err, "%s:%d: key '%s': value longer than %zu characters", path, line, key,
                   sizeof value - 1);
      break;
    }
    memcpy(value, start + vs, vlen);
    value[vlen] = '\0';
    ok = set_value(&keys[k], value, vlen, quoted, out, path, line, err);
  }
  pcre2_match_data_free(md);
  pcre2_code_free(re);
  if (!ok) return false;
  if (!line_of[find_key("family")])
    return mb_fail(err, "%s: key 'family': missing (every spec names its family)", path);
  uint32_t fam = 1u << out->family;
  for (int32_t k = 0; k < NKEYS; k++) {
    if (line_of[k] && !(keys[k].allowed & fam))
      return mb_fail(err, "%s:%d: key '%s': not used by family '%s'", path, line_of[k], keys[k].key,
                     family_names[out->family]);
  }
  for (int32_t k = 0; k < NKEYS; k++) {
    if (!line_of[k] && (keys[k].required & fam))
      return mb_fail(err, "%s: key '%s': missing (required by family '%s')", path, keys[k].key,
                     family_names[out->family]);
  }
  if (line_of[find_key("reference")] && !line_of[find_key("reference_gflops")])
    return mb_fail(err, "%s:%d: key 'reference': given without 'reference_gflops'", path,
                   line_of[find_key("reference")]);
  if (line_of[find_key("reference_gflops")] && !line_of[find_key("reference")])
    return mb_fail(err, "%s:%d: key 'reference_gflops': given without 'reference' (its source)",
                   path, line_of[find_key("reference_gflops")]);
  out->has_reference = line_of[find_key("reference_gflops")] != 0;
  if (!out->name[0]) default_name(path, out->name, sizeof out->name);
  if (out->family == MB_FAMILY_LLAMA && !out->kv_heads) out->kv_heads = out->heads;
  return check_spec(out, line_of, path, err);
}

bool mb_model_spec_load(const char *path, mb_model_spec *out, mb_error *err) {
  size_t len = 0;
  char *text = mb_read_file(path, &len);
  if (!text) return mb_fail(err, "%s: cannot read: %s", path, strerror(errno));
  bool ok = mb_model_spec_parse(text, len, path, out, err);
  free(text);
  return ok;
}
