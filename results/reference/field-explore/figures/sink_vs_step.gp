# written by gatelab: edit freely, then redraw with
#   cd results/reference/field-explore/figures && gnuplot sink_vs_step.gp
# (STEM.png; -e "gatelab_fmt='svg'" or 'pdf' draws STEM.svg or STEM.pdf)
if (!exists('gatelab_fmt')) gatelab_fmt = 'png'
if (gatelab_fmt eq 'svg') {
    set terminal svg size 1920,800 dynamic noenhanced font 'sans,11'
} else { if (gatelab_fmt eq 'pdf') {
    set terminal pdfcairo size 20 in,8.33333 in noenhanced font 'sans,11'
} else { if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 1920,800 noenhanced font 'sans,11'
} else {
    set terminal png size 1920,800 noenhanced
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
set label 99 'Attention sinks during training; mean over seeds; key runs; all runs in results.csv' at screen 0.5, screen 0.9698 center front
set yrange [0:0.486445313]
set origin 0.0000, 0.4698
set size 0.3333, 0.4698
set ylabel 'sink rate (alpha_0 > 0.3)'
set title '(part 1 of 3)'
plot 'sink_vs_step.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'sink_vs_step.dat' index 2 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'baseline-alibi', \
     'sink_vs_step.dat' index 4 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'baseline-altwin', \
     'sink_vs_step.dat' index 6 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'baseline-nope', \
     'sink_vs_step.dat' index 8 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'baseline-postnorm'
unset label 99
set origin 0.3333, 0.4698
set size 0.3333, 0.4698
set ylabel 'sink rate (alpha_0 > 0.3)'
set title '(part 2 of 3)'
plot 'sink_vs_step.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'sink_vs_step.dat' index 10 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'baseline-sandwich', \
     'sink_vs_step.dat' index 12 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'baseline-win16', \
     'sink_vs_step.dat' index 14 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-elem', \
     'sink_vs_step.dat' index 16 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-elem-alibi'
set origin 0.6667, 0.4698
set size 0.3333, 0.4698
set ylabel 'sink rate (alpha_0 > 0.3)'
set title '(part 3 of 3)'
plot 'sink_vs_step.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'sink_vs_step.dat' index 18 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-elem-altwin', \
     'sink_vs_step.dat' index 20 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-elem-nope', \
     'sink_vs_step.dat' index 22 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-elem-postnorm', \
     'sink_vs_step.dat' index 24 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-elem-sandwich', \
     'sink_vs_step.dat' index 26 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'g1-elem-win16'
set yrange [0:*]
set yrange [0:0.296408523]
set origin 0.0000, 0.0000
set size 0.3333, 0.4698
set ylabel 'first-token share'
set title '(part 1 of 3)'
plot 'sink_vs_step.dat' index 1 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'sink_vs_step.dat' index 3 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'baseline-alibi', \
     'sink_vs_step.dat' index 5 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'baseline-altwin', \
     'sink_vs_step.dat' index 7 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'baseline-nope', \
     'sink_vs_step.dat' index 9 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'baseline-postnorm'
set origin 0.3333, 0.0000
set size 0.3333, 0.4698
set ylabel 'first-token share'
set title '(part 2 of 3)'
plot 'sink_vs_step.dat' index 1 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'sink_vs_step.dat' index 11 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'baseline-sandwich', \
     'sink_vs_step.dat' index 13 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'baseline-win16', \
     'sink_vs_step.dat' index 15 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-elem', \
     'sink_vs_step.dat' index 17 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-elem-alibi'
set origin 0.6667, 0.0000
set size 0.3333, 0.4698
set ylabel 'first-token share'
set title '(part 3 of 3)'
plot 'sink_vs_step.dat' index 1 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'sink_vs_step.dat' index 19 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-elem-altwin', \
     'sink_vs_step.dat' index 21 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-elem-nope', \
     'sink_vs_step.dat' index 23 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-elem-postnorm', \
     'sink_vs_step.dat' index 25 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-elem-sandwich', \
     'sink_vs_step.dat' index 27 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'g1-elem-win16'
set yrange [0:*]
unset multiplot
