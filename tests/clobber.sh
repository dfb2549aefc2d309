#!/usr/bin/env bash
# clobber.sh: data loss and clobbering. Every command that
# writes overwrites only a file of its own kind that it was asked to
# overwrite, or a new path; anything else (a run file, a text file, an
# HDF5 file of another schema, a directory, a FIFO, a symbolic link) is
# refused with one line, exit 2, and left byte for byte as it was.
#   tests/clobber.sh SRCDIR GATELAB
. "$(dirname "$0")/shell_test.sh" clobber "$@"
trap 'rm -rf "$W"' EXIT

# refused CMD...: exit 2, one line on stderr; the victims are checked by the caller
refused() {
    "$@" >out.txt 2>err.txt
    local rc=$?
    [ $rc -eq 2 ] || bad "exit $rc, want 2: $* ($(head -c 300 err.txt))"
    [ "$(wc -l <err.txt)" -eq 1 ] || bad "want one line on stderr: $*: $(cat err.txt)"
}
same() { cmp -s "$1" "$2" || bad "$1 was changed"; }

T="--config $S/experiments/tiny.ini --set steps=4 --set eval_every=2 --set ckpt_every=2 --quiet"
"$G" train $T --out run.h5 || { echo "setup: train failed"; exit 1; }
cp run.h5 run.orig
echo "precious notes" >notes.txt && cp notes.txt notes.orig
cp run.h5.ckpt other.h5 && cp other.h5 other.orig   # HDF5, not a run file
mkdir adir && mkfifo fifo

# heatmap --out: a run file, a text file, a foreign HDF5, a dir, a FIFO
for v in run.h5 notes.txt other.h5 adir fifo; do
    refused "$G" heatmap run.h5 --out "$v"
done
same run.h5 run.orig; same notes.txt notes.orig; same other.h5 other.orig
# its own kind, or a new path: fine (twice: the second overwrites a PNG)
"$G" heatmap run.h5 --out map.png >/dev/null || bad "heatmap to a new path"
"$G" heatmap run.h5 --out map.png >/dev/null || bad "heatmap over its own PNG"
# the figure is written in the format --out's extension names, that file
# only; any other extension refused in one line, writing nothing
[ -s map.png ] || bad "heatmap wrote no map.png"
[ ! -e map.svg ] && [ ! -e map.pdf ] || bad "heatmap --out map.png wrote map.svg or map.pdf"
"$G" heatmap run.h5 --out map.svg >/dev/null || bad "heatmap --out map.svg"
"$G" heatmap run.h5 --out map.pdf >/dev/null || bad "heatmap --out map.pdf"
head -c 5 map.svg | grep -q '<?xml' || bad "map.svg is not SVG"
head -c 5 map.pdf | grep -q '%PDF-' || bad "map.pdf is not PDF"
if command -v pdfinfo >/dev/null; then pdfinfo map.pdf >/dev/null 2>&1 || bad "pdfinfo refuses map.pdf"; fi
refused "$G" heatmap run.h5 --out map.jpg
[ ! -e map.jpg ] || bad "heatmap wrote map.jpg"
grep -q 'map.jpg' err.txt || bad "the refusal does not name map.jpg: $(cat err.txt)"
refused "$G" heatmap run.h5 --out fig.svg --range 1:0
refused "$G" heatmap run.h5 --out fig.svg --range -1:0 --log
# files of the other formats at the stem are the user's: never written
printf '%%PDF-1.4 a user PDF\n' >fig.pdf && cp fig.pdf fig.pdf.orig
printf '<?xml a user SVG\n' >fig.svg && cp fig.svg fig.svg.orig
"$G" heatmap run.h5 --out fig.png >/dev/null || bad "heatmap --out fig.png beside a user's fig.pdf"
same fig.pdf fig.pdf.orig; same fig.svg fig.svg.orig
cp notes.txt fig2.pdf
"$G" heatmap run.h5 --out fig2.png >/dev/null || bad "heatmap --out fig2.png beside a text fig2.pdf"
same fig2.pdf notes.orig
refused "$G" heatmap run.h5 --out fig2.pdf
same fig2.pdf notes.orig
# a link is refused, the link and its target stay as they were
ln -s notes.txt link.png
refused "$G" heatmap run.h5 --out link.png
[ -L link.png ] || bad "link.png is no longer a link"; same notes.txt notes.orig

# plot --out: a PNG path whose .dat sidecar is someone else's file
cp notes.txt fig.dat
refused "$G" plot loss run.h5 --out fig.png
same fig.dat notes.orig
refused "$G" plot loss run.h5 --out link.png
same notes.txt notes.orig

# report --out: a results.csv that is not ours
mkdir rep && cp notes.txt rep/results.csv
refused "$G" report . --out rep
same rep/results.csv notes.orig

# train --force: only over a run file, never through a link
for v in notes.txt other.h5 adir fifo; do
    refused "$G" train $T --force --out "$v"
done
same notes.txt notes.orig; same other.h5 other.orig
cp run.h5 target.h5 && cp run.h5 target.orig && ln -s target.h5 runlink.h5
refused "$G" train $T --force --out runlink.h5
refused "$G" train $T --resume --out runlink.h5
[ -L runlink.h5 ] || bad "runlink.h5 is no longer a link"; same target.h5 target.orig
"$G" train $T --force --out run.h5 || bad "train --force over its own run file"

# eval and intervene write into a run file: never through a link
refused "$G" eval runlink.h5 --lengths 32
refused "$G" intervene runlink.h5 bos-mean
same target.h5 target.orig

# a sweep leaves a foreign file where its run file goes alone
cat >one.sweep <<SW
[sweep]
preset = $S/experiments/tiny.ini
seeds = 1
set = steps=4
[run baseline]
variant = baseline
SW
mkdir sw && cp notes.txt sw/baseline_s1.h5
"$G" sweep one.sweep --out sw --jobs 1 --no-report >sweep.log 2>&1 && bad "sweep over a foreign file exited 0"
same sw/baseline_s1.h5 notes.orig
grep -q "is not a gatelab run file; refusing" sw/logs/*.log || bad "sweep log does not say why"

[ $fail -eq 0 ] && echo "clobber: PASS" && exit 0
exit 1
