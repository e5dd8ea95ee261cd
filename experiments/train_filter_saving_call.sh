#!/bin/bash
# One device call: what the filter saves in real GPU work (experiments/train_filter_saving.py on the
# board: searches that train every evaluated network, default filter against --filter none).
# The device's python has no optuna or nats_bench: their wheels (and their pure dependencies) are
# carried in .whl/ (`pip download optuna nats_bench --only-binary=:all: --python-version 3.12 -d .whl`,
# numpy removed) and installed into /tmp/site for this call only. Runs resume from
# runs/train_filter_saving_gpu (carried, or left by an earlier call on the same machine). Clocks and
# board settings are left as found (the search's default --dvfs never locks a clock).
# Usage on the device: [SEEDS=100,...] BUDGET_S=560 bash experiments/train_filter_saving_call.sh
B=${BUDGET_S:-560}
mkdir -p $OUT/tfs
CP=$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
WHEELS=$(ls .whl/*.whl | grep -E -- "-py[23]|-$CP-")  # pure wheels and this python's
python3 -m pip install --no-deps --no-index --quiet --target /tmp/site $WHEELS > $OUT/tfs/pip.txt 2>&1 \
  || { echo "pip failed"; tail -n 5 $OUT/tfs/pip.txt; exit 5; }
export PYTHONPATH=/tmp/site
timeout $((B - SECONDS)) python3 experiments/train_filter_saving.py --out $OUT/tfs --runs runs/train_filter_saving_gpu \
  --seeds ${SEEDS:-100,101,102,103,104} > $OUT/tfs/log.txt 2>&1
echo "rc=$?"; tail -n 25 $OUT/tfs/log.txt
tar czf $OUT/tfs/runs.tgz runs/train_filter_saving_gpu
