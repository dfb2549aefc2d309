# written by gatelab: edit freely, then redraw with
#   cd results/reference/field-explore/figures && gnuplot mech_bos_fattn.gp
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
if (!exists('gatelab_out')) gatelab_out = 'mech_bos_fattn.'.gatelab_fmt
set output gatelab_out
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'log10 BOS activation (mean over layers of max |h_0|)'
set yrange [0:*]
set offsets 0, 0, graph 0.05, 0
set tmargin 3
set label 99 'F-Attn against BOS activation (one point per run)' at screen 0.5, screen 0.965 center front
set ylabel 'F-Attn'
plot 'mech_bos_fattn.dat' index 0 using 1:2 with points pt 7 ps 1.2 lc rgb '#0072B2' title 'baseline (brown)', \
     'mech_bos_fattn.dat' index 0 using 1:2 with points pt 6 ps 1.2 lc rgb '#202020' notitle, \
     'mech_bos_fattn.dat' index 1 using 1:2 with points pt 5 ps 1.2 lc rgb '#D55E00' title 'other, no gate (brown)', \
     'mech_bos_fattn.dat' index 1 using 1:2 with points pt 4 ps 1.2 lc rgb '#202020' notitle, \
     'mech_bos_fattn.dat' index 2 using 1:2 with points pt 9 ps 1.2 lc rgb '#009E73' title 'gated (brown)', \
     'mech_bos_fattn.dat' index 2 using 1:2 with points pt 8 ps 1.2 lc rgb '#202020' notitle, \
     'mech_bos_fattn.dat' index 3 using 1:2 with points pt 11 ps 1.2 lc rgb '#CC79A7' title 'another architecture (brown)', \
     'mech_bos_fattn.dat' index 3 using 1:2 with points pt 10 ps 1.2 lc rgb '#202020' notitle
