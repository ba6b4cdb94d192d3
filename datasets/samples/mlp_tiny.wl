mallocbench-workload 1
# A two-layer MLP forward pass, y = relu(x W1 + b1) W2: batch 128, 1024 -> 4096 -> 1024, bf16
# (2 bytes per element). Entry parameters and the output are pinned (they stay in slow
# memory, as XLA leaves them); the three hidden activations compete for fast memory.
name   mlp_tiny
source "hand-written sample: 2-layer MLP forward, batch 128, bf16"

op     dot1  kind=dot     flops=1073741824  # 2 * 128 * 1024 * 4096
op     bias1 kind=add     flops=524288      # 128 * 4096
op     relu1 kind=maximum flops=524288
op     dot2  kind=dot     flops=1073741824  # 2 * 128 * 4096 * 1024

buffer x  size=262144  start=0 end=0 pinned  # [128, 1024] input
use    x  op=0 read=262144
buffer w1 size=8388608 start=0 end=0 pinned  # [1024, 4096]
use    w1 op=0 read=8388608
buffer h1 size=1048576 start=0 end=1         # [128, 4096] = x W1
use    h1 op=0 write=1048576
use    h1 op=1 read=1048576
buffer b1 size=8192    start=1 end=1 pinned  # [4096]
use    b1 op=1 read=8192
buffer h2 size=1048576 start=1 end=2         # h1 + b1
use    h2 op=1 write=1048576
use    h2 op=2 read=1048576
buffer a1 size=1048576 start=2 end=3         # relu(h2)
use    a1 op=2 write=1048576
use    a1 op=3 read=1048576
buffer w2 size=8388608 start=3 end=3 pinned  # [4096, 1024]
use    w2 op=3 read=8388608
buffer y  size=262144  start=3 end=3 pinned  # [128, 1024] output
use    y  op=3 write=262144
