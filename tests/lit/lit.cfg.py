# lit configuration of strata's FileCheck tests.
import os
import sys

import lit.formats

config.name = "strata"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "expect_exit.py"]
config.test_source_root = os.path.dirname(__file__)

site = lit_config.params.get("strata_site_config")
if not site:
    lit_config.fatal("run through ctest, or pass --param strata_site_config=BUILD/tests/lit/lit.site.cfg.py")
exec(open(site).read())

# `REQUIRES: cuda`: the build has the CUDA backend (no GPU needed).
if config.strata_have_cuda == "ON":
    config.available_features.add("cuda")

config.environment["PATH"] = os.pathsep.join(
    [config.strata_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(
    ("%expect-exit", sys.executable + " " + os.path.join(config.test_source_root, "expect_exit.py")))
config.substitutions.append(("%models", os.path.join(config.strata_src_root, "models")))
config.substitutions.append(("%python", sys.executable))
