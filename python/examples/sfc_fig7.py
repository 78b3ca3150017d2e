"""SFC paper, Fig. 7 (§5.3: Hadoop 50 % + 8 % 128:1 incasts, none vs OnRamp vs SFC) from Python:
run the experiment, then read its per-size-bin slowdowns into pandas and compare SFC with no
flow control the way the figure does (P99 by message size, and the peak buffer).

    python python/examples/sfc_fig7.py            # the quick variant (128 hosts, seconds)
    python python/examples/sfc_fig7.py --full     # the paper's scale (512 hosts, minutes)

With matplotlib installed it also draws p99_by_size.png next to the experiment's outputs.
"""

import argparse
from pathlib import Path

import pandas as pd

import sfc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the paper's scale, not the quick variant")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=None, help="output directory (default: sfc's)")
    a = ap.parse_args()

    points = sfc.experiment("sfc-fig7", quick=not a.full, jobs=a.jobs, out=a.out)
    out = Path(points.attrs["out"])
    bins = pd.read_csv(out / "bins.csv")
    p99 = bins.pivot(index="hi_bytes", columns="series", values="p99")
    print("P99 slowdown by message size (upper bin edge, bytes):")
    print(p99.round(2).to_string())

    none, s = [c for c in p99.columns if c.startswith("none")][0], "SFC"
    gain = (p99[none] / p99[s]).rename("none / SFC")
    print("\nP99 gain of SFC over no flow control, per bin:")
    print(gain.round(2).to_string())

    peak = points.set_index("series")["peak_buffer_bytes"]
    print(f"\npeak buffer: none {peak[none] / 1e6:.2f} MB, SFC {peak[s] / 1e6:.2f} MB "
          f"({peak[none] / peak[s]:.2f}x lower with SFC)")
    print(f"claims and verdicts: {out / 'REPORT.md'}")

    try:
        import matplotlib

        matplotlib.use("Agg")
        ax = p99.plot(logx=True, marker="o", title="SFC Fig. 7: P99 slowdown by message size")
        ax.set_xlabel("message size (bytes, bin upper edge)")
        ax.set_ylabel("P99 slowdown")
        ax.figure.savefig(out / "p99_by_size_pandas.png", dpi=120)
        print(f"plot: {out / 'p99_by_size_pandas.png'}")
    except ImportError:
        pass


if __name__ == "__main__":
    main()
