# written by gatelab: edit freely, then redraw with
#   cd results/reference/bigram/figures && gnuplot stability_loss.gp
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,540 noenhanced font 'sans,11'
} else {
    set terminal png size 900,540 noenhanced
}
set output 'stability_loss.png'
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'step'
set offsets 0, 0, graph 0.05, graph 0.05
set title 'training loss per learning rate; mean over seeds; key runs; all runs in the table'
set ylabel 'training loss'
plot 'stability_loss.dat' index 0 using 1:2 with lines lw 2 title 'baseline lr=0.01', \
     'stability_loss.dat' index 1 using 1:2 with lines lw 2 title 'g1-elem lr=0.01', \
     'stability_loss.dat' index 2 using 1:2 with lines lw 2 title 'g1-head lr=0.01', \
     'stability_loss.dat' index 3 using 1:2 with lines lw 2 title 'baseline-lr2x lr=0.02', \
     'stability_loss.dat' index 4 using 1:2 with lines lw 2 title 'g1-elem-lr2x lr=0.02', \
     'stability_loss.dat' index 5 using 1:2 with lines lw 2 title 'g1-head-lr2x lr=0.02', \
     'stability_loss.dat' index 6 using 1:2 with lines lw 2 title 'baseline-lr4x lr=0.04', \
     'stability_loss.dat' index 7 using 1:2 with lines lw 2 title 'g1-elem-lr4x lr=0.04', \
     'stability_loss.dat' index 8 using 1:2 with lines lw 2 title 'g1-head-lr4x lr=0.04', \
     'stability_loss.dat' index 9 using 1:2 with lines lw 2 title 'baseline-lr8x lr=0.08', \
     'stability_loss.dat' index 10 using 1:2 with lines lw 2 title 'g1-elem-lr8x lr=0.08', \
     'stability_loss.dat' index 11 using 1:2 with lines lw 2 title 'g1-head-lr8x lr=0.08'
