"""Turn `perfcast validate tuning --json` output into the choices file `--also` reads (one entry per run).

Usage: python choices_of.py VALIDATION.json > CHOICES.json
"""

import json
import sys

report = json.load(open(sys.argv[1]))
choices = [{"label": f"perfcast {report['strategy']}", "run": index, "config": run["config"],
            "evaluations": run["evaluations"], "wall_s": run["wall_s"]}
           for index, run in enumerate(report["per_run"], 1)]
json.dump({"tool": f"perfcast {report['strategy']}", "choices": choices}, sys.stdout, indent=1)
