# written by gatelab: edit freely, then redraw with
#   cd results/reference/field-explore/figures && gnuplot loss.gp
# (STEM.png; -e "gatelab_fmt='svg'" or 'pdf' draws STEM.svg or STEM.pdf)
if (!exists('gatelab_fmt')) gatelab_fmt = 'png'
if (gatelab_fmt eq 'svg') {
    set terminal svg size 1920,540 dynamic noenhanced font 'sans,11'
} else { if (gatelab_fmt eq 'pdf') {
    set terminal pdfcairo size 20 in,5.625 in noenhanced font 'sans,11'
} else { if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 1920,540 noenhanced font 'sans,11'
} else {
    set terminal png size 1920,540 noenhanced
} } }
if (!exists('gatelab_out')) gatelab_out = 'loss.'.gatelab_fmt
set output gatelab_out
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'step'
set offsets 0, 0, graph 0.05, graph 0.05
set xtics 500
set multiplot
set label 99 'Loss: train (lines, 20-step average), val (points); mean over seeds; key runs; all runs in results.csv' at screen 0.5, screen 0.9600 center front
set yrange [1.61261615:4.94437516]
set origin 0.0000, 0.0000
set size 0.3333, 0.9200
set ylabel 'loss (nats/token)'
set title '(part 1 of 3)'
plot 'loss.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'loss.dat' index 2 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'baseline-alibi', \
     'loss.dat' index 4 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'baseline-altwin', \
     'loss.dat' index 6 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'baseline-nope', \
     'loss.dat' index 8 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'baseline-postnorm', \
     'loss.dat' index 1 using 1:2 with points pt 7 ps 1.2 lc rgb '#0072B2' title 'baseline (val)', \
     'loss.dat' index 1 using 1:2 with points pt 6 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 3 using 1:2 with points pt 5 ps 1.2 lc rgb '#D55E00' title 'baseline-alibi (val)', \
     'loss.dat' index 3 using 1:2 with points pt 4 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 5 using 1:2 with points pt 9 ps 1.2 lc rgb '#009E73' title 'baseline-altwin (val)', \
     'loss.dat' index 5 using 1:2 with points pt 8 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 7 using 1:2 with points pt 11 ps 1.2 lc rgb '#CC79A7' title 'baseline-nope (val)', \
     'loss.dat' index 7 using 1:2 with points pt 10 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 9 using 1:2 with points pt 13 ps 1.2 lc rgb '#E69F00' title 'baseline-postnorm (val)', \
     'loss.dat' index 9 using 1:2 with points pt 12 ps 1.2 lc rgb '#202020' notitle
unset label 99
set origin 0.3333, 0.0000
set size 0.3333, 0.9200
set ylabel 'loss (nats/token)'
set title '(part 2 of 3)'
plot 'loss.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'loss.dat' index 10 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'baseline-sandwich', \
     'loss.dat' index 12 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'baseline-win16', \
     'loss.dat' index 14 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-elem', \
     'loss.dat' index 16 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-elem-alibi', \
     'loss.dat' index 1 using 1:2 with points pt 7 ps 1.2 lc rgb '#0072B2' title 'baseline (val)', \
     'loss.dat' index 1 using 1:2 with points pt 6 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 11 using 1:2 with points pt 5 ps 1.2 lc rgb '#D55E00' title 'baseline-sandwich (val)', \
     'loss.dat' index 11 using 1:2 with points pt 4 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 13 using 1:2 with points pt 9 ps 1.2 lc rgb '#009E73' title 'baseline-win16 (val)', \
     'loss.dat' index 13 using 1:2 with points pt 8 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 15 using 1:2 with points pt 11 ps 1.2 lc rgb '#CC79A7' title 'g1-elem (val)', \
     'loss.dat' index 15 using 1:2 with points pt 10 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 17 using 1:2 with points pt 13 ps 1.2 lc rgb '#E69F00' title 'g1-elem-alibi (val)', \
     'loss.dat' index 17 using 1:2 with points pt 12 ps 1.2 lc rgb '#202020' notitle
set origin 0.6667, 0.0000
set size 0.3333, 0.9200
set ylabel 'loss (nats/token)'
set title '(part 3 of 3)'
plot 'loss.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'loss.dat' index 18 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-elem-altwin', \
     'loss.dat' index 20 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-elem-nope', \
     'loss.dat' index 22 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-elem-postnorm', \
     'loss.dat' index 24 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-elem-sandwich', \
     'loss.dat' index 26 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'g1-elem-win16', \
     'loss.dat' index 1 using 1:2 with points pt 7 ps 1.2 lc rgb '#0072B2' title 'baseline (val)', \
     'loss.dat' index 1 using 1:2 with points pt 6 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 19 using 1:2 with points pt 5 ps 1.2 lc rgb '#D55E00' title 'g1-elem-altwin (val)', \
     'loss.dat' index 19 using 1:2 with points pt 4 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 21 using 1:2 with points pt 9 ps 1.2 lc rgb '#009E73' title 'g1-elem-nope (val)', \
     'loss.dat' index 21 using 1:2 with points pt 8 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 23 using 1:2 with points pt 11 ps 1.2 lc rgb '#CC79A7' title 'g1-elem-postnorm (val)', \
     'loss.dat' index 23 using 1:2 with points pt 10 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 25 using 1:2 with points pt 13 ps 1.2 lc rgb '#E69F00' title 'g1-elem-sandwich (val)', \
     'loss.dat' index 25 using 1:2 with points pt 12 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 27 using 1:2 with points pt 3 ps 1.2 lc rgb '#000000' title 'g1-elem-win16 (val)', \
     'loss.dat' index 27 using 1:2 with points pt 2 ps 1.2 lc rgb '#202020' notitle
set autoscale y
unset multiplot
