# Figure 6: memory maps, side by side: time on x, address on y, one rectangle per buffer in
# fast memory, coloured by its standalone benefit; the capacity as a line.
# LEFT, RIGHT: data files "start end offset size benefit_us" (time in op indices, bytes in MiB);
# LEFT_TITLE, RIGHT_TITLE; CAPACITY (MiB); TMAX (schedule length); WORKLOAD.
load PLOTS.'/common.gp'
set multiplot layout 1,2 title sprintf("Memory map of %s (fast memory; colour = standalone benefit)", WORKLOAD)
set xlabel "time (op index in the schedule)"
set ylabel "address in fast memory (MiB)"
set xrange [0:TMAX]
set yrange [0:CAPACITY*1.15]
set key top right opaque box
set cblabel "standalone benefit (µs, simulated)"
set palette defined (0 "#fff5b1", 0.5 "#f98e09", 1 "#6a0a54")
set cbrange [0:BMAX > 0 ? BMAX : 1]
set style fill solid 0.85 border lc rgb "#333333"
set grid noytics
set title LEFT_TITLE
plot LEFT using (($1+$2+1)/2):($3+$4/2):($1):($2+1):($3):($3+$4):5 with boxxyerror fc palette notitle, \
     CAPACITY with lines lw 2 dt 2 lc rgb "black" title "capacity"
set title RIGHT_TITLE
plot RIGHT using (($1+$2+1)/2):($3+$4/2):($1):($2+1):($3):($3+$4):5 with boxxyerror fc palette notitle, \
     CAPACITY with lines lw 2 dt 2 lc rgb "black" title "capacity"
unset multiplot
