"""Add the in-core reading (docs/models.md §3.5) to committed program campaigns, by resuming them, and score them.

    python scripts/program_incore.py PROGRAMS.json ARCHIVES_DIR DEVICE.yaml OUT_DIR [--again] [--profile-again]
        [--figures FIGURES.yaml] [NAME ...]

For each program of PROGRAMS.json (what scripts/third_party_programs.py writes; its builds must still be in
their `cwd`) whose archive ARCHIVES_DIR/NAME/NAME.zip exists: the archive is unpacked as the working folder of
OUT_DIR/NAME/NAME.zip, `perfcast campaign run` is run again with the program's own options, which finds every
step done but the in-core reading (two more runs of the first profile command: on PoCL with -g, under Oclgrind
with the block counts), and the new archive is reported beside it. Nothing is timed again. Prints each
program's quantitative MAPE. `--again`: read the code again where the archive already holds a reading (an
older perfcast's, without a field added since, as `fp_lanes`). `--profile-again`: profile the program again
under Oclgrind too (its profiles are removed; a perfcast that counts more in the trace, as the first-touched
pages, counts it), keeping the timed launches and the device; the in-core reading is kept unless --again.
`--figures FIGURES.yaml`: each archive's device profile takes the figures of FIGURES.yaml it lacks (a figure the
bench measures since, as `first_touches` from scripts/first_touch_figure.py); the figures it has stay.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import yaml


def main() -> None:
    """Resume and report each program named (every one in the list without names)."""
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    programs, archives, device, out = (Path(a) for a in sys.argv[1:5])
    options = sys.argv[5:]
    figures: dict[str, object] = {}
    if "--figures" in options:
        at = options.index("--figures")
        if at + 1 >= len(options) or not Path(options[at + 1]).is_file():
            sys.exit("--figures: give a YAML file of device figures")
        figures = yaml.safe_load(Path(options[at + 1]).read_text()) or {}
        options = options[:at] + options[at + 2:]
    wanted = set(options) - {"--again", "--profile-again"}
    again = "--again" in options
    profile_again = "--profile-again" in options
    for path, what in ((programs, "the program list"), (device, "the device profile")):
        if not path.is_file():
            sys.exit(f"{what} {path} is not a file")
    if not archives.is_dir():
        sys.exit(f"the archives' folder {archives} is not a folder")
    for entry in json.loads(programs.read_text()):
        name = entry["name"]
        source = archives / name / f"{name}.zip"
        if (wanted and name not in wanted) or not source.is_file():
            continue
        archive = (out / name / f"{name}.zip").resolve()
        partial = archive.with_name(archive.name + ".partial")
        shutil.rmtree(archive.parent, ignore_errors=True)
        partial.mkdir(parents=True)
        with zipfile.ZipFile(source) as packed:
            packed.extractall(partial)
        manifest = partial / "manifest.json"
        record = json.loads(manifest.read_text())
        if again:
            record.pop("incore", None)
        if profile_again:
            record["profiling"] = None
            (partial / "profile.yaml").unlink(missing_ok=True)
            for folder in (partial / "raw").glob("profile-*"):
                shutil.rmtree(folder)
        manifest.write_text(json.dumps(record, indent=1))
        if figures:
            profile = partial / "device.yaml"
            data = yaml.safe_load(profile.read_text())
            profile.write_text(yaml.safe_dump({**data, **{k: v for k, v in figures.items() if k not in data}},
                                              sort_keys=False))
        command = [sys.executable, "-m", "perfcast", "campaign", "run", "-o", str(archive), "--device-profile",
                   str(device.resolve())]
        for profile in entry.get("profile_commands", []):
            command += ["--profile-cmd", shlex.join(profile)]
        for kernel, exponent in entry.get("scaling", {}).items():
            command += ["--scaling", f"{kernel}={exponent}"]
        done = subprocess.run([*command, "--", *entry["command"]], cwd=entry["cwd"], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{name}: failed: {done.stderr.strip()[-400:]}")
            continue
        subprocess.run([sys.executable, "-m", "perfcast", "campaign", "report", str(archive), "-o",
                        str(archive.parent)], check=True, capture_output=True)
        found = re.search(r"^\| quantitative \| \d+ \| ([\d.]+)%", (archive.parent / "report.md").read_text(), re.M)
        print(f"{name}: quantitative MAPE {found[1] if found else '?'} %")


if __name__ == "__main__":
    main()
