# Two commands on a fresh machine: `make demo` and `make test`.
# Each builds .venv by itself; the stamp file re-installs when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
OUT    := out

.PHONY: demo test venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
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
	$(BIN)/perfcast hull '1024x1024|neighb(7x7) -> 1024x1024|element' --device gtx470 \
	    --device $(OUT)/this-machine.yaml --f 1,16,256 --transfers -o $(OUT)/erode-hull.png
	@echo "wrote $(OUT)/this-machine.yaml, this-machine-roofline.png, fast-focus.png, erode-hull.png"

test: $(STAMP)
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache .hypothesis
