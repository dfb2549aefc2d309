# written by gatelab: edit freely, then redraw with
#   cd results/reference/confirm-bigram/figures && gnuplot mech_bos_fattn.gp
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,540 noenhanced font 'sans,11'
} else {
    set terminal png size 900,540 noenhanced
}
if (!exists('gatelab_out')) gatelab_out = 'mech_bos_fattn.png'
set output gatelab_out
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'log10 BOS activation (mean over layers of max |h_0|)'
set offsets 0, 0, graph 0.05, graph 0.05
set tmargin 3
set label 99 'F-Attn against BOS activation (one point per run)' at screen 0.5, screen 0.965 center front
set ylabel 'F-Attn'
plot 'mech_bos_fattn.dat' index 0 using 1:2 with points pt 7 ps 1.2 lc rgb '#0072B2' title 'no gate', \
     'mech_bos_fattn.dat' index 1 using 1:2 with points pt 5 ps 1.2 lc rgb '#D55E00' title 'gated'
