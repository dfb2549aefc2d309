# written by gatelab: edit freely, then redraw with
#   cd /work/runs/bigram_report/figures && gnuplot loss.gp
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 3200,540 noenhanced font 'sans,11'
} else {
    set terminal png size 3200,540 noenhanced
}
if (!exists('gatelab_out')) gatelab_out = 'loss.png'
set output gatelab_out
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'step'
set offsets 0, 0, graph 0.05, graph 0.05
set multiplot
set label 99 'Loss: train (lines, 20-step average), val (points); mean over seeds; key runs; all runs in results.csv' at screen 0.5, screen 0.9600 center front
set origin 0.0000, 0.0000
set size 0.2000, 0.9200
set ylabel 'loss (nats/token)'
set title '(part 1 of 5)'
plot 'loss.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'loss.dat' index 1 using 1:2 with points pt 7 ps 1.2 lc rgb '#0072B2' title 'baseline (val)', \
     'loss.dat' index 2 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'baseline-lr1x', \
     'loss.dat' index 3 using 1:2 with points pt 5 ps 1.2 lc rgb '#D55E00' title 'baseline-lr1x (val)', \
     'loss.dat' index 4 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'baseline-lr1x-noclip', \
     'loss.dat' index 5 using 1:2 with points pt 9 ps 1.2 lc rgb '#009E73' title 'baseline-lr1x-noclip (val)', \
     'loss.dat' index 6 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'baseline-lr2x', \
     'loss.dat' index 7 using 1:2 with points pt 11 ps 1.2 lc rgb '#CC79A7' title 'baseline-lr2x (val)', \
     'loss.dat' index 8 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'baseline-lr2x-noclip', \
     'loss.dat' index 9 using 1:2 with points pt 13 ps 1.2 lc rgb '#E69F00' title 'baseline-lr2x-noclip (val)', \
     'loss.dat' index 10 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'baseline-lr4x', \
     'loss.dat' index 11 using 1:2 with points pt 3 ps 1.2 lc rgb '#000000' title 'baseline-lr4x (val)'
unset label 99
set origin 0.2000, 0.0000
set size 0.2000, 0.9200
set ylabel 'loss (nats/token)'
set title '(part 2 of 5)'
plot 'loss.dat' index 12 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline-lr4x-noclip', \
     'loss.dat' index 13 using 1:2 with points pt 7 ps 1.2 lc rgb '#0072B2' title 'baseline-lr4x-noclip (val)', \
     'loss.dat' index 14 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'baseline-lr8x', \
     'loss.dat' index 15 using 1:2 with points pt 5 ps 1.2 lc rgb '#D55E00' title 'baseline-lr8x (val)', \
     'loss.dat' index 16 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'baseline-lr8x-noclip', \
     'loss.dat' index 17 using 1:2 with points pt 9 ps 1.2 lc rgb '#009E73' title 'baseline-lr8x-noclip (val)', \
     'loss.dat' index 18 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-elem', \
     'loss.dat' index 19 using 1:2 with points pt 11 ps 1.2 lc rgb '#CC79A7' title 'g1-elem (val)', \
     'loss.dat' index 20 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-elem-lr1x', \
     'loss.dat' index 21 using 1:2 with points pt 13 ps 1.2 lc rgb '#E69F00' title 'g1-elem-lr1x (val)', \
     'loss.dat' index 22 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'g1-elem-lr1x-noclip', \
     'loss.dat' index 23 using 1:2 with points pt 3 ps 1.2 lc rgb '#000000' title 'g1-elem-lr1x-noclip (val)'
set origin 0.4000, 0.0000
set size 0.2000, 0.9200
set ylabel 'loss (nats/token)'
set title '(part 3 of 5)'
plot 'loss.dat' index 24 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'g1-elem-lr2x', \
     'loss.dat' index 25 using 1:2 with points pt 7 ps 1.2 lc rgb '#0072B2' title 'g1-elem-lr2x (val)', \
     'loss.dat' index 26 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-elem-lr2x-noclip', \
     'loss.dat' index 27 using 1:2 with points pt 5 ps 1.2 lc rgb '#D55E00' title 'g1-elem-lr2x-noclip (val)', \
     'loss.dat' index 28 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-elem-lr4x', \
     'loss.dat' index 29 using 1:2 with points pt 9 ps 1.2 lc rgb '#009E73' title 'g1-elem-lr4x (val)', \
     'loss.dat' index 30 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-elem-lr4x-noclip', \
     'loss.dat' index 31 using 1:2 with points pt 11 ps 1.2 lc rgb '#CC79A7' title 'g1-elem-lr4x-noclip (val)', \
     'loss.dat' index 32 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-elem-lr8x', \
     'loss.dat' index 33 using 1:2 with points pt 13 ps 1.2 lc rgb '#E69F00' title 'g1-elem-lr8x (val)', \
     'loss.dat' index 34 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'g1-elem-lr8x-noclip', \
     'loss.dat' index 35 using 1:2 with points pt 3 ps 1.2 lc rgb '#000000' title 'g1-elem-lr8x-noclip (val)'
set origin 0.6000, 0.0000
set size 0.2000, 0.9200
set ylabel 'loss (nats/token)'
set title '(part 4 of 5)'
plot 'loss.dat' index 36 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'g1-head', \
     'loss.dat' index 37 using 1:2 with points pt 7 ps 1.2 lc rgb '#0072B2' title 'g1-head (val)', \
     'loss.dat' index 38 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-head-lr1x', \
     'loss.dat' index 39 using 1:2 with points pt 5 ps 1.2 lc rgb '#D55E00' title 'g1-head-lr1x (val)', \
     'loss.dat' index 40 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-head-lr1x-noclip', \
     'loss.dat' index 41 using 1:2 with points pt 9 ps 1.2 lc rgb '#009E73' title 'g1-head-lr1x-noclip (val)', \
     'loss.dat' index 42 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-head-lr2x', \
     'loss.dat' index 43 using 1:2 with points pt 11 ps 1.2 lc rgb '#CC79A7' title 'g1-head-lr2x (val)', \
     'loss.dat' index 44 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-head-lr2x-noclip', \
     'loss.dat' index 45 using 1:2 with points pt 13 ps 1.2 lc rgb '#E69F00' title 'g1-head-lr2x-noclip (val)', \
     'loss.dat' index 46 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'g1-head-lr4x', \
     'loss.dat' index 47 using 1:2 with points pt 3 ps 1.2 lc rgb '#000000' title 'g1-head-lr4x (val)'
set origin 0.8000, 0.0000
set size 0.2000, 0.9200
set ylabel 'loss (nats/token)'
set title '(part 5 of 5)'
plot 'loss.dat' index 48 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'g1-head-lr4x-noclip', \
     'loss.dat' index 49 using 1:2 with points pt 7 ps 1.2 lc rgb '#0072B2' title 'g1-head-lr4x-noclip (val)', \
     'loss.dat' index 50 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-head-lr8x', \
     'loss.dat' index 51 using 1:2 with points pt 5 ps 1.2 lc rgb '#D55E00' title 'g1-head-lr8x (val)', \
     'loss.dat' index 52 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-head-lr8x-noclip', \
     'loss.dat' index 53 using 1:2 with points pt 9 ps 1.2 lc rgb '#009E73' title 'g1-head-lr8x-noclip (val)'
unset multiplot
