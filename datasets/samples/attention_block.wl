mallocbench-workload 1
# One self-attention layer of a BERT-base-sized transformer: batch 4, sequence 512,
# d_model 768, 12 heads of 64, bf16. The attention scores and probabilities
# (4 * 12 * 512 * 512 * 2 bytes = 24 MiB each) dominate the memory traffic.
name   attention_block
source "hand-written sample: multi-head self-attention, batch 4, seq 512, d 768, 12 heads, bf16"

op     q_proj   kind=dot     flops=2415919104  # 2 * 4*512 * 768 * 768
op     k_proj   kind=dot     flops=2415919104
op     v_proj   kind=dot     flops=2415919104
op     scores   kind=dot     flops=1610612736  # 2 * 4*12 * 512*512 * 64
op     softmax  kind=softmax flops=62914560    # ~5 per score
op     context  kind=dot     flops=1610612736
op     out_proj kind=dot     flops=2415919104
op     residual kind=add     flops=1572864

buffer x   size=3145728 start=0 end=7  # [4, 512, 768], from the previous layer
use    x   op=0 read=3145728
use    x   op=1 read=3145728
use    x   op=2 read=3145728
use    x   op=7 read=3145728
buffer wq  size=1179648 start=0 end=0 pinned  # [768, 768]
use    wq  op=0 read=1179648
buffer wk  size=1179648 start=1 end=1 pinned
use    wk  op=1 read=1179648
buffer wv  size=1179648 start=2 end=2 pinned
use    wv  op=2 read=1179648
buffer q   size=3145728 start=0 end=3
use    q   op=0 write=3145728
use    q   op=3 read=3145728
buffer k   size=3145728 start=1 end=3
use    k   op=1 write=3145728
use    k   op=3 read=3145728
buffer v   size=3145728 start=2 end=5
use    v   op=2 write=3145728
use    v   op=5 read=3145728
buffer s   size=25165824 start=3 end=4  # [4, 12, 512, 512]
use    s   op=3 write=25165824
use    s   op=4 read=25165824
buffer p   size=25165824 start=4 end=5
use    p   op=4 write=25165824
use    p   op=5 read=25165824
buffer ctx size=3145728 start=5 end=6
use    ctx op=5 write=3145728
use    ctx op=6 read=3145728
buffer wo  size=1179648 start=6 end=6 pinned
use    wo  op=6 read=1179648
buffer o   size=3145728 start=6 end=7
use    o   op=6 write=3145728
use    o   op=7 read=3145728
buffer y   size=3145728 start=7 end=7 pinned  # the layer's output
use    y   op=7 write=3145728
