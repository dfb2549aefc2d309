# written by gatelab: edit freely, then redraw with
#   cd /work/runs/bigram_report/figures && gnuplot lceval_loss.gp
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,800 noenhanced font 'sans,11'
} else {
    set terminal png size 900,800 noenhanced
}
if (!exists('gatelab_out')) gatelab_out = 'lceval_loss.png'
set output gatelab_out
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'eval length (tokens)'
set offsets 0, 0, graph 0.05, graph 0.05
set multiplot
set label 99 'val loss against eval length; mean over seeds' at screen 0.5, screen 0.9698 center front
set origin 0.0000, 0.4698
set size 1.0000, 0.4698
set ylabel 'val loss, plain RoPE'
plot 'lceval_loss.dat' index 0 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'lceval_loss.dat' index 2 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-elem', \
     'lceval_loss.dat' index 4 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-head'
unset label 99
set origin 0.0000, 0.0000
set size 1.0000, 0.4698
set ylabel 'val loss, YaRN'
plot 'lceval_loss.dat' index 1 using 1:2 with lines lw 2 lc rgb '#0072B2' dt 1 title 'baseline', \
     'lceval_loss.dat' index 3 using 1:2 with lines lw 2 lc rgb '#D55E00' dt 2 title 'g1-elem', \
     'lceval_loss.dat' index 5 using 1:2 with lines lw 2 lc rgb '#009E73' dt 3 title 'g1-head'
unset multiplot
