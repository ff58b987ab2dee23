# Convenience targets; the build itself is CMake (build/).
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)
TASK ?= matmul
BUDGET ?= 40

.PHONY: all build run test clean

all: build

# ksearch and its runners only; the unit tests' programs are built by `make test`
build:
	@scripts/setup.sh
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The main job: a search with the built-in policy on the CPU.
run: build
	$(BUILD)/ksearch run $(TASK) --backend cpu --budget $(BUDGET)

test: build
	@cmake --build $(BUILD) -j $(JOBS) --target ks-tests
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
