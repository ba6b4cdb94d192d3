# Figure 3: gap to the LP bound per workload and solver, (T_solver - T_bound) / T_bound, one
# horizontal bar per solver, workloads in the order of figure 1.
# A dot marks each gap, so that a provably optimal result (0%, a bar of length zero) shows as a
# dot at 0; a cross at 0 marks a missing one (no valid result or no bound), so that it cannot be
# mistaken for an optimal one.
# DATA: one row per case: "label gap_1 ... gap_NSOLVERS" in percent (NaN: no bound or result).
# SOLVERS: the column names; NCASES; NMISSING: the NaN cells (0: no cross in the key); XMAX.
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
if (!exists("NMISSING")) NMISSING = 0
missing_key = NMISSING > 0 ? ', NaN with points pt 2 ps 1.6 lw 2 lc rgb "black" title "no result or no bound"' : ''
# one tic label per workload, at the centre of its group of bars; then the bars, a dot at each
# gap, a cross at 0 for each missing one
plot DATA using (NaN):($0):ytic(1) notitle, \
     for [j=1:NSOLVERS] DATA using (column(j+1)):($0 + off(j)):(0):(column(j+1)):($0 + off(j) - W/2):($0 + off(j) + W/2) \
     with boxxyerror lc rgb solver_color(word(SOLVERS, j)) title word(SOLVERS, j), \
     for [j=1:NSOLVERS] DATA using (column(j+1)):($0 + off(j)) with points pt 7 ps 1.1 \
     lc rgb solver_color(word(SOLVERS, j)) notitle, \
     for [j=1:NSOLVERS] DATA using (column(j+1)):($0 + off(j)) with points pt 6 ps 1.1 lw 1 \
     lc rgb "black" notitle, \
     for [j=1:NSOLVERS] DATA using (valid(j+1) ? NaN : 0):($0 + off(j)) with points pt 2 ps 1.6 lw 2 \
     lc rgb solver_color(word(SOLVERS, j)) notitle @missing_key
