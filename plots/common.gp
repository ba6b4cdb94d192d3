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
# one fixed colour per solver in every figure (Okabe-Ito, colour-blind safe)
solver_color(name) = name eq "heuristic" ? "#0072B2" : name eq "greedy" ? "#D55E00" : \
                     name eq "mallocmuzero" ? "#009E73" : name eq "mallocmuzero-exact" ? "#CC79A7" : \
                     "#E69F00"
array CURVE_COLOR[6] = ["#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#000000", "#D55E00"]
