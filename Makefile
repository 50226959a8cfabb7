# Two commands on a fresh machine: `make demo` and `make test`.
# Each builds .venv by itself; the stamp file re-installs when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
OUT    := out

.PHONY: demo test docs venv system clean

venv: $(STAMP)

# System packages: a C compiler with OpenMP (native kernels), PoCL (OpenCL on the CPU), Oclgrind (the OpenCL
# profiler `perfcast profile --tool oclgrind` runs) with what its plugin API needs to build perfcast's memory
# tracer and block counter (g++, its headers, the OpenCL and LLVM headers), llvm-mca and objdump (the in-core
# reading of PoCL's compiled loops, docs/models.md §3.5), and likwid and clpeak (the peers
# `perfcast validate bench --against likwid` runs beside).
# Installed with apt-get where we may; elsewhere the tests that need them are skipped, and say so.
SYSTEM_PACKAGES := gcc g++ make libgomp1 pocl-opencl-icd ocl-icd-libopencl1 ocl-icd-opencl-dev likwid clpeak oclgrind liboclgrind-dev \
                   opencl-c-headers llvm-dev llvm binutils
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo -n)
system:
	@if command -v apt-get >/dev/null 2>&1; then \
	    missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	    if [ -n "$$missing" ]; then \
	        echo "installing system packages:" $$missing; \
	        ($(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) \
	            || echo "warning: could not install $$missing; OpenCL or native tests will be skipped"; \
	    fi; \
	else echo "no apt-get: install a C compiler with OpenMP and an OpenCL runtime (PoCL) yourself"; fi

$(STAMP): pyproject.toml
	$(MAKE) --no-print-directory system
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,docs,ray]'
	touch $(STAMP)

demo: $(STAMP)
	mkdir -p $(OUT)
	$(BIN)/perfcast devices detect -o $(OUT)/this-machine.yaml
	$(BIN)/perfcast roofline --device $(OUT)/this-machine.yaml --precision fp64 --hierarchical \
	    --kernel triad:2e8:2.4e9 \
	    --kernel stencil-7pt:1.34e8:L1=1.07e9,L2=4e8,DRAM=2.68e8 \
	    --kernel dgemm-1024:2.15e9:2.5e7 \
	    -o $(OUT)/this-machine-roofline.png
	$(BIN)/perfcast app examples/fast-focus.yaml --device gtx470 --device gts250 -o $(OUT)/fast-focus.png
	$(BIN)/perfcast classify examples/fast-focus.c --function erode --predict --device gtx470 --device $(OUT)/this-machine.yaml
	$(BIN)/perfcast hull '1024x1024|neighb(7x7) -> 1024x1024|element' --device gtx470 \
	    --device $(OUT)/this-machine.yaml --f 1,16,256 --transfers -o $(OUT)/erode-hull.png
	$(BIN)/perfcast bench --quick -o $(OUT)/this-machine-measured.yaml --plot $(OUT)/measured-roofline.png
	@echo "wrote $(OUT)/: this-machine.yaml, this-machine-roofline.png, fast-focus.png, erode-hull.png,"
	@echo "            this-machine-measured.yaml, measured-roofline.png"

test: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/mypy
	@# not --quiet: it hides the warnings that --strict counts, and a broken link or anchor then passes;
	@# the build's INFO lines are shown only where it fails, beside its warnings
	@out=$$(NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir $(VENV)/site-check 2>&1) \
	    || { printf '%s\n' "$$out" | grep -v '^INFO'; echo "mkdocs build --strict failed"; exit 1; }
	$(BIN)/python -m pytest

# The documentation site in site/ (open site/index.html); a broken link or page fails the build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) $(OUT) site .pytest_cache .hypothesis
