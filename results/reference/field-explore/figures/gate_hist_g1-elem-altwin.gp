# written by gatelab: edit freely, then redraw with
#   cd results/reference/field-explore/figures && gnuplot gate_hist_g1-elem-altwin.gp
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
if (!exists('gatelab_out')) gatelab_out = 'gate_hist_g1-elem-altwin.'.gatelab_fmt
set output gatelab_out
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'gate score'
set logscale y
set offsets 0, 0, graph 0.05, 0
set tmargin 3
set label 99 'Gate scores per layer: g1-elem-altwin seed 1 (step 1500)' at screen 0.5, screen 0.965 center front
set ylabel 'fraction of scores (log scale)'
plot 'gate_hist_g1-elem-altwin.dat' index 0 using 1:2 with histeps lw 2 lc rgb '#0072B2' dt 1 title 'layer 0', \
     'gate_hist_g1-elem-altwin.dat' index 1 using 1:2 with histeps lw 2 lc rgb '#D55E00' dt 2 title 'layer 1'
