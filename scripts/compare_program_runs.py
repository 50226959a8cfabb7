"""Compare the quantitative model's predictions of two runs of the same programs on the second run's times.

    python scripts/compare_program_runs.py OLD_DIR NEW_DIR

OLD_DIR and NEW_DIR are `scripts/program_campaigns.py --out` folders of the same program list (one archive per
program, OUT/NAME/NAME.zip), made with the same device profile: a change between them is then the profiles'
(the traffic simulation, the counts), not the device's. Both runs' predictions are scored against NEW_DIR's
measured times, kernel group by kernel group (name and NDRange; groups one run lacks are left out), so that
the timing noise between the two runs does not enter the comparison. Prints per program the MAPE of each and
their mean over the programs.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from perfcast.campaign.archive import Archive
from perfcast.campaign.report import score_archive
from perfcast.errors import PerfcastError


def _predictions(archive: Path) -> dict[str, tuple[float, float]]:
    """Return kernel group -> (measured s, quantitative prediction s) of one archive."""
    scores = score_archive(Archive.read(archive))
    found = {}
    for score in scores.scores:
        prediction = score.predictions.get("quantitative")
        if prediction is not None:
            found[score.kernel] = (score.measured, prediction.time)
    return found


def main() -> None:
    """Print, per program of both folders, the MAPE of each run's predictions against the new run's times."""
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    old_dir, new_dir = map(Path, sys.argv[1:])
    missing = [str(folder) for folder in (old_dir, new_dir) if not folder.is_dir()]
    if missing:
        sys.exit(f"not a folder: {', '.join(missing)} (give two --out folders of scripts/program_campaigns.py)")
    rows = []
    for new_archive in sorted(new_dir.glob("*/*.zip")):
        old_archive = old_dir / new_archive.parent.name / new_archive.name
        if not old_archive.is_file():
            continue
        try:
            old, new = _predictions(old_archive), _predictions(new_archive)
        except PerfcastError as error:
            print(f"{new_archive.parent.name}: {error}")
            continue
        shared = sorted(set(old) & set(new))
        if not shared:
            continue
        old_ape = [abs(old[k][1] - new[k][0]) / new[k][0] for k in shared]
        new_ape = [abs(new[k][1] - new[k][0]) / new[k][0] for k in shared]
        rows.append((new_archive.parent.name, len(shared), statistics.mean(old_ape), statistics.mean(new_ape)))
    if not rows:
        sys.exit(f"no program of {new_dir} has an archive with kernel groups in {old_dir} (NAME/NAME.zip in both)")
    print(f"{'program':16s} {'groups':>6s} {'old MAPE':>9s} {'new MAPE':>9s}")
    for name, n, old_mape, new_mape in rows:
        print(f"{name:16s} {n:6d} {100 * old_mape:8.1f}% {100 * new_mape:8.1f}%")
    print(f"{'mean':16s} {'':6s} {100 * statistics.mean(r[2] for r in rows):8.1f}% "
          f"{100 * statistics.mean(r[3] for r in rows):8.1f}%")


if __name__ == "__main__":
    main()
