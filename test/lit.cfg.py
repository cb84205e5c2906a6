# -*- Python -*-
# lit configuration for quack's regression tests.

import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "quack"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".qk", ".test"]
config.excludes = ["Inputs", "Unit", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.quack_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
# Python for the test scripts under */Inputs (the interpreter running lit).
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%kernels", os.path.join(config.quack_src_root,
                                                      "kernels")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# Tests that run ptxas (cubin stage) need it; it is found at configure time.
if config.quack_have_ptxas:
    config.available_features.add("ptxas")
    ptxas_dir = os.path.dirname(config.quack_ptxas)
    llvm_config.with_environment("PATH", ptxas_dir, append_path=True)

# quackc and quack-opt linked against LLVM's and MLIR's static archives
# (QUACK_LINK_LLVM_STATIC).
if config.quack_static_tools:
    config.available_features.add("static-tools")

tool_dirs = [config.quack_tools_dir, config.llvm_tools_dir]
tools = ["quack-opt", "quackc"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# test/Embedding installs this build and builds examples/ against it with the
# CMake and generator that configured the build.
def _cmake_cache(name):
    path = os.path.join(config.quack_obj_root, "CMakeCache.txt")
    try:
        with open(path) as cache:
            for line in cache:
                if line.startswith(name + ":"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return ""

_cmake = _cmake_cache("CMAKE_COMMAND")
if _cmake:
    config.available_features.add("cmake")
    # Longest first: lit substitutes in order.
    config.substitutions.append(
        ("%cmake_generator", '"%s"' % _cmake_cache("CMAKE_GENERATOR")))
    config.substitutions.append(
        ("%cmake_make_program", _cmake_cache("CMAKE_MAKE_PROGRAM")))
    config.substitutions.append(("%cmake", _cmake))
config.substitutions.append(("%quack_obj_root", config.quack_obj_root))
config.substitutions.append(("%quack_src_root", config.quack_src_root))
