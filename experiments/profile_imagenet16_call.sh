#!/bin/bash
# One device call (an H200): the profile agreement re-measurements (100 throughput-stratified
# networks at 16x16 and at 32x32, fp16 and fp32, with the recording settings), then the TSS 16x16
# profile for the time left (BUDGET_S seconds from the start). Writes one archive, $OUT/w40.tgz.
# Usage on the device: bash experiments/profile_imagenet16_call.sh  (AGREE16_S, AGREE32_S, SKIP16, SKIP32, BUDGET_S;
# SKIP16=1 SKIP32=1 leaves out the agreement step once it has run)
W=/tmp/w40; mkdir -p $W
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $W/board.txt
if ! grep -q H200 $W/board.txt; then echo "not an H200: nothing measured"; cat $W/board.txt; exit 3; fi
E="--energy-repeats 1 --energy-window-s 0.28 --energy-warmup-s 0"
# agree DATASET NAME SECONDS: the stratified re-measurement of the recorded rows at DATASET's input
agree() { PYTHONPATH=. timeout 190 python3 experiments/profile_tss_space.py remeasure 100 --dataset $1 --precisions fp16,fp32 --stratify --seed 0 $E --time-limit-s $3 --out $W/$2 > $W/$2.log 2>&1; }
[ -z "$SKIP16" ] && agree ImageNet16-120 agree16 ${AGREE16_S:-150}
[ -z "$SKIP32" ] && agree cifar10 agree32 ${AGREE32_S:-130}
LEFT=$((${BUDGET_S:-430} - SECONDS)); [ $LEFT -gt 60 ] && PYTHONPATH=. timeout $((LEFT + 20)) python3 experiments/profile_tss_space.py measure --dataset ImageNet16-120 --fp32 --time-limit-s $((LEFT - 40)) --chunk-dir $W/c0 $E --builder process --builders 3 --reference 10 --verbose > $W/measure.log 2>&1
nvidia-smi --query-gpu=name,uuid,clocks.sm,power.draw,temperature.gpu --format=csv >> $W/board.txt
cd /tmp && tar czf $OUT/w40.tgz w40
tail -n 3 $W/*.log
