# Figure 1: per-workload speedup over the XLA-style heuristic, one horizontal bar per solver,
# workloads sorted by the best solver's speedup (best at the top), bars drawn from 1 (= the
# heuristic) so that wins grow right and losses left. Horizontal, so every workload name stays
# readable however many there are.
# DATA: one row per case: "label speedup_1 ... speedup_NSOLVERS" (NaN: no valid result).
# SOLVERS: the column names; NCASES; XMIN, XMAX.
load PLOTS.'/common.gp'
set title "Speedup over the XLA-style heuristic per workload (simulated time, T_heuristic / T_solver)"
set xlabel "speedup over heuristic (x)"
set datafile missing "NaN"
set xrange [XMIN:XMAX]
set yrange [-0.7:NCASES-0.3]
set ytics nomirror font ",9"
set grid xtics noytics lc rgb "#dddddd"
set key bottom right opaque box
set style fill solid 0.9 border -1
W = 0.8 / NSOLVERS
off(j) = (j - (NSOLVERS + 1) / 2.0) * W
set arrow from 1, graph 0 to 1, graph 1 nohead dt 2 lw 1.5 lc rgb "black"
# one tic label per workload, at the centre of its group of bars
plot DATA using (NaN):($0):ytic(1) notitle, \
     for [j=1:NSOLVERS] DATA using (column(j+1)):($0 + off(j)):(1):(column(j+1)):($0 + off(j) - W/2):($0 + off(j) + W/2) \
     with boxxyerror lc rgb solver_color(word(SOLVERS, j)) title word(SOLVERS, j), \
     NaN with lines dt 2 lw 1.5 lc rgb "black" title "heuristic = 1"
