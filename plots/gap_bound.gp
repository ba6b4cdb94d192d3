# Figure 3: gap to the LP bound per workload and solver, (T_solver - T_bound) / T_bound, one
# horizontal bar per solver, workloads in the order of figure 1.
# DATA: one row per case: "label gap_1 ... gap_NSOLVERS" in percent (NaN: no bound or result).
# SOLVERS: the column names; NCASES; XMAX.
load PLOTS.'/common.gp'
set title "Gap to the LP bound per workload (simulated; 0% = provably optimal)"
set xlabel "gap to LP bound (%)"
set datafile missing "NaN"
set xrange [0:XMAX]
set yrange [-0.7:NCASES-0.3]
set ytics nomirror font ",9"
set grid xtics noytics lc rgb "#dddddd"
set key bottom right opaque box
set style fill solid 0.9 border -1
W = 0.8 / NSOLVERS
off(j) = (j - (NSOLVERS + 1) / 2.0) * W
# one tic label per workload, at the centre of its group of bars
plot DATA using (NaN):($0):ytic(1) notitle, \
     for [j=1:NSOLVERS] DATA using (column(j+1)):($0 + off(j)):(0):(column(j+1)):($0 + off(j) - W/2):($0 + off(j) + W/2) \
     with boxxyerror lc rgb solver_color(word(SOLVERS, j)) title word(SOLVERS, j)
