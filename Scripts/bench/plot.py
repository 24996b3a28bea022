"""Draws the benchmark's plot from the CSV that Scripts/bench.sh writes:

    .bench/venv/bin/python Scripts/bench/plot.py .bench/results/latest.csv docs/performance.png

Two panels against concurrency: throughput (verified receipts per second of the poller's own
clock, log scale, with the bound C ÷ L) and CPU seconds (user + sys) per 1,000 receipts, one line
per poller at L = 50 ms; the L = 200 ms case is drawn as open markers at its concurrency. Each point
is the median of the run's repetitions. The scale and postgres cases (one concurrency) are not drawn."""
import csv
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

POLLERS = {  # name in the CSV: (label, colour, marker)
    "status-poller": ("status-poller", "tab:blue", "o"),
    "python": ("InAppPy script", "tab:orange", "s"),
    "go": ("Go script", "tab:green", "^"),
    "go64": ("Go, commit every 64", "tab:olive", "v"),
}


def medians(path):
    """{(case, poller): (c, L ms, receipts/s, CPU s per 1,000)} from the CSV's repetitions."""
    runs = defaultdict(list)
    for row in csv.DictReader(open(path)):
        if row["case"].startswith(("scale", "postgres")) or not row["verified"] or not row["own_s"] or not row["user_s"]:
            continue
        verified = float(row["verified"])
        if verified <= 0 or float(row["own_s"]) <= 0:
            continue
        rate = verified / float(row["own_s"])
        cpu = (float(row["user_s"]) + float(row["sys_s"])) / verified * 1000
        runs[(row["case"], row["poller"])].append((int(row["concurrency"]), int(row["latency_ms"]), rate, cpu))
    return {key: (v[0][0], v[0][1], statistics.median(r[2] for r in v), statistics.median(r[3] for r in v))
            for key, v in runs.items()}


def main(path, out):
    points = medians(path)
    if not points:
        sys.exit(f"plot.py: no concurrency case in {path}; nothing drawn")
    fig, (ax_rate, ax_cpu) = plt.subplots(1, 2, figsize=(12, 4.8))
    latencies = sorted({p[1] for p in points.values()})
    main_latency = 50 if 50 in latencies else (latencies[0] if latencies else 50)

    # The bound C ÷ L: a line over the main latency's concurrencies, a marker for the others.
    for latency in latencies:
        cs = sorted({p[0] for p in points.values() if p[1] == latency})
        bound = [c / (latency / 1000) for c in cs]
        if latency == main_latency:
            ax_rate.plot(cs, bound, "k--", linewidth=1, label=f"bound C ÷ L (L = {latency} ms)")
        else:
            ax_rate.plot(cs, bound, "kx", markersize=8, label=f"bound C ÷ L (L = {latency} ms)")

    for poller, (label, colour, marker) in POLLERS.items():
        for latency in latencies:
            series = sorted(p for (case, name), p in points.items() if name == poller and p[1] == latency)
            if not series:
                continue
            cs, rates, cpus = [p[0] for p in series], [p[2] for p in series], [p[3] for p in series]
            if latency == main_latency:
                style = dict(color=colour, marker=marker, linestyle="-", label=label)
            else:  # explained once in the legend, below
                style = dict(color=colour, marker=marker, linestyle="none", markerfacecolor="none", markersize=9)
            ax_rate.plot(cs, rates, **style)
            ax_cpu.plot(cs, cpus, **style)

    for ax in (ax_rate, ax_cpu):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("concurrency C (requests in flight)")
        ax.grid(True, which="both", alpha=0.3)
        concurrencies = sorted({p[0] for p in points.values()})
        if concurrencies:
            ax.set_xticks(concurrencies)
            ax.set_xticklabels([str(c) for c in concurrencies])
    ax_rate.set_yscale("log")
    ax_rate.set_ylabel("receipts per second")
    ax_rate.set_title(f"Throughput (L = {main_latency} ms unless marked)")
    ax_cpu.set_ylabel("CPU seconds (user + sys) per 1,000 receipts")
    ax_cpu.set_ylim(bottom=0)
    ax_cpu.set_title("CPU per receipt (lower is better)")
    for ax in (ax_rate, ax_cpu):
        handles, _ = ax.get_legend_handles_labels()
        for latency in latencies:
            if latency != main_latency:
                handles.append(Line2D([], [], color="grey", marker="o", markerfacecolor="none", linestyle="none",
                                      label=f"open markers: L = {latency} ms"))
        ax.legend(handles=handles, fontsize=8, loc="upper left")
    fig.suptitle("status-poller and two peer pollers against one verifyReceipt stand-in (medians)", fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: plot.py RESULTS.csv OUT.png")
    main(sys.argv[1], sys.argv[2])
