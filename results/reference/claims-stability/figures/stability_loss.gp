# written by gatelab: edit freely, then redraw with
#   cd results/reference/claims-stability/figures && gnuplot stability_loss.gp
# (STEM.png; -e "gatelab_fmt='svg'" or 'pdf' draws STEM.svg or STEM.pdf)
if (!exists('gatelab_fmt')) gatelab_fmt = 'png'
if (gatelab_fmt eq 'svg') {
    set terminal svg size 1920,4000 dynamic noenhanced font 'sans,11'
} else { if (gatelab_fmt eq 'pdf') {
    set terminal pdfcairo size 20 in,41.6667 in noenhanced font 'sans,11'
} else { if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 1920,4000 noenhanced font 'sans,11'
} else {
    set terminal png size 1920,4000 noenhanced
} } }
if (!exists('gatelab_out')) gatelab_out = 'stability_loss.'.gatelab_fmt
set output gatelab_out
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'step'
set offsets 0, 0, graph 0.05, graph 0.05
set multiplot
set label 99 'training loss per seed, one panel per run; key runs; all runs in the table' at screen 0.5, screen 0.9859 center front
set origin 0.0000, 0.8747
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'baseline-lr1e-2, lr=0.01 (part 1 of 3)'
plot 'stability_loss.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1201', \
     'stability_loss.dat' index 1 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1202', \
     'stability_loss.dat' index 2 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1203', \
     'stability_loss.dat' index 3 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1204', \
     'stability_loss.dat' index 4 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1205', \
     'stability_loss.dat' index 5 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1206'
unset label 99
set origin 0.3333, 0.8747
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'baseline-lr1e-2, lr=0.01 (part 2 of 3)'
plot 'stability_loss.dat' index 6 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1207', \
     'stability_loss.dat' index 7 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1208', \
     'stability_loss.dat' index 8 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1209', \
     'stability_loss.dat' index 9 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1210', \
     'stability_loss.dat' index 10 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1211', \
     'stability_loss.dat' index 11 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1212'
set origin 0.6667, 0.8747
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'baseline-lr1e-2, lr=0.01 (part 3 of 3)'
plot 'stability_loss.dat' index 12 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1213', \
     'stability_loss.dat' index 13 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1214', \
     'stability_loss.dat' index 14 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1215'
set origin 0.0000, 0.7775
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'g1-elem-lr1e-2, lr=0.01 (part 1 of 3)'
plot 'stability_loss.dat' index 15 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1201', \
     'stability_loss.dat' index 16 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1202', \
     'stability_loss.dat' index 17 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1203', \
     'stability_loss.dat' index 18 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1204', \
     'stability_loss.dat' index 19 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1205', \
     'stability_loss.dat' index 20 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1206'
set origin 0.3333, 0.7775
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'g1-elem-lr1e-2, lr=0.01 (part 2 of 3)'
plot 'stability_loss.dat' index 21 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1207', \
     'stability_loss.dat' index 22 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1208', \
     'stability_loss.dat' index 23 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1209', \
     'stability_loss.dat' index 24 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1210', \
     'stability_loss.dat' index 25 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1211', \
     'stability_loss.dat' index 26 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1212'
set origin 0.6667, 0.7775
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'g1-elem-lr1e-2, lr=0.01 (part 3 of 3)'
plot 'stability_loss.dat' index 27 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1213', \
     'stability_loss.dat' index 28 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1214', \
     'stability_loss.dat' index 29 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1215'
set origin 0.0000, 0.6803
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'baseline-lr3.16e-2, lr=0.0316 (part 1 of 3)'
plot 'stability_loss.dat' index 30 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1201', \
     'stability_loss.dat' index 31 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1202', \
     'stability_loss.dat' index 32 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1203', \
     'stability_loss.dat' index 33 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1204', \
     'stability_loss.dat' index 34 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1205', \
     'stability_loss.dat' index 35 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1206'
set origin 0.3333, 0.6803
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'baseline-lr3.16e-2, lr=0.0316 (part 2 of 3)'
plot 'stability_loss.dat' index 36 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1207', \
     'stability_loss.dat' index 37 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1208', \
     'stability_loss.dat' index 38 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1209', \
     'stability_loss.dat' index 39 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1210', \
     'stability_loss.dat' index 40 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1211', \
     'stability_loss.dat' index 41 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1212'
set origin 0.6667, 0.6803
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'baseline-lr3.16e-2, lr=0.0316 (part 3 of 3)'
plot 'stability_loss.dat' index 42 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1213', \
     'stability_loss.dat' index 43 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1214', \
     'stability_loss.dat' index 44 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1215'
set origin 0.0000, 0.5831
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'g1-elem-lr3.16e-2, lr=0.0316 (part 1 of 3)'
plot 'stability_loss.dat' index 45 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1201', \
     'stability_loss.dat' index 46 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1202', \
     'stability_loss.dat' index 47 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1203', \
     'stability_loss.dat' index 48 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1204', \
     'stability_loss.dat' index 49 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1205', \
     'stability_loss.dat' index 50 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1206'
set origin 0.3333, 0.5831
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'g1-elem-lr3.16e-2, lr=0.0316 (part 2 of 3)'
plot 'stability_loss.dat' index 51 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1207', \
     'stability_loss.dat' index 52 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1208', \
     'stability_loss.dat' index 53 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1209', \
     'stability_loss.dat' index 54 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1210', \
     'stability_loss.dat' index 55 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1211', \
     'stability_loss.dat' index 56 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1212'
set origin 0.6667, 0.5831
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'g1-elem-lr3.16e-2, lr=0.0316 (part 3 of 3)'
plot 'stability_loss.dat' index 57 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1213', \
     'stability_loss.dat' index 58 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1214', \
     'stability_loss.dat' index 59 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1215'
set origin 0.0000, 0.4859
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'baseline-lr1e-1, lr=0.1 (part 1 of 3)'
plot 'stability_loss.dat' index 60 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1201', \
     'stability_loss.dat' index 61 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1202', \
     'stability_loss.dat' index 62 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1203', \
     'stability_loss.dat' index 63 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1204', \
     'stability_loss.dat' index 64 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1205', \
     'stability_loss.dat' index 65 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1206'
set origin 0.3333, 0.4859
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'baseline-lr1e-1, lr=0.1 (part 2 of 3)'
plot 'stability_loss.dat' index 66 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1207', \
     'stability_loss.dat' index 67 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1208', \
     'stability_loss.dat' index 68 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1209', \
     'stability_loss.dat' index 69 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1210', \
     'stability_loss.dat' index 70 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1211', \
     'stability_loss.dat' index 71 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1212'
set origin 0.6667, 0.4859
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'baseline-lr1e-1, lr=0.1 (part 3 of 3)'
plot 'stability_loss.dat' index 72 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1213', \
     'stability_loss.dat' index 73 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1214', \
     'stability_loss.dat' index 74 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1215'
set origin 0.0000, 0.3888
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'g1-elem-lr1e-1, lr=0.1 (part 1 of 3)'
plot 'stability_loss.dat' index 75 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1201', \
     'stability_loss.dat' index 76 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1202', \
     'stability_loss.dat' index 77 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1203', \
     'stability_loss.dat' index 78 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1204', \
     'stability_loss.dat' index 79 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1205', \
     'stability_loss.dat' index 80 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1206'
set origin 0.3333, 0.3888
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'g1-elem-lr1e-1, lr=0.1 (part 2 of 3)'
plot 'stability_loss.dat' index 81 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1207', \
     'stability_loss.dat' index 82 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1208', \
     'stability_loss.dat' index 83 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1209', \
     'stability_loss.dat' index 84 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1210', \
     'stability_loss.dat' index 85 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1211', \
     'stability_loss.dat' index 86 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1212'
set origin 0.6667, 0.3888
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'g1-elem-lr1e-1, lr=0.1 (part 3 of 3)'
plot 'stability_loss.dat' index 87 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1213', \
     'stability_loss.dat' index 88 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1214', \
     'stability_loss.dat' index 89 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1215'
set origin 0.0000, 0.2916
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'baseline-lr3.16e-1, lr=0.316 (part 1 of 3)'
plot 'stability_loss.dat' index 90 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1201', \
     'stability_loss.dat' index 91 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1202', \
     'stability_loss.dat' index 92 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1203', \
     'stability_loss.dat' index 93 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1204', \
     'stability_loss.dat' index 94 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1205', \
     'stability_loss.dat' index 95 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1206'
set origin 0.3333, 0.2916
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'baseline-lr3.16e-1, lr=0.316 (part 2 of 3)'
plot 'stability_loss.dat' index 96 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1207', \
     'stability_loss.dat' index 97 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1208', \
     'stability_loss.dat' index 98 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1209', \
     'stability_loss.dat' index 99 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1210', \
     'stability_loss.dat' index 100 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1211', \
     'stability_loss.dat' index 101 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1212'
set origin 0.6667, 0.2916
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'baseline-lr3.16e-1, lr=0.316 (part 3 of 3)'
plot 'stability_loss.dat' index 102 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1213', \
     'stability_loss.dat' index 103 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1214', \
     'stability_loss.dat' index 104 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1215'
set origin 0.0000, 0.1944
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'g1-elem-lr3.16e-1, lr=0.316 (part 1 of 3)'
plot 'stability_loss.dat' index 105 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1201', \
     'stability_loss.dat' index 106 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1202', \
     'stability_loss.dat' index 107 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1203', \
     'stability_loss.dat' index 108 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1204', \
     'stability_loss.dat' index 109 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1205', \
     'stability_loss.dat' index 110 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1206'
set origin 0.3333, 0.1944
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'g1-elem-lr3.16e-1, lr=0.316 (part 2 of 3)'
plot 'stability_loss.dat' index 111 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1207', \
     'stability_loss.dat' index 112 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1208', \
     'stability_loss.dat' index 113 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1209', \
     'stability_loss.dat' index 114 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1210', \
     'stability_loss.dat' index 115 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1211', \
     'stability_loss.dat' index 116 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1212'
set origin 0.6667, 0.1944
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'g1-elem-lr3.16e-1, lr=0.316 (part 3 of 3)'
plot 'stability_loss.dat' index 117 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1213', \
     'stability_loss.dat' index 118 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1214', \
     'stability_loss.dat' index 119 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1215'
set origin 0.0000, 0.0972
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'baseline-lr1, lr=1 (part 1 of 3)'
plot 'stability_loss.dat' index 120 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1201', \
     'stability_loss.dat' index 121 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1202', \
     'stability_loss.dat' index 122 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1203', \
     'stability_loss.dat' index 123 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1204', \
     'stability_loss.dat' index 124 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1205', \
     'stability_loss.dat' index 125 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1206'
set origin 0.3333, 0.0972
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'baseline-lr1, lr=1 (part 2 of 3)'
plot 'stability_loss.dat' index 126 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1207', \
     'stability_loss.dat' index 127 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1208', \
     'stability_loss.dat' index 128 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1209', \
     'stability_loss.dat' index 129 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1210', \
     'stability_loss.dat' index 130 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1211', \
     'stability_loss.dat' index 131 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1212'
set origin 0.6667, 0.0972
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'baseline-lr1, lr=1 (part 3 of 3)'
plot 'stability_loss.dat' index 132 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1213', \
     'stability_loss.dat' index 133 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1214', \
     'stability_loss.dat' index 134 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1215'
set origin 0.0000, 0.0000
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'g1-elem-lr1, lr=1 (part 1 of 3)'
plot 'stability_loss.dat' index 135 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1201', \
     'stability_loss.dat' index 136 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1202', \
     'stability_loss.dat' index 137 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1203', \
     'stability_loss.dat' index 138 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1204', \
     'stability_loss.dat' index 139 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1205', \
     'stability_loss.dat' index 140 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1206'
set origin 0.3333, 0.0000
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'g1-elem-lr1, lr=1 (part 2 of 3)'
plot 'stability_loss.dat' index 141 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1207', \
     'stability_loss.dat' index 142 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1208', \
     'stability_loss.dat' index 143 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1209', \
     'stability_loss.dat' index 144 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 's1210', \
     'stability_loss.dat' index 145 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 's1211', \
     'stability_loss.dat' index 146 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 's1212'
set origin 0.6667, 0.0000
set size 0.3333, 0.0972
set ylabel 'training loss'
set title 'g1-elem-lr1, lr=1 (part 3 of 3)'
plot 'stability_loss.dat' index 147 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 's1213', \
     'stability_loss.dat' index 148 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 's1214', \
     'stability_loss.dat' index 149 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 's1215'
unset multiplot
