mallocbench-workload 1
# A language-model embedding step whose every candidate buffer is larger than the 128 MiB
# of tpu-v4i's fast memory: a 262144 x 1024 bf16 embedding table (512 MiB) and activations
# of batch 64 x sequence 2048 x 1024 (256 MiB). Every solver must leave everything in slow
# memory: the speedup is exactly 1 and the assignment all slow.
name   nothing_fits
source "hand-written sample: embedding lookup + projection, every buffer > 128 MiB"

op     gather   kind=gather flops=0
op     proj     kind=dot    flops=274877906944  # 2 * 64*2048 * 1024 * 1024
op     residual kind=add    flops=134217728     # 64 * 2048 * 1024

buffer ids   size=524288    start=0 end=0 pinned  # [64, 2048] int32 token ids
use    ids   op=0 read=524288
buffer table size=536870912 start=0 end=0          # [262144, 1024]
use    table op=0 read=268435456                   # only the gathered rows are read
buffer emb   size=268435456 start=0 end=2
use    emb   op=0 write=268435456
use    emb   op=1 read=268435456
use    emb   op=2 read=268435456
buffer w     size=2097152   start=1 end=1 pinned  # [1024, 1024]
use    w     op=1 read=2097152
buffer h     size=268435456 start=1 end=2
use    h     op=1 write=268435456
use    h     op=2 read=268435456
buffer out   size=268435456 start=2 end=2 pinned
use    out   op=2 write=268435456
