"""perfcast's CPU figures side by side with the peer programs users trust (likwid-bench), alternating rounds.

Each peer is an entry of PEERS: its name, what it is, and a function that returns the figures it can be held
to on this machine (or the reason it cannot run here). A figure pairs perfcast's measurement with the peer's
measurement of the same thing: the same kernel kind, the same working set, the same threads.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perfcast.bench.cpu import (
    bench_library,
    compute_rate,
    placed_arrays,
    register_blocks,
    streaming_arrays,
    triad_rate,
)
from perfcast.bench.reference import INTERVAL_NOTE, Comparison
from perfcast.devices.schema import Device
from perfcast.errors import ToolError
from perfcast.kernels.native import VectorIsa, cpu_flags, vector_isa

__all__ = ["PEERS", "PeerFigure", "PeerUnavailable", "clpeak_figures", "compare_with_peers", "huge_page_note",
           "huge_page_policy", "l1_per_cycle", "numpy_asks_for_huge_pages",
           "likwid_figures", "peers_markdown"]

class PeerUnavailable(ToolError):
    """A peer program that is not installed here or has no kernel for this CPU."""


@dataclass(frozen=True)
class PeerFigure:
    """One figure both sides measure: perfcast's measurement, the peer's, and which peer kernel it is."""

    name: str
    unit: str  # "op/s" or "B/s"
    ours: Callable[[], float]
    theirs: Callable[[], float]
    peer_kernel: str


def _likwid_names(isa: VectorIsa, flags: set[str]) -> tuple[str, str, str]:
    """Return likwid-bench's (fp32 peak, fp64 peak, stream) kernels for the vector ISA -march=native targets."""
    if isa.name == "AVX-512":
        return "peakflops_sp_avx512_fma", "peakflops_avx512_fma", "stream_avx512"
    if isa.name in ("AVX2", "AVX"):
        fma = "_fma" if "fma" in flags else ""
        return f"peakflops_sp_avx{fma}", f"peakflops_avx{fma}", "stream_avx"
    if isa.name == "SSE2":
        return "peakflops_sp_sse", "peakflops_sse", "stream_sse"
    raise PeerUnavailable(f"likwid-bench has no kernels here for {isa.name}")


# Both sides of a likwid figure time one run of at least this long (likwid-bench -s, its default too). The
# duration matters on a shared host whose speed switches for seconds at a time: on the developers' VM, 20 ms
# windows caught the L1 triad at 223 or 482 GB/s, where 1 s windows and likwid-bench gave 300-400.
LIKWID_SECONDS = 1.0


def _likwid(test: str, workgroup: str) -> float:
    """Return what likwid-bench reports for `test` on `workgroup` (MFlops/s or MByte/s, in op/s or B/s)."""
    done = subprocess.run(["likwid-bench", "-t", test, "-W", workgroup, "-s", f"{LIKWID_SECONDS:g}"],
                          capture_output=True, text=True, check=False, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"likwid-bench -t {test} -W {workgroup} failed: {done.stderr.strip() or done.stdout[-300:]}")
    key = "MByte/s" if test.startswith("stream") else "MFlops/s"
    found = re.search(rf"^{re.escape(key)}:\s+([\d.]+)", done.stdout, re.MULTILINE)
    if not found:
        raise RuntimeError(f"likwid-bench -t {test}: no '{key}' line in its output")
    return float(found.group(1)) * 1e6


def _peer(test: str, workgroup: str) -> Callable[[], float]:
    """Return a call of likwid-bench `test` on `workgroup`."""
    return lambda: _likwid(test, workgroup)


def _kib(nbytes: float) -> int:
    return max(1, int(nbytes // 1024))


def likwid_figures(host: Device, flags: set[str] | None = None) -> list[PeerFigure]:
    """Return the figures likwid-bench measures on `host`: fp32/fp64 FMA peaks, 1-thread peak, cache and DRAM triad."""
    if shutil.which("likwid-bench") is None:
        raise PeerUnavailable("likwid-bench is not installed (Debian/Ubuntu: apt-get install likwid)")
    flags = set(cpu_flags()) if flags is None else flags
    isa = vector_isa(flags)
    sp, dp, stream = _likwid_names(isa, flags)
    threads = host.threads
    library = bench_library()
    block = register_blocks()[0].block_bytes

    def peak(function: str, scalar: type, on: int) -> Callable[[], float]:
        return lambda: compute_rate(library, function, scalar, on, block, 1, LIKWID_SECONDS).value

    def triad(working_set: float, in_cache: bool) -> Callable[[], float]:
        n = max(threads * 64, int(working_set) // 24)
        # Cache-resident arrays on the best of three placements, as the suite's sweep measures them.
        arrays = placed_arrays(library, n, threads, min(n, probe), 0.02)[0] if in_cache else streaming_arrays(
            library, n, threads)
        return lambda: triad_rate(library, arrays, n, threads, 1, LIKWID_SECONDS).value

    figures = [
        PeerFigure(f"fp32 FMA peak, {threads} threads", "op/s", peak("peak_f32_fma", ctypes.c_float, threads),
                   _peer(sp, f"N:24kB:{threads}"), f"{sp} -W N:24kB:{threads}"),
        PeerFigure(f"fp64 FMA peak, {threads} threads", "op/s", peak("peak_f64_fma", ctypes.c_double, threads),
                   _peer(dp, f"N:24kB:{threads}"), f"{dp} -W N:24kB:{threads}"),
        PeerFigure("fp32 FMA peak, 1 thread", "op/s", peak("peak_f32_fma", ctypes.c_float, 1),
                   _peer(sp, "S0:24kB:1"), f"{sp} -W S0:24kB:1"),
    ]
    capacities = sorted(
        (level.size.value * (host.compute_units if level.scope == "per_core" else 1), level.level)
        for level in host.memory if level.level in ("L1", "L2", "L3") and level.size is not None
    )
    probe = int(capacities[0][0] / 2) // 24 if capacities else 1024  # a triad inside L1
    for capacity, level in capacities:
        size = _kib(capacity / 2)  # well inside the level, as the suite's plateaus are taken
        workgroup = f"N:{size}kB:{threads}"
        figures.append(PeerFigure(f"{level} triad bandwidth ({size} KiB)", "B/s", triad(size * 1024, True),
                                  _peer(stream, workgroup), f"{stream} -W {workgroup}"))
    largest = capacities[-1][0] if capacities else 32 * 2**20
    dram = _kib(max(8 * largest, 256 * 2**20))
    figures.append(PeerFigure(f"DRAM triad bandwidth ({dram // 1024} MiB)", "B/s", triad(dram * 1024, False),
                              _peer(stream, f"N:{dram}kB:{threads}"), f"{stream} -W N:{dram}kB:{threads}"))
    return figures


class _ClpeakRuns:
    """clpeak run once per round for every test asked of it: a value asked for again starts a new run."""

    def __init__(self, platform: int, device: int, tests: list[str]) -> None:
        self.arguments = ["clpeak", "-p", str(platform), "-d", str(device), *tests, "--enable-xml-dump"]
        self.results: dict[str, float] = {}
        self.used: set[str] = set()

    def _run(self) -> None:
        import tempfile
        import xml.etree.ElementTree as ElementTree

        with tempfile.TemporaryDirectory() as folder:
            dump = Path(folder) / "clpeak.xml"
            done = subprocess.run([*self.arguments, "-f", str(dump)], capture_output=True, text=True, check=False,
                                  timeout=900)
            if done.returncode != 0 or not dump.exists():
                raise RuntimeError(f"{' '.join(self.arguments)} failed: {done.stderr.strip()[-300:]}")
            root = ElementTree.parse(dump).getroot()
        device = root.find("./platform/device")
        if device is None:
            raise RuntimeError("clpeak's XML names no device")
        results: dict[str, float] = {}
        for section in device:
            values = [float(child.text) for child in section if child.text and child.text.strip()]
            if section.tag == "transfer_bandwidth":
                for child in section:
                    results[f"transfer_bandwidth/{child.tag}"] = float(child.text or "nan")
            elif section.tag == "kernel_launch_latency" and section.text:
                results[section.tag] = float(section.text)
            elif values:
                results[section.tag] = max(values)  # the best vector width, as clpeak users read it
        self.results, self.used = results, set()

    def value(self, tag: str, scale: float) -> float:
        """Return clpeak's figure `tag` times `scale`, running clpeak when this round has used it already."""
        if tag in self.used or not self.results:
            self._run()
        self.used.add(tag)
        if tag not in self.results:
            raise RuntimeError(f"clpeak reported no {tag}")
        return self.results[tag] * scale


def clpeak_figures(host: Device) -> list[PeerFigure]:
    """Return the OpenCL figures clpeak measures: fp32/fp64/int32 compute, global read, host transfer, launch latency."""
    from perfcast.bench.opencl import OpenClBackend, list_devices

    if shutil.which("clpeak") is None:
        raise PeerUnavailable("clpeak is not installed (Debian/Ubuntu: apt-get install clpeak)")
    key, device = list_devices()[0]
    platform_index, device_index = (int(part) for part in key.split(":"))
    backend = OpenClBackend(device, 5)
    probe = backend.probe()
    tests = ["--compute-sp", "--compute-integer", "--global-bandwidth", "--transfer-bandwidth", "--kernel-latency"]
    if backend.has_fp64:
        tests.insert(1, "--compute-dp")
    runs = _ClpeakRuns(platform_index, device_index, tests)
    name = device.name.strip()
    figures = [
        PeerFigure(f"fp32 compute ({name})", "op/s", lambda: probe.peak("fp32"),
                   lambda: runs.value("single_precision_compute", 1e9), "--compute-sp, best vector width"),
        PeerFigure("int32 multiply-add", "op/s", lambda: probe.peak("int32"),
                   lambda: runs.value("integer_compute", 1e9), "--compute-integer, best vector width"),
        PeerFigure("global memory read bandwidth", "B/s", probe.read_bandwidth,
                   lambda: runs.value("global_memory_bandwidth", 1e9), "--global-bandwidth, best vector width"),
        PeerFigure("host to device transfer", "B/s", probe.upload_bandwidth,
                   lambda: runs.value("transfer_bandwidth/enqueuewritebuffer_nonblocking", 1e9),
                   "--transfer-bandwidth, enqueueWriteBuffer non-blocking"),
        PeerFigure("kernel launches per second (1 / latency)", "launch/s", probe.launch_rate,
                   lambda: 1e6 / runs.value("kernel_launch_latency", 1.0), "--kernel-latency"),
    ]
    if backend.has_fp64:
        figures.insert(1, PeerFigure("fp64 compute", "op/s", lambda: probe.peak("fp64"),
                                     lambda: runs.value("double_precision_compute", 1e9),
                                     "--compute-dp, best vector width"))
    return figures


# The registry of peers: name -> (what it is, the figures it measures on a host).
PEERS: dict[str, tuple[str, Callable[[Device], list[PeerFigure]]]] = {
    "likwid": ("likwid-bench: peakflops and stream kernels in assembly", likwid_figures),
    "clpeak": ("clpeak: OpenCL compute, bandwidth, transfer and launch latency on the first OpenCL device",
               clpeak_figures),
}


def compare_with_peers(
    figures: list[PeerFigure], rounds: int, progress: Callable[[int], None] = lambda _: None
) -> list[Comparison]:
    """Return every figure measured by both sides in `rounds` rounds, alternating which side goes first."""
    ours: list[list[float]] = [[] for _ in figures]
    theirs: list[list[float]] = [[] for _ in figures]
    for done in range(rounds):
        for index, figure in enumerate(figures):
            order = [(figure.ours, ours[index]), (figure.theirs, theirs[index])]
            for measure, into in order if done % 2 == 0 else reversed(order):
                into.append(measure())
        progress(done + 1)
    return [Comparison(f.name, f.unit, tuple(o), tuple(t)) for f, o, t in zip(figures, ours, theirs)]


def peers_markdown(peer: str, figures: list[PeerFigure], results: list[Comparison], rounds: int) -> str:
    """Return the Markdown section of one peer: each figure, the peer's kernel, medians, ratio and rounds."""
    about = PEERS[peer][0]
    lines = [
        "",
        f"## Against {peer} ({about})",
        "",
        f"Each round measures every figure on both sides, alternating which goes first; {rounds} rounds. The ratio",
        "is perfcast / peer; the target is at least 0.95 (and at most 1.10 unless the byte counting explains it).",
        *([f"Every value on both sides is one run of at least {LIKWID_SECONDS:g} s (likwid-bench `-s`; perfcast's "
           "kernel calibrated to the same length), so both average over the same stretch of a shared host."]
          if peer == "likwid" else []),
        "",
        "| figure | peer kernel | perfcast (median) | peer (median) | ratio | 90 % interval | per round: perfcast "
        "| per round: peer |",
        "|---|---|---:|---:|---:|---:|---|---|",
    ]
    for figure, c in zip(figures, results):
        compute = "GOP/s" if "int" in c.figure else "GFLOP/s"
        scale, unit = {"B/s": (1e9, "GB/s"), "launch/s": (1e3, "k launch/s")}.get(c.unit, (1e9, compute))
        lines.append(
            f"| {c.figure} | `{figure.peer_kernel}` | {float(np.median(c.perfcast)) / scale:.1f} {unit} | "
            f"{float(np.median(c.reference)) / scale:.1f} {unit} | **{c.ratio:.3f}** | "
            f"{c.interval_text()} | "
            f"{', '.join(f'{v / scale:.1f}' for v in c.perfcast)} | {', '.join(f'{v / scale:.1f}' for v in c.reference)} |"
        )
    lines += ["", INTERVAL_NOTE]
    return "\n".join(lines) + "\n"


THP_POLICY = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def huge_page_policy(path: Path = THP_POLICY) -> str | None:
    """Return the kernel's transparent-huge-page policy (always, madvise or never), or None where it says none."""
    try:
        found = re.search(r"\[(\w+)\]", path.read_text())
    except OSError:
        return None
    return found.group(1) if found else None


def numpy_asks_for_huge_pages() -> bool:
    """Return True when numpy madvises transparent huge pages for its large arrays (perfcast's triad arrays)."""
    try:
        from numpy._core import multiarray
    except ImportError:  # numpy < 2
        from numpy.core import multiarray  # type: ignore[no-redef]
    return bool(multiarray._get_madvise_hugepage())  # type: ignore[attr-defined]


def huge_page_note(policy: str | None, numpy_asks: bool) -> str:
    """Return a Markdown paragraph saying which side's DRAM triad runs on huge pages, or '' when both do alike.

    perfcast's arrays are numpy's, and numpy asks for transparent huge pages
    (madvise); likwid-bench asks for nothing, so under the `madvise` policy
    only perfcast streams through 2 MiB pages: fewer TLB misses, and in a
    virtual machine each miss walks two levels of page tables.
    """
    if policy != "madvise" or not numpy_asks:
        return ""
    return (
        "\nPages: this kernel's transparent-huge-page policy is `madvise`. perfcast's triad arrays are numpy's, "
        "which asks for huge pages; likwid-bench's are not, so the DRAM figures compare 2 MiB pages against 4 KiB "
        "ones (fewer TLB misses, each dearer in a virtual machine). The byte counting is the same. On the "
        "developers' 2-core Zen 4 VM (not necessarily this machine), the policy set to `always` took likwid-bench's "
        "DRAM triad from 28.8 to 31.2 GB/s (medians of 8 alternating rounds; perfcast 33.4 in the same rounds), but "
        "a later run found perfcast's own triad no slower on 4 KiB pages (37.4 against 33.3 GB/s on huge pages, 10 "
        "alternating rounds; likwid-bench 28.3, its non-temporal-store triad 42.3): there, pages do not explain a "
        "DRAM ratio above 1 (docs/validation/README.md).\n"
    )


def l1_per_cycle(results: list[Comparison], clock: float, threads: int, vector_bytes: int) -> str:
    """Return a Markdown paragraph: each side's L1 triad in B per cycle per core (clock in Hz) against the core's limit.

    The limit is three vector accesses per cycle (two loads and one store of
    `vector_bytes`), what Haswell-and-later and Zen 2-and-later cores sustain
    at their native width: a ratio above 1 at L1 is then read against how
    close each side comes to it, the byte counting being the same (24 B per element).
    """
    found = next((c for c in results if c.figure.startswith("L1 triad")), None)
    if found is None or clock <= 0 or threads < 1:
        return ""
    ours, theirs = (float(np.median(side)) / (clock * threads) for side in (found.perfcast, found.reference))
    limit = 3 * vector_bytes
    return (
        f"\nL1 per core and cycle, at the clock measured under load before the rounds ({clock / 1e9:.2f} GHz, a "
        f"dependent add chain on every core): perfcast {ours:.1f} B/cycle ({ours / limit:.0%} of the core's {limit} B/cycle: two "
        f"{vector_bytes}-byte loads and one store per cycle), the peer {theirs:.1f} B/cycle ({theirs / limit:.0%}). "
        "Both count 24 B per element: a ratio above 1 here is the loop's, not the counting's.\n"
    )
