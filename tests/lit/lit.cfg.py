import os
import lit.formats

config.name = "tlc"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tlc_obj_root, "tests", "lit")
config.environment["PATH"] = os.pathsep.join(
    [config.tlc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
# tlc verifies the IR after every pass, not only after the last one.
config.environment["TLC_VERIFY_PASSES"] = "1"
config.substitutions.append(("%cxx", config.cxx))
config.substitutions.append(("%tlc_cflags", config.tlc_cflags))
config.substitutions.append(("%tlc_libs", config.tlc_libs))
config.substitutions.append(("%mlir_cflags", config.mlir_cflags))
config.substitutions.append(("%mlir_libs", config.mlir_libs))
import shutil
# Memory errors that do not crash by themselves (fuzz-regressions-parse.mlir).
config.substitutions.append(
    ("%memcheck", "valgrind -q --error-exitcode=99" if shutil.which("valgrind") else ""))
if shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("ptxas")
