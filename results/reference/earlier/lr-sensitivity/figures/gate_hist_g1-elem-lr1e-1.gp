# written by gatelab: edit freely, then redraw with
#   cd results/reference/lr-sensitivity/figures && gnuplot gate_hist_g1-elem-lr1e-1.gp
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,540 noenhanced font 'sans,11'
} else {
    set terminal png size 900,540 noenhanced
}
if (!exists('gatelab_out')) gatelab_out = 'gate_hist_g1-elem-lr1e-1.png'
set output gatelab_out
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'gate score'
set offsets 0, 0, graph 0.05, graph 0.05
set tmargin 3
set label 99 'Gate scores per layer: g1-elem-lr1e-1 seed 101 (step 1500)' at screen 0.5, screen 0.965 center front
set ylabel 'fraction of scores'
plot 'gate_hist_g1-elem-lr1e-1.dat' index 0 using 1:2 with histeps lw 2 lc rgb '#0072B2' dt 1 title 'layer 0', \
     'gate_hist_g1-elem-lr1e-1.dat' index 1 using 1:2 with histeps lw 2 lc rgb '#D55E00' dt 2 title 'layer 1'
