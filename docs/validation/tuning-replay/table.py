"""The twelve-space tables of README.md, from the JSON outputs of `perfcast tune replay` and kerneltuner_replay.py.

    python table.py DIRECTORY

DIRECTORY holds, per space NAME (e.g. convolution-A100), `perfcast-before-NAME.json` (the method before the
change), `perfcast-after-NAME.json` (after: hierarchical, and random unless `perfcast-random-NAME.json` holds it)
and, where run, `kerneltuner-NAME.json`. Prints the Markdown tables. Standard library only.
"""

import json
import statistics
import sys
from pathlib import Path

FRACTIONS = ("90%", "97%", "99%")


def reached(counts: list[int | None]) -> str:
    """Return the median evaluations over the runs that reached a fraction, with how many did where not all."""
    done = [n for n in counts if n is not None]
    if not done:
        return "never"
    text = f"{statistics.median(done):.0f}"
    return text if len(done) == len(counts) else f"{text} ({len(done)}/{len(counts)})"


def perfcast_row(data: dict, strategy: str) -> tuple[str, ...]:
    """Return a strategy's final fraction (median), evaluations to 90/97/99 % and evaluations used."""
    s = next(s for s in data["strategies"] if s["strategy"] == strategy)
    return (f"{statistics.median(s['chosen_fraction']):.1%}", *(reached(s["evaluations_to_reach"][f]) for f in FRACTIONS),
            f"{statistics.median(s['evaluations']):.0f}")


def fraction_after(improvements: list[list[float]], evaluations: int) -> float:
    """Return the fraction of the optimum a KernelTuner run had reached after `evaluations` evaluations."""
    return max((f for n, f in improvements if n <= evaluations), default=0.0)


def best_kerneltuner(data: dict) -> tuple[str, dict]:
    """Return the strategy with the highest median final fraction; ties: the fewest median evaluations to 97 %."""
    def key(item: tuple[str, dict]) -> tuple[float, float]:
        runs = item[1]
        done = [n for n in runs["evaluations_to_reach"]["97%"] if n is not None]
        return (-round(statistics.median(runs["final_fraction"]), 3),
                statistics.median(done) if len(done) == len(runs["final_fraction"]) else float("inf"))
    return min(data["strategies"].items(), key=key)


def medians(rows: list[tuple[str, ...]]) -> str:
    """Return the medians over spaces of 90 %, 97 %, 99 %, evaluations (spaces that never reached one left out)."""
    cells = []
    for column in range(1, 5):
        values = [float(r[column].split()[0]) for r in rows if r[column] != "never"]
        cells.append(f"{statistics.median(values):.0f}" + (f" ({len(values)} of {len(rows)})" if len(values) < len(rows) else ""))
    return " | ".join(cells)


def main() -> None:
    """Print the tables for the directory named on the command line."""
    directory = Path(sys.argv[1])
    names = sorted(p.name.removeprefix("perfcast-after-").removesuffix(".json")
                   for p in directory.glob("perfcast-after-*.json"))
    print("| space | before: final | 90 % | 97 % | 99 % | evaluations | after: final | 90 % | 97 % | 99 % | evaluations "
          "| random: final | 90 % | 97 % | 99 % |")
    print("|---" * 15 + "|")
    for name in names:
        before = json.loads((directory / f"perfcast-before-{name}.json").read_text())
        after = json.loads((directory / f"perfcast-after-{name}.json").read_text())
        has_random = any(s["strategy"] == "random" for s in after["strategies"])
        random = perfcast_row(after if has_random else json.loads((directory / f"perfcast-random-{name}.json").read_text()),
                              "random")
        print(f"| {name} | " + " | ".join((*perfcast_row(before, "hierarchical"), *perfcast_row(after, "hierarchical"),
                                           *random[:4])) + " |")
    print()
    print("| space | perfcast: final | 90 % | 97 % | 99 % | evaluations | KernelTuner best at 500: strategy | final "
          "| 90 % | 97 % | 99 % | evaluations | KernelTuner best after as many evaluations as perfcast |")
    print("|---" * 13 + "|")
    ours_rows, theirs_rows = [], []
    for name in names:
        path = directory / f"kerneltuner-{name}.json"
        if not path.exists():
            continue
        after = json.loads((directory / f"perfcast-after-{name}.json").read_text())
        ours = perfcast_row(after, "hierarchical")
        kt = json.loads(path.read_text())
        strategy, runs = best_kerneltuner(kt)
        used = int(float(ours[4]))
        at_ours = {s: statistics.median(fraction_after(i, used) for i in r["improvements"])
                   for s, r in kt["strategies"].items() if "improvements" in r}
        best_at = max(at_ours, key=lambda s: at_ours[s]) if at_ours else None
        same = f"{at_ours[best_at]:.1%} ({best_at})" if best_at else "-"
        theirs = (f"{statistics.median(runs['final_fraction']):.1%}",
                  *(reached(runs["evaluations_to_reach"][f]) for f in FRACTIONS), f"{statistics.median(runs['evaluations']):.0f}")
        ours_rows.append(ours)
        theirs_rows.append(theirs)
        print(f"| {name} | " + " | ".join((*ours, strategy, *theirs, same)) + " |")
    if ours_rows:
        print(f"| median over the spaces | {min(float(r[0].rstrip('%')) for r in ours_rows):.1f}% (lowest) | "
              f"{medians(ours_rows)} | | {min(float(r[0].rstrip('%')) for r in theirs_rows):.1f}% (lowest) | "
              f"{medians(theirs_rows)} | |")


if __name__ == "__main__":
    main()
