/* Tests of the model zoo: every spec in datasets/models generates a valid workload whose
 * forward FLOPs match the published figure stated in the spec, training workloads are
 * scheduled forward / loss / backward / Adam, sizes and live ranges of a tiny MLP match a
 * hand computation, generation is deterministic, and malformed specs give file:line:key
 * errors. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_spec.h"
#include "model_zoo.h"
#include "paths.h"
#include "support.h"

/* ---- helpers ---- */

typedef struct spec_list {
  int n;
  char paths[128][512];
} spec_list;

static int cmp_str(const void *a, const void *b) { return strcmp(a, b); }

static void list_specs(spec_list *l) {
  char dir[512];
  assert_non_null(mb_path_join(dir, sizeof dir, mb_source_dir(), "datasets/models"));
  DIR *d = opendir(dir);
  assert_non_null(d);
  l->n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len <= 5 || strcmp(e->d_name + len - 5, ".spec")) continue;
    /* every spec is tested: more than the list holds is a failure, not a silent cut */
    if (l->n == (int)(sizeof l->paths / sizeof l->paths[0]))
      fail_msg("more than %d specs in %s: enlarge spec_list", l->n, dir);
    assert_non_null(mb_path_join(l->paths[l->n++], 512, dir, e->d_name));
  }
  closedir(d);
  qsort(l->paths, (size_t)l->n, sizeof l->paths[0], cmp_str);
}

static bool starts(const char *s, const char *prefix) {
  return !strncmp(s, prefix, strlen(prefix));
}

static bool is_product(const mb_op *op) {
  return !strcmp(op->kind, "dot") || !strcmp(op->kind, "convolution");
}

/* FLOPs of the forward products (the quantity published figures count). */
static double forward_product_flops(const mb_workload *w) {
  double f = 0;
  for (int32_t o = 0; o < w->n_ops; o++)
    if (starts(w->ops[o].name, "fwd.") && is_product(&w->ops[o])) f += w->ops[o].flops;
  return f;
}

static mb_workload *generate_ok(const char *text) {
  mb_error err = {{0}};
  mb_workload *w = mb_model_generate_text(text, strlen(text), "tiny.spec", &err);
  if (!w) fail_msg("generation failed: %s", err.message);
  return w;
}

static const mb_buffer *buf(const mb_workload *w, const char *name) {
  int32_t i = mb_workload_find_buffer(w, name);
  if (i < 0) fail_msg("no buffer '%s'", name);
  return &w->buffers[i];
}

static int32_t op(const mb_workload *w, const char *name) {
  int32_t i = mb_workload_find_op(w, name);
  if (i < 0) fail_msg("no op '%s'", name);
  return i;
}

/* ---- every shipped spec ---- */

static void test_every_spec_generates(void **state) {
  (void)state;
  spec_list *l = malloc(sizeof *l);
  assert_non_null(l);
  list_specs(l);
  assert_true(l->n >= 30);
  bool family_seen[MB_FAMILY_COUNT] = {false};
  int n_training = 0;
  for (int i = 0; i < l->n; i++) {
    mb_error err = {{0}};
    mb_workload *w = mb_model_generate_file(l->paths[i], &err);
    if (!w) fail_msg("%s", err.message);
    mb_model_spec s;
    assert_true(mb_model_spec_load(l->paths[i], &s, &err));
    family_seen[s.family] = true;
    n_training += s.training;
    assert_string_equal(w->name, s.name);
    assert_true(w->n_ops > 0 && w->n_buffers > 0);
    assert_true(w->n_buffers <= 20000);
    /* every buffer is read or written, sizes positive, pinned ones are entry/exit values */
    for (int32_t b = 0; b < w->n_buffers; b++) {
      assert_true(w->buffers[b].n_uses > 0);
      assert_true(w->buffers[b].size > 0);
      if (starts(w->buffers[b].name, "grad.")) assert_false(w->buffers[b].pinned);
    }
    /* exactly one pinned output at the end: the logits (inference) or the loss */
    int outputs = 0;
    for (int32_t b = 0; b < w->n_buffers; b++) {
      const mb_buffer *x = &w->buffers[b];
      if (x->pinned && x->end == w->n_ops - 1 && x->start > 0) outputs++;
    }
    assert_int_equal(outputs, 1);
    mb_workload_free(w);
  }
  for (int f = 0; f < MB_FAMILY_COUNT; f++) {
    if (!family_seen[f]) fail_msg("no spec of family '%s'", mb_model_family_name(f));
  }
  assert_true(n_training >= 12);
  free(l);
}

static void test_flops_match_references(void **state) {
  (void)state;
  spec_list *l = malloc(sizeof *l);
  assert_non_null(l);
  list_specs(l);
  int checked = 0;
  for (int i = 0; i < l->n; i++) {
    mb_error err = {{0}};
    mb_model_spec s;
    if (!mb_model_spec_load(l->paths[i], &s, &err)) fail_msg("%s", err.message);
    if (!s.has_reference) continue;
    assert_true(strlen(s.reference) > 10);
    mb_workload *w = mb_model_generate_spec(&s, &err);
    if (!w) fail_msg("%s", err.message);
    double per_sample = forward_product_flops(w) / (double)s.batch;
    double ref = s.reference_gflops * 1e9;
    double dev = per_sample / ref - 1;
    print_message("%-28s %10.4f GFLOPs/sample, reference %10.4f (%+.2f%%)\n", s.name,
                  per_sample / 1e9, s.reference_gflops, 100 * dev);
    if (!(fabs(dev) <= 0.10))
      fail_msg("%s: %.4g GFLOPs per sample, reference %.4g (%s): off by %.1f%%", l->paths[i],
               per_sample / 1e9, s.reference_gflops, s.reference, 100 * dev);
    checked++;
    mb_workload_free(w);
  }
  assert_true(checked >= 20);
  free(l);
}

/* The spec of resnet50_inf_b1 with another depth. */
static mb_workload *resnet_of_depth(int depth) {
  char text[256];
  snprintf(text, sizeof text,
           "family = resnet\nmode = inference\ndtype = bf16\nbatch = 1\ndepth = %d\n"
           "image = 224\nchannels = 3\nclasses = 1000\n",
           depth);
  return generate_ok(text);
}

/* ResNet-101 and -152, which no shipped spec uses: torchvision's model table gives 7.80 and 11.51
 * G multiply-adds per 224x224 image (listed as GFLOPS); their blocks per stage are 3, 4, 23, 3
 * and 3, 8, 36, 3 (He et al. 2016, Table 1), named s1..s4, b0 first; ReLU after every
 * convolution but the block's last (before the residual). */
static void test_resnet_depths(void **state) {
  (void)state;
  const struct {
    int depth;
    double gmacs;
    int blocks[4];
  } nets[] = {{101, 7.80, {3, 4, 23, 3}}, {152, 11.51, {3, 8, 36, 3}}};
  for (int i = 0; i < 2; i++) {
    mb_workload *w = resnet_of_depth(nets[i].depth);
    double dev = forward_product_flops(w) / (2e9 * nets[i].gmacs) - 1;
    if (!(fabs(dev) <= 0.01)) fail_msg("ResNet-%d: off by %.2f%%", nets[i].depth, 100 * dev);
    char name[64];
    for (int stage = 0; stage < 4; stage++) {
      snprintf(name, sizeof name, "fwd.s%d.b%d.relu", stage + 1, nets[i].blocks[stage] - 1);
      op(w, name);
      snprintf(name, sizeof name, "fwd.s%d.b%d.relu", stage + 1, nets[i].blocks[stage]);
      assert_true(mb_workload_find_op(w, name) < 0);
    }
    assert_string_equal(w->ops[op(w, "fwd.s1.b0.a.act")].kind, "relu");
    assert_true(mb_workload_find_op(w, "fwd.s1.b0.c.act") < 0);
    mb_workload_free(w);
  }
}

/* A shipped spec's workload, datasets/models/NAME.spec. */
static mb_workload *shipped(const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/datasets/models/%s.spec", mb_source_dir(), name);
  mb_error err = {{0}};
  mb_workload *w = mb_model_generate_file(path, &err);
  if (!w) fail_msg("%s", err.message);
  return w;
}

/* What the FLOPs references do not pin down, checked on the shipped specs by name and size. */
static void test_family_details(void **state) {
  (void)state;
  /* U-Net: one decoder level per encoder level, up3 (deepest) to up0 */
  mb_workload *w = shipped("unet_inf_b1");
  for (int l = 0; l < 4; l++) {
    bool found = false;
    char prefix[16];
    snprintf(prefix, sizeof prefix, "fwd.up%d.", l);
    for (int32_t o = 0; o < w->n_ops && !found; o++) found = starts(w->ops[o].name, prefix);
    if (!found) fail_msg("no op of decoder level %d", l);
  }
  mb_workload_free(w);
  /* DLRM: ReLU between top layers, none after the last (the logit); an embedding table's Adam
   * update covers the rows one batch can touch, min(batch = 128, rows) x dim 16 elements */
  w = shipped("dlrm_kaggle_train_b128");
  op(w, "fwd.top1.relu");
  assert_true(mb_workload_find_op(w, "fwd.top2.relu") < 0);
  double per_element = w->ops[op(w, "adam.top2.fc.b")].flops; /* a bias of one element */
  assert_true(w->ops[op(w, "adam.emb0.table")].flops == 128 * 16 * per_element); /* 1460 rows */
  assert_true(w->ops[op(w, "adam.emb8.table")].flops == 3 * 16 * per_element);   /* 3 rows */
  mb_workload_free(w);
  /* GCN transforms then aggregates; GraphSAGE aggregates, then self and neighbour products */
  w = shipped("gcn_arxiv_inf");
  op(w, "fwd.l0.transform");
  assert_true(mb_workload_find_op(w, "fwd.l0.neighbours") < 0);
  mb_workload_free(w);
  w = shipped("graphsage_reddit_inf");
  op(w, "fwd.l0.self");
  op(w, "fwd.l0.neighbours");
  assert_true(mb_workload_find_op(w, "fwd.l0.transform") < 0);
  mb_workload_free(w);
  /* inverted residual blocks have a residual when the stride is 1 and the channels stay: the
   * second and later blocks of each row of MobileNetV2 (Sandler et al. 2018, Table 2: n = 1, 2,
   * 3, 4, 3, 3, 1) and EfficientNet-B0 (Tan & Le 2019, Table 1: 1, 2, 2, 3, 3, 4, 1) */
  const struct {
    const char *spec;
    int residuals;
  } inverted[] = {{"mobilenetv2_inf_b1", 0 + 1 + 2 + 3 + 2 + 2 + 0},
                  {"efficientnet_b0_inf_b1", 0 + 1 + 1 + 2 + 2 + 3 + 0}};
  for (int i = 0; i < 2; i++) {
    w = shipped(inverted[i].spec);
    int residuals = 0;
    for (int32_t o = 0; o < w->n_ops; o++) {
      size_t len = strlen(w->ops[o].name);
      residuals += starts(w->ops[o].name, "fwd.") && len > 9 &&
                   !strcmp(w->ops[o].name + len - 9, ".residual");
    }
    if (residuals != inverted[i].residuals)
      fail_msg("%s: %d residuals, expected %d", inverted[i].spec, residuals, inverted[i].residuals);
    mb_workload_free(w);
  }
  /* TinyLlama: cos and sin tables of seq 512 x head dim 2048 / 32 heads, in bf16 */
  w = shipped("tinyllama_inf_b4");
  assert_int_equal(buf(w, "rope_table")->size, 512 * 64 * 2);
  mb_workload_free(w);
  /* ViT-B/16 at 224: 14 x 14 patches and the class token, batch 8, hidden 768, bf16 */
  w = shipped("vit_b16_inf_b8");
  assert_int_equal(buf(w, "embed.position_table")->size, 197 * 768 * 2);
  assert_int_equal(buf(w, "embed.prepend_cls")->size, 8 * 197 * 768 * 2);
  mb_workload_free(w);
}

/* Training: forward, loss, backward, Adam in that order; backward products ~2x forward;
 * the saved activations make training need more memory than inference of the same model. */
static void test_training_schedule(void **state) {
  (void)state;
  spec_list *l = malloc(sizeof *l);
  assert_non_null(l);
  list_specs(l);
  for (int i = 0; i < l->n; i++) {
    mb_error err = {{0}};
    mb_model_spec s;
    if (!mb_model_spec_load(l->paths[i], &s, &err)) fail_msg("%s", err.message);
    if (!s.training) continue;
    mb_workload *w = mb_model_generate_spec(&s, &err);
    if (!w) fail_msg("%s", err.message);
    int32_t last_fwd = -1, first_loss = -1, last_loss = -1, first_bwd = -1, last_bwd = -1;
    int32_t first_adam = -1, n_adam = 0, n_moments = 0;
    double bwd_products = 0;
    for (int32_t o = 0; o < w->n_ops; o++) {
      const char *name = w->ops[o].name;
      if (starts(name, "fwd.")) last_fwd = o;
      if (starts(name, "loss.")) {
        if (first_loss < 0) first_loss = o;
        last_loss = o;
      }
      if (starts(name, "bwd.")) {
        if (first_bwd < 0) first_bwd = o;
        last_bwd = o;
        if (is_product(&w->ops[o])) bwd_products += w->ops[o].flops;
      }
      if (starts(name, "adam.")) {
        if (first_adam < 0) first_adam = o;
        n_adam++;
        assert_string_equal(w->ops[o].kind, "adam");
        /* reads param, grad, m, v; writes param, m, v */
        int32_t nu = w->op_use_start[o + 1] - w->op_use_start[o], nw = 0;
        assert_int_equal(nu, 4);
        for (int32_t k = w->op_use_start[o]; k < w->op_use_start[o + 1]; k++) {
          const mb_use *u = &w->uses[w->op_uses[k]];
          assert_true(u->bytes_read > 0);
          nw += u->bytes_written > 0;
        }
        assert_int_equal(nw, 3);
      }
    }
    for (int32_t b = 0; b < w->n_buffers; b++) {
      if (starts(w->buffers[b].name, "adam_m.")) {
        n_moments++;
        assert_true(w->buffers[b].pinned);
      }
    }
    assert_true(last_fwd >= 0 && first_loss > last_fwd && last_loss < first_bwd);
    assert_true(last_bwd < first_adam && first_adam >= 0);
    assert_int_equal(n_adam, w->n_ops - first_adam); /* updates end the program */
    assert_int_equal(n_adam, n_moments);
    /* every forward product with a trained weight has a dW product of the same FLOPs */
    for (int32_t o = 0; o < last_fwd; o++) {
      if (!is_product(&w->ops[o])) continue;
      bool weighted = false;
      for (int32_t k = w->op_use_start[o]; k < w->op_use_start[o + 1] && !weighted; k++) {
        const mb_buffer *x = &w->buffers[w->uses[w->op_uses[k]].buffer];
        char adam[MB_NAME_MAX + 8];
        snprintf(adam, sizeof adam, "adam.%s", x->name);
        weighted = x->pinned && mb_workload_find_op(w, adam) >= first_adam;
      }
      if (!weighted) continue;
      char dw[MB_NAME_MAX + 8];
      snprintf(dw, sizeof dw, "bwd.%s.dw", w->ops[o].name + 4);
      int32_t d = mb_workload_find_op(w, dw);
      if (d < 0) fail_msg("%s: no '%s'", s.name, dw);
      /* equal, plus one add per element when it accumulates into the gradient of a weight
       * shared across steps (LSTM) */
      if (w->ops[d].flops < w->ops[o].flops || w->ops[d].flops > 1.05 * w->ops[o].flops)
        fail_msg("%s: '%s' has %g FLOPs, its forward %g", s.name, dw, w->ops[d].flops,
                 w->ops[o].flops);
    }
    double fwd = forward_product_flops(w), ratio = bwd_products / fwd;
    if (ratio < 1.0 || ratio > 2.05)
      fail_msg("%s: backward products %.3g = %.3f x forward", s.name, bwd_products, ratio);

    mb_model_spec inf = s;
    inf.training = false;
    mb_workload *wi = mb_model_generate_spec(&inf, &err);
    if (!wi) fail_msg("%s", err.message);
    assert_true(forward_product_flops(wi) == fwd);
    mb_workload_stats st, sti;
    mb_workload_stats_compute(w, &st);
    mb_workload_stats_compute(wi, &sti);
    assert_true(st.peak_live_bytes > sti.peak_live_bytes);
    assert_true(st.n_ops > 2 * sti.n_ops);
    mb_workload_free(wi);
    mb_workload_free(w);
  }
  free(l);
}

/* ---- hand-computed tiny models ---- */

static const char *tiny_mlp =
    "# x[4,8] -> fc 16 -> relu -> head 3\n"
    "family = mlp\nmode = training\ndtype = f32\nbatch = 4\nfeatures = 8\nlayers = 1\n"
    "hidden = 16\nclasses = 3\n";

static void test_tiny_mlp_training(void **state) {
  (void)state;
  mb_workload *w = generate_ok(tiny_mlp);
  assert_string_equal(w->name, "tiny");
  /* 3 forward, 1 loss, 5 backward (no dX for the input), 4 Adam updates */
  assert_int_equal(w->n_ops, 13);
  assert_int_equal(buf(w, "x")->size, 4 * 8 * 4);
  assert_int_equal(buf(w, "l0.fc.w")->size, 8 * 16 * 4);
  assert_int_equal(buf(w, "l0.fc.b")->size, 16 * 4);
  assert_int_equal(buf(w, "l0.fc")->size, 4 * 16 * 4);
  assert_int_equal(buf(w, "l0.relu")->size, 4 * 16 * 4);
  assert_int_equal(buf(w, "head.w")->size, 16 * 3 * 4);
  assert_int_equal(buf(w, "head")->size, 4 * 3 * 4);
  assert_int_equal(buf(w, "labels")->size, 4 * 4);
  assert_int_equal(buf(w, "xent")->size, 4);
  assert_int_equal(buf(w, "grad.l0.fc.w")->size, 8 * 16 * 4);
  assert_int_equal(buf(w, "adam_m.l0.fc.w")->size, 8 * 16 * 4);
  assert_true(buf(w, "x")->pinned && buf(w, "l0.fc.w")->pinned && buf(w, "adam_v.head.b")->pinned);
  assert_true(buf(w, "xent")->pinned);
  assert_false(buf(w, "l0.relu")->pinned || buf(w, "grad.l0.fc.w")->pinned);
  assert_true(mb_workload_find_op(w, "bwd.l0.fc.dx") < 0); /* the input gets no gradient */
  assert_true(mb_workload_find_buffer(w, "grad.x") < 0);
  assert_true(w->ops[op(w, "fwd.l0.fc")].flops == 2.0 * 4 * 8 * 16 + 4 * 16);
  assert_true(w->ops[op(w, "bwd.l0.fc.dw")].flops == 2.0 * 4 * 8 * 16 + 4 * 16);
  assert_true(w->ops[op(w, "bwd.head.dx")].flops == 2.0 * 4 * 16 * 3);
  assert_true(w->ops[op(w, "adam.l0.fc.w")].flops == 10.0 * 8 * 16);
  /* schedule: forward, loss, backward in reverse, updates */
  assert_int_equal(op(w, "fwd.l0.fc"), 0);
  assert_int_equal(op(w, "fwd.head"), 2);
  assert_int_equal(op(w, "loss.xent"), 3);
  assert_true(op(w, "bwd.head.dw") < op(w, "bwd.l0.relu.dx"));
  assert_true(op(w, "bwd.l0.relu.dx") < op(w, "bwd.l0.fc.dw"));
  /* saved activations live until their backward op */
  assert_int_equal(buf(w, "l0.relu")->start, op(w, "fwd.l0.relu"));
  assert_int_equal(buf(w, "l0.relu")->end, op(w, "bwd.head.dw"));
  assert_int_equal(buf(w, "l0.fc")->end, op(w, "bwd.l0.relu.dx"));
  assert_int_equal(buf(w, "x")->start, 0);
  assert_int_equal(buf(w, "x")->end, op(w, "bwd.l0.fc.dw"));
  /* weight gradients live from their backward op to their update */
  assert_int_equal(buf(w, "grad.l0.fc.w")->start, op(w, "bwd.l0.fc.dw"));
  assert_int_equal(buf(w, "grad.l0.fc.w")->end, op(w, "adam.l0.fc.w"));
  /* parameters and moments persist: live over the whole program */
  assert_int_equal(buf(w, "l0.fc.w")->start, 0);
  assert_int_equal(buf(w, "l0.fc.w")->end, w->n_ops - 1);
  assert_int_equal(buf(w, "adam_m.l0.fc.w")->end, w->n_ops - 1);
  /* exact bytes of one use: the dot reads x and W, writes its output */
  int32_t fc = op(w, "fwd.l0.fc");
  int64_t rd = 0, wr = 0;
  for (int32_t k = w->op_use_start[fc]; k < w->op_use_start[fc + 1]; k++) {
    rd += w->uses[w->op_uses[k]].bytes_read;
    wr += w->uses[w->op_uses[k]].bytes_written;
  }
  assert_int_equal(rd, 128 + 512 + 64);
  assert_int_equal(wr, 256);
  mb_workload_free(w);
}

static void test_tiny_mlp_inference_bf16(void **state) {
  (void)state;
  mb_workload *w = generate_ok(
      "family = mlp\nmode = inference\ndtype = bf16\nbatch = 4\nfeatures = 8\nlayers = 2\n"
      "hidden = 16\nclasses = 3\nname = tiny_inf\n");
  assert_string_equal(w->name, "tiny_inf");
  assert_int_equal(w->n_ops, 5);
  assert_int_equal(buf(w, "l1.fc.w")->size, 16 * 16 * 2);
  assert_int_equal(buf(w, "l0.relu")->start, 1);
  assert_int_equal(buf(w, "l0.relu")->end, 2);
  const mb_buffer *out = buf(w, "head");
  assert_true(out->pinned);
  assert_int_equal(out->end, w->n_ops - 1);
  assert_true(mb_workload_find_buffer(w, "labels") < 0);
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  /* weights 8x16+16 + 16x16+16 + 16x3+3 bf16 elements, input 4x8, output 4x3 */
  assert_int_equal(st.total_bytes,
                   (128 + 16 + 256 + 16 + 48 + 3 + 32 + 12 + 64 + 64 + 64 + 64) * 2);
  mb_workload_free(w);
}

/* Attention sizes, tied embeddings (two gradient contributions) and grouped-query attention. */
static void test_tiny_transformers(void **state) {
  (void)state;
  mb_workload *w = generate_ok(
      "family = gpt2\nmode = training\ndtype = bf16\nbatch = 2\nseq = 4\nlayers = 1\n"
      "hidden = 8\nheads = 2\nffn = 16\nvocab = 11\n");
  assert_int_equal(buf(w, "l0.attn.scores")->size, 2 * 2 * 4 * 4 * 2);
  assert_int_equal(buf(w, "l0.attn.q")->size, 2 * 4 * 8 * 2);
  assert_int_equal(buf(w, "lm_head")->size, 2 * 4 * 11 * 2);
  assert_true(w->ops[op(w, "fwd.l0.attn.scores")].flops == 2.0 * (2 * 2) * 4 * 4 * 4);
  /* the word table gets gradients from the LM head and the lookup: two versions */
  int32_t g1 = mb_workload_find_buffer(w, "grad.embed.word_table.1");
  assert_true(g1 >= 0);
  assert_true(mb_workload_find_buffer(w, "grad.embed.word_table.2") < 0);
  assert_int_equal(w->buffers[g1].end, op(w, "adam.embed.word_table"));
  /* attention probabilities are saved for the backward softmax */
  assert_int_equal(buf(w, "l0.attn.probs")->end, op(w, "bwd.l0.attn.probs.dx"));
  mb_workload_free(w);

  w = generate_ok(
      "family = llama\nmode = inference\ndtype = bf16\nbatch = 2\nseq = 4\n"
      "layers = 2\nhidden = 16\nheads = 4\nkv_heads = 1\nffn = 24\nvocab = 11\n");
  assert_int_equal(buf(w, "l1.attn.q")->size, 2 * 4 * 16 * 2);
  assert_int_equal(buf(w, "l1.attn.k")->size, 2 * 4 * 4 * 2); /* one kv head of dim 4 */
  assert_int_equal(buf(w, "l1.attn.k.w")->size, 16 * 4 * 2);
  assert_true(mb_workload_find_op(w, "fwd.l1.mlp.gate") >= 0);
  assert_true(mb_workload_find_op(w, "fwd.l1.attn.q_rope") >= 0);
  mb_workload_free(w);
}

static bool same_workload(const mb_workload *a, const mb_workload *b) {
  if (a->n_ops != b->n_ops || a->n_buffers != b->n_buffers || a->n_uses != b->n_uses) return false;
  for (int32_t o = 0; o < a->n_ops; o++)
    if (strcmp(a->ops[o].name, b->ops[o].name) || strcmp(a->ops[o].kind, b->ops[o].kind) ||
        a->ops[o].flops != b->ops[o].flops)
      return false;
  for (int32_t i = 0; i < a->n_buffers; i++)
    if (strcmp(a->buffers[i].name, b->buffers[i].name) ||
        a->buffers[i].size != b->buffers[i].size || a->buffers[i].start != b->buffers[i].start ||
        a->buffers[i].end != b->buffers[i].end || a->buffers[i].pinned != b->buffers[i].pinned)
      return false;
  return !memcmp(a->uses, b->uses, (size_t)a->n_uses * sizeof *a->uses);
}

static void test_deterministic(void **state) {
  (void)state;
  char path[512];
  assert_non_null(mb_path_join(path, sizeof path, mb_source_dir(),
                               "datasets/models/efficientnet_b0_train_b32.spec"));
  mb_error err = {{0}};
  mb_workload *a = mb_model_generate_file(path, &err);
  mb_workload *b = mb_model_generate_file(path, &err);
  assert_non_null(a);
  assert_non_null(b);
  assert_true(same_workload(a, b));
  mb_workload_free(b);
  /* and the text entry point gives the same workload as the file entry point */
  size_t len;
  char *text = mb_read_file(path, &len);
  assert_non_null(text);
  b = mb_model_generate_text(text, len, path, &err);
  assert_non_null(b);
  assert_true(same_workload(a, b));
  free(text);
  mb_workload_free(a);
  mb_workload_free(b);
}

static const char *const mlp_ok =
    "family = mlp\nmode = inference\ndtype = f32\nbatch = 4\nfeatures = 8\nlayers = 1\n"
    "hidden = 16\nclasses = 3\n";

static void expect_error(const char *text, size_t len, const char *expected) {
  mb_error err = {{0}};
  mb_workload *w = mb_model_generate_text(text, len, "bad.spec", &err);
  if (w) {
    mb_workload_free(w);
    fail_msg("accepted a bad spec (expected '%s'):\n%s", expected, text);
  }
  if (!strstr(err.message, expected))
    fail_msg("error '%s' does not contain '%s'", err.message, expected);
}

static void expect_error_s(const char *text, const char *expected) {
  expect_error(text, strlen(text), expected);
}

static void expect_error_after(const char *extra, const char *expected) {
  char text[1024];
  snprintf(text, sizeof text, "%s%s", mlp_ok, extra);
  expect_error(text, strlen(text), expected);
}

static void test_spec_syntax(void **state) {
  (void)state;
  const char *text =
      "  # indented comment\r\n"
      "family=mlp\r\nmode = training   # trailing comment\n\n"
      "\tdtype\t=\tbf16\nbatch = 4\nfeatures = 8\nlayers = 1\nhidden = 16\nclasses = 3\n"
      "opt_dtype = bf16\nreference_gflops = 2.5e-3\nreference = \"Someone 2020, Table #3\"  # ok\n"
      "name = my-model.v1";
  mb_model_spec s;
  mb_error err = {{0}};
  if (!mb_model_spec_parse(text, strlen(text), "dir/x.spec", &s, &err)) fail_msg("%s", err.message);
  assert_int_equal(s.family, MB_FAMILY_MLP);
  assert_true(s.training);
  assert_int_equal(s.dtype, MB_DTYPE_BF16);
  assert_int_equal(s.opt_dtype, MB_DTYPE_BF16);
  assert_int_equal(s.hidden, 16);
  assert_true(s.has_reference);
  assert_true(s.reference_gflops == 2.5e-3);
  assert_string_equal(s.reference, "Someone 2020, Table #3");
  assert_string_equal(s.name, "my-model.v1");
  /* defaults: name from the file, Adam moments in f32 */
  assert_true(mb_model_spec_parse(tiny_mlp, strlen(tiny_mlp), "dir/abc.spec", &s, &err));
  assert_string_equal(s.name, "abc");
  assert_int_equal(s.opt_dtype, MB_DTYPE_F32);
  assert_false(s.has_reference);
  /* a file called ".spec" leaves no name: the fallback; a long file name is cut */
  assert_true(mb_model_spec_parse(tiny_mlp, strlen(tiny_mlp), "dir/.spec", &s, &err));
  assert_string_equal(s.name, "model");
  char long_path[300];
  snprintf(long_path, sizeof long_path, "dir/%0200d.spec", 0);
  assert_true(mb_model_spec_parse(tiny_mlp, strlen(tiny_mlp), long_path, &s, &err));
  assert_int_equal(strlen(s.name), MB_NAME_MAX - 1);
  /* every character a name may hold, the bounds of each range included */
  char named[512];
  snprintf(named, sizeof named, "%sname = aAzZ09_-.\n", tiny_mlp);
  if (!mb_model_spec_parse(named, strlen(named), "x.spec", &s, &err)) fail_msg("%s", err.message);
  assert_string_equal(s.name, "aAzZ09_-.");
  /* the largest batch; a ViT whose one patch is the whole image */
  const char *edges =
      "family = vit\nmode = inference\ndtype = bf16\nbatch = 4096\nimage = 16\npatch = 16\n"
      "channels = 3\nlayers = 1\nhidden = 8\nheads = 2\nffn = 8\nclasses = 2\n";
  if (!mb_model_spec_parse(edges, strlen(edges), "v.spec", &s, &err)) fail_msg("%s", err.message);
  assert_int_equal(s.batch, 4096);
  assert_int_equal(s.patch, s.image);
  /* lists */
  const char *dlrm =
      "family = dlrm\nmode = inference\ndtype = f32\nbatch = 8\nfeatures = 13\n"
      "embed_dim = 4\ntable_rows = 10, 20 ,30\nbottom_mlp = 8,4\ntop_mlp = 1\n";
  if (!mb_model_spec_parse(dlrm, strlen(dlrm), "d.spec", &s, &err)) fail_msg("%s", err.message);
  assert_int_equal(s.n_table_rows, 3);
  assert_int_equal(s.table_rows[2], 30);
  assert_int_equal(s.n_bottom_mlp, 2);
  mb_workload *w = mb_model_generate_spec(&s, &err);
  if (!w) fail_msg("%s", err.message);
  /* interaction of 4 vectors: 6 pairs + the 4-wide dense vector feed the top MLP */
  assert_int_equal(buf(w, "top0.fc.w")->size, (6 + 4) * 1 * 4);
  mb_workload_free(w);
  expect_error_s(
      "family = dlrm\nmode = inference\ndtype = f32\nbatch = 8\nfeatures = 13\n"
      "embed_dim = 4\ntable_rows = 10,,30\nbottom_mlp = 8,4\ntop_mlp = 1\n",
      "bad.spec:7: key 'table_rows': bad list");
  expect_error_s(
      "family = dlrm\nmode = inference\ndtype = f32\nbatch = 8\nfeatures = 13\n"
      "embed_dim = 4\ntable_rows = 10\nbottom_mlp = 8,5\ntop_mlp = 1\n",
      "bad.spec:8: key 'bottom_mlp': last width 5 must equal embed_dim = 4");
}

/* ---- malformed specs ---- */

static void test_malformed_specs(void **state) {
  (void)state;
  expect_error_after("colour = red\n", "bad.spec:9: key 'colour': unknown key");
  expect_error_after("heads = 4\n", "bad.spec:9: key 'heads': not used by family 'mlp'");
  expect_error_after("layers = 2\n", "bad.spec:9: key 'layers': duplicate (first set on line 6)");
  expect_error_after("reference_gflops = 1.5\n",
                     "bad.spec:9: key 'reference_gflops': given without 'reference'");
  expect_error_after("reference_gflops = -2\nreference = \"x\"\n",
                     "bad.spec:9: key 'reference_gflops': bad number '-2'");
  expect_error_after("reference_gflops = 0.0\nreference = \"x\"\n",
                     "bad.spec:9: key 'reference_gflops': bad number '0.0' (expected a positive");
  expect_error_after("layers 12\n", "bad.spec:9: expected 'key = value'");
  expect_error_after("name = a b\n", "bad.spec:9: key 'name'");
  expect_error_s("family = transformerx\n", "bad.spec:1: key 'family': unknown family");
  expect_error_s("mode = training\n", "bad.spec: key 'family': missing");
  expect_error_s("family = mlp\nmode = training\ndtype = f32\nbatch = 4\n",
                 "bad.spec: key 'layers': missing (required by family 'mlp')");
  static const char *const bad_values[][2] = {
      {"layers = 1x\n", "bad.spec:2: key 'layers': bad number '1x'"},
      {"layers = 0\n", "bad.spec:2: key 'layers': bad number '0'"},
      {"layers = -3\n", "bad.spec:2: key 'layers': bad number '-3'"},
      {"layers = 99999999999999999999\n", "bad.spec:2: key 'layers': bad number"},
      {"layers = 1e3\n", "bad.spec:2: key 'layers': bad number '1e3'"},
      {"layers = \"12\"\n", "bad.spec:2: key 'layers': quoted value where a number is expected"},
      {"mode = \"training\"\n", "bad.spec:2: key 'mode': quoted value where a word is expected"},
      {"layers = +3\n", "bad.spec:2: key 'layers': bad number '+3'"},
      {"layers =\n", "bad.spec:2: key 'layers': missing value"},
      {"mode = testing\n", "bad.spec:2: key 'mode': 'testing' is neither"},
      {"dtype = f64\n", "bad.spec:2: key 'dtype': unknown dtype 'f64'"},
      {"batch = 100000\n", "bad.spec:2: key 'batch': bad number '100000'"},
      {"batch = 4097\n",
       "bad.spec:2: key 'batch': bad number '4097' (expected an integer in "
       "[1, 4096])"},
  };
  for (size_t i = 0; i < sizeof bad_values / sizeof *bad_values; i++) {
    /* the bad line replaces the spec's own value of that key, on line 2 */
    const char *key_end = strchr(bad_values[i][0], ' ');
    char text[1024];
    int n = snprintf(text, sizeof text, "family = mlp\n%s", bad_values[i][0]);
    const char *p = mlp_ok + strlen("family = mlp\n");
    while (*p) {
      const char *nl = strchr(p, '\n');
      if (strncmp(p, bad_values[i][0], (size_t)(key_end - bad_values[i][0])) ||
          p[key_end - bad_values[i][0]] != ' ')
        n += snprintf(text + n, sizeof text - (size_t)n, "%.*s\n", (int)(nl - p), p);
      p = nl + 1;
    }
    expect_error(text, strlen(text), bad_values[i][1]);
  }
  /* a NUL byte, in a value or a comment: the same line as every text parser's */
  char nul[] = "family = mlp\nlayers = 1\0002\n";
  expect_error(nul, sizeof nul - 1, "bad.spec:2: NUL byte: not a text file");
  char nul_comment[] = "family = mlp\n# a \000 comment\nlayers = 1\n";
  expect_error(nul_comment, sizeof nul_comment - 1, "bad.spec:2: NUL byte: not a text file");
  /* cross-key checks */
  expect_error_s(
      "family = bert\nmode = inference\ndtype = bf16\nbatch = 1\nseq = 8\nlayers = 1\n"
      "hidden = 10\nheads = 3\nffn = 8\nvocab = 5\nclasses = 2\n",
      "bad.spec:8: key 'heads': 3 heads do not divide hidden = 10");
  expect_error_s(
      "family = resnet\nmode = inference\ndtype = bf16\nbatch = 1\ndepth = 34\n"
      "image = 64\nchannels = 3\nclasses = 10\n",
      "bad.spec:5: key 'depth': 34 is not a bottleneck ResNet");
  /* well-formed but impossible: the image is too small for AlexNet's pooling; refused by the
   * parser, naming the line and the key (the layers alone could only name the layer) */
  const char *tiny_alex =
      "family = alexnet\nmode = inference\ndtype = bf16\nbatch = 1\n"
      "image = 32\nchannels = 3\nclasses = 10\n";
  expect_error_s(tiny_alex,
                 "bad.spec:5: key 'image': 32 is too small for family 'alexnet' (at least 63: "
                 "every convolution and pooling window must fit)");
  /* a missing file names the path */
  mb_error err = {{0}};
  assert_null(mb_model_generate_file("/nonexistent/x.spec", &err));
  assert_non_null(strstr(err.message, "/nonexistent/x.spec"));
}

/* A DLRM spec whose table_rows (line 7) is `rows`: refused with `expected` (returns false), or
 * with `expected` NULL parsed (returns true; fails the test when refused). */
static bool dlrm_rows_parse(const char *rows, const char *expected) {
  char text[1024];
  snprintf(text, sizeof text,
           "family = dlrm\nmode = inference\ndtype = f32\nbatch = 8\nfeatures = 13\n"
           "embed_dim = 4\ntable_rows = %s\nbottom_mlp = 8,4\ntop_mlp = 1\n",
           rows);
  if (expected) {
    expect_error_s(text, expected);
    return false;
  }
  mb_model_spec s;
  mb_error err = {{0}};
  if (!mb_model_spec_parse(text, strlen(text), "bad.spec", &s, &err)) fail_msg("%s", err.message);
  return true;
}

/* The refusals test_malformed_specs leaves out, each with its full message: over-long values,
 * keys and lists, list items, kv_heads, LSTM length and a reference without its figure. */
static void test_more_malformed_specs(void **state) {
  (void)state;
  char line[700], want[256];
  mb_model_spec s;
  mb_error err = {{0}};
  /* name holds 127 characters, every value 511 */
  snprintf(line, sizeof line, "name = %0128d\n", 0);
  expect_error_after(line, "bad.spec:9: key 'name': value longer than 127 characters");
  snprintf(line, sizeof line, "%sname = %0127d\n", mlp_ok, 0);
  if (!mb_model_spec_parse(line, strlen(line), "x.spec", &s, &err)) fail_msg("%s", err.message);
  assert_int_equal(strlen(s.name), 127);
  snprintf(line, sizeof line, "reference_gflops = 1\nreference = \"%0512d\"\n", 0);
  expect_error_after(line, "bad.spec:10: key 'reference': value longer than 511 characters");
  snprintf(line, sizeof line, "%sreference_gflops = 1\nreference = \"%0511d\"\n", mlp_ok, 0);
  if (!mb_model_spec_parse(line, strlen(line), "x.spec", &s, &err)) fail_msg("%s", err.message);
  assert_int_equal(strlen(s.reference), 511);
  /* a key of 64 characters or more is cut to 40 in the message */
  snprintf(line, sizeof line, "k%063d = 1\n", 0);
  snprintf(want, sizeof want, "bad.spec:9: key 'k%039d...': unknown key", 0);
  expect_error_after(line, want);
  snprintf(line, sizeof line, "k%062d = 1\n", 0);
  snprintf(want, sizeof want, "bad.spec:9: key 'k%062d': unknown key", 0);
  expect_error_after(line, want);
  snprintf(line, sizeof line, "  k%063d = 1\n", 0); /* indented: the key, not the blanks */
  snprintf(want, sizeof want, "bad.spec:9: key 'k%039d...': unknown key", 0);
  expect_error_after(line, want);
  /* lists: at most 64 entries, each in [1, max], separated by commas */
  char rows[200] = "1";
  for (int i = 1; i < 64; i++) strcat(rows, ",1");
  assert_true(dlrm_rows_parse(rows, NULL));
  strcat(rows, ",1");
  dlrm_rows_parse(rows, "bad.spec:7: key 'table_rows': more than 64 entries");
  dlrm_rows_parse("10,0,30",
                  "bad.spec:7: key 'table_rows': bad number '0' in list (expected an "
                  "integer in [1, 17179869184])");
  dlrm_rows_parse("10, 17179869185",
                  "bad.spec:7: key 'table_rows': bad number '17179869185' in "
                  "list (expected an integer in [1, 17179869184])");
  /* list items up to 31 characters (leading zeros count) */
  snprintf(rows, sizeof rows, "10,%031d", 7);
  assert_true(dlrm_rows_parse(rows, NULL));
  snprintf(rows, sizeof rows, "10,%032d", 7);
  snprintf(want, sizeof want, "bad.spec:7: key 'table_rows': bad list '%s' (expected", rows);
  dlrm_rows_parse(rows, want);
  dlrm_rows_parse("10 20",
                  "bad.spec:7: key 'table_rows': bad list '10 20' (expected "
                  "comma-separated integers)");
  dlrm_rows_parse("10,20;",
                  "bad.spec:7: key 'table_rows': bad number '20;' in list (expected an "
                  "integer in [1, 17179869184])");
  /* kv_heads must divide heads */
  expect_error_s(
      "family = llama\nmode = inference\ndtype = bf16\nbatch = 2\nseq = 4\n"
      "layers = 2\nhidden = 16\nheads = 4\nkv_heads = 3\nffn = 24\nvocab = 11\n",
      "bad.spec:9: key 'kv_heads': 3 does not divide heads = 4");
  /* an LSTM runs at most 100000 steps (seq x layers) */
  static const char lstm[] =
      "family = lstm\nmode = inference\ndtype = f32\nbatch = 1\nseq = 1000\nlayers = %d\n"
      "hidden = 8\nvocab = 10\n";
  snprintf(line, sizeof line, lstm, 101);
  expect_error_s(line, "bad.spec:5: key 'seq': seq x layers = 101000 LSTM steps, at most 100000");
  snprintf(line, sizeof line, lstm, 100);
  if (!mb_model_spec_parse(line, strlen(line), "x.spec", &s, &err)) fail_msg("%s", err.message);
  /* a reference needs its figure */
  expect_error_after("reference = \"Someone 2020\"\n",
                     "bad.spec:9: key 'reference': given without 'reference_gflops'");
}

/* The parser's check of `image` agrees with the layers: for every convolutional family and
 * image size, a spec is either refused by the parser naming file:line:key or generated; never
 * accepted by the parser and then refused by a layer (a message without line or key), never
 * generated through a window that does not fit. AlexNet's smallest image is 63: 11x11 stride 4
 * pad 2 gives 15, 3x3 stride 2 pooling 7, again 3, and the last pooling needs those 3
 * (worked out by hand; at 47 a 3x3 window used to be accepted on a 2x2 input, (2 - 3) / 2 + 1
 * rounding to 1). */
static void test_image_sizes_agree(void **state) {
  (void)state;
  static const char *const families[] = {"alexnet",      "resnet", "mobilenetv2",
                                         "efficientnet", "unet",   "vit"};
  for (size_t f = 0; f < sizeof families / sizeof *families; f++) {
    for (int64_t image = 1; image <= 72; image++) {
      bool alex = !strcmp(families[f], "alexnet");
      if (!alex && image > 9 && image % 8) continue; /* the others: every size up to 9 */
      char text[512];
      snprintf(text, sizeof text,
               "family = %s\nmode = %s\ndtype = f32\nbatch = 1\nimage = %lld\nchannels = 3\n"
               "classes = 4\n%s",
               families[f], image % 2 ? "training" : "inference", (long long)image,
               !strcmp(families[f], "resnet") ? "depth = 50\n"
               : !strcmp(families[f], "unet") ? "width = 2\nlevels = 2\n"
               : !strcmp(families[f], "vit")  ? "patch = 4\nlayers = 1\nhidden = 8\nheads = 2\n"
                                                "ffn = 8\n"
                                              : "");
      mb_model_spec s;
      mb_error err = {{0}};
      if (!mb_model_spec_parse(text, strlen(text), "img.spec", &s, &err)) {
        if (strncmp(err.message, "img.spec:5: key 'image': ", 25) &&
            strncmp(err.message, "img.spec:8: key 'patch': ", 25))
          fail_msg("%s, image %lld: refused without naming the image: %s", families[f],
                   (long long)image, err.message);
        if (alex && image >= 63) fail_msg("alexnet, image %lld: %s", (long long)image, err.message);
        continue;
      }
      if (alex && image < 63) fail_msg("alexnet, image %lld: accepted", (long long)image);
      mb_workload *w = mb_model_generate_spec(&s, &err);
      if (!w)
        fail_msg("%s, image %lld: parsed, then refused: %s", families[f], (long long)image,
                 err.message);
      mb_workload_free(w);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tiny_mlp_training),    cmocka_unit_test(test_tiny_mlp_inference_bf16),
      cmocka_unit_test(test_tiny_transformers),    cmocka_unit_test(test_spec_syntax),
      cmocka_unit_test(test_malformed_specs),      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_every_spec_generates), cmocka_unit_test(test_flops_match_references),
      cmocka_unit_test(test_training_schedule),    cmocka_unit_test(test_image_sizes_agree),
      cmocka_unit_test(test_more_malformed_specs), cmocka_unit_test(test_resnet_depths),
      cmocka_unit_test(test_family_details),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
