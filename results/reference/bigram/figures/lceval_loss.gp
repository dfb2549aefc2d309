# written by gatelab: edit freely, then redraw with
#   cd results/reference/bigram/figures && gnuplot lceval_loss.gp
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,540 noenhanced font 'sans,11'
} else {
    set terminal png size 900,540 noenhanced
}
set output 'lceval_loss.png'
set datafile missing 'NaN'
set grid
set key outside right top
set xlabel 'eval length (tokens)'
set offsets 0, 0, graph 0.05, graph 0.05
set multiplot layout 2,1 title 'val loss against eval length; mean over seeds; key runs; all runs in the tables'
set ylabel 'val loss, plain RoPE'
plot 'lceval_loss.dat' index 0 using 1:2 with lines lw 2 lt 1 title 'baseline', \
     'lceval_loss.dat' index 2 using 1:2 with lines lw 2 lt 2 title 'baseline-lr2x', \
     'lceval_loss.dat' index 4 using 1:2 with lines lw 2 lt 3 title 'baseline-lr4x', \
     'lceval_loss.dat' index 6 using 1:2 with lines lw 2 lt 4 title 'baseline-lr8x', \
     'lceval_loss.dat' index 8 using 1:2 with lines lw 2 lt 9 title 'g1-elem', \
     'lceval_loss.dat' index 10 using 1:2 with lines lw 2 lt 10 title 'g1-elem-lr2x', \
     'lceval_loss.dat' index 12 using 1:2 with lines lw 2 lt 11 title 'g1-elem-lr4x', \
     'lceval_loss.dat' index 14 using 1:2 with lines lw 2 lt 12 title 'g1-elem-lr8x', \
     'lceval_loss.dat' index 16 using 1:2 with lines lw 2 lt 13 title 'g1-head', \
     'lceval_loss.dat' index 18 using 1:2 with lines lw 2 lt 14 title 'g1-head-lr2x', \
     'lceval_loss.dat' index 20 using 1:2 with lines lw 2 lt 15 title 'g1-head-lr4x', \
     'lceval_loss.dat' index 22 using 1:2 with lines lw 2 lt 16 title 'g1-head-lr8x'
set ylabel 'val loss, YaRN'
plot 'lceval_loss.dat' index 1 using 1:2 with lines lw 2 lt 1 title 'baseline', \
     'lceval_loss.dat' index 3 using 1:2 with lines lw 2 lt 2 title 'baseline-lr2x', \
     'lceval_loss.dat' index 5 using 1:2 with lines lw 2 lt 3 title 'baseline-lr4x', \
     'lceval_loss.dat' index 7 using 1:2 with lines lw 2 lt 4 title 'baseline-lr8x', \
     'lceval_loss.dat' index 9 using 1:2 with lines lw 2 lt 9 title 'g1-elem', \
     'lceval_loss.dat' index 11 using 1:2 with lines lw 2 lt 10 title 'g1-elem-lr2x', \
     'lceval_loss.dat' index 13 using 1:2 with lines lw 2 lt 11 title 'g1-elem-lr4x', \
     'lceval_loss.dat' index 15 using 1:2 with lines lw 2 lt 12 title 'g1-elem-lr8x', \
     'lceval_loss.dat' index 17 using 1:2 with lines lw 2 lt 13 title 'g1-head', \
     'lceval_loss.dat' index 19 using 1:2 with lines lw 2 lt 14 title 'g1-head-lr2x', \
     'lceval_loss.dat' index 21 using 1:2 with lines lw 2 lt 15 title 'g1-head-lr4x', \
     'lceval_loss.dat' index 23 using 1:2 with lines lw 2 lt 16 title 'g1-head-lr8x'
unset multiplot
