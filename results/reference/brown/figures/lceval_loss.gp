# written by gatelab: edit freely, then redraw with
#   cd results/reference/brown/figures && gnuplot lceval_loss.gp
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,540 noenhanced font 'sans,11'
} else {
    set terminal png size 900,540 noenhanced
}
set output 'lceval_loss.png'
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'eval length (tokens)'
set offsets 0, 0, graph 0.05, graph 0.05
set multiplot layout 2,1 title 'val loss against eval length; mean over seeds'
set ylabel 'val loss, plain RoPE'
plot 'lceval_loss.dat' index 0 using 1:2 with lines lw 2 lt 1 title 'baseline', \
     'lceval_loss.dat' index 2 using 1:2 with lines lw 2 lt 2 title 'g1-elem', \
     'lceval_loss.dat' index 4 using 1:2 with lines lw 2 lt 3 title 'g1-head', \
     'lceval_loss.dat' index 6 using 1:2 with lines lw 2 lt 4 title 'sink-token', \
     'lceval_loss.dat' index 8 using 1:2 with lines lw 2 lt 5 title 'softmax1'
set ylabel 'val loss, YaRN'
plot 'lceval_loss.dat' index 1 using 1:2 with lines lw 2 lt 1 title 'baseline', \
     'lceval_loss.dat' index 3 using 1:2 with lines lw 2 lt 2 title 'g1-elem', \
     'lceval_loss.dat' index 5 using 1:2 with lines lw 2 lt 3 title 'g1-head', \
     'lceval_loss.dat' index 7 using 1:2 with lines lw 2 lt 4 title 'sink-token', \
     'lceval_loss.dat' index 9 using 1:2 with lines lw 2 lt 5 title 'softmax1'
unset multiplot
