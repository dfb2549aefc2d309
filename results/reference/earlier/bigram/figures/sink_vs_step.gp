# written by gatelab: edit freely, then redraw with
#   cd /work/runs/bigram_report/figures && gnuplot sink_vs_step.gp
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 3200,800 noenhanced font 'sans,11'
} else {
    set terminal png size 3200,800 noenhanced
}
if (!exists('gatelab_out')) gatelab_out = 'sink_vs_step.png'
set output gatelab_out
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'step'
set offsets 0, 0, graph 0.05, graph 0.05
set multiplot
set label 99 'Attention sinks during training; mean over seeds; key runs; all runs in results.csv' at screen 0.5, screen 0.9698 center front
set origin 0.0000, 0.4698
set size 0.2000, 0.4698
set ylabel 'sink rate (alpha_0 > 0.3)'
set title '(part 1 of 5)'
plot 'sink_vs_step.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'sink_vs_step.dat' index 2 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'baseline-lr1x', \
     'sink_vs_step.dat' index 4 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'baseline-lr1x-noclip', \
     'sink_vs_step.dat' index 6 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'baseline-lr2x', \
     'sink_vs_step.dat' index 8 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'baseline-lr2x-noclip', \
     'sink_vs_step.dat' index 10 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'baseline-lr4x'
unset label 99
set origin 0.2000, 0.4698
set size 0.2000, 0.4698
set ylabel 'sink rate (alpha_0 > 0.3)'
set title '(part 2 of 5)'
plot 'sink_vs_step.dat' index 12 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline-lr4x-noclip', \
     'sink_vs_step.dat' index 14 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'baseline-lr8x', \
     'sink_vs_step.dat' index 16 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'baseline-lr8x-noclip', \
     'sink_vs_step.dat' index 18 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-elem', \
     'sink_vs_step.dat' index 20 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-elem-lr1x', \
     'sink_vs_step.dat' index 22 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'g1-elem-lr1x-noclip'
set origin 0.4000, 0.4698
set size 0.2000, 0.4698
set ylabel 'sink rate (alpha_0 > 0.3)'
set title '(part 3 of 5)'
plot 'sink_vs_step.dat' index 24 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'g1-elem-lr2x', \
     'sink_vs_step.dat' index 26 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-elem-lr2x-noclip', \
     'sink_vs_step.dat' index 28 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-elem-lr4x', \
     'sink_vs_step.dat' index 30 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-elem-lr4x-noclip', \
     'sink_vs_step.dat' index 32 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-elem-lr8x', \
     'sink_vs_step.dat' index 34 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'g1-elem-lr8x-noclip'
set origin 0.6000, 0.4698
set size 0.2000, 0.4698
set ylabel 'sink rate (alpha_0 > 0.3)'
set title '(part 4 of 5)'
plot 'sink_vs_step.dat' index 36 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'g1-head', \
     'sink_vs_step.dat' index 38 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-head-lr1x', \
     'sink_vs_step.dat' index 40 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-head-lr1x-noclip', \
     'sink_vs_step.dat' index 42 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-head-lr2x', \
     'sink_vs_step.dat' index 44 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-head-lr2x-noclip', \
     'sink_vs_step.dat' index 46 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'g1-head-lr4x'
set origin 0.8000, 0.4698
set size 0.2000, 0.4698
set ylabel 'sink rate (alpha_0 > 0.3)'
set title '(part 5 of 5)'
plot 'sink_vs_step.dat' index 48 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'g1-head-lr4x-noclip', \
     'sink_vs_step.dat' index 50 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-head-lr8x', \
     'sink_vs_step.dat' index 52 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-head-lr8x-noclip'
set origin 0.0000, 0.0000
set size 0.2000, 0.4698
set ylabel 'first-token share'
set title '(part 1 of 5)'
plot 'sink_vs_step.dat' index 1 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'sink_vs_step.dat' index 3 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'baseline-lr1x', \
     'sink_vs_step.dat' index 5 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'baseline-lr1x-noclip', \
     'sink_vs_step.dat' index 7 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'baseline-lr2x', \
     'sink_vs_step.dat' index 9 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'baseline-lr2x-noclip', \
     'sink_vs_step.dat' index 11 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'baseline-lr4x'
set origin 0.2000, 0.0000
set size 0.2000, 0.4698
set ylabel 'first-token share'
set title '(part 2 of 5)'
plot 'sink_vs_step.dat' index 13 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline-lr4x-noclip', \
     'sink_vs_step.dat' index 15 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'baseline-lr8x', \
     'sink_vs_step.dat' index 17 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'baseline-lr8x-noclip', \
     'sink_vs_step.dat' index 19 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-elem', \
     'sink_vs_step.dat' index 21 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-elem-lr1x', \
     'sink_vs_step.dat' index 23 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'g1-elem-lr1x-noclip'
set origin 0.4000, 0.0000
set size 0.2000, 0.4698
set ylabel 'first-token share'
set title '(part 3 of 5)'
plot 'sink_vs_step.dat' index 25 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'g1-elem-lr2x', \
     'sink_vs_step.dat' index 27 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-elem-lr2x-noclip', \
     'sink_vs_step.dat' index 29 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-elem-lr4x', \
     'sink_vs_step.dat' index 31 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-elem-lr4x-noclip', \
     'sink_vs_step.dat' index 33 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-elem-lr8x', \
     'sink_vs_step.dat' index 35 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'g1-elem-lr8x-noclip'
set origin 0.6000, 0.0000
set size 0.2000, 0.4698
set ylabel 'first-token share'
set title '(part 4 of 5)'
plot 'sink_vs_step.dat' index 37 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'g1-head', \
     'sink_vs_step.dat' index 39 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-head-lr1x', \
     'sink_vs_step.dat' index 41 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-head-lr1x-noclip', \
     'sink_vs_step.dat' index 43 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-head-lr2x', \
     'sink_vs_step.dat' index 45 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-head-lr2x-noclip', \
     'sink_vs_step.dat' index 47 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'g1-head-lr4x'
set origin 0.8000, 0.0000
set size 0.2000, 0.4698
set ylabel 'first-token share'
set title '(part 5 of 5)'
plot 'sink_vs_step.dat' index 49 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'g1-head-lr4x-noclip', \
     'sink_vs_step.dat' index 51 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-head-lr8x', \
     'sink_vs_step.dat' index 53 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-head-lr8x-noclip'
unset multiplot
