"""The native-kernel cache: where it lives, whom it trusts, what its key holds, and recovery from bad files."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from perfcast.kernels import native
from perfcast.kernels.native import NativeBuildError, build_library, cache_dir

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="the native kernels need gcc")

SOURCE = "int answer(void) { return 42; }\n"


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    path = tmp_path / "answer.c"
    path.write_text(SOURCE)
    return path


@pytest.mark.parametrize("value", ["", "relative/cache", "."])
def test_empty_or_relative_xdg_cache_home_is_ignored(monkeypatch, value: str) -> None:
    monkeypatch.delenv("PERFCAST_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", value)
    assert cache_dir() == Path.home() / ".cache" / "perfcast" / "native"
    assert cache_dir().is_absolute()


def test_a_library_planted_in_the_working_directory_is_not_loaded(tmp_path: Path, monkeypatch, kernel: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    monkeypatch.delenv("PERFCAST_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    planted = tmp_path / "perfcast" / "native"
    planted.mkdir(parents=True)
    library = build_library(kernel)
    assert library.path.parent == tmp_path / "home" / ".cache" / "perfcast" / "native"
    assert library.handle.answer() == 42


def test_a_cache_others_may_write_is_refused(tmp_path: Path, monkeypatch, kernel: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "native").mkdir(parents=True)
    os.chmod(shared / "native", 0o777)
    monkeypatch.setenv("PERFCAST_CACHE", str(shared))
    with pytest.raises(NativeBuildError, match="others may write"):
        build_library(kernel)


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="chown to another user needs root")
def test_a_cache_of_another_user_is_refused(tmp_path: Path, monkeypatch, kernel: Path) -> None:
    folder = tmp_path / "theirs" / "native"
    folder.mkdir(parents=True, mode=0o700)
    os.chown(folder, 12345, 12345)
    monkeypatch.setenv("PERFCAST_CACHE", str(tmp_path / "theirs"))
    with pytest.raises(NativeBuildError, match="belongs to user id 12345"):
        build_library(kernel)


def test_a_cached_build_others_may_write_is_refused(tmp_path: Path, monkeypatch, kernel: Path) -> None:
    monkeypatch.setenv("PERFCAST_CACHE", str(tmp_path / "cache"))
    path, _, _ = native._compile(kernel, native.DEFAULT_FLAGS, "gcc", ".so")
    os.chmod(path, 0o666)
    with pytest.raises(NativeBuildError, match="cached build"):
        build_library(kernel)


def test_the_key_holds_the_cpu(tmp_path: Path, monkeypatch, kernel: Path) -> None:
    monkeypatch.setenv("PERFCAST_CACHE", str(tmp_path / "cache"))
    here, _, _ = native._compile(kernel, native.DEFAULT_FLAGS, "gcc", ".so")
    monkeypatch.setattr(native, "_cpu_identity", lambda: "model name : another CPU\nflags : sse2")
    there, _, _ = native._compile(kernel, native.DEFAULT_FLAGS, "gcc", ".so")
    assert here != there


def test_a_truncated_cached_library_is_rebuilt(tmp_path: Path, monkeypatch, kernel: Path) -> None:
    monkeypatch.setenv("PERFCAST_CACHE", str(tmp_path / "cache"))
    # Built but not loaded: overwriting a library this process has mapped would crash it.
    path, _, _ = native._compile(kernel, native.DEFAULT_FLAGS, "gcc", ".so")
    path.write_bytes(b"\x7fELF truncated")
    library = build_library(kernel)
    assert library.path == path and library.handle.answer() == 42


def _flags(path: Path) -> list[str]:
    for line in path.read_text().splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return value.split()
    raise AssertionError("no flags line")


CPUINFO = Path(__file__).parent.parent / "data" / "cpuinfo"


@pytest.mark.parametrize("source, machine, name, vector_bytes, registers, block", [
    ("amd-epyc-2core-kvm.txt", "x86_64", "AVX-512", 64, 32, 1536),  # recorded on the AVX-512 VM
    ("arm-neoverse-4core.txt", "aarch64", "NEON", 16, 32, 384),
])
def test_register_blocks_follow_recorded_cpus(source, machine, name, vector_bytes, registers, block):
    isa = native.vector_isa(_flags(CPUINFO / source), machine)
    assert (isa.name.split()[0], isa.vector_bytes, isa.registers, isa.block_bytes) == (
        name, vector_bytes, registers, block)
    assert isa.defines() == (f"-DREGISTER_BYTES={block}", f"-DLANES={block // 4}", f"-DCHAINS={3 * registers // 4}")


@pytest.mark.parametrize("flags, expected", [
    (["sse2", "avx", "avx2", "fma", "avx512f", "avx512bw"], ("AVX-512", 1536)),
    (["sse2", "avx"], ("AVX", 384)),
    (["sse2"], ("SSE2", 192)),
])
def test_register_blocks_follow_the_isa(flags, expected):
    isa = native.vector_isa(flags, "x86_64")
    assert (isa.name, isa.block_bytes) == expected
    # a block never takes more than three quarters of the register file: the rest holds constants
    assert isa.block_bytes <= isa.vector_bytes * isa.registers * 3 // 4


def test_the_kernels_are_built_with_the_isa_defines():
    assert set(native.vector_isa().defines()) <= set(native.native_flags())
