# written by gatelab: edit freely, then redraw with
#   cd results/reference/brown/figures && gnuplot sink_vs_step.gp
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,540 noenhanced font 'sans,11'
} else {
    set terminal png size 900,540 noenhanced
}
set output 'sink_vs_step.png'
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'step'
set offsets 0, 0, graph 0.05, graph 0.05
set multiplot layout 2,1 title 'Attention sinks during training; mean over seeds'
set ylabel 'sink rate (alpha_0 > 0.3)'
plot 'sink_vs_step.dat' index 0 using 1:2 with lines lw 2 lt 1 title 'baseline', \
     'sink_vs_step.dat' index 2 using 1:2 with lines lw 2 lt 2 title 'g1-elem', \
     'sink_vs_step.dat' index 4 using 1:2 with lines lw 2 lt 3 title 'g1-head', \
     'sink_vs_step.dat' index 6 using 1:2 with lines lw 2 lt 4 title 'sink-token', \
     'sink_vs_step.dat' index 8 using 1:2 with lines lw 2 lt 5 title 'softmax1'
set ylabel 'first-token share'
plot 'sink_vs_step.dat' index 1 using 1:2 with lines lw 2 lt 1 title 'baseline', \
     'sink_vs_step.dat' index 3 using 1:2 with lines lw 2 lt 2 title 'g1-elem', \
     'sink_vs_step.dat' index 5 using 1:2 with lines lw 2 lt 3 title 'g1-head', \
     'sink_vs_step.dat' index 7 using 1:2 with lines lw 2 lt 4 title 'sink-token', \
     'sink_vs_step.dat' index 9 using 1:2 with lines lw 2 lt 5 title 'softmax1'
unset multiplot
