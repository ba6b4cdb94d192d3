# Figure 4: solver wall time against workload size (log-log).
# DATA: one block per solver: "n_buffers wall_seconds". SOLVERS: names in block order.
load PLOTS.'/common.gp'
set title "Solver wall time against workload size (wall clock, this machine)"
set xlabel "buffers in the workload (log scale)"
set ylabel "wall time per solve (s, log scale)"
set logscale xy
set format y "10^{%L}"
set termoption enhanced
set grid xtics ytics mxtics mytics lc rgb "#eeeeee"
set key top left opaque box
plot for [i=0:words(SOLVERS)-1] DATA index i using 1:2 with points pt 7 ps 1.2 \
     lc rgb solver_color(word(SOLVERS, i+1)) title word(SOLVERS, i+1)
