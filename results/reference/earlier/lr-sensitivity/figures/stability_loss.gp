# written by gatelab: edit freely, then redraw with
#   cd results/reference/lr-sensitivity/figures && gnuplot stability_loss.gp
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 1920,2800 noenhanced font 'sans,11'
} else {
    set terminal png size 1920,2800 noenhanced
}
if (!exists('gatelab_out')) gatelab_out = 'stability_loss.png'
set output gatelab_out
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'step'
set offsets 0, 0, graph 0.05, graph 0.05
set multiplot
set label 99 'training loss per seed, one panel per run; key runs; all runs in the table' at screen 0.5, screen 0.9842 center front
set origin 0.0000, 0.8301
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'baseline-lr1e-3, lr=0.001'
plot 'stability_loss.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 1 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 2 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
unset label 99
set origin 0.3333, 0.8301
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'g1-elem-lr1e-3, lr=0.001'
plot 'stability_loss.dat' index 3 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 4 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 5 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.6667, 0.8301
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'g1-head-lr1e-3, lr=0.001'
plot 'stability_loss.dat' index 6 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 7 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 8 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.0000, 0.6917
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'baseline-lr3.16e-3, lr=0.00316'
plot 'stability_loss.dat' index 9 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 10 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 11 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.3333, 0.6917
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'g1-elem-lr3.16e-3, lr=0.00316'
plot 'stability_loss.dat' index 12 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 13 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 14 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.6667, 0.6917
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'g1-head-lr3.16e-3, lr=0.00316'
plot 'stability_loss.dat' index 15 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 16 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 17 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.0000, 0.5534
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'baseline-lr1e-2, lr=0.01'
plot 'stability_loss.dat' index 18 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 19 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 20 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.3333, 0.5534
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'g1-elem-lr1e-2, lr=0.01'
plot 'stability_loss.dat' index 21 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 22 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 23 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.6667, 0.5534
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'g1-head-lr1e-2, lr=0.01'
plot 'stability_loss.dat' index 24 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 25 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 26 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.0000, 0.4150
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'baseline-lr3.16e-2, lr=0.0316'
plot 'stability_loss.dat' index 27 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 28 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 29 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.3333, 0.4150
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'g1-elem-lr3.16e-2, lr=0.0316'
plot 'stability_loss.dat' index 30 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 31 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 32 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.6667, 0.4150
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'g1-head-lr3.16e-2, lr=0.0316'
plot 'stability_loss.dat' index 33 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 34 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 35 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.0000, 0.2767
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'baseline-lr1e-1, lr=0.1'
plot 'stability_loss.dat' index 36 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 37 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 38 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.3333, 0.2767
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'g1-elem-lr1e-1, lr=0.1'
plot 'stability_loss.dat' index 39 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 40 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 41 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.6667, 0.2767
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'g1-head-lr1e-1, lr=0.1'
plot 'stability_loss.dat' index 42 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 43 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 44 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.0000, 0.1383
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'baseline-lr3.16e-1, lr=0.316'
plot 'stability_loss.dat' index 45 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 46 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 47 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.3333, 0.1383
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'g1-elem-lr3.16e-1, lr=0.316'
plot 'stability_loss.dat' index 48 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 49 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 50 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.6667, 0.1383
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'g1-head-lr3.16e-1, lr=0.316'
plot 'stability_loss.dat' index 51 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 52 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 53 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.0000, -0.0000
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'baseline-lr1, lr=1'
plot 'stability_loss.dat' index 54 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 55 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 56 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.3333, -0.0000
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'g1-elem-lr1, lr=1'
plot 'stability_loss.dat' index 57 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 58 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 59 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
set origin 0.6667, -0.0000
set size 0.3333, 0.1383
set ylabel 'training loss'
set title 'g1-head-lr1, lr=1'
plot 'stability_loss.dat' index 60 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's101', \
     'stability_loss.dat' index 61 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's102', \
     'stability_loss.dat' index 62 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's103'
unset multiplot
