# rankwise — set-up, build, demo and tests in one place.
#   make demo   install what is missing, build, probe the simulated cluster, map three jobs, run them before/after
#   make test   install what is missing, build, run every test (pytest + ctest)
#   make check-readme  run every command of README.md here (also part of make test)
# Both are idempotent: a second run only rebuilds what changed.

VENV      ?= .venv
PYTHON    ?= python3
PY        := $(VENV)/bin/python
RANKWISE  := $(VENV)/bin/rankwise
APT_PKGS  := build-essential cmake ninja-build python3-venv libmetis-dev mpich libmpich-dev \
             openmpi-bin libopenmpi-dev libsimgrid-dev clang libhwloc-dev zsh
PY_DEPS   := numpy matplotlib typer rich pytest hypothesis scikit-build-core
SOURCES   := $(shell find engine python -type f -not -path '*/__pycache__/*') \
             CMakeLists.txt pyproject.toml
TESTBUILD := build/engine-tests
DEMO_OUT  ?= rankwise-demo

# Any MPI: `make MPICC=/path/to/mpicc` builds the real-MPI programs with it.
ifdef MPICC
export CMAKE_ARGS += -DMPI_C_COMPILER=$(MPICC)
endif

export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1

# Fuzzing the engine's readers (tests/fuzz/README.md): `make fuzz` runs each
# libFuzzer harness FUZZ_SECONDS; `make test` runs them TEST_FUZZ_SECONDS.
FUZZ_SECONDS      ?= 300
TEST_FUZZ_SECONDS ?= 20

# The demo on real MPI: an emulated cluster of 8 hosts (root and network namespaces; else one
# line and exit 2), brought up and taken down (docs/concepts/emulation.md).
demo-real: build
	$(RANKWISE) demo --emulated --out $(DEMO_OUT)-real

.PHONY: demo demo-real test build system clean bench studies fuzz check-readme warnings \
        man completion install-man install-completion

demo: build
	$(RANKWISE) demo --out $(DEMO_OUT)

test: build $(TESTBUILD)/.built build/.slurm warnings
	ctest --test-dir $(TESTBUILD) --output-on-failure
	FUZZ_SECONDS=$(TEST_FUZZ_SECONDS) tests/fuzz/run.sh
	$(PY) -m pytest -q --durations=20

fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh

# Every command of README.md, run in a scratch folder (tests/python/test_readme.py says what it
# substitutes for this machine); also part of `make test`.
check-readme: build
	$(PY) -m pytest -q -m readme tests/python/test_readme.py

# The papers' before/after tables on simulated platforms (rankwise bench).
bench: build
	$(RANKWISE) bench --out rankwise-bench

# Studies of rankwise itself, by area (studies/README.md): `make studies` runs every study that
# runs unattended, `make studies AREA="coll live"` those areas' (studies/run.py --list names them);
# the emulated cluster's are skipped without root and network namespaces.
AREA ?=
studies: build
	$(PY) studies/run.py $(AREA)

build: $(VENV)/.installed

# System packages: only what is missing, and only once.
# Slurm for the emulated cluster's Slurm tests (tests/python/emulate/test_emulate_slurm.py): installed
# once as root without its recommends; where it cannot be, those tests skip and say why. Debian's
# packages try to start munge and slurmd services (refused where policy-rc.d says so, as here);
# the tests run their own daemons from the cluster's folder, never those.
SLURM_PKGS := slurmctld slurmd slurm-client munge
build/.slurm:
	@mkdir -p build
	@if ! command -v srun >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(SLURM_PKGS); } \
	      || echo "rankwise: Slurm not installed: its emulated-cluster tests will be skipped"; \
	  else echo "rankwise: no Slurm (apt-get install $(SLURM_PKGS) as root): its tests will be skipped"; fi; \
	fi
	@touch $@

build/.system:
	@mkdir -p build
	@missing=""; \
	for c in cc cmake ninja mpicc mpirun smpicc smpirun clang zsh; do command -v $$c >/dev/null || missing=1; done; \
	[ -f /usr/include/metis.h ] && [ -f /usr/include/hwloc.h ] || missing=1; \
	$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || missing=1; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then echo "rankwise: run 'make' as root once (apt-get install $(APT_PKGS))"; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PKGS); \
	fi
	@touch $@

$(VENV)/.deps: build/.system
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(PY_DEPS)
	@touch $@

# The package with its C engine (scikit-build-core; incremental in build/).
$(VENV)/.installed: $(VENV)/.deps $(SOURCES)
	$(PY) -m pip install -q --no-build-isolation --no-deps .
	@touch $@

# No compiler warnings at -Wall -Wextra in the optimised builds (where GCC's flow analysis
# warns): the engine with its tests under Open MPI and under MPICH, and the SMPI twin.
WARNBUILD := build/warnings
warnings: $(WARNBUILD)/.clean
$(WARNBUILD)/.clean: build/.system $(SOURCES) $(shell find tests/engine -type f)
	cmake -S engine -B $(WARNBUILD)/openmpi -G Ninja -DCMAKE_BUILD_TYPE=Release -DRW_ENGINE_TESTS=ON -DRW_WERROR=ON >/dev/null
	cmake --build $(WARNBUILD)/openmpi
	cmake -S engine -B $(WARNBUILD)/mpich -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPI_C_COMPILER=mpicc.mpich -DRW_WERROR=ON >/dev/null
	cmake --build $(WARNBUILD)/mpich
	SMPI_PRETEND_CC=1 cmake -S engine -B $(WARNBUILD)/smpi -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=smpicc -DRW_SMPI=ON -DRW_WERROR=ON >/dev/null
	cmake --build $(WARNBUILD)/smpi
	@touch $@

$(TESTBUILD)/.built: build/.system $(SOURCES) $(shell find tests/engine -type f)
	cmake -S engine -B $(TESTBUILD) -G Ninja -DRW_ENGINE_TESTS=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build $(TESTBUILD)
	@touch $@

# Man pages (one per verb and sub-verb) and bash/zsh completion, generated from the command tree
# (python/rankwise/cli/manpages.py); the install-* targets copy them under $(DESTDIR)$(PREFIX).
PREFIX ?= /usr/local
MANDIR ?= $(PREFIX)/share/man
man: build
	rm -rf build/man
	$(PY) -m rankwise.cli.manpages --man build/man/man1

completion: build
	$(PY) -m rankwise.cli.manpages --completion build/completion

install-man: man
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 644 build/man/man1/*.1 $(DESTDIR)$(MANDIR)/man1/

install-completion: completion
	install -D -m 644 build/completion/rankwise.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/rankwise
	install -D -m 644 build/completion/_rankwise $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_rankwise

clean:
	rm -rf build $(VENV) $(DEMO_OUT) rankwise-bench
