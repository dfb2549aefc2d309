# written by gatelab: edit freely, then redraw with
#   cd results/reference/claims-nonlin/figures && gnuplot loss.gp
# (STEM.png; -e "gatelab_fmt='svg'" or 'pdf' draws STEM.svg or STEM.pdf)
if (!exists('gatelab_fmt')) gatelab_fmt = 'png'
if (gatelab_fmt eq 'svg') {
    set terminal svg size 1280,540 dynamic noenhanced font 'sans,11'
} else { if (gatelab_fmt eq 'pdf') {
    set terminal pdfcairo size 13.3333 in,5.625 in noenhanced font 'sans,11'
} else { if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 1280,540 noenhanced font 'sans,11'
} else {
    set terminal png size 1280,540 noenhanced
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
set label 99 'Loss: train (lines, 20-step average), val (points); mean over seeds' at screen 0.5, screen 0.9600 center front
set yrange [1.6263475:4.74282971]
set origin 0.0000, 0.0000
set size 0.5000, 0.9200
set ylabel 'loss (nats/token)'
set title '(part 1 of 2)'
plot 'loss.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'loss.dat' index 2 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-add-id', \
     'loss.dat' index 4 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-const', \
     'loss.dat' index 6 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-elem', \
     'loss.dat' index 1 using 1:2 with points pt 7 ps 1.2 lc rgb '#0072B2' title 'baseline (val)', \
     'loss.dat' index 1 using 1:2 with points pt 6 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 3 using 1:2 with points pt 5 ps 1.2 lc rgb '#D55E00' title 'g1-add-id (val)', \
     'loss.dat' index 3 using 1:2 with points pt 4 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 5 using 1:2 with points pt 9 ps 1.2 lc rgb '#009E73' title 'g1-const (val)', \
     'loss.dat' index 5 using 1:2 with points pt 8 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 7 using 1:2 with points pt 11 ps 1.2 lc rgb '#CC79A7' title 'g1-elem (val)', \
     'loss.dat' index 7 using 1:2 with points pt 10 ps 1.2 lc rgb '#202020' notitle
unset label 99
set origin 0.5000, 0.0000
set size 0.5000, 0.9200
set ylabel 'loss (nats/token)'
set title '(part 2 of 2)'
plot 'loss.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'loss.dat' index 8 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-ns', \
     'loss.dat' index 10 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'sdpa-rmsnorm', \
     'loss.dat' index 12 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'sdpa-silu', \
     'loss.dat' index 1 using 1:2 with points pt 7 ps 1.2 lc rgb '#0072B2' title 'baseline (val)', \
     'loss.dat' index 1 using 1:2 with points pt 6 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 9 using 1:2 with points pt 5 ps 1.2 lc rgb '#D55E00' title 'g1-ns (val)', \
     'loss.dat' index 9 using 1:2 with points pt 4 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 11 using 1:2 with points pt 9 ps 1.2 lc rgb '#009E73' title 'sdpa-rmsnorm (val)', \
     'loss.dat' index 11 using 1:2 with points pt 8 ps 1.2 lc rgb '#202020' notitle, \
     'loss.dat' index 13 using 1:2 with points pt 11 ps 1.2 lc rgb '#CC79A7' title 'sdpa-silu (val)', \
     'loss.dat' index 13 using 1:2 with points pt 10 ps 1.2 lc rgb '#202020' notitle
set autoscale y
unset multiplot
