#!/bin/bash
# One device call: the trainer benchmark (experiments/train_benchmark.py) for BUDGET_S seconds in all,
# resuming from the CSVs of earlier calls in RESUME (a folder carried to the device), stage by stage:
# a short smoke run first (SMOKE=1; the call stops there if it fails), then speed (plain loop, trainer,
# trainer without the CUDA graph, the graph alone in fp32, the trainer without channels_last), parity (digits, seeds 100-102), pack (6-epoch
# trainings by 1, 2 and 4 processes and the count choose_slots picks) and fidelity (100 networks of
# cells 0-999, one epoch each). Every row is
# appended to $OUT/gpu/*.csv as it finishes, so a call cut off at its limit returns what it measured;
# a later call with RESUME naming those CSVs skips them. Nothing on the board is changed.
# Usage on the device: [RESUME=path] [SMOKE=1] BUDGET_S=560 bash experiments/train_benchmark_call.sh
B=${BUDGET_S:-560}
G=$OUT/gpu
mkdir -p $G
[ -n "$RESUME" ] && cp "$RESUME"/*.csv $G/ 2> /dev/null
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,power.limit,power.draw,temperature.gpu --format=csv >> $G/board.txt
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" >> $G/board.txt 2>&1
# whether this build's channels_last padded average pooling has right gradients (pytorch/pytorch#188344)
python3 -c "from nasenergy.train.pool_layout import nhwc_avg_pool_backward_ok as ok; print('nhwc avg_pool backward ok:', ok('cuda'))" >> $G/board.txt 2>&1
if [ -n "$SMOKE" ]; then
  timeout 150 python3 experiments/train_benchmark.py --out /tmp/smoke.$$ --networks 2 --epochs 1 --images 4096 \
    --stages speed,pack,parity,fidelity --slots 1,2 --parity-seeds 100 --parity-epochs 2 --fidelity-networks 2 \
    --fidelity-images 4096 --fidelity-loops trainer > $G/smoke.txt 2>&1
  rc=$?; echo "smoke rc=$rc"; grep -v '^{' $G/smoke.txt | tail -n 30
  for f in /tmp/smoke.$$/*.csv; do echo "== $f"; cut -c1-220 $f; done
  [ $rc -eq 0 ] || exit 4
fi
stage() {
  LEFT=$((B - SECONDS)); [ $LEFT -gt 30 ] || { echo "$1: no time left"; return; }
  timeout $LEFT python3 experiments/train_benchmark.py --out $G --stages "$@" >> $G/log.txt 2>&1
  echo "$1 rc=$? at ${SECONDS}s"
}
stage speed --loops plain,trainer,trainer_eager,trainer_fp32,trainer_nchw
stage parity --parity-seeds 100,101,102
stage pack --epochs 6 --slots 1,2,4
stage fidelity --fidelity-networks 100 --fidelity-loops trainer
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader >> $G/board.txt
grep -v '^{' $G/log.txt | tail -n 20; wc -l $G/*.csv
