"""The C engine installed the ordinary way (issue 23): `cmake -S engine` configured, built and
installed into a temporary prefix once for the module, then used as a C programmer would:
GNU directories, headers in include/rankwise/ that declare exactly what each library exports,
versioned shared libraries, a program built with pkg-config and one with CMake's
find_package, the MPI one run under mpirun on 2 ranks against the MPI's own collectives."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from rankwise import __version__
from rankwise.cluster.launch import mpi_environment

ROOT = Path(__file__).resolve().parents[2]
USER = ROOT / "tests" / "install"
TOOLS = ("cmake", "cc", "mpicc", "mpirun", "pkg-config", "nm", "objdump")

pytestmark = pytest.mark.skipif(not all(shutil.which(t) for t in TOOLS),
                                reason="needs " + ", ".join(TOOLS))

# Which installed header belongs to which library: each library's headers declare exactly the
# functions it exports (MPI_ and PMPI_ interposers aside).
HEADERS = {
    "librankwise": {"rankwise.h", "rankwise_status.h", "rankwise_tree.h", "rankwise_map.h",
                    "rankwise_node.h", "rankwise_predict.h", "rankwise_coll_rules.h",
                    "rankwise_coll_tune.h"},
    "librankwise_coll": {"rankwise_coll.h", "rankwise_live.h", "rankwise_tree.h", "rankwise_status.h"},
    "librankwise_profile": {"rankwise_profile.h", "rankwise_status.h"},
}


@dataclass
class Install:
    build: Path
    prefix: Path
    libdir: Path
    include: Path
    pkgconfig: Path


def _run(cmd: list[str], timeout: float = 600, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    assert r.returncode == 0, " ".join(map(str, cmd)) + "\n" + r.stdout[-2000:] + r.stderr[-3000:]
    return r


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Install:
    top = tmp_path_factory.mktemp("install")
    build, prefix = top / "build", top / "prefix"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    # Debug (-O0) compiles fastest; what is checked is the install, the same at any level.
    _run(["cmake", "-S", str(ROOT / "engine"), "-B", str(build), *generator, "-DCMAKE_BUILD_TYPE=Debug",
          f"-DCMAKE_INSTALL_PREFIX={prefix}"])
    _run(["cmake", "--build", str(build), "-j", "2"])
    _run(["cmake", "--install", str(build)])
    pcs = list(prefix.rglob("rankwise.pc"))
    assert len(pcs) == 1, f"one rankwise.pc under {prefix}, found {pcs}"
    libdir = pcs[0].parent.parent
    return Install(build, prefix, libdir, prefix / "include" / "rankwise", pcs[0].parent)


def _pkg_config(inst: Install, *args: str) -> str:
    env = {**os.environ, "PKG_CONFIG_PATH": str(inst.pkgconfig)}
    return _run(["pkg-config", *args], env=env).stdout.strip()


def test_pkg_config_follows_the_prefix_installed_into(installed, tmp_path):
    other = tmp_path / "elsewhere"
    _run(["cmake", "--install", str(installed.build), "--prefix", str(other)])
    moved = Install(installed.build, other, other / installed.libdir.relative_to(installed.prefix),
                    other / "include" / "rankwise", other / installed.pkgconfig.relative_to(installed.prefix))
    assert _pkg_config(moved, "--cflags-only-I", "rankwise").split() == [f"-I{moved.include}"]
    assert f"-L{moved.libdir}" in _pkg_config(moved, "--libs", "rankwise-coll").split()


def _exported(lib: Path) -> set[str]:
    out = _run(["nm", "-D", "--defined-only", str(lib)]).stdout
    names = {line.split()[-1] for line in out.splitlines() if line.strip()}
    return {n for n in names if not re.match(r"P?MPI_", n)}


def _declared(inst: Install, header: str, tmp: Path) -> set[str]:
    """The functions `header` itself declares, as the compiler reads them (-aux-info)."""
    src, aux = tmp / f"{header}.c", tmp / f"{header}.aux"
    src.write_text(f"#include <{header}>\n")
    _run(["mpicc", f"-I{inst.include}", "-fsyntax-only", "-aux-info", str(aux), str(src)])
    path = str(inst.include / header)
    names = set()
    for line in aux.read_text().splitlines():
        m = re.match(r"/\* (\S+):\d+:\w+ \*/ (.*)", line)
        if m and m.group(1) == path and "static" not in m.group(2):
            names.add(re.search(r"(\w+) \(", m.group(2)).group(1))
    return names


def test_installs_into_the_gnu_directories_with_versioned_libraries(installed):
    inst = installed
    assert sorted(p.name for p in inst.include.iterdir()) == sorted(set().union(*HEADERS.values()))
    for name in ("rankwise-probe", "rankwise-bench-collectives"):
        assert os.access(inst.prefix / "bin" / name, os.X_OK), name
    assert (inst.prefix / "share" / "rankwise" / "build-info.txt").is_file()
    major, minor, _ = __version__.split(".")
    soversion = f"{major}.{minor}" if major == "0" else major
    for lib in HEADERS:
        link = inst.libdir / f"{lib}.so"
        assert link.is_symlink() and link.resolve().name == f"{lib}.so.{__version__}", link
        soname = re.search(r"SONAME\s+\[?\s*(\S+?)\]?$",
                           _run(["objdump", "-p", str(link)]).stdout, re.M).group(1)
        assert soname == f"{lib}.so.{soversion}"
    for pc in ("rankwise", "rankwise-coll", "rankwise-profile"):
        assert _pkg_config(inst, "--modversion", pc) == __version__
    assert (inst.libdir / "cmake" / "rankwise" / "rankwiseConfigVersion.cmake").is_file()


@pytest.mark.parametrize("lib", sorted(HEADERS))
def test_headers_declare_exactly_what_the_library_exports(installed, lib, tmp_path):
    declared = set().union(*(_declared(installed, h, tmp_path) for h in HEADERS[lib]))
    exported = _exported(installed.libdir / f"{lib}.so")
    assert declared - exported == set(), f"declared in {sorted(HEADERS[lib])}, not exported by {lib}"
    assert exported - declared == set(), f"exported by {lib}, declared in none of its headers"


def _check_engine_user(exe: Path, env: dict[str, str] | None = None) -> None:
    alpha, beta = 1.5e-6, 2.5e-10
    out = _run([str(exe), str(alpha), str(beta)], env=env).stdout
    m = re.search(r"version (\S+) abi \d+\nalpha (\S+) beta (\S+)", out)
    assert m and m.group(1) == __version__, out
    assert float(m.group(2)) == pytest.approx(alpha, rel=1e-3) and float(m.group(3)) == pytest.approx(beta, rel=1e-3)


def _check_coll_user(exe: Path, variables: dict[str, str]) -> None:
    # No RANKWISE_ variable of the caller's: the PMPI_ side must be the MPI's own.
    env = {k: v for k, v in mpi_environment().items() if not k.startswith("RANKWISE_")}
    cmd = ["mpirun", "-np", "2", "--oversubscribe"]
    for k, v in variables.items():
        cmd += ["-x", f"{k}={v}"]
    r = subprocess.run(cmd + [str(exe)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    lines = re.findall(r"rank (\d) checks (\d+) mismatches (\d+)", r.stdout)
    assert sorted(rank for rank, _, _ in lines) == ["0", "1"], r.stdout
    assert all(int(checks) > 0 and mismatches == "0" for _, checks, mismatches in lines), r.stdout


def test_a_program_built_with_pkg_config(installed, tmp_path):
    exe = tmp_path / "engine_user"
    flags = _pkg_config(installed, "--cflags", "--libs", "rankwise").split()
    _run(["cc", str(USER / "engine_user.c"), *flags, "-o", str(exe)])
    _check_engine_user(exe, {**os.environ, "LD_LIBRARY_PATH": str(installed.libdir)})


def test_an_mpi_program_built_with_pkg_config_matches_the_mpis_collectives(installed, tmp_path):
    exe = tmp_path / "coll_user"
    # Requires the MPI's own module where it has one (Open MPI's ompi-c, MPICH's mpich): then a
    # plain compiler does; otherwise the MPI wrapper the file names.
    compiler = "cc" if _pkg_config(installed, "--print-requires", "rankwise-coll") else \
        _pkg_config(installed, "--variable=mpicc", "rankwise-coll")
    flags = _pkg_config(installed, "--cflags", "--libs", "rankwise-coll").split()
    _run([compiler, str(USER / "coll_user.c"), *flags, "-o", str(exe)])
    _check_coll_user(exe, {"LD_LIBRARY_PATH": str(installed.libdir)})


def test_programs_built_with_cmake_find_package(installed, tmp_path):
    build = tmp_path / "build"
    _run(["cmake", "-S", str(USER), "-B", str(build), f"-DCMAKE_PREFIX_PATH={installed.prefix}",
          f"-DRANKWISE_VERSION_WANTED={__version__}"], env=mpi_environment())
    _run(["cmake", "--build", str(build)])
    # The imported targets carry the library paths: the programs run without LD_LIBRARY_PATH.
    _check_engine_user(build / "engine_user")
    _check_coll_user(build / "coll_user", {})


@pytest.mark.parametrize("order", [["-lrankwise", "-lrankwise_coll"], ["-lrankwise_coll", "-lrankwise"]])
def test_one_last_error_for_both_libraries(installed, tmp_path, order):
    """Each library links the engine privately, yet rw_last_error, whichever library the name
    resolves to (the first linked), says why a call of either failed."""
    exe = tmp_path / "errors_user"
    _run(["mpicc", str(USER / "errors_user.c"), f"-I{installed.include}", f"-L{installed.libdir}", *order,
          "-o", str(exe)])
    r = _run([str(exe)], env={**os.environ, "LD_LIBRARY_PATH": str(installed.libdir)})
    assert r.stdout == "ok\n", r.stdout + r.stderr


def test_an_error_inside_the_preloaded_collectives_library_reaches_python():
    """With librankwise_coll preloaded, a call to a function both libraries export (rw_tree_*)
    may run in the collectives library's copy of the engine, even from librankwise's own code:
    its message still reaches the Python binding's rw_last_error, librankwise's ("no error"
    when each library kept its own)."""
    from rankwise.util import paths

    lib = paths.PACKAGE_DIR / "_lib"
    script = "\n".join([
        "import ctypes",
        f"lib = ctypes.CDLL({str(lib / 'librankwise.so')!r})",
        "lib.rw_last_error.restype = ctypes.c_char_p",
        "parent = (ctypes.c_int32 * 3)(-1, 2, 1)  # ranks 1 and 2 in a cycle",
        "tree = ctypes.c_void_p()",
        "st = ctypes.CDLL(None).rw_tree_from_parents(3, 0, parent, None, ctypes.byref(tree))",
        "print(st, lib.rw_last_error().decode())",
    ])
    r = _run([sys.executable, "-c", script],
             env={**mpi_environment(), "LD_PRELOAD": str(lib / "librankwise_coll.so")})
    status, message = r.stdout.strip().split(" ", 1)
    assert int(status) != 0 and "a cycle" in message, r.stdout


def test_find_package_refuses_another_minor_release(installed, tmp_path):
    major, minor, _ = __version__.split(".")
    r = subprocess.run(["cmake", "-S", str(USER), "-B", str(tmp_path / "build"),
                        f"-DCMAKE_PREFIX_PATH={installed.prefix}", f"-DRANKWISE_VERSION_WANTED={major}.{int(minor) + 1}"],
                       capture_output=True, text=True, env=mpi_environment(), timeout=300)
    assert r.returncode != 0 and "compatible with requested version" in " ".join(r.stderr.split()), r.stderr[-2000:]


def _path_without_simgrid(tmp_path: Path) -> str:
    """A PATH with every program of the current one but SimGrid's (smpicc, smpirun, ...)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for d in os.environ["PATH"].split(os.pathsep):
        for exe in Path(d).glob("*") if Path(d).is_dir() else ():
            if not exe.name.startswith("smpi") and not (bin_dir / exe.name).exists():
                (bin_dir / exe.name).symlink_to(exe)
    return str(bin_dir)


@pytest.mark.parametrize("mode", ["AUTO", "ON"])
def test_the_package_build_without_simgrid(tmp_path, mode):
    """pip install . where SimGrid is absent: AUTO (the default) configures without the simulated
    cluster and says so in one line; ON asks for it and stops, naming the cause."""
    env = {**mpi_environment(), "PATH": _path_without_simgrid(tmp_path)}
    ninja = shutil.which("ninja")
    args = ["cmake", "-S", str(ROOT), "-B", str(tmp_path / "build"), "-G", "Ninja" if ninja else "Unix Makefiles",
            "-DCMAKE_FIND_USE_CMAKE_SYSTEM_PATH=OFF"]
    if mode == "ON":
        args.append("-DRW_WITH_SMPI=ON")
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    said = [line for line in (r.stdout + r.stderr).splitlines() if "smpicc not found" in line]
    if mode == "AUTO":
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        assert len(said) == 1 and "simulated cluster is not built" in said[0], said
        generated = tmp_path / "build" / ("build.ninja" if ninja else "Makefile")
        assert "engine_smpi" not in generated.read_text(errors="replace")
    else:
        # CMake wraps an error's lines.
        assert r.returncode != 0 and len(said) == 1, said
        assert "configure with -DRW_WITH_SMPI=AUTO or OFF" in " ".join((r.stdout + r.stderr).split())


@pytest.mark.parametrize("how", ["AUTO, no MPI found", "OFF"])
def test_the_mpi_free_library_builds_without_mpi(tmp_path, how):
    """librankwise needs no MPI: where CMake finds none (AUTO, the default) or with RW_WITH_MPI=OFF,
    it alone is built and installed, said in one line; a C program uses it through pkg-config."""
    build, prefix = tmp_path / "build", tmp_path / "prefix"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    hide = ["-DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON"] if how.startswith("AUTO") else ["-DRW_WITH_MPI=OFF"]
    r = _run(["cmake", "-S", str(ROOT / "engine"), "-B", str(build), *generator, "-DCMAKE_BUILD_TYPE=Debug",
              f"-DCMAKE_INSTALL_PREFIX={prefix}", *hide])
    said = [line for line in r.stdout.splitlines() if "rankwise:" in line and "MPI" in line]
    assert len(said) == 1 and "librankwise" in said[0], said
    _run(["cmake", "--build", str(build), "-j", "2"])
    _run(["cmake", "--install", str(build)])
    libs = sorted(p.name for p in prefix.rglob("librankwise*.so*"))
    assert libs and all(n.startswith("librankwise.so") for n in libs), libs
    pcs = sorted(p.name for p in prefix.rglob("*.pc"))
    assert pcs == ["rankwise.pc"], pcs
    info = next(prefix.rglob("build-info.txt")).read_text()
    assert "mpi_standard = none (built without MPI)" in info, info
    inst = Install(build, prefix, next(prefix.rglob("rankwise.pc")).parent.parent, prefix / "include" / "rankwise",
                   next(prefix.rglob("rankwise.pc")).parent)
    exe = tmp_path / "engine_user"
    flags = _pkg_config(inst, "--cflags", "--libs", "rankwise").split()
    _run(["cc", str(USER / "engine_user.c"), *flags, "-o", str(exe)])
    _check_engine_user(exe, {**os.environ, "LD_LIBRARY_PATH": str(inst.libdir)})
