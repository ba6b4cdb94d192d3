mallocbench-workload 1
# One SGD training step of a two-layer MLP (batch 256, 512 -> 2048 -> 512, bf16): forward,
# loss gradient, backward, weight update. Parameters, inputs, labels and the updated
# parameters are entry parameters and outputs, so they are pinned to slow memory; the
# activations and gradients in between compete for fast memory. Activations saved for the
# backward pass (h, a) have long live ranges.
name   train_step
source "hand-written sample: 2-layer MLP SGD step, batch 256, bf16"

op     fwd_dot1  kind=dot      flops=536870912  # 2 * 256 * 512 * 2048
op     fwd_relu  kind=maximum  flops=524288
op     fwd_dot2  kind=dot      flops=536870912
op     loss_grad kind=subtract flops=131072     # dy = y - labels (squared loss)
op     dw2       kind=dot      flops=536870912  # a^T dy
op     da        kind=dot      flops=536870912  # dy W2^T
op     relu_grad kind=select   flops=524288
op     dw1       kind=dot      flops=536870912  # x^T dh
op     sgd_w2    kind=fusion   flops=2097152    # w2 - lr * dw2
op     sgd_w1    kind=fusion   flops=2097152

buffer x      size=262144  start=0 end=7 pinned  # [256, 512]
use    x      op=0 read=262144
use    x      op=7 read=262144
buffer labels size=262144  start=3 end=3 pinned
use    labels op=3 read=262144
buffer w1     size=2097152 start=0 end=9 pinned  # [512, 2048]
use    w1     op=0 read=2097152
use    w1     op=9 read=2097152
buffer w2     size=2097152 start=2 end=8 pinned  # [2048, 512]
use    w2     op=2 read=2097152
use    w2     op=5 read=2097152
use    w2     op=8 read=2097152
buffer h      size=1048576 start=0 end=6  # [256, 2048] pre-activation, kept for relu_grad
use    h      op=0 write=1048576
use    h      op=1 read=1048576
use    h      op=6 read=1048576
buffer a      size=1048576 start=1 end=4  # relu(h), kept for dw2
use    a      op=1 write=1048576
use    a      op=2 read=1048576
use    a      op=4 read=1048576
buffer y      size=262144  start=2 end=3
use    y      op=2 write=262144
use    y      op=3 read=262144
buffer dy     size=262144  start=3 end=5
use    dy     op=3 write=262144
use    dy     op=4 read=262144
use    dy     op=5 read=262144
buffer dw2    size=2097152 start=4 end=8
use    dw2    op=4 write=2097152
use    dw2    op=8 read=2097152
buffer da     size=1048576 start=5 end=6
use    da     op=5 write=1048576
use    da     op=6 read=1048576
buffer dh     size=1048576 start=6 end=7
use    dh     op=6 write=1048576
use    dh     op=7 read=1048576
buffer dw1    size=2097152 start=7 end=9
use    dw1    op=7 write=2097152
use    dw1    op=9 read=2097152
buffer w2_new size=2097152 start=8 end=8 pinned
use    w2_new op=8 write=2097152
buffer w1_new size=2097152 start=9 end=9 pinned
use    w1_new op=9 write=2097152
