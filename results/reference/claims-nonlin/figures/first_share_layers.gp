# written by gatelab: edit freely, then redraw with
#   cd results/reference/claims-nonlin/figures && gnuplot first_share_layers.gp
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
if (!exists('gatelab_out')) gatelab_out = 'first_share_layers.'.gatelab_fmt
set output gatelab_out
set datafile missing 'NaN'
set grid
set key outside right top
set title 'First-token attention share per layer (last probe); mean over seeds, error bars min..max'
set xlabel 'layer'
set ylabel 'first-token share'
set style data histograms
set style histogram errorbars lw 1 gap 1
set style fill solid 0.85 border -1
set grid noxtics ytics
set yrange [0:*]
set offsets 0, 0, graph 0.05, 0
plot 'first_share_layers.dat' using 2:3:4:xtic(1) lc rgb '#0072B2' title 'baseline', \
     '' using 5:6:7 lc rgb '#D55E00' title 'g1-add-id', \
     '' using 8:9:10 lc rgb '#009E73' title 'g1-const', \
     '' using 11:12:13 lc rgb '#CC79A7' title 'g1-elem', \
     '' using 14:15:16 lc rgb '#E69F00' title 'g1-ns', \
     '' using 17:18:19 lc rgb '#000000' title 'sdpa-rmsnorm', \
     '' using 20:21:22 lc rgb '#0072B2' fs pattern 2 border -1 title 'sdpa-silu', \
     0.0594268397 with lines lt -1 dt 2 lw 2 title 'uniform (T=64)'
