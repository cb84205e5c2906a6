# -*- Python -*-
# Runs the GoogleTest unit tests (layout algebra, runtime logic) under lit.

import os

import lit.formats

config.name = "quack-unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.quack_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
