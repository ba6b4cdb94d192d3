# Shared settings, loaded by every template. mallocbench sets TERMINAL (a full terminal
# specification) and OUT (the output file) with gnuplot -e before the template runs.
set macros
set terminal @TERMINAL
set output OUT
set termoption noenhanced
set encoding utf8
set border lw 1.2
set grid ytics lc rgb "#dddddd" lw 1 dt 1
set key noautotitle
# one fixed colour per solver in every figure (Okabe-Ito, colour-blind safe); a solver without
# one (a newly registered solver) takes one of the others by its place in SOLVERS, the
# space-separated solver list every template is given, so that two new solvers differ
OTHER_COLORS = "#E69F00 #56B4E9 #000000 #F0E442 #999999"
solver_pos(name, i) = i > words(SOLVERS) ? 0 : word(SOLVERS, i) eq name ? i : solver_pos(name, i + 1)
solver_color(name) = name eq "heuristic" ? "#0072B2" : name eq "greedy" ? "#D55E00" : \
                     name eq "mallocmuzero" ? "#009E73" : name eq "mallocmuzero-exact" ? "#CC79A7" : \
                     word(OTHER_COLORS, 1 + solver_pos(name, 1) % words(OTHER_COLORS))
array CURVE_COLOR[6] = ["#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#000000", "#D55E00"]
