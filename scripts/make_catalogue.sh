#!/bin/bash
# Rebuilds datasets/catalogue.txt from scratch with `mallocbench add` (so every capacity follows
# the rule in datasets/CATALOGUE.md). Needs a built ./build/mallocbench and the data directory.
set -euo pipefail
cd "$(dirname "$0")/.."
MB=${MB:-./build/mallocbench}
CAT=${CAT:-datasets/catalogue.txt}
D=${MALLOCBENCH_DATA:-$(pwd)/../shared/data}
M=$(pwd)/datasets/models
S=$(pwd)/datasets/samples
rm -f "$CAT"
cat > "$CAT" <<'HDR'
# mallocbench workload catalogue. Format, capacity rule, splits and caching:
# datasets/CATALOGUE.md. One workload per line; columns separated by blanks.
# Add entries with `mallocbench add NAME SOURCE ...` (validates, applies the capacity rule,
# rewrites this file atomically); list them with `mallocbench list [--stats]`.
# Capacities are in bytes, computed by the rule unless a comment says otherwise.
name kind source args hardware capacity split tags
HDR
add() { "$MB" add "$@" --catalogue "$CAT" >/dev/null; }
short() { case $1 in tpu-v4i) echo tpu;; edge-npu) echo edge;; gpu-l2) echo gpu;; esac; }

c() { echo "$*" >>"$CAT"; }
c
c "# Real XLA HLO modules (../shared/data/hlo): test split, two profiles each. The BERT Adam"
c "# step is imported unfused: fused, every array is an entry parameter or output (pinned) and"
c "# nothing but 240 bytes could use fast memory."
for hw in tpu-v4i edge-npu; do
  add bert_pt_xla_adam_step_nofusion-$(short $hw) $D/hlo/bert_pt_xla_adam_step.hlo --args fusion=off --hardware $hw --split test --tags bert,training,real
  add gpt2_pt_xla-$(short $hw) $D/hlo/gpt2_pt_xla.hlo --hardware $hw --split test --tags gpt2,inference,real
  add graphsage_tf-$(short $hw) $D/hlo/graphsage_tf.hlo --hardware $hw --split test --tags graphsage,gnn,inference,real
  add mlp_pt_xla-$(short $hw) $D/hlo/mlp_pt_xla.hlo --hardware $hw --split test --tags mlp,training,real
  add ssd_mobilenet_tf-$(short $hw) $D/hlo/ssd_mobilenet_tf.hlo --hardware $hw --split test --tags mobilenet,inference,real
done

c
c "# AlphaTensor block algorithms (datasets/CATALOGUE.md): DeepMind's TPU and GPU"
c "# factorizations, Strassen-squared and the standard algorithm, at several sizes: test split."
at() { # name source n dtype hw
  add "$1" "$2" --kind alphatensor --args n=$3,dtype=$4 --hardware $5 --split test --tags matmul,alphatensor,inference,generated
}
at at_tpu_8192_bf16-tpu $D/alphatensor/tpu_v2_8192_bf16.txt 8192 bf16 tpu-v4i
at at_tpu_16384_bf16-tpu $D/alphatensor/tpu_v2_8192_bf16.txt 16384 bf16 tpu-v4i
at at_gpu_8192_f32-gpu $D/alphatensor/gpu_v100_8192_f32.txt 8192 f32 gpu-l2
at at_gpu_4096_f32-gpu $D/alphatensor/gpu_v100_8192_f32.txt 4096 f32 gpu-l2
at strassen2_8192_bf16-tpu builtin:strassen_squared 8192 bf16 tpu-v4i
at strassen2_16384_bf16-tpu builtin:strassen_squared 16384 bf16 tpu-v4i
at strassen2_4096_f32-gpu builtin:strassen_squared 4096 f32 gpu-l2
at standard_8192_bf16-tpu builtin:standard 8192 bf16 tpu-v4i
at standard_16384_bf16-tpu builtin:standard 16384 bf16 tpu-v4i
at standard_4096_f32-gpu builtin:standard 4096 f32 gpu-l2

c
c "# MiniMalloc's production buffer sets (no ops: benefit = size): as mapping problems at half"
c "# the capacity they fit in exactly, and at that full capacity for the packer (tag packing)."
for x in A B C; do
  add minimalloc_$x-tpu $D/minimalloc/$x.1048576.csv --capacity 524288 --split test --tags minimalloc,real
  add minimalloc_${x}_pack-tpu $D/minimalloc/$x.1048576.csv --capacity 1048576 --split test --tags minimalloc,real,packing
done

c
c "# Hand-written samples (datasets/samples). Tag degenerate: sanity cases outside the capacity"
c "# rule (buffers_only's 4-byte buffers all fit in one alignment unit; nothing_fits's buffers"
c "# all exceed the profile's 128 MiB)."
add mlp_tiny-tpu $S/mlp_tiny.wl --split train --tags mlp,inference,handwritten
add conv_block-tpu $S/conv_block.wl --split train --tags conv,inference,handwritten
add buffers_only-tpu $S/buffers_only.wl --split test --tags buffers,handwritten,degenerate
add attention_block-tpu $S/attention_block.wl --split test --tags attention,inference,handwritten
add train_step-tpu $S/train_step.wl --split test --tags mlp,training,handwritten
add nothing_fits-tpu $S/nothing_fits.wl --capacity profile --split test --tags embedding,inference,handwritten,degenerate

c
c "# Model zoo (datasets/models): one variant of every family in test, the rest in train; some"
c "# train specs also on the edge NPU and the GPU L2 profiles."
tags_of() {
  local s=$1 fam
  case $s in
    alexnet*) fam=alexnet,cnn;; bert*) fam=bert,transformer;; dlrm*) fam=dlrm,recsys;;
    efficientnet*) fam=efficientnet,cnn;; gcn*) fam=gcn,gnn;; gpt2*) fam=gpt2,transformer;;
    graphsage*) fam=graphsage,gnn;; llama7b*|tinyllama*) fam=llama,transformer;;
    lstm*) fam=lstm,rnn;; mlp*) fam=mlp;; mobilenetv2*) fam=mobilenet,cnn;;
    resnet50*) fam=resnet,cnn;; t5*) fam=t5,transformer;; unet*) fam=unet,cnn;;
    vit*) fam=vit,transformer;; *) fam=other;;
  esac
  case $s in *_train*) echo $fam,training,generated;; *) echo $fam,inference,generated;; esac
}
model() { # spec hw split
  add $1-$(short $2) $M/$1.spec --hardware $2 --split $3 --tags $(tags_of $1)
}
TEST="alexnet_train_b128 bert_base_train_b8 dlrm_kaggle_inf_b2048 efficientnet_b0_inf_b32
gcn_arxiv_train gpt2_small_inf_b4 graphsage_reddit_train llama7b_2l_inf_s2048
tinyllama_train_b1 lstm_medium_train_b20 mlp_inf_b256 mobilenetv2_train_b32 resnet50_inf_b32
t5_small_inf_b4 unet_train_b4 vit_b16_train_b8"
EDGE="mobilenetv2_inf_b1 efficientnet_b0_inf_b1 resnet50_inf_b1 unet_inf_b1 lstm_medium_inf_b20
dlrm_kaggle_train_b128 mlp_train_b256 bert_base_inf_b8 vit_b16_inf_b8 tinyllama_inf_b4 alexnet_inf_b128"
GPU="bert_base_inf_b32 gpt2_small_train_b4 resnet50_train_b32 t5_small_train_b4 mlp_train_b256"
for f in $M/*.spec; do
  s=$(basename $f .spec)
  if grep -qw $s <<<"$TEST"; then model $s tpu-v4i test; else model $s tpu-v4i train; fi
done
for s in $EDGE; do model $s edge-npu train; done
for s in $GPU; do model $s gpu-l2 train; done
echo "$(grep -vc '^#' "$CAT") lines (incl. header) in $CAT"
