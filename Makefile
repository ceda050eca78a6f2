# amp-opt: the two commands of the README.
#   make demo   install what is missing, build, run amp-opt on the bundled example
#   make test   install what is missing, build, run every test
# Other targets: deps (Debian packages), ort (ONNX Runtime from npm), build,
# check-cuda, check-sanitize, fuzz, bench, docs, clean.

BUILD ?= build
CMAKE_FLAGS ?=

# Debian packages the build and the tests need (see ../shared/TOOLCHAIN.md).
# OpenBLAS (pthread build) runs amp-run's GEMMs (libamp_cpu_runtime), and
# replaces the reference BLAS that Debian's torch links by default: tracing
# the large zoo models is many times faster with it. torchvision's models
# (swin, vision_transformer) are test steps nobody here wrote.
PACKAGES := cmake ninja-build clang-22 lld libclang-rt-22-dev llvm-22-dev \
  libmlir-22-dev mlir-22-tools llvm-22-tools libonnx-dev libprotobuf-dev \
  protobuf-compiler python3-onnx python3-numpy python3-torch python3-pytest \
  python3-matplotlib python3-pytest-xdist python3-torchvision \
  libopenblas-dev libboost-graph-dev libglpk-dev
# ONNX Runtime for the numerics tests: npm's onnxruntime-node, into
# $(BUILD)/npm (CPU binaries ship in the package; its install script would
# fetch CUDA ones, hence --ignore-scripts).
ORT_VERSION := 1.30.0
ORT := $(BUILD)/npm/node_modules/onnxruntime-node/package.json
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps ort configure build demo test check-cuda sanitize-build \
  check-sanitize fuzz bench docs clean

all: build

deps:
	@missing=$$(for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
	    grep -q '^install ok installed$$' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "make: installing missing Debian packages:" $$missing; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
	    --no-install-recommends $$missing >/dev/null || exit 1; \
	fi

ort: $(ORT)

$(ORT):
	@command -v node >/dev/null && command -v npm >/dev/null || { \
	  echo "make: installing nodejs and npm"; \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
	    --no-install-recommends nodejs npm >/dev/null || exit 1; }
	@echo "make: installing onnxruntime-node $(ORT_VERSION) into $(BUILD)/npm"
	@mkdir -p $(BUILD)/npm
	@cd $(BUILD)/npm && npm install --silent --no-audit --no-fund \
	  --ignore-scripts onnxruntime-node@$(ORT_VERSION) >/dev/null

$(BUILD)/build.ninja:
	cmake -G Ninja -S . -B $(BUILD) \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
	  -DLLVM_USE_LINKER=lld \
	  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
	  -DMLIR_LINK_MLIR_DYLIB=ON -DAMP_ENABLE_FUZZER=ON $(CMAKE_FLAGS)

configure: deps $(BUILD)/build.ninja

build: configure
	ninja -C $(BUILD)

demo: build
	@echo "== amp-opt examples/mlp_training_step.onnx --onnxg-print-summary -o $(BUILD)/demo.onnx"
	@$(BUILD)/bin/amp-opt examples/mlp_training_step.onnx --onnxg-print-summary \
	  -o $(BUILD)/demo.onnx
	@echo "== the first nodes of the imported graph (amp-opt examples/mlp_training_step.onnx)"
	@$(BUILD)/bin/amp-opt examples/mlp_training_step.onnx \
	  --mlir-print-debuginfo=false | grep -m 6 'onnxg.node' | cut -c1-150
	@echo "== round trip: $(BUILD)/demo.onnx against the original"
	@/usr/bin/python3 test/utils/compare_onnx.py examples/mlp_training_step.onnx \
	  $(BUILD)/demo.onnx
	@echo "== FP16 conversion of the same step, 256 -> 1024 -> 16 wide, at a batch of 8192:"
	@/usr/bin/python3 examples/make_mlp_training_step.py --features 256 \
	  --hidden 1024 --classes 16 -o $(BUILD)/mlp_wide_step.onnx >/dev/null
	@echo "   amp-opt $(BUILD)/mlp_wide_step.onnx --amp-pipeline=\"precision=fp16 dim=batch:8192 report=$(BUILD)/demo.report.json\" -o $(BUILD)/demo.fp16.onnx"
	@$(BUILD)/bin/amp-opt $(BUILD)/mlp_wide_step.onnx \
	  --amp-pipeline="precision=fp16 dim=batch:8192 report=$(BUILD)/demo.report.json" \
	  -o $(BUILD)/demo.fp16.onnx
	@/usr/bin/python3 examples/show_report.py $(BUILD)/demo.report.json

# pytest-xdist runs the Python tests one file per worker, a worker per core:
# each test is mostly one single-threaded amp-opt or amp-run process.
PYTEST := /usr/bin/python3 -m pytest -q -p no:cacheprovider -n auto \
  --dist loadfile

test: build ort
	ninja -C $(BUILD) check-amp
	$(PYTEST) --durations=15 test/python

# The CUDA backend on the large zoo (too slow for `make test`): every step
# and precision compiles to a library (timed in bench/results/cuda_compile.md),
# and on a machine with a GPU the GPU tests run.
check-cuda: build
	/usr/bin/python3 bench/cuda_compile.py --size large
	AMP_LARGE_ZOO=1 /usr/bin/python3 -m pytest -q -p no:cacheprovider \
	  test/python/test_cuda_backend.py -k large_zoo
	/usr/bin/python3 -m pytest -q -p no:cacheprovider test/python/test_cuda_device.py

# ASan and UBSan (docs/Reliability.md): a second build folder where every file is
# instrumented, and any report fails the run. check-sanitize runs the lit
# suite and the Python tests with its tools; fuzz runs the fuzz campaigns on
# its fuzz targets (FUZZ_RUNS executions each, bench/results/fuzz.md).
SANITIZE_BUILD ?= build-sanitize
FUZZ_RUNS ?= 1000000
SANITIZE_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  AMP_OPT=$(CURDIR)/$(SANITIZE_BUILD)/bin/amp-opt \
  AMP_RUN=$(CURDIR)/$(SANITIZE_BUILD)/bin/amp-run \
  AMP_TRANSLATE=$(CURDIR)/$(SANITIZE_BUILD)/bin/amp-translate \
  AMP_COMPILE=$(CURDIR)/$(SANITIZE_BUILD)/bin/amp-compile

sanitize-build: deps
	$(MAKE) BUILD=$(SANITIZE_BUILD) CMAKE_FLAGS="-DAMP_SANITIZE=ON" build

check-sanitize: sanitize-build ort
	$(SANITIZE_ENV) ninja -C $(SANITIZE_BUILD) check-amp
	$(SANITIZE_ENV) $(PYTEST) test/python

fuzz: sanitize-build
	/usr/bin/python3 bench/fuzz_campaign.py --build $(SANITIZE_BUILD) \
	  --runs $(FUZZ_RUNS)

bench: build
	/usr/bin/python3 bench/roundtrip.py --amp-opt $(BUILD)/bin/amp-opt

docs: configure
	ninja -C $(BUILD) mlir-doc
	cp $(BUILD)/docs/Dialects/ONNXGraphOps.md $(BUILD)/docs/Dialects/AMPOps.md docs/dialects/
	cp $(BUILD)/docs/ONNXGraphPasses.md $(BUILD)/docs/AMPPasses.md \
	  $(BUILD)/docs/AMPConversionPasses.md docs/passes/
	mkdir -p docs/interfaces
	cp $(BUILD)/docs/Interfaces/PrecisionOpInterface.md \
	  $(BUILD)/docs/Interfaces/CastFusionOpInterface.md docs/interfaces/
	/usr/bin/python3 docs/gen_precision_classes.py

clean:
	rm -rf $(BUILD)
