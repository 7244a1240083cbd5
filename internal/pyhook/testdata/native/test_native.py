"""The native route's choices that need no TensorRT and no library: which
backend object serves which bindings, why the route is refused, and which
pybind11 ABI ids are tried. Any Python 3.7 or later."""

import os
import unittest

import nativetest
from nativetest import bindings, config_class, environment
from trt_action_hook import _native


def conduit_never_called(self, *args):
    raise AssertionError("the conduit was called")


class BackendChoice(unittest.TestCase):
    def choose(self, module, version=None):
        with bindings(module, version):
            return _native._backend_file(config_class(module)())

    def test_each_bindings_package_takes_its_backend(self):
        self.assertEqual(self.choose("tensorrt_rtx_bindings.tensorrt_rtx", "1.7.1.116"), ("libtam_rtx.so", None))
        self.assertEqual(self.choose("tensorrt_bindings.tensorrt", "10.16.1.11"), ("libtam_trt10.so", None))
        self.assertEqual(self.choose("tensorrt_bindings.tensorrt", "11.4.0.106"), ("libtam_trt11.so", None))
        # The one-package wheels and JetPack's python3-libnvinfer.
        self.assertEqual(self.choose("tensorrt.tensorrt", "10.16.0.1"), ("libtam_trt10.so", None))

    def test_a_major_version_without_a_backend_is_refused(self):
        for version in ("9.3.0.1", "12.0.0.1"):
            file, why = self.choose("tensorrt_bindings.tensorrt", version)
            self.assertIsNone(file)
            self.assertIn("no native monitor for TensorRT " + version, why)
            self.assertIn("10.x and 11.x", why)

    def test_bindings_without_a_version_are_refused(self):
        file, why = self.choose("tensorrt_bindings.tensorrt")
        self.assertIsNone(file)
        self.assertIn("version of tensorrt_bindings (None)", why)

    def test_other_classes_are_refused(self):
        file, why = self.choose("torch_tensorrt.fake", "2.0")
        self.assertIsNone(file)
        self.assertIn("not from bindings trt-action knows", why)
        with bindings("tensorrt_rtx_bindings.tensorrt_rtx", "1.7.1.116"):
            file, why = _native._backend_file(config_class("tensorrt_rtx_bindings.tensorrt_rtx", name="IBuilder")())
        self.assertIsNone(file)
        self.assertIn("tensorrt_rtx_bindings.tensorrt_rtx.IBuilder is not a TensorRT builder config", why)


class Refusals(unittest.TestCase):
    def attach(self, module, version, conduit=conduit_never_called, **env):
        with bindings(module, version), environment(**env):
            return _native.attach(config_class(module, conduit)())

    def test_bindings_without_the_conduit(self):
        # TensorRT 10.0.1 to 10.15.1: their pybind11 has no conduit.
        native, why = self.attach("tensorrt_bindings.tensorrt", "10.15.1.29", conduit=None, TRT_ACTION_NATIVE_DIR="/x")
        self.assertIsNone(native)
        self.assertIn("tensorrt_bindings 10.15.1.29 has no pybind11 conduit (_pybind11_conduit_v1_", why)

    def test_no_folder_named(self):
        for value in (None, ""):
            native, why = self.attach("tensorrt_rtx_bindings.tensorrt_rtx", "1.7.1.116", TRT_ACTION_NATIVE_DIR=value)
            self.assertIsNone(native)
            # No reason of the hook's: the supervisor, which left the
            # variable out, says what it did not find and where it looked.
            self.assertIsNone(why)

    def test_a_relative_folder(self):
        native, why = self.attach("tensorrt_rtx_bindings.tensorrt_rtx", "1.7.1.116", TRT_ACTION_NATIVE_DIR="bin/lib")
        self.assertIsNone(native)
        self.assertEqual(why, "TRT_ACTION_NATIVE_DIR=bin/lib is not an absolute path")

    def test_a_folder_without_the_libraries(self):
        empty = os.path.join(nativetest.HERE, "no-such-folder")
        native, why = self.attach("tensorrt_rtx_bindings.tensorrt_rtx", "1.7.1.116", TRT_ACTION_NATIVE_DIR=empty)
        self.assertIsNone(native)
        self.assertEqual(
            why,
            "%s/libtam_host.so is not there: trt-action's folder of native libraries lacks it "
            "(a release has it in lib/ beside the binary)" % empty,
        )


class ABIIds(unittest.TestCase):
    def ids(self, keys, stdlib="libstdcpp", known=None):
        saved = _native._builtins_dict, _native._interpreter_dict
        _native._builtins_dict = lambda: {k: None for k in keys[:1]}
        _native._interpreter_dict = lambda: {k: None for k in keys[1:]}
        try:
            return _native._abi_ids(stdlib, known)
        finally:
            _native._builtins_dict, _native._interpreter_dict = saved

    keys = [
        # pybind11 2.x, in builtins: the id starts with the compiler's "_gcc"
        "__pybind11_internals_v4_gcc_libstdcpp_cxxabi1011__",
        # pybind11 3.x, in the interpreter's state dict: "_" before an id starting "system"
        "__pybind11_internals_v11_system_libstdcpp_gxx_abi_1xxx_use_cxx11_abi_1__",
        # libc++: its std::type_info is laid out as libstdc++'s (the Itanium ABI's)
        "__pybind11_internals_v5_clang_libcpp_abi1__",
        # Microsoft's: not
        "__pybind11_internals_v5_msvc_msvcstl_md_mscver19__",
        "__pybind11_module_local_v11_system_libstdcpp_gxx_abi_1xxx_use_cxx11_abi_1__",
        "unrelated",
    ]

    def test_ids_come_from_pybind11s_internals_keys(self):
        # A development backend (g++, libstdc++): libstdc++'s ids first.
        self.assertEqual(
            self.ids(self.keys),
            [
                "_gcc_libstdcpp_cxxabi1011",
                "gcc_libstdcpp_cxxabi1011",
                "_system_libstdcpp_gxx_abi_1xxx_use_cxx11_abi_1",
                "system_libstdcpp_gxx_abi_1xxx_use_cxx11_abi_1",
                "_clang_libcpp_abi1",
                "clang_libcpp_abi1",
            ],
        )

    def test_a_release_backend_takes_the_ids_of_libstdcpp_bindings(self):
        # A release backend (libc++ linked in): libc++'s ids first, then
        # libstdc++'s, which TensorRT's bindings are built with.
        self.assertEqual(
            self.ids(self.keys, stdlib="libcpp"),
            [
                "_clang_libcpp_abi1",
                "clang_libcpp_abi1",
                "_gcc_libstdcpp_cxxabi1011",
                "gcc_libstdcpp_cxxabi1011",
                "_system_libstdcpp_gxx_abi_1xxx_use_cxx11_abi_1",
                "system_libstdcpp_gxx_abi_1xxx_use_cxx11_abi_1",
            ],
        )

    def test_another_cpp_library_takes_only_its_own(self):
        self.assertEqual(self.ids(self.keys, stdlib="msvcstl"), ["_msvc_msvcstl_md_mscver19", "msvc_msvcstl_md_mscver19"])

    def test_the_id_that_worked_is_tried_first(self):
        keys = ["", "__pybind11_internals_v11_system_libstdcpp_gxx_abi_1xxx_use_cxx11_abi_1__"]
        ids = self.ids(keys, known="system_libstdcpp_gxx_abi_1xxx_use_cxx11_abi_1")
        self.assertEqual(
            ids, ["system_libstdcpp_gxx_abi_1xxx_use_cxx11_abi_1", "_system_libstdcpp_gxx_abi_1xxx_use_cxx11_abi_1"]
        )


if __name__ == "__main__":
    unittest.main()
