# written by gatelab: edit freely, then redraw with
#   cd results/reference/claims-stability/figures && gnuplot lr_loss.gp
# (STEM.png; -e "gatelab_fmt='svg'" or 'pdf' draws STEM.svg or STEM.pdf)
if (!exists('gatelab_fmt')) gatelab_fmt = 'png'
if (gatelab_fmt eq 'svg') {
    set terminal svg size 900,540 dynamic noenhanced font 'sans,11'
} else { if (gatelab_fmt eq 'pdf') {
    set terminal pdfcairo size 9.375 in,5.625 in noenhanced font 'sans,11'
} else { if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,540 noenhanced font 'sans,11'
} else {
    set terminal png size 900,540 noenhanced
} } }
if (!exists('gatelab_out')) gatelab_out = 'lr_loss.'.gatelab_fmt
set output gatelab_out
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'log10 learning rate'
set offsets 0, 0, graph 0.05, graph 0.05
set tmargin 3
set label 99 'Final val loss against learning rate (mean over seeds; diverged runs left out)' at screen 0.5, screen 0.965 center front
set ylabel 'final val loss'
plot 'lr_loss.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'lr_loss.dat' index 1 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-elem', \
     'lr_loss.dat' index 2 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'qk-norm'
