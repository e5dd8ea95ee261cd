#!/bin/bash
# One device call (an H200): the TSS 16x16 profile for BUDGET_S seconds in all, after the agreement
# re-measurements that AGREE names ("16", "32" or "16 32": 100 throughput-stratified networks at
# 16x16 or at 32x32, fp16 and fp32, with the recording settings; results/profile_agreement/h200_stratified).
# A later call on the same (warm) machine first merges the chunks its earlier calls measured there,
# so it resumes after them. Writes $OUT/c0/ (this call's chunk and reference CSVs, written row by row,
# so they come back even if the call is cut off at its limit), $OUT/agree*/ and agree*.log (the agreement
# re-measurements), $OUT/measure.log, $OUT/board_before.txt and one archive, $OUT/w40.tgz (the rest).
# Everything but the archive is written straight to $OUT, so it comes back whatever the call's end.
# Usage on the device: [AGREE="16 32"] [AGREE16_S=150] [AGREE32_S=150] BUDGET_S=540 bash experiments/profile_imagenet16_call.sh
W=/tmp/w40
if [ -d $W ]; then mv $W $W.$(date +%s%N); fi
mkdir -p $W
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $W/board.txt
if ! grep -q H200 $W/board.txt; then echo "not an H200: nothing measured"; cat $W/board.txt; exit 3; fi
cp $W/board.txt $OUT/board_before.txt
EARLIER=$(ls $W.*/c0/chunk_*.csv 2> /dev/null)
[ -n "$EARLIER" ] && PYTHONPATH=. python3 experiments/profile_tss_space.py merge $EARLIER > $W/merge.log 2>&1
E="--energy-repeats 1 --energy-window-s 0.28 --energy-warmup-s 0"
# agree DATASET NAME SECONDS: the stratified re-measurement of the recorded rows at DATASET's input
agree() { PYTHONPATH=. timeout 190 python3 experiments/profile_tss_space.py remeasure 100 --dataset $1 --precisions fp16,fp32 --stratify --seed 0 $E --time-limit-s $3 --out $OUT/$2 > $OUT/$2.log 2>&1; }
for a in $AGREE; do
  case $a in
    16) agree ImageNet16-120 agree16 ${AGREE16_S:-150} ;;
    32) agree cifar10 agree32 ${AGREE32_S:-150} ;;
    *) echo "AGREE: expected 16 and/or 32, got $a"; exit 2 ;;
  esac
done
LEFT=$((${BUDGET_S:-430} - SECONDS)); [ $LEFT -gt 60 ] && PYTHONPATH=. timeout $((LEFT + 20)) python3 experiments/profile_tss_space.py measure --dataset ImageNet16-120 --fp32 --time-limit-s $((LEFT - 40)) --chunk-dir $OUT/c0 $E --builder process --builders 3 --reference 10 --reference-again --verbose > $OUT/measure.log 2>&1
mkdir -p $W/c0 && cp $OUT/c0/* $W/c0/ 2> /dev/null  # for a later call on this machine to merge
nvidia-smi --query-gpu=name,uuid,clocks.sm,power.draw,temperature.gpu --format=csv >> $W/board.txt
cd /tmp && tar czf $OUT/w40.tgz --exclude=w40/c0 w40
tail -n 3 $(ls $OUT/*.log $W/*.log 2> /dev/null) < /dev/null
