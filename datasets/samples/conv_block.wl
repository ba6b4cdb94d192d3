mallocbench-workload 1
# A ResNet basic block at stage 1: conv3x3 -> batch-norm -> relu -> conv3x3 -> batch-norm ->
# + residual -> relu, on N=8, 56x56, 64 channels, bf16 (every activation 8*56*56*64*2 bytes).
# Live ranges are left out: the reader derives them from the uses (first to last op).
# The block input comes from the previous block, so it is not pinned; it stays live until the
# residual add, which makes it the longest-lived candidate.
name   conv_block
source "hand-written sample: ResNet-18 basic block, 56x56x64, batch 8, bf16"

op     conv1 kind=convolution flops=1849688064  # 2 * 8*56*56 * 64*64 * 3*3
op     bn1   kind=batch-norm  flops=6422528     # 4 per element
op     relu1 kind=maximum     flops=1605632
op     conv2 kind=convolution flops=1849688064
op     bn2   kind=batch-norm  flops=6422528
op     add   kind=add         flops=1605632
op     relu2 kind=maximum     flops=1605632

buffer in     size=3211264
use    in     op=0 read=3211264
use    in     op=5 read=3211264
buffer w1     size=73728 pinned   # [3, 3, 64, 64]
use    w1     op=0 read=73728
buffer c1     size=3211264
use    c1     op=0 write=3211264
use    c1     op=1 read=3211264
buffer bn1_p  size=512 pinned     # scale, offset, mean, variance: 4 * 64 * 2 bytes
use    bn1_p  op=1 read=512
buffer n1     size=3211264
use    n1     op=1 write=3211264
use    n1     op=2 read=3211264
buffer r1     size=3211264
use    r1     op=2 write=3211264
use    r1     op=3 read=3211264
buffer w2     size=73728 pinned
use    w2     op=3 read=73728
buffer c2     size=3211264
use    c2     op=3 write=3211264
use    c2     op=4 read=3211264
buffer bn2_p  size=512 pinned
use    bn2_p  op=4 read=512
buffer n2     size=3211264
use    n2     op=4 write=3211264
use    n2     op=5 read=3211264
buffer s      size=3211264
use    s      op=5 write=3211264
use    s      op=6 read=3211264
buffer out    size=3211264 pinned  # the block's output (the program's result here)
use    out    op=6 write=3211264
