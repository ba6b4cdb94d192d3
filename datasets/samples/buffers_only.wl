mallocbench-workload 1
# A workload without ops, in the shape of an imported buffer CSV (MiniMalloc's input.12
# example, extended with benefits): 6 time steps, each buffer with its live range and the
# time it saves alone in fast memory (benefit, picoseconds). The all-slow program time is
# given directly since there are no ops to simulate.
name   buffers_only
source "hand-written sample: op-less workload with explicit benefits"
schedule     6
slow_time_ps 10000000

buffer b0 size=4 start=0 end=2 benefit=400000
buffer b1 size=4 start=1 end=3 benefit=300000
buffer b2 size=4 start=3 end=5 benefit=500000
buffer b3 size=8 start=2 end=4 benefit=900000
buffer b4 size=4 start=4 end=5 benefit=100000 pinned
