"""Reader of Oclgrind's instruction histograms (`oclgrind --inst-counts`): a black-box profiler of any OpenCL program.

Oclgrind simulates each work-item and prints, per kernel launch, how often each LLVM instruction ran, with
the bytes of global and local loads and stores. This module maps them onto the model's metrics (the table is
in docs/metrics.md). Oclgrind names instructions without their types, so `fadd` does not say float or double:
with the LLVM IR Oclgrind dumps (`--dump-spir`, which `perfcast profile --tool oclgrind` asks for), each
opcode's precision and vector width are read off the kernel's code; an opcode used with several types is split
in proportion to its static uses, with a note. Without the IR, the kernel's builtins (mangled with their
types) decide, else fp32, with a note.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from perfcast.models.quantitative import ELEMENTARY_COST
from perfcast.profiles.barrier_context import barrier_context_values
from perfcast.profiles.profile import KernelProfile, ProfileError, ProfileSet, ProfileSource

__all__ = ["BUILTIN_COSTS", "ELEMENTARY_COST", "looks_like_oclgrind", "read_oclgrind", "read_oclgrind_launches"]

_BLOCK = re.compile(r"Instructions executed for kernel '(?P<name>[^']+)':\s*$")  # may follow program output on its line
_LINE = re.compile(r"^\s*(?P<count>\d{1,20}) - (?P<what>.+?)\s*$")  # 20 digits: past 2^64, no count
_NEGATIVE = re.compile(r"^\s*(-\d+|\d{21,}) - \S")  # negative, or more digits than any count has
_MEMORY = re.compile(r"^(?P<op>load|store) (?P<space>global|local|constant|private) \((?P<bytes>\d{1,20}) bytes\)$")
_CALL = re.compile(r"^call (?P<callee>[\w.$]+)\(\)$")
_MANGLED = re.compile(r"^_Z(?P<length>\d{1,9})(?P<rest>\w+)$")
_INTRINSIC = re.compile(r"^llvm\.(?P<name>fmuladd|fma)\.(?:v(?P<lanes>\d{1,4}))?(?P<type>f16|f32|f64)$")

FP_OPCODES = ("fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "fcmp")
INT_OPCODES = ("add", "sub", "mul", "sdiv", "udiv", "srem", "urem", "shl", "lshr", "ashr", "and", "or", "xor", "icmp",
               "getelementptr")
NOT_INSTRUCTIONS = ("phi",)  # SSA bookkeeping, no machine instruction
# Counted instructions a CPU core's integer and FP pipes do not issue one for (`inst_alu`, docs/metrics.md): address
# arithmetic, which folds into the addressing mode of the load or store that uses it, and casts that only rename
# or reinterpret a register (or fold into the addressing too, as a sign extension of an index does).
ADDRESSING_OPCODES = ("getelementptr",)
FREE_CASTS = ("sext", "zext", "trunc", "bitcast", "ptrtoint", "inttoptr", "addrspacecast", "freeze")
_ATOMIC_BUILTINS = ("atomic_", "atom_")  # OpenCL 1.x atomic_inc/atomic_add..., cl_khr's atom_*, OpenCL 2 atomic_fetch_*
_NOT_RMW = ("atomic_load", "atomic_store", "atomic_init", "atomic_work_item_fence", "atomic_flag_clear")  # no RMW
# Work-group barriers: OpenCL 1.x's and 2.0's (mangled with or without a memory scope).
_BARRIERS = ("barrier", "work_group_barrier")
_ELEMENTARY = ("exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
               "atan", "atan2", "sinh", "cosh", "tanh", "pow", "pown", "powr", "rootn", "cbrt", "erf", "erfc",
               "hypot", "tgamma", "lgamma", "sincos", "sinpi", "cospi", "tanpi", "asinh", "acosh", "atanh")
_SINGLE = ("sqrt", "rsqrt", "fabs", "fmin", "fmax", "floor", "ceil", "round", "trunc", "rint", "copysign", "fmod",
           "native_exp", "native_log", "native_sin", "native_cos", "native_sqrt", "native_rsqrt", "native_recip",
           "native_divide", "native_powr", "native_exp2", "native_log2", "half_exp", "half_log", "half_sqrt",
           "half_rsqrt", "half_recip", "half_divide", "mix", "clamp", "step", "sign", "degrees", "radians")
BUILTIN_COSTS: dict[str, int] = {**{name: ELEMENTARY_COST for name in _ELEMENTARY}, **{name: 1 for name in _SINGLE},
                                 "mad": 1, "fma": 1}
_FMA_BUILTINS = ("mad", "fma")
_PRECISION = {"f": "fp32", "d": "fp64", "Dh": "fp16", "f16": "fp16", "f32": "fp32", "f64": "fp64",
              "half": "fp16", "float": "fp32", "double": "fp64"}


def looks_like_oclgrind(text: str) -> bool:
    """Return True when `text` holds Oclgrind instruction histograms."""
    return any(_BLOCK.search(line) for line in text.splitlines())


def _demangle(symbol: str) -> tuple[str, str | None, int] | None:
    """Return (builtin name, precision or None, lanes) of an Itanium-mangled OpenCL builtin, else None."""
    match = _MANGLED.match(symbol)
    if match is None:
        return None
    length, rest = int(match["length"]), match["rest"]
    name, params = rest[:length], rest[length:]
    vector = re.match(r"^Dv(\d+)_(Dh|[fd])", params)
    if vector:
        return name, _PRECISION[vector[2]], int(vector[1])
    scalar = re.match(r"^(Dh|[fd])", params)
    return name, _PRECISION[scalar[1]] if scalar else None, 1


# ------------------------------------------------------------------ the IR: types and widths of each opcode

_FLAGS = r"(?:(?:fast|nnan|ninf|nsz|arcp|contract|afn|reassoc|nuw|nsw|exact|inbounds|disjoint)\s+)*"
_TYPE = r"(?:<(?P<lanes>\d{1,4}) x (?P<vtype>half|float|double|i\d+)>|(?P<type>half|float|double|i\d+))"
_OP_IN_IR = re.compile(rf"=\s*(?P<op>{'|'.join(FP_OPCODES[:-1] + INT_OPCODES[:-2])})\s+{_FLAGS}{_TYPE}")
_CMP_IN_IR = re.compile(rf"=\s*(?P<op>fcmp|icmp)\s+{_FLAGS}\w+\s+{_TYPE}")
_DEFINE = re.compile(r"^define\b[^@]*@(?P<name>[\w.$]+)\(")
_CALLS = re.compile(r"call\b[^@]*@(?P<name>[\w.$]+)\(")
DIVISION_OPCODES = ("sdiv", "udiv", "srem", "urem")
_OPERAND = r"(?:splat \([^)]*\)|<[^>]*>|[^,\s]+)"  # a value, a constant vector or a splat of one
_DIVISION_IN_IR = re.compile(rf"=\s*(?P<op>{'|'.join(DIVISION_OPCODES)})\s+{_FLAGS}(?:<(?P<lanes>\d{{1,4}}) x )?i\d+>?\s+"
                             rf"(?P<a>{_OPERAND}),\s*(?P<b>{_OPERAND})")
_CONSTANT = re.compile(r"^(?:-?\d+|<.*|splat.*|zeroinitializer)$")  # an immediate (or a vector of them)


@dataclass(frozen=True)
class _Variant:
    precision: str | None  # fp16/fp32/fp64 for float ops, None for integers
    lanes: int


def _functions(ir_texts: Iterable[str]) -> dict[str, list[str]]:
    """Return the body lines of every function defined in the LLVM IR modules."""
    functions: dict[str, list[str]] = {}
    for text in ir_texts:
        current: list[str] | None = None
        for line in text.splitlines():
            define = _DEFINE.match(line)
            if define:
                current = functions.setdefault(define["name"], [])
            elif line.startswith("}"):
                current = None
            elif current is not None:
                current.append(line)
    return functions


def _reachable_functions(kernel: str, functions: Mapping[str, list[str]]) -> Iterator[str]:
    """Yield the name of a kernel and of every function it calls, each once."""
    seen, todo = {kernel}, [kernel]
    while todo:
        name = todo.pop()
        yield name
        for line in functions[name]:
            for call in _CALLS.finditer(line):
                if call["name"] in functions and call["name"] not in seen:
                    seen.add(call["name"])
                    todo.append(call["name"])


def _reachable(kernel: str, functions: Mapping[str, list[str]]) -> Iterator[str]:
    """Yield the IR lines of a kernel and of every function it calls, each function once."""
    for name in _reachable_functions(kernel, functions):
        yield from functions[name]


def _variants(kernel: str, functions: Mapping[str, list[str]]) -> dict[str, Counter[_Variant]] | None:
    """Return, per opcode, how often each (precision, lanes) appears in a kernel's code and its callees."""
    if kernel not in functions:
        return None
    found: dict[str, Counter[_Variant]] = defaultdict(Counter)
    for line in _reachable(kernel, functions):
        for pattern in (_OP_IN_IR, _CMP_IN_IR):
            match = pattern.search(line)
            if match:
                kind = match["vtype"] or match["type"]
                precision = None if kind.startswith("i") else _PRECISION[kind]
                found[match["op"]][_Variant(precision, int(match["lanes"] or 1))] += 1
    return found


def _division_shares(kernel: str, functions: Mapping[str, list[str]]) -> dict[tuple[str, int], float] | None:
    """Return, per division opcode and vector width, the share of its uses in the kernel's IR a divider executes.

    A constant divisor becomes a multiply and shifts in any backend, and a remainder of the same operands as a
    division (same signedness, in the same function: SSA names are a function's own) comes out of that
    division's instruction (x86's idiv gives both; LLVM pairs them): neither is a division of its own.
    """
    if kernel not in functions:
        return None
    real: Counter[tuple[str, int]] = Counter()
    uses: Counter[tuple[str, int]] = Counter()
    for name in _reachable_functions(kernel, functions):
        found = [m for m in (_DIVISION_IN_IR.search(line) for line in functions[name]) if m]
        divided = {(m["op"][0], m["a"], m["b"]) for m in found if m["op"] in ("sdiv", "udiv")}
        for m in found:
            key = (m["op"], int(m["lanes"] or 1))
            uses[key] += 1
            paired = m["op"] in ("srem", "urem") and (m["op"][0], m["a"], m["b"]) in divided
            real[key] += not _CONSTANT.match(m["b"]) and not paired
    return {key: real[key] / count for key, count in uses.items()}


# ------------------------------------------------------------------ counts -> metrics

@dataclass
class _Launch:
    kernel: str
    counts: Counter[str]
    bytes: Counter[str]  # "load global" -> bytes


def _launches(text: str) -> list[_Launch]:
    """Return every histogram block of Oclgrind's output, in order (one per launch)."""
    launches: list[_Launch] = []
    current: _Launch | None = None
    for line in text.splitlines():
        block = _BLOCK.search(line)
        if block:
            current = _Launch(block["name"], Counter(), Counter())
            launches.append(current)
            continue
        if current is None:
            continue
        entry = _LINE.match(line)
        if entry is None:
            if _NEGATIVE.match(line):  # a count line with a minus: edited output, never Oclgrind's
                raise ProfileError(f"kernel {current.kernel!r}: a negative or impossible count in its histogram "
                                   f"({line.strip()[:60]!r})")
            current = None  # the block ends at its first line that is not a count (a blank, program output)
            continue
        what, count = entry["what"], int(entry["count"])
        memory = _MEMORY.match(what)
        if memory:
            key = f"{memory['op']} {memory['space']}"
            current.counts[key] += count
            current.bytes[key] += int(memory["bytes"])
        else:
            current.counts[what] += count
    return launches


def _metrics(launch: Counter[str], nbytes: Counter[str], variants: dict[str, Counter[_Variant]] | None,
             notes: list[str], division_shares: Mapping[tuple[str, int], float] | None = None) -> dict[str, float]:
    """Return the canonical metrics of one kernel's summed histogram.

    `division_shares`: per division opcode and width, the share of its uses a divider executes
    (`_division_shares`); without the IR every integer division and remainder counts as one.
    """
    fp = {"fp16": 0.0, "fp32": 0.0, "fp64": 0.0}
    fma = {"fp16": 0.0, "fp32": 0.0, "fp64": 0.0}
    elementary = {"fp16": 0.0, "fp32": 0.0, "fp64": 0.0}  # calls (x lanes), each counted ELEMENTARY_COST above
    by_kind = {(kind, p): 0.0 for kind in ("add", "mul") for p in fp}  # the FP instructions §4 tells apart
    integer = ldst = total = divisions = atomics = barriers = 0.0
    folded = 0.0  # address arithmetic and free casts: in `total`, not issued by a CPU's pipes (§3.3)
    divided_opcodes: set[str] = set()
    builtin_precisions: set[str] = set()
    for what in launch:
        call = _CALL.match(what)
        demangled = _demangle(call["callee"]) if call else None
        if demangled and demangled[1]:
            builtin_precisions.add(demangled[1])
        intrinsic = _INTRINSIC.match(call["callee"]) if call else None
        if intrinsic:
            builtin_precisions.add(_PRECISION[intrinsic["type"]])
    guess = "fp64" if "fp64" in builtin_precisions else "fp32"
    guessed: list[str] = []
    for what, count in launch.items():
        call = _CALL.match(what)
        opcode = what.split()[0]
        if opcode in NOT_INSTRUCTIONS or (call and call["callee"].startswith(("llvm.dbg.", "llvm.lifetime."))):
            continue
        if call:
            intrinsic = _INTRINSIC.match(call["callee"])
            demangled = _demangle(call["callee"])
            if intrinsic:
                precision, lanes = _PRECISION[intrinsic["type"]], int(intrinsic["lanes"] or 1)
                fp[precision] += count * lanes
                fma[precision] += count * lanes
                total += count * lanes
                continue
            if demangled and demangled[0] in BUILTIN_COSTS and demangled[1]:
                name, precision, lanes = demangled[0], demangled[1], demangled[2]
                cost = BUILTIN_COSTS[name]
                fp[precision] += count * lanes * cost
                if name in _FMA_BUILTINS:
                    fma[precision] += count * lanes
                if name in _ELEMENTARY:
                    elementary[precision] += count * lanes
                total += count * lanes * cost
                continue
            if demangled and demangled[0].startswith(_ATOMIC_BUILTINS) and not demangled[0].startswith(_NOT_RMW):
                atomics += count  # §3.4: a read-modify-write of memory, one instruction here and priced apart
            if demangled and demangled[0] in _BARRIERS:
                barriers += count  # §3.9: each work-item's crossing of a work-group barrier
            total += count  # work-item queries, barriers, other builtins: one instruction each
            continue
        if what.startswith(("load ", "store ")):
            ldst += count
            total += count
            continue
        if opcode in FP_OPCODES:
            shares = _shares(opcode, variants, guess, "fp")
            if variants is None or opcode not in variants:
                guessed.append(opcode)
            for variant, share in shares:
                fp[variant.precision or guess] += count * share * variant.lanes
                total += count * share * variant.lanes
                kind = {"fadd": "add", "fsub": "add", "fmul": "mul"}.get(opcode)
                if kind:
                    by_kind[(kind, variant.precision or guess)] += count * share * variant.lanes
            continue
        if opcode in INT_OPCODES:
            for variant, share in _shares(opcode, variants, None, "int"):
                integer += count * share * variant.lanes
                total += count * share * variant.lanes
                if opcode in ADDRESSING_OPCODES:
                    folded += count * share * variant.lanes
                if opcode in DIVISION_OPCODES:
                    real = 1.0 if division_shares is None else division_shares.get((opcode, variant.lanes), 1.0)
                    divisions += count * share * variant.lanes * real
                    divided_opcodes.add(opcode)
            continue
        if opcode in ("atomicrmw", "cmpxchg"):
            atomics += count
        if opcode in FREE_CASTS:
            folded += count
        total += count  # conversions, casts, selects, branches, returns: instructions of no class of §3
    if guessed and any(fp.values()):
        source = "no LLVM IR of the kernel" if variants is None else "the opcode is not in the kernel's IR"
        notes.append(f"precision of {', '.join(sorted(set(guessed)))} taken as {guess} ({source}; "
                     f"profile with `perfcast profile --tool oclgrind`, which dumps the IR)")
    if fp["fp16"]:
        notes.append(f"{fp['fp16']:.0f} fp16 instructions counted as fp32 (§3 has no fp16 class)")
    if divided_opcodes and division_shares is None:
        notes.append(f"every {', '.join(sorted(divided_opcodes))} counted as a division (no IR to leave out constant "
                     "divisors and paired remainders)")
    mixed = sorted({op for (op, _), share in (division_shares or {}).items() if 0 < share < 1 and op in divided_opcodes})
    if mixed:
        notes.append(f"{', '.join(mixed)}: some uses divide by a constant or pair with a division; the divisions "
                     "counted are the executed ones times the share of the others among the static uses")
    metrics = {
        "fp32": fp["fp32"] + fp["fp16"], "fp64": fp["fp64"], "fma_fp32": fma["fp32"] + fma["fp16"],
        "fma_fp64": fma["fp64"], "int": integer, "ldst": ldst, "inst_warp": total / 32,
        # The instructions a CPU core's integer and FP pipes issue, every lane: all counted, less address
        # arithmetic and free casts, loads and stores (the load and store ports'; §3.6 prices them), and the
        # branches a compare fuses with (x86 macro-fusion, AArch64's compare-and-branch). §3.3's issue floor
        # counts every instruction still (docs/models.md says why); the rescore script's issue-alu tries this.
        "inst_alu": max(0.0, total - folded - ldst - min(float(launch["br"]), float(launch["icmp"]))),
        # §3.2: the integer divisions and remainders a divider executes (they are in `int` too).
        "div_int": divisions,
        # §3.4: atomic read-modify-writes (OpenCL's atomic_* and atom_* builtins, LLVM's atomicrmw and cmpxchg).
        "atomics": atomics,
        # §3.9: work-group barriers crossed, every work-item's (a CPU runtime splits the work-item loop at each).
        "barriers": barriers,
        "dram_read": nbytes["load global"] / 32, "dram_write": nbytes["store global"] / 32,
        "global_load_bytes": float(nbytes["load global"]), "global_store_bytes": float(nbytes["store global"]),
        "local_load_bytes": float(nbytes["load local"]), "local_store_bytes": float(nbytes["store local"]),
        "local_ldst": float(launch["load local"] + launch["store local"]),
        "global_ldst": float(launch["load global"] + launch["store global"]),
        # §4: FP instructions by kind (fp16 folded into fp32, as above), and the bytes through L1 and DRAM.
        "add_fp32": by_kind[("add", "fp32")] + by_kind[("add", "fp16")], "add_fp64": by_kind[("add", "fp64")],
        "mul_fp32": by_kind[("mul", "fp32")] + by_kind[("mul", "fp16")], "mul_fp64": by_kind[("mul", "fp64")],
        "elementary_fp32": elementary["fp32"] + elementary["fp16"], "elementary_fp64": elementary["fp64"],
        "l1_bytes": float(nbytes["load global"] + nbytes["store global"]),
        "dram_bytes": float(nbytes["load global"] + nbytes["store global"]),
    }
    return metrics


def _shares(opcode: str, variants: dict[str, Counter[_Variant]] | None, guess: str | None,
            kind: str) -> list[tuple[_Variant, float]]:
    """Return how one dynamic count of `opcode` splits over the (precision, lanes) variants the IR shows."""
    if variants is None or not variants.get(opcode):
        return [(_Variant(guess, 1), 1.0)]
    seen = variants[opcode]
    if kind == "fp":
        seen = Counter({v: n for v, n in seen.items() if v.precision is not None}) or seen
    total = sum(seen.values())
    return [(variant, n / total) for variant, n in seen.items()]


def read_oclgrind_launches(text: str, *, ir: Iterable[str] = ()) -> list[KernelProfile]:
    """Return one profile per launch in Oclgrind's `--inst-counts` output, in the order Oclgrind ran them."""
    launches = _launches(text)
    functions = _functions(ir)
    variants_of: dict[str, dict[str, Counter[_Variant]] | None] = {}
    divisions_of: dict[str, dict[tuple[str, int], float] | None] = {}
    context = barrier_context_values(functions, {launch.kernel for launch in launches})
    found = []
    for launch in launches:
        if launch.kernel not in variants_of:
            variants_of[launch.kernel] = _variants(launch.kernel, functions) if functions else None
            divisions_of[launch.kernel] = _division_shares(launch.kernel, functions) if functions else None
        notes: list[str] = []
        metrics = _with_context(_metrics(launch.counts, launch.bytes, variants_of[launch.kernel], notes,
                                         divisions_of[launch.kernel]), context.get(launch.kernel))
        found.append(KernelProfile(launch.kernel, 1, metrics, notes=tuple(notes)))
    return found


def _with_context(metrics: dict[str, float], context: float | None) -> dict[str, float]:
    """Return `metrics` with `barrier_values` where the IR gave the kernel's barriers' `context` (§3.9).

    The values saved and restored over every crossing: each work-item's crossings x the work-item-variant values
    live across one of the kernel's barriers (their mean over its barrier calls, `barrier_context_values`).
    """
    if context is None or metrics.get("barriers", 0.0) <= 0:
        return metrics
    return {**metrics, "barrier_values": metrics["barriers"] * context}


def read_oclgrind(text: str, *, ir: Iterable[str] = (), device: str | None = None, command: str | None = None,
                  raw: str | None = None, work_items: Mapping[str, int] | None = None) -> ProfileSet:
    """Return the kernels of Oclgrind's `--inst-counts` output, launches summed; `ir` holds dumped LLVM IR texts.

    `work_items` gives the NDRange size per launch of each kernel when the caller knows it (for scaling).
    """
    launches = _launches(text)
    if not launches:
        raise ProfileError("no Oclgrind instruction histogram (\"Instructions executed for kernel '...':\") in the "
                           "output: was the program run under `oclgrind --inst-counts`, and did it launch a kernel?")
    functions = _functions(ir)
    by_kernel: dict[str, list[_Launch]] = defaultdict(list)
    for launch in launches:
        by_kernel[launch.kernel].append(launch)
    kernels = []
    for name, runs in by_kernel.items():
        counts: Counter[str] = Counter()
        nbytes: Counter[str] = Counter()
        for run in runs:
            counts.update(run.counts)
            nbytes.update(run.bytes)
        notes: list[str] = []
        variants = _variants(name, functions) if functions else None
        if functions and variants is None:
            notes.append("the dumped IR does not define this kernel (built from a cached binary?)")
        splits = [op for op in FP_OPCODES if variants and len({v for v in variants.get(op, {})
                                                               if v.precision}) > 1]
        if splits:
            notes.append(f"{', '.join(splits)} used with several types: split in proportion to static uses")
        metrics = _with_context(_metrics(counts, nbytes, variants, notes,
                                         _division_shares(name, functions) if functions else None),
                                barrier_context_values(functions, [name]).get(name))
        kernels.append(KernelProfile(name, len(runs), metrics, work_items=(work_items or {}).get(name),
                                     notes=tuple(notes)))
    source = ProfileSource("Oclgrind", device=device or "Oclgrind simulator", command=command, raw=raw)
    note = ("Oclgrind counts are per work-item and simulated: M_inst assumes full, converged warps, and DRAM "
            "sectors are global bytes / 32, with no cache")
    return ProfileSet(source, tuple(kernels), (note,))
