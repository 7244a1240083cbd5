# native/backends/backends.mk: the TensorRT backend shared objects, and the
# monitor's host library that a builder script's Python process loads beside
# them. Included by the top Makefile; paths are relative to the repository
# root.
#
# One source (shim.cc) is compiled once per TensorRT flavour whose headers are
# given; a flavour without headers is simply not built:
#
#   TRT_RTX_INCLUDE  TensorRT-RTX 1.x headers (eval "$(scripts/setup-tensorrt-rtx)")
#   TRT10_INCLUDE    TensorRT 10.x headers (NvInfer.h, NvOnnxParser.h)
#   TRT11_INCLUDE    TensorRT 11.x headers
#   TRT_ONNX_INCLUDE folder holding NvOnnxParser.h, searched after the above
#                    (NVIDIA/TensorRT's 10.0 tag keeps the parser in a submodule)
#
# TRT_HEADERS=DIR (a folder with 10.0/include, 10.16/include, 11.1/include,
# as ../shared/third_party/tensorrt-headers or CI's checkouts of
# NVIDIA/TensorRT) sets TRT10_INCLUDE and TRT11_INCLUDE to 10.16 and 11.1,
# and makes `backends-check` also compile the 10.x shim against 10.0: that
# proves every call it makes outside a version gate (version_gate.h) exists
# in every 10.x library.
#
# libtam_host.so is native/monitor.cc (the same source the binary compiles
# through cgo) as a library of its own, with no Go in it: the host side of
# the monitor in a builder script's Python process, which hands its host
# table to a backend's tam_backend_attach (internal/pyhook's _native.py
# loads both with ctypes). It needs no headers, so it is always built.
#
# BACKEND_LIBS lists what will be built. `make backends-test` runs the
# backends' own tests, which need no TensorRT library (but one:
# native/backends/attach_rtx_test.cc, see below).

# Included before the top Makefile's own targets: keep its default goal.
backends_saved_default_goal := $(.DEFAULT_GOAL)

BACKEND_LIBDIR ?= $(if $(LIBDIR),$(LIBDIR),bin/lib)
BACKEND_CXX ?= $(if $(CXX),$(CXX),g++)
BACKEND_CXXFLAGS ?= -std=c++17 -O2 -Wall -Wextra
# Linked stripped (no symbol table), as the binary is (-ldflags "-s -w"):
# what they export stays in the dynamic symbol table, which is all dlopen,
# dlsym and ctypes read. `make BACKEND_LDFLAGS=` keeps the symbols for a
# debugger; the wheels refuse a file that has them (internal/wheel).
BACKEND_LDFLAGS ?= -s
ifneq ($(TRT_HEADERS),)
TRT10_INCLUDE ?= $(TRT_HEADERS)/10.16/include
TRT11_INCLUDE ?= $(TRT_HEADERS)/11.1/include
TRT10_OLDEST_INCLUDE ?= $(TRT_HEADERS)/10.0/include
endif

BACKEND_SRC := native/backends/shim.cc
# The TensorRT-free headers every test and shim include; the generated ones
# come from internal/settings (go generate ./internal/settings).
BACKEND_PURE_HEADERS := native/backends/json.h native/backends/request.h native/backends/backend_table.h \
	native/backends/settings_table.h native/backends/settings_decode.h native/backends/precision.h \
	native/backends/version_gate.h native/backends/layer_match.h native/backends/join.h
BACKEND_DEPS := $(BACKEND_SRC) $(BACKEND_PURE_HEADERS) native/trtaction.h native/backends/backend.map \
	native/backends/files.h native/backends/host_log.h native/backends/builder_settings.h native/backends/profiles.h \
	native/backends/settings_enums.h \
	native/backends/tee_monitor.h native/backends/cuda-stub/cuda_runtime_api.h

# The TensorRT headers are -isystem (their deprecation warnings are not ours);
# the CUDA stand-in comes last so a real toolkit on the path wins. The
# version script exports the backend ABI alone (backend.map says why).
backend_compile = $(BACKEND_CXX) $(BACKEND_CXXFLAGS) -fPIC -shared -fvisibility=hidden \
	-D$(1) -Inative -isystem $(2) $(if $(TRT_ONNX_INCLUDE),-idirafter $(TRT_ONNX_INCLUDE)) \
	-idirafter native/backends/cuda-stub -Wl,--version-script=native/backends/backend.map \
	-o $@ $(BACKEND_SRC) -ldl $(BACKEND_LDFLAGS)

HOST_LIB := $(BACKEND_LIBDIR)/libtam_host.so
BACKEND_LIBS := $(HOST_LIB)
ifneq ($(TRT_RTX_INCLUDE),)
BACKEND_LIBS += $(BACKEND_LIBDIR)/libtam_rtx.so
endif
ifneq ($(TRT10_INCLUDE),)
BACKEND_LIBS += $(BACKEND_LIBDIR)/libtam_trt10.so
endif
ifneq ($(TRT11_INCLUDE),)
BACKEND_LIBS += $(BACKEND_LIBDIR)/libtam_trt11.so
endif

# Compile-only checks: shared objects built to prove they compile, never shipped.
BACKEND_CHECKDIR ?= bin/check
BACKEND_CHECKS :=
ifneq ($(TRT10_OLDEST_INCLUDE),)
BACKEND_CHECKS += $(BACKEND_CHECKDIR)/trt10.0/libtam_trt10.so
endif

.PHONY: backends backends-check backends-test

backends: $(BACKEND_LIBS)

# Every backend the given headers allow, plus the compile-only checks.
backends-check: $(BACKEND_LIBS) $(BACKEND_CHECKS)

$(HOST_LIB): native/monitor.cc native/trtaction.h native/libtam_host.map
	@mkdir -p $(dir $@)
	$(BACKEND_CXX) $(BACKEND_CXXFLAGS) -fPIC -shared -pthread -Inative -Wl,--version-script=native/libtam_host.map \
		-o $@ native/monitor.cc $(BACKEND_LDFLAGS)

$(BACKEND_LIBDIR)/libtam_rtx.so: $(BACKEND_DEPS)
	@mkdir -p $(dir $@)
	$(call backend_compile,TAM_FLAVOR_RTX,$(TRT_RTX_INCLUDE))

$(BACKEND_LIBDIR)/libtam_trt10.so: $(BACKEND_DEPS)
	@mkdir -p $(dir $@)
	$(call backend_compile,TAM_FLAVOR_TRT10,$(TRT10_INCLUDE))

$(BACKEND_LIBDIR)/libtam_trt11.so: $(BACKEND_DEPS)
	@mkdir -p $(dir $@)
	$(call backend_compile,TAM_FLAVOR_TRT11,$(TRT11_INCLUDE))

$(BACKEND_CHECKDIR)/trt10.0/libtam_trt10.so: $(BACKEND_DEPS)
	@mkdir -p $(dir $@)
	$(call backend_compile,TAM_FLAVOR_TRT10,$(TRT10_OLDEST_INCLUDE))

# The backends' own tests, under the sanitizers; each prints "N passed, N failed".
#   request_test.cc  the request decoder (request.h, json.h)
#   support_test.cc  the shim's TensorRT-free parts (files.h, precision.h, host_log.h)
#   version_gate_test.cc  which settings a 10.x library is too old for (version_gate.h)
#   settings_test.cc      with TRT_HEADERS: see BACKEND_SETTINGS_DEPS below
#   tee_test.cc           with TRT_HEADERS or the TensorRT-RTX headers, and
#   attach_rtx_test.cc    with the TensorRT-RTX headers: see BACKEND_TEE_DEPS below
BACKEND_TEST_BIN ?= bin/backends-request-test
BACKEND_SUPPORT_TEST_BIN ?= bin/backends-support-test
BACKEND_GATE_TEST_BIN ?= bin/backends-version-gate-test
BACKEND_TEST_CXXFLAGS = $(BACKEND_CXXFLAGS) -fsanitize=address,undefined -Inative
BACKEND_SETTINGS_TESTS :=
BACKEND_TEE_TESTS :=
BACKEND_ATTACH_TESTS :=
ifneq ($(TRT10_INCLUDE),)
BACKEND_SETTINGS_TESTS += bin/backends-settings-test-trt10
BACKEND_TEE_TESTS += bin/backends-tee-test-trt10
endif
ifneq ($(TRT10_OLDEST_INCLUDE),)
BACKEND_SETTINGS_TESTS += bin/backends-settings-test-trt10.0
endif
ifneq ($(TRT11_INCLUDE),)
BACKEND_SETTINGS_TESTS += bin/backends-settings-test-trt11
BACKEND_TEE_TESTS += bin/backends-tee-test-trt11
endif
ifneq ($(TRT_RTX_INCLUDE),)
BACKEND_SETTINGS_TESTS += bin/backends-settings-test-rtx
BACKEND_TEE_TESTS += bin/backends-tee-test-rtx
BACKEND_ATTACH_TESTS += bin/backends-attach-test-rtx
endif
backends-test: $(BACKEND_TEST_BIN) $(BACKEND_SUPPORT_TEST_BIN) $(BACKEND_GATE_TEST_BIN) $(BACKEND_SETTINGS_TESTS) \
		$(BACKEND_TEE_TESTS) $(BACKEND_ATTACH_TESTS)
	$(BACKEND_TEST_BIN)
	$(BACKEND_SUPPORT_TEST_BIN)
	$(BACKEND_GATE_TEST_BIN)
	$(foreach t,$(BACKEND_SETTINGS_TESTS) $(BACKEND_TEE_TESTS) $(BACKEND_ATTACH_TESTS),$(t) &&) true

# settings_test.cc against each header set a backend is compiled with
# (TensorRT 10.16, 10.0, 11.1, TensorRT-RTX): a recording stand-in sits in
# IBuilderConfig's implementation table, its other methods generated from that
# version's NvInferImpl.h (gen_standin.sh).
#   settings_test.cc  builder_settings.h: each setting reaches its setter with its value;
#                     profiles.h: each optimization profile becomes the builder's, in order;
#                     settings_enums.h: each value's enumerator exists exactly where
#                     the settings table says
BACKEND_SETTINGS_DEPS := native/backends/settings_test.cc native/backends/gen_standin.sh native/backends/standin.h \
	native/backends/test_check.h $(BACKEND_DEPS)
backend_standins = { for c in VBuilderConfig VNetworkDefinition VLayer VTensor VConstantLayer VBuilder VOptimizationProfile; do native/backends/gen_standin.sh $$c $(1)/NvInferImpl.h; done; } > $@.standins.h
backend_settings_test = $(BACKEND_CXX) $(BACKEND_TEST_CXXFLAGS) -Wno-unused-parameter -D$(1) \
	-DTAM_STANDINS='"$(abspath $@).standins.h"' -isystem $(2) -idirafter native/backends/cuda-stub \
	-o $@ native/backends/settings_test.cc

bin/backends-settings-test-trt10: $(BACKEND_SETTINGS_DEPS)
	@mkdir -p $(dir $@)
	$(call backend_standins,$(TRT10_INCLUDE))
	$(call backend_settings_test,TAM_FLAVOR_TRT10,$(TRT10_INCLUDE))

bin/backends-settings-test-trt10.0: $(BACKEND_SETTINGS_DEPS)
	@mkdir -p $(dir $@)
	$(call backend_standins,$(TRT10_OLDEST_INCLUDE))
	$(call backend_settings_test,TAM_FLAVOR_TRT10,$(TRT10_OLDEST_INCLUDE))

bin/backends-settings-test-trt11: $(BACKEND_SETTINGS_DEPS)
	@mkdir -p $(dir $@)
	$(call backend_standins,$(TRT11_INCLUDE))
	$(call backend_settings_test,TAM_FLAVOR_TRT11,$(TRT11_INCLUDE))

bin/backends-settings-test-rtx: $(BACKEND_SETTINGS_DEPS)
	@mkdir -p $(dir $@)
	$(call backend_standins,$(TRT_RTX_INCLUDE))
	$(call backend_settings_test,TAM_FLAVOR_RTX,$(TRT_RTX_INCLUDE))

# A program's own config (tee_monitor.h, and the attach exports of each
# shipped backend object with libtam_host.so's host, dlopened as a builder
# script's Python process loads them):
#   tee_test.cc          against each flavour's headers, on a stand-in config
#                        (gen_standin.sh); no TensorRT library
#   attach_rtx_test.cc   real TensorRT-RTX builds of testdata/models/cnn.onnx
#                        (the library as scripts/setup-tensorrt-rtx exports it;
#                        skipped without it, except in CI)
BACKEND_TEE_DEPS := native/backends/tee_test.cc native/backends/tee_monitor.h native/backends/standin.h \
	native/backends/gen_standin.sh native/backends/test_check.h native/trtaction.h native/backends/backend_table.h $(HOST_LIB)
# backend_tee_test FLAVOUR-MACRO HEADERS BACKEND-OBJECT
backend_tee_test = $(BACKEND_CXX) $(BACKEND_TEST_CXXFLAGS) -Wno-unused-parameter -D$(1) \
	-DTAM_STANDINS='"$(abspath $@).standins.h"' -DTAM_BACKEND_SO='"$(abspath $(3))"' \
	-DTAM_HOST_SO='"$(abspath $(HOST_LIB))"' -isystem $(2) -idirafter native/backends/cuda-stub \
	-o $@ native/backends/tee_test.cc -ldl

bin/backends-tee-test-trt10: $(BACKEND_TEE_DEPS) $(BACKEND_LIBDIR)/libtam_trt10.so
	@mkdir -p $(dir $@)
	$(call backend_standins,$(TRT10_INCLUDE))
	$(call backend_tee_test,TAM_FLAVOR_TRT10,$(TRT10_INCLUDE),$(BACKEND_LIBDIR)/libtam_trt10.so)

bin/backends-tee-test-trt11: $(BACKEND_TEE_DEPS) $(BACKEND_LIBDIR)/libtam_trt11.so
	@mkdir -p $(dir $@)
	$(call backend_standins,$(TRT11_INCLUDE))
	$(call backend_tee_test,TAM_FLAVOR_TRT11,$(TRT11_INCLUDE),$(BACKEND_LIBDIR)/libtam_trt11.so)

bin/backends-tee-test-rtx: $(BACKEND_TEE_DEPS) $(BACKEND_LIBDIR)/libtam_rtx.so
	@mkdir -p $(dir $@)
	$(call backend_standins,$(TRT_RTX_INCLUDE))
	$(call backend_tee_test,TAM_FLAVOR_RTX,$(TRT_RTX_INCLUDE),$(BACKEND_LIBDIR)/libtam_rtx.so)

bin/backends-attach-test-rtx: native/backends/attach_rtx_test.cc native/backends/backend_table.h native/backends/test_check.h \
		native/trtaction.h $(HOST_LIB) $(BACKEND_LIBDIR)/libtam_rtx.so
	@mkdir -p $(dir $@)
	$(BACKEND_CXX) $(BACKEND_TEST_CXXFLAGS) -DTAM_FLAVOR_RTX -DTAM_BACKEND_SO='"$(abspath $(BACKEND_LIBDIR)/libtam_rtx.so)"' \
		-DTAM_HOST_SO='"$(abspath $(HOST_LIB))"' -isystem $(TRT_RTX_INCLUDE) -idirafter native/backends/cuda-stub \
		-o $@ native/backends/attach_rtx_test.cc -ldl -pthread

$(BACKEND_GATE_TEST_BIN): native/backends/version_gate_test.cc native/backends/version_gate.h native/backends/join.h \
		native/backends/test_check.h
	@mkdir -p $(dir $@)
	$(BACKEND_CXX) $(BACKEND_TEST_CXXFLAGS) -o $@ native/backends/version_gate_test.cc

$(BACKEND_TEST_BIN): native/backends/request_test.cc $(BACKEND_PURE_HEADERS) native/backends/test_check.h
	@mkdir -p $(dir $@)
	$(BACKEND_CXX) $(BACKEND_TEST_CXXFLAGS) -o $@ native/backends/request_test.cc

$(BACKEND_SUPPORT_TEST_BIN): native/backends/support_test.cc $(BACKEND_PURE_HEADERS) native/backends/files.h \
		native/backends/host_log.h native/backends/test_check.h native/trtaction.h
	@mkdir -p $(dir $@)
	$(BACKEND_CXX) $(BACKEND_TEST_CXXFLAGS) -pthread -o $@ native/backends/support_test.cc

.DEFAULT_GOAL := $(backends_saved_default_goal)
