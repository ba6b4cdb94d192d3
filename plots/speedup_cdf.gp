# Figure 2: distribution of speedups over the heuristic per solver (empirical CDF).
# DATA: one block per solver (separated by two blank lines): "speedup cumulative_fraction".
# SOLVERS: the solver names, space-separated, in block order; XMIN, XMAX: the x range.
load PLOTS.'/common.gp'
set title "Distribution of speedups over the heuristic (simulated, all workloads)"
set xlabel "speedup over heuristic (x)"
set ylabel "fraction of workloads with speedup <= x"
set xrange [XMIN:XMAX]
set yrange [0:1.02]
set grid xtics ytics lc rgb "#dddddd"
set key bottom right opaque box
set arrow from 1, graph 0 to 1, graph 1 nohead dt 2 lw 1.5 lc rgb "black"
plot for [i=0:words(SOLVERS)-1] DATA index i using 1:2 with steps lw 2.5 \
     lc rgb solver_color(word(SOLVERS, i+1)) title word(SOLVERS, i+1)
