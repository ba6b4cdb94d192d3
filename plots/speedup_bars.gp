# Figure 1: per-workload speedup over the XLA-style heuristic, one bar per solver, workloads
# sorted by the best solver's speedup, a line at 1 (= the heuristic).
# DATA: header "case solver1 solver2 ...", then one row per case; NSOLVERS columns of speedups; SOLVERS: the column names
# ("NaN" where a solver has no valid result).
load PLOTS.'/common.gp'
set title "Speedup over the XLA-style heuristic per workload (simulated time, T_heuristic / T_solver)"
set ylabel "speedup over heuristic (x)"
set xlabel "workload (sorted by best speedup)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.9 border -1
set boxwidth 0.9
set xtics rotate by 60 right font ",9" nomirror
set key top left opaque box
set yrange [YMIN:YMAX]
set datafile missing "NaN"
plot for [i=2:NSOLVERS+1] DATA using i:xtic(1) title columnheader(i) lc rgb solver_color(word(SOLVERS, i-1)), \
     1 with lines lw 2 dt 2 lc rgb "black" title "heuristic = 1"
