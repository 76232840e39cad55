# rankwise for Spack (docs/guide/install.md, "Spack"). The project builds as a Python package
# whose wheel holds the C engine (scikit-build-core runs CMake), so this is a PythonPackage;
# the CMake options it passes are those of CMakeLists.txt and engine/CMakeLists.txt.

import json
import os

from spack.package import *

try:  # Spack 1.x: the build systems live in the builtin repository
    from spack_repo.builtin.build_systems.python import PythonPackage

    _COMPILER_DEPS = True
except ImportError:  # Spack 0.x: spack.package exports them, and has no compiler dependencies
    _COMPILER_DEPS = False


class Rankwise(PythonPackage):
    """Measure the network an MPI job runs on into a performance model, place its ranks
    where the traffic flows fastest, predict collective costs, and run network-aware
    collectives."""

    # No release is published yet: the source is the clone this file is in (its branch main,
    # as committed), or a working tree with `spack dev-build -d`/`spack develop`
    # (docs/guide/install.md). Give url/git and checksums at the first release.
    git = "file://" + os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 4))
    version("main", branch="main")

    license("BSD-3-Clause")

    variant("smpi", default=False,
            description="Also build the MPI programs against SimGrid SMPI (the simulated cluster)")
    variant("hwloc", default=True, description="Read node topologies with hwloc (rankwise node)")
    variant("metis", default=True, description="Multilevel mapping with METIS")

    if _COMPILER_DEPS:
        depends_on("c", type="build")

    depends_on("python@3.10:", type=("build", "run"))
    depends_on("py-scikit-build-core@0.9:", type="build")
    depends_on("cmake@3.20:", type="build")
    depends_on("ninja", type="build")
    depends_on("pkgconfig", type="build", when="+hwloc")

    depends_on("mpi")
    depends_on("simgrid", when="+smpi")
    depends_on("hwloc", when="+hwloc")
    depends_on("metis@5:", when="+metis")

    depends_on("py-numpy@1.24:", type=("build", "run"))
    depends_on("py-matplotlib@3.7:", type=("build", "run"))
    depends_on("py-typer@0.12:", type=("build", "run"))
    depends_on("py-rich@13:", type=("build", "run"))

    def config_settings(self, spec, prefix):
        settings = {
            # Not pyproject.toml's build/{wheel_tag}: a dev-build must not share the clone's
            # own build folder (`make build`), whose CMake cache names other compilers.
            "build-dir": "spack-build-{wheel_tag}",
            "cmake.define.MPI_C_COMPILER": spec["mpi"].mpicc,
            "cmake.define.RW_WITH_SMPI": "ON" if spec.satisfies("+smpi") else "OFF",
        }
        # engine/CMakeLists.txt uses hwloc and METIS wherever it finds them; a disabled
        # variant must not pick up the system's copy. pkg-config is only used for hwloc, and
        # a METIS path that is set (to a false value) is not searched for.
        if spec.satisfies("~hwloc"):
            settings["cmake.define.CMAKE_DISABLE_FIND_PACKAGE_PkgConfig"] = "ON"
        if spec.satisfies("~metis"):
            settings["cmake.define.METIS_INCLUDE_DIR"] = "OFF"
        else:
            settings["cmake.define.METIS_INCLUDE_DIR"] = spec["metis"].prefix.include
            settings["cmake.define.METIS_LIBRARY"] = spec["metis"].libs[0]
        return settings

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_build_info(self):
        # What the build holds, as the installed package reports it (the build environment
        # does not have the package's own prefix on the Python path yet).
        # pip installed with python-venv's interpreter where Spack builds Python packages in one.
        python = self.spec["python-venv" if "python-venv" in self.spec else "python"]
        purelib = join_path(self.prefix, python.package.purelib)
        path = os.pathsep.join(p for p in (purelib, os.environ.get("PYTHONPATH")) if p)
        info = Executable(self.prefix.bin.rankwise)("info", "--json", output=str, extra_env={"PYTHONPATH": path})
        features = json.loads(info)["features"]
        print(features)
        # A variant that is on must be in the build, and one that is off must not.
        for feature, variant in (("hwloc", "+hwloc"), ("METIS", "+metis"),
                                 ("simulated cluster (SimGrid SMPI)", "+smpi")):
            built = not features[feature].startswith("no")
            if built != self.spec.satisfies(variant):
                raise InstallError(f"rankwise info disagrees with {variant}: {feature} = {features[feature]}")
