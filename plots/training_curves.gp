# Figure 5: mallocMuZero training curves: mean episode return of the raw policy network (no
# search) on the agent's evaluation workloads, against training steps.
# DATA: one block per distinct curve: "step return", then one block per reference line (two
# points at the heuristic's mean return on the same eval set, over the curve's steps).
# CURVE_TITLE: an array, each curve's legend: the agent it is the training curve of (checkpoint
# file name and SHA-256 prefix) and the solvers that play it ("agent a.h5 (sha256 ...), played by
# mallocmuzero and mallocmuzero-exact"; a solver whose seeds have different curves names the
# others "solver/seedN"). REFS: the 1-based indices of the curves that have a reference, in the
# order of their blocks ("" or unset: none, and the figure is the curves alone).
load PLOTS.'/common.gp'
if (!exists("REFS")) REFS = ''
set title "mallocMuZero training curves (episode return = (T_slow - T) / T_slow, simulated)"
set xlabel "training steps"
set ylabel "mean episode return of the policy network alone"
set grid xtics ytics lc rgb "#dddddd"
set key bottom right opaque box
curves = "for [i=0:|CURVE_TITLE|-1] DATA index i using 1:2 with lines lw 2 \
          lc rgb CURVE_COLOR[(i % 6)+1] title CURVE_TITLE[i+1]"
if (words(REFS) == 0) {
  plot @curves
} else {
  # a reference line may lie at the edge of the curves' range: keep it off the border
  set offsets 0, 0, graph 0.04, graph 0.04
  ref_title(c) = |CURVE_TITLE| > 1 ? "heuristic (same eval set as the curve in its colour)" : \
                 "heuristic (same eval set)"
  plot @curves, \
       for [j=1:words(REFS)] DATA index (|CURVE_TITLE|+j-1) using 1:2 with lines lw 1.5 dt 2 \
       lc rgb CURVE_COLOR[((int(word(REFS, j))-1) % 6)+1] title ref_title(int(word(REFS, j)))
}
