"""Seeded source mutations of the example kernels, for the CLI fuzz test.

A case is (example file, kernel, mutation(s), CLI mode). Mutations are plain text edits a kernel author
could make by mistake: op swaps, shape and dtype changes, deleted lines, wrong arity, huge tiles, bad
offsets, SHAPES specs that disagree with the kernel, other ``pl.at`` levels and syntax errors. Each one
is a pure function of (source, rng), so a seed reproduces a case exactly.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# Goldens for kernels whose examples define none: `pypto run` compares against them, so an exit 0 there
# means correct results.
GOLDENS = {
    "add_128": "a + b", "mul_128": "a * b", "add_64": "a + b", "mul_add_64": "a * b + c",
    "chunked_add": "a + b", "add_relu": "np.maximum(a + b, 0)", "matmul": "a @ b",
    "row_softmax": "np.exp(x - x.max(1, keepdims=True)) / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)",
}

BINARY = ["pl.add", "pl.sub", "pl.mul", "pl.div", "pl.maximum", "pl.minimum"]
UNARY = ["pl.exp", "pl.relu", "pl.neg", "pl.sqrt", "pl.abs", "pl.row_sum", "pl.row_max", "pl.col_sum"]
OTHER = ["pl.matmul", "pl.load", "pl.store", "pl.create_tile", "pl.cast", "pl.muls", "pl.adds", "pl.row_expand_sub"]
DTYPES = ["pl.FP32", "pl.FP16", "pl.BF16", "pl.INT8", "pl.INT32", "pl.INT64", "pl.UINT8", "pl.BOOL"]
SPEC_DTYPES = ["f32", "f16", "bf16", "i32", "int8", "f64", "bogus"]
DIMS = [0, 1, 3, 16, 31, 32, 63, 65, 100, 128, 256, 1000, 4096, 100000, -1, -64]
OFFSETS = ["0.5", "-1", "2**63", "2**62", "1000", "63", "64", "128", "1e3", "None", "'a'", "-2**64"]
LEVELS = ["pl.Level.CORE_GROUP", "pl.Level.CHIP", "pl.Level.HOST", "pl.Level.CLUSTER", "pl.Level.AIV"]


@dataclass(frozen=True)
class Target:
    path: Path
    kernel: str


def corpus() -> list[Target]:
    """Every example @pl.jit entry kernel that has SHAPES (the CLI can give it sample inputs)."""
    out = []
    for path in sorted(EXAMPLES.glob("*/*.py")):
        text = path.read_text()
        shapes = text[text.find("SHAPES"):] if "SHAPES" in text else ""
        for name in re.findall(r"^@pl\.jit\ndef (\w+)\(", text, re.M):
            if f'"{name}"' in shapes:
                out.append(Target(path, name))
    return out


def _kernel_span(lines: list[str], kernel: str) -> tuple[int, int]:
    """Line range (start, end) of the kernel's body."""
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"def {kernel}("))
    end = start + 1
    while end < len(lines) and (lines[end].startswith((" ", "\t")) or not lines[end].strip()):
        end += 1
    return start + 1, end


def _in_kernel(text: str, kernel: str, rng: random.Random, pattern: str,
               repl: Callable[[re.Match[str]], str]) -> str:
    """Replace one random match of ``pattern`` inside the kernel body (no match: the text unchanged)."""
    lines = text.splitlines(keepends=True)
    a, b = _kernel_span(lines, kernel)
    body = "".join(lines[a:b])
    matches = list(re.finditer(pattern, body))
    if not matches:
        return text
    m = rng.choice(matches)
    body = body[: m.start()] + repl(m) + body[m.end():]
    return "".join(lines[:a]) + body + "".join(lines[b:])


def op_swap(text: str, kernel: str, rng: random.Random) -> str:
    pool = BINARY + UNARY + OTHER
    return _in_kernel(text, kernel, rng, r"pl\.\w+(?=\()", lambda m: rng.choice(pool))


def tile_shape(text: str, kernel: str, rng: random.Random) -> str:
    return _in_kernel(text, kernel, rng, r"(?<=[\[, ])\d+(?=[\],])", lambda m: str(rng.choice(DIMS)))


def huge_tile(text: str, kernel: str, rng: random.Random) -> str:
    big = rng.choice(["[4096, 4096]", "[100000, 64]", "[64, 100000]", "[2**31, 64]", "[512, 512]"])
    return _in_kernel(text, kernel, rng, r"\[\d+, \d+\](?=\)|, valid)", lambda m: big)


def bad_offset(text: str, kernel: str, rng: random.Random) -> str:
    def repl(m: re.Match[str]) -> str:
        parts = m.group(2).split(", ")
        parts[rng.randrange(len(parts))] = rng.choice(OFFSETS)
        return f"{m.group(1)}[{', '.join(parts)}]"
    return _in_kernel(text, kernel, rng, r"((?<=pl\.)(?:load|store)\((?:[^\[\]()]*?, )?)\[([^\]]*)\]", repl)


def dtype_change(text: str, kernel: str, rng: random.Random) -> str:
    if rng.random() < 0.5 or "pl.FP" not in text:
        return re.sub(r'(?<=:)(f32|f16)(?=")', lambda m: rng.choice(SPEC_DTYPES), text, count=rng.randint(1, 3))
    return _in_kernel(text, kernel, rng, r"pl\.(FP32|FP16|BF16|INT32)", lambda m: rng.choice(DTYPES))


def spec_mismatch(text: str, kernel: str, rng: random.Random) -> str:
    dims = rng.choice(["32x32", "128x128", "64x65", "1x64", "64", "512x128", "0x64", "64x64x2", "x64"])
    return re.sub(r'(?<=")\d+x\d+(?=:)', dims, text, count=rng.randint(1, 3))


def delete_line(text: str, kernel: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    a, b = _kernel_span(lines, kernel)
    if b <= a:
        return text
    del lines[rng.randrange(a, b)]
    return "".join(lines)


def wrong_arity(text: str, kernel: str, rng: random.Random) -> str:
    def repl(m: re.Match[str]) -> str:
        args = m.group(2)
        if rng.random() < 0.5 and "," in args:
            return f"{m.group(1)}({args.rsplit(',', 1)[0]})"
        return f"{m.group(1)}({args}, {rng.choice(['a', '0', '[0, 0]', '1.5', 'None'])})"
    return _in_kernel(text, kernel, rng, r"(pl\.\w+)\(([^()\n]*)\)", repl)


def level_change(text: str, kernel: str, rng: random.Random) -> str:
    return _in_kernel(text, kernel, rng, r"pl\.Level\.\w+", lambda m: rng.choice(LEVELS))


def syntax_error(text: str, kernel: str, rng: random.Random) -> str:
    kind = rng.choice(["colon", "paren", "indent", "kwarg", "tab", "garbage"])
    pattern = {"colon": r":\n", "paren": r"\)", "indent": r"\n        ", "kwarg": r"\(([a-z_]+), ",
               "tab": r"\n    ", "garbage": r"\n"}[kind]
    repl = {"colon": "\n", "paren": "", "indent": "\n       ", "kwarg": "(x=1, \\1, ", "tab": "\n\t  ",
            "garbage": "\n$@! "}[kind]
    return _in_kernel(text, kernel, rng, pattern, lambda m: m.expand(repl))


MUTATORS: dict[str, Callable[[str, str, random.Random], str]] = {
    "op_swap": op_swap, "tile_shape": tile_shape, "huge_tile": huge_tile, "bad_offset": bad_offset,
    "dtype": dtype_change, "spec_mismatch": spec_mismatch, "delete_line": delete_line,
    "wrong_arity": wrong_arity, "level": level_change, "syntax": syntax_error,
}


def with_golden(text: str, kernel: str) -> str:
    """Append a golden for ``kernel`` when the example has none (so `pypto run` checks the result)."""
    if kernel not in GOLDENS or f"def golden_{kernel}(" in text:
        return text
    params = re.search(rf"^def {kernel}\(([^)]*(?:\)[^)]*)*?)\):\s*$", text, re.M)
    names = re.findall(r"(\w+):", params.group(1)) if params else []
    return text + f"\n\ndef golden_{kernel}({', '.join(names)}):\n    return {GOLDENS[kernel]}\n"


def mutate(target: Target, names: list[str], seed: int) -> str:
    """The example's source with the named mutations applied in order (seeded)."""
    rng = random.Random(seed)
    text = with_golden(target.path.read_text(), target.kernel)
    for name in names:
        text = MUTATORS[name](text, target.kernel, rng)
    return text
