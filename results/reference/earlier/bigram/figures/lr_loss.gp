# written by gatelab: edit freely, then redraw with
#   cd /work/runs/bigram_report/figures && gnuplot lr_loss.gp
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 1920,540 noenhanced font 'sans,11'
} else {
    set terminal png size 1920,540 noenhanced
}
if (!exists('gatelab_out')) gatelab_out = 'lr_loss.png'
set output gatelab_out
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'log10 learning rate'
set offsets 0, 0, graph 0.05, graph 0.05
set multiplot
set label 99 'Final val loss against learning rate (mean over seeds; diverged runs left out)' at screen 0.5, screen 0.9600 center front
set origin 0.0000, 0.0000
set size 0.3333, 0.9200
set ylabel 'final val loss'
set title '(part 1 of 3)'
plot 'lr_loss.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'lr_loss.dat' index 1 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'clipped-softmax', \
     'lr_loss.dat' index 2 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'diff-attn', \
     'lr_loss.dat' index 3 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'fox', \
     'lr_loss.dat' index 4 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-add-id', \
     'lr_loss.dat' index 5 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'g1-add-silu'
unset label 99
set origin 0.3333, 0.0000
set size 0.3333, 0.9200
set ylabel 'final val loss'
set title '(part 2 of 3)'
plot 'lr_loss.dat' index 6 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'g1-const', \
     'lr_loss.dat' index 7 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-elem', \
     'lr_loss.dat' index 8 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-elem-matched', \
     'lr_loss.dat' index 9 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g1-head', \
     'lr_loss.dat' index 10 using 1:2 with lines lw 2 lc rgb '#E69F00' dt 5 title 'g1-mult-silu', \
     'lr_loss.dat' index 11 using 1:2 with lines lw 2 lc rgb '#000000' dt (18,6,3,6,3,6) title 'g1-ns'
set origin 0.6667, 0.0000
set size 0.3333, 0.9200
set ylabel 'final val loss'
set title '(part 3 of 3)'
plot 'lr_loss.dat' index 12 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'g1-shared', \
     'lr_loss.dat' index 13 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g2-elem', \
     'lr_loss.dat' index 14 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g2-head', \
     'lr_loss.dat' index 15 using 1:2 with lines lw 2 lc rgb '#CC79A7' dt 4 title 'g2-shared'
unset multiplot
