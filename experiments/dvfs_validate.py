"""Leave-one-out validations of the DVFS model on published measured clock sweeps.

1. Leave one workload out: for each GPU, each workload (or benchmark group) is held out in turn:
   the GPU is calibrated on the other workloads, the held-out one is seen only at its default
   (highest) clock, and the model's chosen clock is scored on its measured sweep (see
   `nasenergy.dvfs.validation`); the clock sensitivity from counters (compute share) against the
   power-fraction one it replaces.
2. Leave one GPU out: each GPU's workloads are predicted by the generic model built from the other
   GPUs' calibrations and what NVML would report about the held-out GPU
   (`nasenergy.dvfs.validation.leave_one_gpu_out`).

3. A power-capped card without a parameter set (the RTX A4000 sweep): the curve from the clock
   it held against the curve from the clock it was asked for.

Prints regrets with rank correlations (chosen against measured optimal clock) and the saving
agreement. Writes ``results/dvfs_validation/{per_workload.csv, summary.csv, leave_one_gpu_out.csv,
leave_one_gpu_out_summary.csv, saving_agreement.csv, capped_card.csv, README.md, regret_cdf.png,
clock_choice.png}``. The sweeps are read
in place from `nasenergy.paths.dvfs_data_dir()`.

    python experiments/dvfs_validate.py [--sets a100_sxm4_ttu v100_hkbu ...]
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

from nasenergy.dvfs.params import shipped_params
from nasenergy.dvfs.published import (CAPPED_SWEEP_POWER_LIMIT_W, SETS, load_capped_sweep)
from nasenergy.dvfs.validation import (CappedCardResult, GpuHoldOutResult, GpuSweeps, Summary,
                                       WorkloadResult, capped_card, leave_one_gpu_out,
                                       leave_one_group_out, summarise)
from nasenergy._cli import OneLineParser, run_main
from lib.dvfs_readme import readme
from lib.dvfs_tables import _fmt, gpu_out_summary, plot, saving_agreement, write_csv

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "dvfs_validation"


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS),
                    help="published sweep sets to validate on (default: all)")
    ap.add_argument("--out", type=Path, default=OUT, help="output folder")
    args = ap.parse_args(argv)
    def body() -> int | None:
        args.out.mkdir(parents=True, exist_ok=True)
        results: dict[str, list[WorkloadResult]] = {}
        summaries: list[Summary] = []
        for key in args.sets:
            ps = SETS[key]
            print(f"{key}: leave-one-out over {len(ps.load())} workloads", flush=True)
            res = leave_one_group_out(ps.load(), power_limit_w=ps.power_limit_w, gpu=ps.gpu)
            results[key] = res
            summaries += summarise(ps.gpu, res)
        all_rows = [r for res in results.values() for r in res]
        keys = [k for k, res in results.items() for _ in res]
        write_csv(args.out / "per_workload.csv", all_rows, WorkloadResult.columns(),
                  {"set": keys})
        write_csv(args.out / "summary.csv", summaries, Summary.columns())
        held: list[GpuHoldOutResult] = []
        if len(args.sets) >= 2:
            print("leave one GPU out: generic model", flush=True)
            held = leave_one_gpu_out([GpuSweeps(k, SETS[k].gpu, SETS[k].load(), SETS[k].power_limit_w)
                                      for k in args.sets])
            write_csv(args.out / "leave_one_gpu_out.csv", held, GpuHoldOutResult.columns())
            gs = gpu_out_summary(held)
            with (args.out / "leave_one_gpu_out_summary.csv").open("w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=list(gs[0]))
                w.writeheader()
                w.writerows({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()}
                            for r in gs)
        refs = [p for p in shipped_params().values() if p.provenance == "calibrated"]
        cap = load_capped_sweep()
        capped = capped_card(cap["requested_mhz"], cap["held_mhz"], cap["time_s"], cap["power_w"],
                             gpu="NVIDIA RTX A4000", workload="fp32_kernel",
                             power_limit_w=CAPPED_SWEEP_POWER_LIMIT_W, references=refs)
        write_csv(args.out / "capped_card.csv", capped, CappedCardResult.columns())
        agreement = saving_agreement(results)
        with (args.out / "saving_agreement.csv").open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(agreement[0]))
            w.writeheader()
            w.writerows({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()}
                        for r in agreement)
        plot(results, args.out)
        (args.out / "README.md").write_text(readme(results, summaries, held,
                                                   {k: SETS[k].load() for k in args.sets},
                                                   capped))
        print("leave one workload out (regret: median, worst; rho = rank correlation of the "
              "chosen and the measured optimal clock):")
        for s in summaries:
            rho = "n/a" if math.isnan(s.rank_corr_clock) else f"{s.rank_corr_clock:+.2f}"
            print(f"  {s.gpu[:30]:30s} [{s.subset}] {s.variant:48s} median {_fmt(s.regret_median)} "
                  f"worst {_fmt(s.regret_max)} rho {rho}")
        print("predicted vs measured saving at the chosen clock (shipped variant, medians):")
        for r in agreement:
            print(f"  {str(r['gpu'])[:30]:30s} predicted {_fmt(float(r['predicted_saving_median']))} "
                  f"measured {_fmt(float(r['measured_saving_median']))} bias "
                  f"{100 * float(r['bias_point_median']):+.1f} pt")
        print("power-capped card without a set (generic):")
        for c in capped:
            print(f"  {c.gpu} from the {c.start}: {c.chosen_clock_mhz:.0f} MHz (best "
                  f"{c.true_best_clock_mhz:.0f}), regret {_fmt(c.regret_frac)}, saving predicted "
                  f"{_fmt(c.predicted_saving_frac)} measured {_fmt(c.measured_saving_at_choice_frac)}")
        if held:
            print("leave one GPU out, generic model (regret: median, worst):")
            for r in gpu_out_summary(held):
                rho = float(r["rank_corr_clock"])
                rho2 = float(r["two_point_rank_corr_clock"])
                print(f"  {str(r['gpu'])[:30]:30s} [{r['subset']}] median {_fmt(float(r['regret_median']))} worst "
                      f"{_fmt(float(r['regret_max']))} rho {'n/a' if math.isnan(rho) else f'{rho:+.2f}'} "
                      f"(two clocks: median {_fmt(float(r['two_point_regret_median']))} worst "
                      f"{_fmt(float(r['two_point_regret_max']))} rho "
                      f"{'n/a' if math.isnan(rho2) else f'{rho2:+.2f}'}; default clock: median "
                      f"{_fmt(float(r['default_regret_median']))}; saving bias "
                      f"{100 * float(r['saving_bias_median']):+.1f} pt)")

    return run_main(body)


if __name__ == "__main__":
    sys.exit(main())
