#!/usr/bin/env python3
"""Checks that includes run one way between tlc's layers:

    dsl -> compiler -> support,   runtime -> compiler (light headers) -> support

and that no folder includes another folder's lib/. Each layer's files may include:
  support/   tl/Support only
  compiler/  tl/Support, tl/Compiler, tl/Dialect, tl/Conversion, MLIR/LLVM, its own lib/
  dsl/       tl/Support, tl/Compiler, tl/Dialect, tl/dsl, MLIR/LLVM, fmt, its own lib/;
             its public headers (dsl/include) only light ones (no MLIR)
  runtime/   tl/Support, the compiler's light headers, tl/runtime, its own lib/; no MLIR
Light headers are the ones a kernel author's file may include without MLIR.

Usage: check_layers.py --root REPO      (exit 1 and one line per violation)
       check_layers.py --self-test      (shows that a violation is caught)
"""
import argparse
import os
import re
import sys
import tempfile

LIGHT_COMPILER = {"tl/Compiler/ModuleHandle.h", "tl/Compiler/GPUCompiler.h", "tl/Compiler/HostJIT.h",
                  "tl/Compiler/Ptxas.h", "tl/Compiler/CrashHandler.h"}
HEAVY_PREFIXES = ("mlir/", "llvm/")

# layer -> (allowed prefixes of "tl/..." and library includes, may include MLIR)
RULES = {
    "support": (("tl/Support/",), False),
    "compiler": (("tl/Support/", "tl/Compiler/", "tl/Dialect/", "tl/Conversion/",
                  "tl/CompilerFingerprint.h"), True),
    "dsl": (("tl/Support/", "tl/Compiler/", "tl/Dialect/", "tl/dsl/", "tl/dsl.h", "fmt/"), True),
    "runtime": (("tl/Support/", "tl/runtime/", "tl/CompilerFingerprint.h") + tuple(LIGHT_COMPILER), False),
}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def violations(root):
    root = os.path.abspath(root)
    found = []
    for layer, (allowed, heavy) in RULES.items():
        top = os.path.join(root, layer)
        for folder, _, files in os.walk(top):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp", ".td", ".inc")):
                    continue
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, root)
                public = relative.startswith(f"{layer}/include/")
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        target = match.group(1)
                        problem = judge(root, layer, path, public, heavy, allowed, target)
                        if problem:
                            found.append(f"{relative}:{number}: includes \"{target}\": {problem}")
    return found


def judge(root, layer, path, public, heavy, allowed, target):
    if target.startswith(HEAVY_PREFIXES):
        if not heavy:
            return f"{layer}/ includes no MLIR or LLVM"
        if public and layer == "dsl":
            return "the eDSL's public headers include no MLIR (kernel files compile in a second)"
        return None
    if target.startswith("tl/"):
        if not target.startswith(allowed):
            return f"{layer}/ may include {', '.join(allowed)}"
        if public and layer == "dsl" and target.startswith("tl/Compiler/") and target not in LIGHT_COMPILER:
            return "the eDSL's public headers take only the compiler's light headers"
        if public and layer == "dsl" and target.startswith("tl/Dialect/"):
            return "the eDSL's public headers include no MLIR (the dialect's headers do)"
        return None
    if target.startswith(allowed):  # fmt/...
        return None
    # A path relative to the including file (or its folder's lib/): it must stay in the layer.
    resolved = os.path.normpath(os.path.join(os.path.dirname(path), target))
    layer_root = os.path.join(root, layer) + os.sep
    if not resolved.startswith(layer_root):
        return "a relative include that leaves the layer (another folder's lib/)"
    if not os.path.exists(resolved):
        # Found through an include path: only the layer's own lib/ may be one.
        candidate = os.path.join(root, layer, "lib", target)
        if not os.path.exists(candidate):
            return "not a file of this layer (another folder's lib/?)"
    return None


def self_test():
    with tempfile.TemporaryDirectory() as root:
        def write(relative, text):
            full = os.path.join(root, relative)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        write("dsl/lib/BuildState.h", "#pragma once\n")
        write("compiler/lib/A.cpp", '#include "tl/dsl/Program.h"\n#include "BuildState.h"\n')
        write("runtime/lib/B.cpp", '#include "mlir/IR/Value.h"\n#include "tl/Compiler/ModuleState.h"\n')
        write("support/lib/C.cpp", '#include "tl/Compiler/GPUCompiler.h"\n')
        write("dsl/include/tl/dsl/D.h", '#include "tl/Dialect/TL/TLDialect.h"\n')
        write("compiler/lib/E.cpp", '#include "../../dsl/lib/BuildState.h"\n#include "tl/Dialect/TL/TLDialect.h"\n')
        found = violations(root)
        expected = ["compiler/lib/A.cpp:1", "compiler/lib/A.cpp:2", "runtime/lib/B.cpp:1",
                    "runtime/lib/B.cpp:2", "support/lib/C.cpp:1", "dsl/include/tl/dsl/D.h:1",
                    "compiler/lib/E.cpp:1"]
        caught = [e for e in expected if any(v.startswith(e + ":") for v in found)]
        extra = [v for v in found if not any(v.startswith(e + ":") for e in expected)]
        for v in found:
            print(v)
        if len(caught) != len(expected) or extra:
            print(f"self-test FAILED: caught {caught} of {expected}; unexpected {extra}")
            return 1
        print(f"self-test: all {len(expected)} violations caught, nothing else")
        return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    found = violations(args.root)
    for v in found:
        print(v)
    print(f"layering: {len(found)} violation(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
