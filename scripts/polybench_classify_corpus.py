"""Extract PolyBench/C 4.2.1's kernels as plain C for the classify corpus (tests/data/classify/polybench/).

Each kernel_* function is kept as written, with PolyBench's macros spelled out (DATA_TYPE -> double,
POLYBENCH_2D(A,M,N,m,n) -> A[M][N], _PB_N -> N, SCALAR_VAL(x) -> (x), SQRT_FUN -> sqrt ...) and the sizes of
its LARGE_DATASET as #defines. The expected species are written by hand afterwards, so an existing file is
never overwritten.

    python scripts/polybench_classify_corpus.py PATH/TO/PolyBenchC-4.2.1 tests/data/classify/polybench
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

NOTICE = """/* From PolyBench/C 4.2.1 ({path}), the kernel function only, PolyBench's macros spelled out.
 * PolyBench/C, Copyright (c) 2010-2016, Ohio State University. All rights reserved. Redistributed under its
 * license (tests/data/classify/polybench/LICENSE.txt). The expectations are perfcast's own. */
"""


def _sizes(header: str) -> list[tuple[str, str]]:
    """Return the (name, value) #defines of the LARGE_DATASET block of a PolyBench header."""
    block = re.search(r"#\s*ifdef LARGE_DATASET(.*?)#\s*endif", header, re.S)
    return re.findall(r"#\s*define\s+(\w+)\s+(\S+)", block.group(1)) if block else []


def _spell(text: str) -> str:
    """Return `text` with PolyBench's macros replaced by plain C."""
    text = re.sub(r"(\w+)\s+POLYBENCH_(\d)D\((\w+),([^)]*)\)",
                  lambda m: f"{m.group(1)} {m.group(3)}" + "".join(
                      f"[{d.strip()}]" for d in m.group(4).split(",")[:int(m.group(2))]), text)
    text = re.sub(r"\bDATA_TYPE\b", "double", text)
    text = re.sub(r"\b_PB_(\w+)\b", r"\1", text)
    for name, c in (("SCALAR_VAL", ""), ("SQRT_FUN", "sqrt"), ("EXP_FUN", "exp"), ("POW_FUN", "pow")):
        text = re.sub(rf"\b{name}\b", c, text)
    text = re.sub(r"^\s*#pragma (end)?scop\s*$\n?", "", text, flags=re.M)
    return text


def extract(source: Path, target: Path) -> list[Path]:
    """Write one corpus file per PolyBench benchmark under `source`; return the files written."""
    written = []
    for c_file in sorted(source.rglob("*.c")):
        if "utilities" in c_file.parts or c_file.name.endswith(".orig.c"):
            continue
        text = c_file.read_text()
        kernel = re.search(r"^(?:static\s+)?void kernel_\w+\(.*?^}", text, re.S | re.M)
        header = c_file.with_suffix(".h")
        if kernel is None or not header.exists():
            continue
        out = target / f"{c_file.stem}.c"
        if out.exists():
            continue
        local = [line for line in text.splitlines() if re.match(r"#\s*define\s+\w+\(", line)]
        local = [line for line in (header.read_text() + "\n" + text).splitlines() if line.startswith("typedef")] + local
        defines = [f"#define {n} {v}" for n, v in _sizes(header.read_text())]
        body = "\n".join([NOTICE.format(path=c_file.relative_to(source)), "#include <math.h>", *defines, *local,
                          "", _spell(kernel.group(0)), ""])
        out.write_text(body)
        written.append(out)
    return written


if __name__ == "__main__":
    for path in extract(Path(sys.argv[1]), Path(sys.argv[2])):
        print(path)
