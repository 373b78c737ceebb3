#!/usr/bin/env python3
"""A seeded mutation fuzzer for tl-opt and tlc: no input may crash them.

The corpus is every tl program we have: the lit inputs (tests/lit/*.mlir, one
case per `// -----` split, and tests/lit/Inputs/*.mlir) and the IR of every
shipped kernel (`tl-mha --print-shipped-ir`), generated from the build at test
time. Mutant i is built from the corpus by mutations drawn from a generator
seeded with (seed, i) alone, so a seed names the same mutants on every machine
and every run; the time budget (--seconds) only decides how many of them run.

Each mutant is first parsed and verified (`tl-opt M`). The verifier's answer
decides for every tool (they all parse and verify first), so a mutant it
rejects is done; one it accepts is lowered by `tl-opt --tl-gpu-lowering`,
`tl-opt --convert-tl-to-cpu`, `tlc M --emit=ptx` and `tlc M --emit=llvm
--target=cpu`. A run passes when the tool exits 0, or 1 with an `error:`
diagnostic (or 2, a usage error). A signal, any other exit code, a timeout,
exit 1 without a diagnostic, an `LLVM ERROR` or a stack dump is a failure:
it is reported with the seed and mutant index, and the mutant, the command
and its output are saved under --out.

    fuzz.py --bin build/bin --seed 1 --seconds 120
    fuzz.py --bin build/bin --seed 1 --only 417      # rerun one mutant

Exit code: 0 when every mutant passed, 1 when one failed, 2 on a usage or
setup error. Python 3 standard library only.
"""

import argparse
import concurrent.futures
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# --------------------------------------------------------------------------
# The corpus
# --------------------------------------------------------------------------


def strip_comments(text):
    """Drops `//` comment lines (RUN, CHECK, expected-error): mutating them
    would only waste mutants."""
    return "\n".join(line for line in text.splitlines()
                     if not line.lstrip().startswith("//")) + "\n"


def split_modules(text):
    """`tl-mha --print-shipped-ir` prints one `module {` ... `}` per program."""
    modules, current = [], []
    for line in text.splitlines():
        if line.startswith("module") and current:
            modules.append("\n".join(current) + "\n")
            current = []
        if line.startswith("//"):
            continue
        current.append(line)
    if current:
        modules.append("\n".join(current) + "\n")
    return [m for m in modules if "tl.kernel" in m]


def load_corpus(source_dir, bin_dir):
    corpus = []
    lit = source_dir / "tests" / "lit"
    for path in sorted(lit.glob("*.mlir")) + sorted((lit / "Inputs").glob("*.mlir")):
        for i, case in enumerate(path.read_text().split("// -----")):
            case = strip_comments(case)
            if "func.func" in case:
                corpus.append((f"{path.name}#{i}", case))
    shipped = subprocess.run([str(bin_dir / "tl-mha"), "--print-shipped-ir"],
                             capture_output=True, text=True, timeout=300)
    if shipped.returncode != 0:
        sys.exit(f"fuzz: tl-mha --print-shipped-ir failed:\n{shipped.stderr}")
    for i, module in enumerate(split_modules(shipped.stdout)):
        corpus.append((f"shipped#{i}", module))
    # Only programs the verifier accepts: mutants of the invalid ones (the
    # verifier's own tests) rarely get past it, and it sees enough anyway.
    with tempfile.TemporaryDirectory(prefix="tl-fuzz-corpus-") as scratch:
        def accepted(entry):
            path = Path(scratch) / (entry[0].replace("#", "-") + ".mlir")
            path.write_text(entry[1])
            return subprocess.run([str(bin_dir / "tl-opt"), str(path)], capture_output=True,
                                  timeout=60).returncode == 0
        corpus = [entry for entry in corpus if accepted(entry)]
    return corpus


# --------------------------------------------------------------------------
# Mutations: each takes (rng, lines) and returns new lines, or None where it
# does not apply.
# --------------------------------------------------------------------------

INT_RE = re.compile(r"(?<![\w%#.@^+-])-?\d+(?![\w.])")
SHAPE_RE = re.compile(r"memref<((?:(?:\d+|\?)x)*)([a-z][a-zA-Z0-9]*)")
LIST_RE = re.compile(r"\[((?:-?\d+)(?:, -?\d+)*)\]")
ELEMENT_TYPES = ["f16", "f32", "bf16", "f64", "i1", "i8", "i32", "i64", "index",
                 "f8E4M3FN", "tf32"]
# An element type alone or at the end of a shape (`64x64xf16`).
ELEMENT_WORD = r"(?:(?<=[\d?]x)|(?<![\w]))({})(?![\w])"
ELEMENT_RE = re.compile(ELEMENT_WORD.format("f16|f32|bf16|f64|i1|i8|i16|i32|i64|index"))
SSA_DEF_RE = re.compile(r"^\s*(%[\w.$-]+)(?::\d+)? =")
SSA_USE_RE = re.compile(r"%[\w.$-]+")
DIVISOR_RE = re.compile(r"\b(floordiv|ceildiv|mod) (-?\d+)")
INDEX_MAP_RE = re.compile(r"#tl\.index_map<\((d\d(?:, d\d)*)\) -> \((.*?)\), \[([-\d, ]*)\]>")
MEMREF_VALUE_RE = re.compile(r"^\s*(%[\w.$-]+) = tl\.alloc_(shared|fragment|local) : (memref<[^>]*>)")


def interesting_int(rng, value):
    choices = [0, -1, 1, 2, 3, 7, 16, 31, 33, 48, 1023, 1025, 65536,
               2**31 - 1, 2**31, 2**32, 2**62, 2**63 - 1, -2**63, -65]
    if value is not None:
        choices += [value + 1, value - 1, value * 2, value // 2, -value, value * 3]
    return rng.choice(choices)


def code_lines(lines):
    return [i for i, line in enumerate(lines) if line.strip()]


def mutate_int(rng, lines):
    spots = [(i, m) for i in code_lines(lines) for m in INT_RE.finditer(lines[i])]
    if not spots:
        return None
    i, m = rng.choice(spots)
    new = str(interesting_int(rng, int(m.group(0))))
    lines[i] = lines[i][:m.start()] + new + lines[i][m.end():]
    return lines


def replace_type_everywhere_or_once(rng, lines, i, old, new):
    """Changes one occurrence, or (more often) every occurrence of the same
    text, which keeps the program's types consistent and gets deeper."""
    if rng.random() < 0.6:
        return [line.replace(old, new) for line in lines]
    lines[i] = lines[i].replace(old, new, 1)
    return lines


def mutate_shape(rng, lines):
    spots = [(i, m) for i in code_lines(lines) for m in SHAPE_RE.finditer(lines[i])]
    if not spots:
        return None
    i, m = rng.choice(spots)
    dims = [d for d in m.group(1).split("x") if d]
    roll = rng.random()
    if roll < 0.6 and dims:
        k = rng.randrange(len(dims))
        old = int(dims[k]) if dims[k] != "?" else None
        dims[k] = "?" if rng.random() < 0.05 else str(abs(interesting_int(rng, old)))
    elif roll < 0.8 and dims:
        del dims[rng.randrange(len(dims))]
    else:
        dims.insert(rng.randrange(len(dims) + 1), str(rng.choice([1, 2, 64, 128])))
    new = "memref<" + "".join(d + "x" for d in dims) + m.group(2)
    return replace_type_everywhere_or_once(rng, lines, i, m.group(0), new)


def mutate_list(rng, lines):
    spots = [(i, m) for i in code_lines(lines) for m in LIST_RE.finditer(lines[i])]
    if not spots:
        return None
    i, m = rng.choice(spots)
    items = m.group(1).split(", ")
    roll = rng.random()
    if roll < 0.5:
        k = rng.randrange(len(items))
        items[k] = str(interesting_int(rng, int(items[k])))
    elif roll < 0.75 and len(items) > 1:
        del items[rng.randrange(len(items))]
    else:
        items.insert(rng.randrange(len(items) + 1), rng.choice(items))
    lines[i] = lines[i][:m.start()] + "[" + ", ".join(items) + "]" + lines[i][m.end():]
    return lines


def mutate_element_type(rng, lines):
    spots = [(i, m) for i in code_lines(lines) for m in ELEMENT_RE.finditer(lines[i])]
    if not spots:
        return None
    i, m = rng.choice(spots)
    new = rng.choice([t for t in ELEMENT_TYPES if t != m.group(1)])
    if rng.random() < 0.5:
        # Every `memref<...xT` of this element type, consistently.
        pattern = re.compile(r"(memref<(?:(?:\d+|\?)x)*)" + re.escape(m.group(1)) + r"(?![\w])")
        return [pattern.sub(lambda mm: mm.group(1) + new, line) for line in lines]
    lines[i] = lines[i][:m.start()] + new + lines[i][m.end():]
    return lines


def ssa_names(lines):
    """The values the text defines: op results and block arguments."""
    names = []
    for line in lines:
        m = SSA_DEF_RE.match(line)
        if m:
            names.append(m.group(1))
        block = re.match(r"\s*\^bb\d+\((.*)\)", line)
        if block:
            names += re.findall(r"(%[\w.$-]+):", block.group(1))
    return names


def mutate_swap_operands(rng, lines):
    spots = []
    for i in code_lines(lines):
        uses = list(SSA_USE_RE.finditer(lines[i].split("=", 1)[-1] if SSA_DEF_RE.match(lines[i])
                                        else lines[i]))
        if len(uses) >= 2:
            spots.append(i)
    if not spots:
        return None
    i = rng.choice(spots)
    line = lines[i]
    offset = 0
    if SSA_DEF_RE.match(line):
        offset = line.index("=") + 1
    uses = list(SSA_USE_RE.finditer(line, offset))
    a, b = rng.sample(range(len(uses)), 2)
    a, b = min(a, b), max(a, b)
    ua, ub = uses[a], uses[b]
    lines[i] = (line[:ua.start()] + ub.group(0) + line[ua.end():ub.start()] + ua.group(0)
                + line[ub.end():])
    return lines


def mutate_replace_operand(rng, lines):
    names = ssa_names(lines) + re.findall(r"(%arg\d+)", "\n".join(lines[:3]))
    spots = [(i, m) for i in code_lines(lines)
             for m in SSA_USE_RE.finditer(lines[i], (lines[i].index("=") + 1)
                                          if SSA_DEF_RE.match(lines[i]) else 0)]
    if not spots or not names:
        return None
    i, m = rng.choice(spots)
    lines[i] = lines[i][:m.start()] + rng.choice(names) + lines[i][m.end():]
    return lines


def is_plain_op(line):
    s = line.strip()
    return s and "{" not in s.replace("{tl.", "").replace("{}", "") and "}" not in s \
        and not s.startswith("^") and not s.startswith("func.func") and not s.startswith("module")


def mutate_delete_line(rng, lines):
    spots = [i for i in code_lines(lines) if is_plain_op(lines[i])]
    if not spots:
        return None
    del lines[rng.choice(spots)]
    return lines


def mutate_duplicate_line(rng, lines):
    spots = [i for i in code_lines(lines) if is_plain_op(lines[i])]
    if not spots:
        return None
    i = rng.choice(spots)
    lines.insert(rng.choice([i + 1, rng.randrange(len(lines))]), lines[i])
    return lines


def mutate_move_line(rng, lines):
    """Moves an op to another place: often across a region boundary (out of
    the kernel, into a parallel loop, before its operands' definitions)."""
    spots = [i for i in code_lines(lines) if is_plain_op(lines[i])]
    if not spots:
        return None
    i = rng.choice(spots)
    line = lines.pop(i)
    lines.insert(rng.randrange(1, len(lines)), line)
    return lines


def mutate_swap_lines(rng, lines):
    spots = [i for i in code_lines(lines)[:-1] if is_plain_op(lines[i]) and is_plain_op(lines[i + 1])]
    if not spots:
        return None
    i = rng.choice(spots)
    lines[i], lines[i + 1] = lines[i + 1], lines[i]
    return lines


def brace_delta(line):
    return line.count("{") - line.count("}")


def mutate_wrap_region(rng, lines):
    """Wraps a balanced span of ops in a new region op: a kernel (nesting), a
    parallel loop or a pipelined loop."""
    starts = [i for i in code_lines(lines)
              if not lines[i].strip().startswith(("^", "}", "func.func", "module", "return"))]
    if not starts:
        return None
    s = rng.choice(starts)
    depth, ends = 0, []
    for e in range(s, len(lines)):
        depth += brace_delta(lines[e])
        if depth < 0:
            break
        if depth == 0 and not lines[e].strip().startswith("return"):
            ends.append(e)
    if not ends:
        return None
    e = rng.choice(ends[:8])
    index_values = [n for n in ssa_names(lines) if n.startswith("%c")] or ["%fz_missing"]
    kind = rng.randrange(3)
    if kind == 0:
        header = [f"tl.kernel grid [{rng.choice([1, 2])}] threads {rng.choice([32, 128])} {{",
                  "^bb0(%fz_bx: index):"]
    elif kind == 1:
        header = [f"tl.parallel [{rng.choice([1, 4, 64])}] {{", "^bb0(%fz_i: index):"]
    else:
        header = [f"tl.pipelined {rng.choice(index_values)} to {rng.choice(index_values)} "
                  f"stages {rng.choice([0, 1, 2, 3])} {{", "^bb0(%fz_iv: index):"]
    return lines[:s] + header + lines[s:e + 1] + ["}"] + lines[e + 1:]


def random_affine_result(rng, dims):
    expr = rng.choice(dims)
    for _ in range(rng.randrange(3)):
        op = rng.choice(["floordiv", "ceildiv", "mod", "*", "+"])
        k = rng.choice([0, -1, 1, 2, 4, 8, 64, 2**40]) if rng.random() < 0.3 else rng.choice([1, 2, 4, 8, 16])
        if op == "+" and rng.random() < 0.5:
            expr = f"{expr} + {rng.choice(dims)}"
        else:
            expr = f"({expr}) {op} {k}"
    return expr


def mutate_divisor(rng, lines):
    """Changes a divisor, a result or the physical shape of an index map."""
    spots = [(i, m) for i in code_lines(lines) for m in DIVISOR_RE.finditer(lines[i])]
    maps = [(i, m) for i in code_lines(lines) for m in INDEX_MAP_RE.finditer(lines[i])]
    if not spots and not maps:
        return None
    if spots and (not maps or rng.random() < 0.5):
        i, m = rng.choice(spots)
        new = f"{m.group(1)} {interesting_int(rng, int(m.group(2)))}"
        lines[i] = lines[i][:m.start()] + new + lines[i][m.end():]
        return lines
    i, m = rng.choice(maps)
    dims = m.group(1).split(", ")
    results = [r.strip() for r in m.group(2).split(",")] if "(" not in m.group(2) else None
    physical = m.group(3)
    if rng.random() < 0.5 or results is None:
        results = [random_affine_result(rng, dims) for _ in physical.split(",")]
    else:
        items = physical.split(", ")
        k = rng.randrange(len(items))
        items[k] = str(interesting_int(rng, int(items[k])))
        physical = ", ".join(items)
    new = f"#tl.index_map<({m.group(1)}) -> ({', '.join(results)}), [{physical}]>"
    lines[i] = lines[i][:m.start()] + new + lines[i][m.end():]
    return lines


def mutate_insert_layout(rng, lines):
    """Annotates a buffer with a random index map (often a valid one: a
    transpose or a folded row), or a swizzle."""
    spots = [(i, m) for i, line in enumerate(lines) for m in [MEMREF_VALUE_RE.match(line)] if m]
    if not spots:
        return None
    i, m = rng.choice(spots)
    name, _, type_text = m.groups()
    shape = [int(d) for d in re.findall(r"(\d+)x", type_text)]
    if not shape:
        return None
    dims = [f"d{k}" for k in range(len(shape))]
    roll = rng.random()
    if roll < 0.2:
        layout = "#tl.swizzle"
    elif roll < 0.5 and len(shape) >= 2:
        order = list(range(len(shape)))
        rng.shuffle(order)
        layout = (f"#tl.index_map<({', '.join(dims)}) -> ({', '.join(dims[k] for k in order)}), "
                  f"[{', '.join(str(shape[k]) for k in order)}]>")
    elif roll < 0.7 and len(shape) >= 2 and shape[0] % 2 == 0:
        rest = dims[2:]
        layout = (f"#tl.index_map<({', '.join(dims)}) -> (d0 floordiv 2, d1 + (d0 mod 2) * {shape[1]}"
                  f"{''.join(', ' + d for d in rest)}), "
                  f"[{', '.join([str(shape[0] // 2), str(shape[1] * 2)] + [str(s) for s in shape[2:]])}]>")
    else:
        results = [random_affine_result(rng, dims) for _ in shape]
        physical = [str(abs(interesting_int(rng, s)) if rng.random() < 0.3 else s) for s in shape]
        layout = f"#tl.index_map<({', '.join(dims)}) -> ({', '.join(results)}), [{', '.join(physical)}]>"
    indent = re.match(r"\s*", lines[i]).group(0)
    lines.insert(i + 1, f"{indent}tl.annotate_layout {name} layout({layout}) : {type_text}>")
    return lines


ALTERNATIVES = [
    ["transpose_a", "transpose_b", "clear_accum"],
    ["#tl.policy<Square>", "#tl.policy<FullRow>", "#tl.policy<FullCol>"],
    ["tl.reduce max", "tl.reduce sum", "tl.reduce min", "tl.reduce abssum"],
    ["clear = false", "clear = true"],
    ["#tl.scope<shared>", "#tl.scope<fragment>", "#tl.scope<local>", "#tl.scope<global>"],
    ["tl.alloc_shared", "tl.alloc_fragment", "tl.alloc_local"],
    ["arith.addf", "arith.mulf", "arith.subf", "arith.divf", "arith.maximumf", "arith.minimumf"],
    ["arith.addi", "arith.muli", "arith.subi", "arith.divsi", "arith.remsi", "arith.ceildivsi"],
    ["math.exp2", "math.log2", "math.exp", "math.sqrt", "math.absf"],
    ["arith.cmpi slt", "arith.cmpi sge", "arith.cmpi eq", "arith.cmpi ult"],
    ["tl.output}", "tl.name = \"x\"}"],
]


def mutate_attribute(rng, lines):
    spots = []
    for i in code_lines(lines):
        for group in ALTERNATIVES:
            for word in group:
                if word in lines[i]:
                    spots.append((i, word, group))
    if not spots:
        return None
    i, word, group = rng.choice(spots)
    roll = rng.random()
    if group[0] == "transpose_a":
        # Toggle a unit attribute of a gemm: add it to, or drop it from, its dict.
        if roll < 0.5:
            lines[i] = re.sub(r"\b" + word + r"\b,? ?", "", lines[i], count=1).replace("{}", "")
        else:
            other = rng.choice(group)
            lines[i] = lines[i].replace(word, word + ", " + other, 1) if other != word else lines[i]
        return lines
    if group[0].startswith("#tl.scope") and roll < 0.2:
        lines[i] = lines[i].replace(", " + word, "", 1)
        return lines
    lines[i] = lines[i].replace(word, rng.choice(group), 1)
    return lines


def mutate_gemm_flags(rng, lines):
    spots = [i for i in code_lines(lines) if "tl.gemm" in lines[i]]
    if not spots:
        return None
    i = rng.choice(spots)
    flag = rng.choice(["transpose_a", "transpose_b", "clear_accum",
                       "policy = #tl.policy<FullRow>", "policy = #tl.policy<FullCol>"])
    if "{" in lines[i]:
        lines[i] = lines[i].replace("{", "{" + flag + ", ", 1)
    else:
        lines[i] = lines[i].replace(" :", " {" + flag + "} :", 1)
    return lines


def mutate_global_number(rng, lines):
    """Changes one number everywhere it stands alone: in shapes, extents,
    constants, grids. Tile sizes change together, so the program often stays
    valid and the lowerings see new sizes."""
    text = "\n".join(lines)
    numbers = sorted({int(m.group(0)) for m in INT_RE.finditer(text) if int(m.group(0)) > 1}
                     | {int(d) for d in re.findall(r"(?<=[<x])(\d+)(?=x)", text)})
    if not numbers:
        return None
    old = rng.choice(numbers)
    new = rng.choice([old // 2, old * 2, old + 1, old - 1, 1, 8, 16, 48, 96, old * 4, old // 4])
    if new == old or new < 0:
        return None
    text = re.sub(r"(?<=[<x])" + str(old) + r"(?=x)", str(new), text)
    text = re.sub(r"(?<![\w%#.@^+-])" + str(old) + r"(?![\w.])", str(new), text)
    return text.splitlines()


def mutate_global_element_type(rng, lines):
    """Replaces an element type everywhere (types of buffers, constants and
    arithmetic alike)."""
    text = "\n".join(lines)
    present = sorted(set(ELEMENT_RE.findall(text)) - {"index"})
    if not present:
        return None
    old = rng.choice(present)
    new = rng.choice([t for t in ["f16", "bf16", "f32", "f64", "i8", "i32", "f8E4M3FN"] if t != old])
    return re.sub(ELEMENT_WORD.format(old), new, text).splitlines()


def mutate_threads(rng, lines):
    """A valid but different block size or grid."""
    spots = [i for i in code_lines(lines) if "tl.kernel grid" in lines[i]]
    if not spots:
        return None
    i = spots[0]
    if rng.random() < 0.6:
        lines[i] = re.sub(r"threads \d+", f"threads {rng.choice([32, 64, 96, 128, 160, 256, 512, 1024])}",
                          lines[i])
    else:
        m = LIST_RE.search(lines[i])
        if not m:
            return None
        items = [str(rng.choice([1, 2, 3, 7, 64, 65535])) for _ in m.group(1).split(", ")]
        lines[i] = lines[i][:m.start()] + "[" + ", ".join(items) + "]" + lines[i][m.end():]
    return lines


MUTATIONS = [
    (mutate_int, 6), (mutate_shape, 4), (mutate_list, 4), (mutate_element_type, 3),
    (mutate_swap_operands, 2), (mutate_replace_operand, 2), (mutate_delete_line, 2),
    (mutate_duplicate_line, 1), (mutate_move_line, 3), (mutate_swap_lines, 1),
    (mutate_wrap_region, 2), (mutate_divisor, 3), (mutate_insert_layout, 3),
    (mutate_attribute, 4), (mutate_gemm_flags, 1), (mutate_global_number, 5),
    (mutate_global_element_type, 2), (mutate_threads, 2),
]


def make_mutant(corpus, seed, index):
    """Mutant `index` of `seed`: a function of these two and the corpus only."""
    rng = random.Random(f"tl-fuzz:{seed}:{index}")
    name, text = corpus[rng.randrange(len(corpus))]
    lines = text.splitlines()
    applied = []
    count = 1 + (rng.random() < 0.4) + (rng.random() < 0.15)
    functions = [m for m, _ in MUTATIONS]
    weights = [w for _, w in MUTATIONS]
    attempts = 0
    while len(applied) < count and attempts < 20:
        attempts += 1
        mutation = rng.choices(functions, weights)[0]
        result = mutation(rng, list(lines))
        if result is not None and result != lines:
            lines = result
            applied.append(mutation.__name__[len("mutate_"):])
    return name, applied, "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Running the tools
# --------------------------------------------------------------------------


def commands(bin_dir, path, index):
    tl_opt, tlc = str(bin_dir / "tl-opt"), str(bin_dir / "tlc")
    arch = "sm_90a" if index % 2 == 0 else "sm_80"
    return [
        [tl_opt, "--tl-gpu-lowering", path],
        [tl_opt, "--convert-tl-to-cpu", path],
        [tlc, path, "--emit=ptx", f"--target={arch}"],
        [tlc, path, "--emit=llvm", "--target=cpu"],
    ]


def judge(returncode, stderr):
    """None when the run passed, else why it failed."""
    if returncode is None:
        return "timeout"
    if returncode < 0:
        return f"killed by signal {-returncode}"
    if "Stack dump:" in stderr or "PLEASE submit a bug report" in stderr:
        return f"crashed (stack dump), exit {returncode}"
    if "LLVM ERROR" in stderr:
        return f"LLVM ERROR (a fatal error, not a diagnostic), exit {returncode}"
    if returncode == 0 or returncode == 2:
        return None
    if returncode == 1:
        return None if "error:" in stderr else "exit 1 without an error: diagnostic"
    return f"exit code {returncode}"


def run_tool(command, timeout, env):
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=timeout, env=env)
        return done.returncode, done.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired as expired:
        return None, (expired.stderr or b"").decode(errors="replace")


def run_mutant(args, corpus, index, work, env):
    name, applied, text = make_mutant(corpus, args.seed, index)
    path = work / f"mutant-{index}.mlir"
    path.write_text(text)
    verify = [str(args.bin / "tl-opt"), str(path)]
    runs = [verify]
    returncode, stderr = run_tool(verify, args.timeout, env)
    failure = judge(returncode, stderr)
    if failure is None and returncode == 0:
        for command in commands(args.bin, str(path), index):
            runs.append(command)
            returncode, stderr = run_tool(command, args.timeout, env)
            failure = judge(returncode, stderr)
            if failure:
                break
    verified = len(runs) > 1
    if not failure:
        path.unlink()
        return index, None, verified
    saved = args.out / f"seed{args.seed}-mutant{index}.mlir"
    shutil.copy(path, saved)
    path.unlink()
    report = (f"seed {args.seed} mutant {index} (from {name}, mutations: {', '.join(applied)})\n"
              f"{failure}\ncommand: {' '.join(runs[-1]).replace(str(path), str(saved))}\n"
              f"--- stderr (tail) ---\n{stderr[-4000:]}\n")
    saved.with_suffix(".txt").write_text(report)
    return index, report, verified


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", type=Path, required=True, help="the build's bin directory")
    parser.add_argument("--source", type=Path, default=Path(__file__).resolve().parents[2],
                        help="the source tree (its tests/lit is the corpus)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=120,
                        help="time budget: mutants 0, 1, 2, ... start until it is spent")
    parser.add_argument("--count", type=int, default=None, help="at most this many mutants")
    parser.add_argument("--first", type=int, default=0, help="the first mutant's index")
    parser.add_argument("--only", type=int, default=None, help="run mutant ONLY alone")
    parser.add_argument("--print", type=int, default=None, metavar="INDEX",
                        help="print mutant INDEX and exit")
    parser.add_argument("--jobs", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    parser.add_argument("--timeout", type=float, default=20, help="seconds per tool run")
    parser.add_argument("--out", type=Path, default=Path("fuzz-failures"),
                        help="where failing mutants are saved")
    args = parser.parse_args()
    args.bin = args.bin.resolve()
    for tool in ["tl-opt", "tlc", "tl-mha"]:
        if not (args.bin / tool).exists():
            print(f"fuzz: no {tool} in {args.bin}", file=sys.stderr)
            return 2

    corpus = load_corpus(args.source, args.bin)
    if args.print is not None:
        name, applied, text = make_mutant(corpus, args.seed, args.print)
        print(f"// from {name}, mutations: {', '.join(applied)}\n{text}", end="")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="tl-fuzz-"))
    env = dict(os.environ, TLC_CACHE_DIR=str(work / "cache"))

    if args.only is not None:
        first, last = args.only, args.only + 1
    else:
        first = args.first
        last = first + args.count if args.count is not None else None
    start = time.monotonic()
    deadline = start + args.seconds
    failures, ran, verified = [], 0, 0
    lock = threading.Lock()
    next_index = [first]

    def take():
        """The next mutant index, while the budget lasts."""
        with lock:
            if time.monotonic() >= deadline and args.only is None:
                return None
            if last is not None and next_index[0] >= last:
                return None
            index = next_index[0]
            next_index[0] += 1
            return index

    def worker():
        nonlocal ran, verified
        while (index := take()) is not None:
            _, report, was_verified = run_mutant(args, corpus, index, work, env)
            with lock:
                ran += 1
                verified += was_verified
                if report:
                    failures.append((index, report))
                    print(f"FAIL {report}", flush=True)

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for future in [pool.submit(worker) for _ in range(args.jobs)]:
            future.result()
    shutil.rmtree(work, ignore_errors=True)
    elapsed = time.monotonic() - start
    # The mutants that ran are first .. first + ran - 1 (each worker takes
    # indices in order; all that were taken finished).
    print(f"fuzz: seed {args.seed}: mutants {first}..{first + ran - 1} ({ran} run, {verified} "
          f"passed the verifier and were lowered) in {elapsed:.0f} s over {len(corpus)} corpus "
          f"programs: {len(failures)} failure(s)")
    for index, _ in sorted(failures):
        print(f"  rerun: {sys.argv[0]} --bin {args.bin} --source {args.source} "
              f"--seed {args.seed} --only {index}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
