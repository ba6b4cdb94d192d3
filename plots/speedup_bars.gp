# Figure 1: per-workload speedup over the XLA-style heuristic, one horizontal bar per solver,
# workloads sorted by the best solver's speedup (best at the top), bars drawn from 1 (= the
# heuristic) so that wins grow right and losses left. Horizontal, so every workload name stays
# readable however many there are.
# A dot marks each result's speedup, so that a tie (1.0x, a bar of length zero) shows as a dot on
# the heuristic's line; a missing or failed result is a cross there instead, so that it cannot
# be mistaken for a tie.
# DATA: one row per case: "label speedup_1 ... speedup_NSOLVERS" (NaN: no valid result).
# SOLVERS: the column names; NCASES; NMISSING: the NaN cells (0: no cross in the key); XMIN, XMAX.
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
if (!exists("NMISSING")) NMISSING = 0
missing_key = NMISSING > 0 ? ', NaN with points pt 2 ps 1.6 lw 2 lc rgb "black" title "no valid result"' : ''
# one tic label per workload, at the centre of its group of bars; then the bars, a dot at each
# result, a cross at 1 for each missing one
plot DATA using (NaN):($0):ytic(1) notitle, \
     for [j=1:NSOLVERS] DATA using (column(j+1)):($0 + off(j)):(1):(column(j+1)):($0 + off(j) - W/2):($0 + off(j) + W/2) \
     with boxxyerror lc rgb solver_color(word(SOLVERS, j)) title word(SOLVERS, j), \
     for [j=1:NSOLVERS] DATA using (column(j+1)):($0 + off(j)) with points pt 7 ps 1.1 \
     lc rgb solver_color(word(SOLVERS, j)) notitle, \
     for [j=1:NSOLVERS] DATA using (column(j+1)):($0 + off(j)) with points pt 6 ps 1.1 lw 1 \
     lc rgb "black" notitle, \
     for [j=1:NSOLVERS] DATA using (valid(j+1) ? NaN : 1):($0 + off(j)) with points pt 2 ps 1.6 lw 2 \
     lc rgb solver_color(word(SOLVERS, j)) notitle, \
     NaN with lines dt 2 lw 1.5 lc rgb "black" title "heuristic = 1" @missing_key
