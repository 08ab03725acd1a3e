# Two commands do everything on a fresh Debian 12 machine:
#   make demo   set up, then run the main job (oracle + random episodes on SciGUI-ImageJ-v0)
#   make test   set up, then run the test suite (end-to-end tests drive every installed tool's program)
# and two for the documentation: `make readme` regenerates the README's and the docs' generated
# parts (env table, env pages, measured tables), `make docs` builds the site into site/.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEMO_OUT ?= demo-out
# System packages: what every tool shares (vm_images/local/apt-packages.txt) and each tool's own
# (envs/*/tool.json), listed by a standard-library script so no virtualenv is needed yet.
APT_PACKAGES := $(shell python3 sciagent_gym/deps.py --apt)
# Test modules run in parallel, each whole on one worker (its programs and module fixtures
# stay together; a test class is a scope of its own: the audit has one per tool); most of a
# test's time is waiting for a program, so 2 workers fit 2 cores.
TEST_WORKERS ?= 2
# The CPU build of torch that stable-baselines3 needs (the tests check SB3's env checker).
TORCH ?= torch==2.13.0

.PHONY: setup apt venv demo test lint readme docs-pages docs clean
setup: apt venv

apt: .stamp/apt
.stamp/apt: Makefile vm_images/local/apt-packages.txt $(wildcard envs/*/tool.json)
	@mkdir -p .stamp
	@if dpkg -s $(APT_PACKAGES) >/dev/null 2>&1; then \
		echo "system packages present"; \
	else \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			$(APT_PACKAGES); \
	fi
	@touch $@

venv: .stamp/venv
.stamp/venv: pyproject.toml setup.py Makefile $(wildcard envs/*/tool.json) | .stamp/apt
	@mkdir -p .stamp
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "$(TORCH)"
	$(PY) -m pip install -q -e ".[dev,rl,data,ray,figures]"
	python3 sciagent_gym/deps.py --pip | xargs -r $(PY) -m pip install -q
	@touch $@

demo: setup
	$(VENV)/bin/sciagent-gym doctor
	$(VENV)/bin/sciagent-gym run --env SciGUI-ImageJ-v0 --task count-nuclei --policy oracle \
		--episodes 1 --out $(DEMO_OUT)/oracle -v
	$(VENV)/bin/sciagent-gym run --env SciGUI-ImageJ-v0 --task count-nuclei --policy random \
		--episodes 1 --max-steps 10 --out $(DEMO_OUT)/random -v
	@echo "screenshots: $(DEMO_OUT)/oracle/*/step_*.png $(DEMO_OUT)/random/*/step_*.png"

# The QEMU tests need the ImageJ guest image, whose build needs root (debootstrap, chroot):
# a user with sudo gets it built through sudo into their own cache first.
CACHE := $(or $(SCIAGENT_CACHE),$(HOME)/.cache/sciagent-gym)
test: setup
	@if [ "$$(id -u)" != 0 ]; then \
		$(SUDO) env SCIAGENT_CACHE="$(CACHE)" $(VENV)/bin/sciagent-gym image build imagej && \
		$(SUDO) chown -R "$$(id -u):$$(id -g)" "$(CACHE)"; \
	fi
	SCIAGENT_REQUIRE_APPS=1 $(PY) -m pytest -q --durations=15 -n $(TEST_WORKERS) --dist loadscope

lint: venv
	$(VENV)/bin/ruff check sciagent_gym envs tests examples benchmarks scripts docs/hooks.py

# The README's env table, docs/envs/<tool>.md and the measured tables in docs/ (see the script).
readme: venv
	$(PY) scripts/update_readme.py
docs-pages: readme

# The docs site (MkDocs, Material theme, API reference by mkdocstrings) into site/; --strict
# fails on a broken link or anchor. Builds the pages as committed: run `make readme` first to
# regenerate them.
docs: .stamp/docs
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site
.stamp/docs: pyproject.toml | .stamp/venv
	$(PY) -m pip install -q -e ".[docs]"
	@touch $@

clean:
	rm -rf .stamp $(DEMO_OUT) build site *.egg-info
