# written by gatelab: edit freely, then redraw with
#   cd results/reference/brown/figures && gnuplot loss.gp
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,540 noenhanced font 'sans,11'
} else {
    set terminal png size 900,540 noenhanced
}
set output 'loss.png'
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'step'
set offsets 0, 0, graph 0.05, graph 0.05
set title 'Loss: train (lines, 20-step average), val (points); mean over seeds'
set ylabel 'loss (nats/token)'
plot 'loss.dat' index 0 using 1:2 with lines lw 2 lt 1 title 'baseline', \
     'loss.dat' index 1 using 1:2 with points pt 7 ps 1.2 lt 1 title 'baseline (val)', \
     'loss.dat' index 2 using 1:2 with lines lw 2 lt 2 title 'g1-elem', \
     'loss.dat' index 3 using 1:2 with points pt 7 ps 1.2 lt 2 title 'g1-elem (val)', \
     'loss.dat' index 4 using 1:2 with lines lw 2 lt 3 title 'g1-head', \
     'loss.dat' index 5 using 1:2 with points pt 7 ps 1.2 lt 3 title 'g1-head (val)', \
     'loss.dat' index 6 using 1:2 with lines lw 2 lt 4 title 'sink-token', \
     'loss.dat' index 7 using 1:2 with points pt 7 ps 1.2 lt 4 title 'sink-token (val)', \
     'loss.dat' index 8 using 1:2 with lines lw 2 lt 5 title 'softmax1', \
     'loss.dat' index 9 using 1:2 with points pt 7 ps 1.2 lt 5 title 'softmax1 (val)'
