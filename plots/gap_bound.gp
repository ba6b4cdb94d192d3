# Figure 3: gap to the LP upper bound per workload and solver: (T_solver - T_bound) / T_bound.
# DATA: header "case solver1 ...", one row per case, gaps in percent (NaN where no bound). SOLVERS: the column names.
load PLOTS.'/common.gp'
set title "Gap to the LP bound per workload (simulated; 0% = provably optimal)"
set ylabel "gap to LP bound (%)"
set xlabel "workload"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.9 border -1
set boxwidth 0.9
set xtics rotate by 60 right font ",9" nomirror
set key top left opaque box
set yrange [0:*]
set datafile missing "NaN"
plot for [i=2:NSOLVERS+1] DATA using i:xtic(1) title columnheader(i) lc rgb solver_color(word(SOLVERS, i-1))
