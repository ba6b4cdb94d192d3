# Figure 5: mallocMuZero training curves: mean episode return of the raw policy network (no
# search) on the agent's evaluation workloads, against training steps.
# DATA: one block per distinct curve: "step return". CURVES: the curve names, space-separated
# (a curve shared by several solvers, i.e. one agent, is named "solverA,solverB"; a solver whose
# seeds have different curves names the others "solver/seedN").
load PLOTS.'/common.gp'
set title "mallocMuZero training curves (episode return = (T_slow - T) / T_slow, simulated)"
set xlabel "training steps"
set ylabel "mean episode return of the policy network alone"
set grid xtics ytics lc rgb "#dddddd"
set key bottom right opaque box
plot for [i=0:words(CURVES)-1] DATA index i using 1:2 with lines lw 2 \
     lc rgb CURVE_COLOR[(i % 6)+1] title word(CURVES, i+1)
