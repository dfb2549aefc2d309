# written by gatelab: edit freely, then redraw with
#   cd results/reference/claims-nonlin/figures && gnuplot sink_vs_step.gp
# (STEM.png; -e "gatelab_fmt='svg'" or 'pdf' draws STEM.svg or STEM.pdf)
if (!exists('gatelab_fmt')) gatelab_fmt = 'png'
if (gatelab_fmt eq 'svg') {
    set terminal svg size 1280,800 dynamic noenhanced font 'sans,11'
} else { if (gatelab_fmt eq 'pdf') {
    set terminal pdfcairo size 13.3333 in,8.33333 in noenhanced font 'sans,11'
} else { if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 1280,800 noenhanced font 'sans,11'
} else {
    set terminal png size 1280,800 noenhanced
} } }
if (!exists('gatelab_out')) gatelab_out = 'sink_vs_step.'.gatelab_fmt
set output gatelab_out
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'step'
set yrange [0:*]
set offsets 0, 0, graph 0.05, 0
set xtics 500
set multiplot
set label 99 'Attention sinks during training; mean over seeds' at screen 0.5, screen 0.9698 center front
set yrange [0:0.303818359]
set origin 0.0000, 0.4698
set size 0.5000, 0.4698
set ylabel 'sink rate (alpha_0 > 0.3)'
set title '(part 1 of 2)'
plot 'sink_vs_step.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'sink_vs_step.dat' index 2 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-add-id', \
     'sink_vs_step.dat' index 4 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-const', \
     'sink_vs_step.dat' index 6 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-elem'
unset label 99
set origin 0.5000, 0.4698
set size 0.5000, 0.4698
set ylabel 'sink rate (alpha_0 > 0.3)'
set title '(part 2 of 2)'
plot 'sink_vs_step.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'sink_vs_step.dat' index 8 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-ns', \
     'sink_vs_step.dat' index 10 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'sdpa-rmsnorm', \
     'sink_vs_step.dat' index 12 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'sdpa-silu'
set yrange [0:*]
set yrange [0:0.185435226]
set origin 0.0000, 0.0000
set size 0.5000, 0.4698
set ylabel 'first-token share'
set title '(part 1 of 2)'
plot 'sink_vs_step.dat' index 1 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'sink_vs_step.dat' index 3 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-add-id', \
     'sink_vs_step.dat' index 5 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-const', \
     'sink_vs_step.dat' index 7 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-elem'
set origin 0.5000, 0.0000
set size 0.5000, 0.4698
set ylabel 'first-token share'
set title '(part 2 of 2)'
plot 'sink_vs_step.dat' index 1 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'sink_vs_step.dat' index 9 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-ns', \
     'sink_vs_step.dat' index 11 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'sdpa-rmsnorm', \
     'sink_vs_step.dat' index 13 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'sdpa-silu'
set yrange [0:*]
unset multiplot
