# written by gatelab: edit freely, then redraw with
#   cd results/reference/field-explore/figures && gnuplot first_share_layers.gp
# (STEM.png; -e "gatelab_fmt='svg'" or 'pdf' draws STEM.svg or STEM.pdf)
if (!exists('gatelab_fmt')) gatelab_fmt = 'png'
if (gatelab_fmt eq 'svg') {
    set terminal svg size 1600,640 dynamic noenhanced font 'sans,11'
} else { if (gatelab_fmt eq 'pdf') {
    set terminal pdfcairo size 16.6667 in,6.66667 in noenhanced font 'sans,11'
} else { if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 1600,640 noenhanced font 'sans,11'
} else {
    set terminal png size 1600,640 noenhanced
} } }
if (!exists('gatelab_out')) gatelab_out = 'first_share_layers.'.gatelab_fmt
set output gatelab_out
set datafile missing 'NaN'
set grid
set key outside right top
set title 'First-token attention share per layer (last probe); mean over seeds, error bars min..max'
set xlabel 'run'
set ylabel 'first-token share'
set style data histograms
set style histogram errorbars lw 1 gap 1
set style fill solid 0.85 border -1
set grid noxtics ytics
set yrange [0:*]
set offsets 0, 0, graph 0.05, 0
set xtics rotate by -45 left nomirror
set bmargin 9
plot 'first_share_layers.dat' using 2:3:4:xtic(1) lc rgb '#0072B2' title 'layer 0', \
     '' using 5:6:7 lc rgb '#D55E00' title 'layer 1', \
     0.0594268397 with lines lt -1 dt 2 lw 2 title 'uniform (T=64)', \
     0.0486080944 with lines lt -1 dt 3 lw 2 title 'uniform (T=64, window 16 alternate)', \
     0.0377893491 with lines lt -1 dt 4 lw 2 title 'uniform (T=64, window 16)'
