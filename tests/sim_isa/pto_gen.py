"""Small generators of PTO 0.1.1 modules for ISA coverage the spec examples lack."""

from __future__ import annotations


def tile(
    dtype: str,
    rows: int,
    cols: int,
    vr: int | str | None = None,
    vc: int | str | None = None,
    loc: str = "ub",
    blayout: str = "row_major",
    slayout: str = "none_box",
    fractal: int = 512,
    pad: int = 0,
) -> str:
    """A fully written ``!pto.tile_buf`` type."""
    vr = rows if vr is None else vr
    vc = cols if vc is None else vc
    return (
        f"!pto.tile_buf<loc={loc}, dtype={dtype}, rows={rows}, cols={cols}, v_row={vr}, v_col={vc}, "
        f"blayout={blayout}, slayout={slayout}, fractal={fractal}, pad={pad}>"
    )


def unary_stack_module(
    name: str, dtype: str, ops: list[str], rows: int = 16, cols: int = 64, scalar: str | None = None
) -> str:
    """``name(a, b, out[len(ops)*rows, cols], s)``: out block k = ops[k] applied to (a, b[, s]).

    Each op is a template with ``{a}``, ``{b}``, ``{o}``, ``{t}`` (tile type) and ``{s}`` (scalar).
    """
    t = tile(dtype, rows, cols)
    n = len(ops)
    sarg = f", %s: {scalar}" if scalar else ""
    lines = [
        "module {",
        f"  func.func @{name}(%pa: !pto.ptr<{dtype}>, %pb: !pto.ptr<{dtype}>, %po: !pto.ptr<{dtype}>{sarg}) {{",
        "    %c0 = arith.constant 0 : index",
        "    %c1 = arith.constant 1 : index",
        f"    %cr = arith.constant {rows} : index",
        f"    %cc = arith.constant {cols} : index",
        f"    %cn = arith.constant {rows * n} : index",
        f"    %A = pto.make_tensor_view %pa, shape = [%cr, %cc] strides = [%cc, %c1] : !pto.tensor_view<2x{dtype}>",
        f"    %B = pto.make_tensor_view %pb, shape = [%cr, %cc] strides = [%cc, %c1] : !pto.tensor_view<2x{dtype}>",
        f"    %O = pto.make_tensor_view %po, shape = [%cn, %cc] strides = [%cc, %c1] : !pto.tensor_view<2x{dtype}>",
        f"    %va = pto.subview %A, offsets = [%c0, %c0], sizes = [%cr, %cc] : !pto.tensor_view<2x{dtype}> -> "
        f"!pto.tile_view<{rows}x{cols}x{dtype}>",
        f"    %vb = pto.subview %B, offsets = [%c0, %c0], sizes = [%cr, %cc] : !pto.tensor_view<2x{dtype}> -> "
        f"!pto.tile_view<{rows}x{cols}x{dtype}>",
        f"    %a = pto.alloc_tile : {t}",
        f"    %b = pto.alloc_tile : {t}",
        f"    %o = pto.alloc_tile : {t}",
        f"    pto.tload ins(%va : !pto.tile_view<{rows}x{cols}x{dtype}>) outs(%a : {t})",
        f"    pto.tload ins(%vb : !pto.tile_view<{rows}x{cols}x{dtype}>) outs(%b : {t})",
    ]
    for k, op in enumerate(ops):
        lines += [
            f"    %off{k} = arith.constant {k * rows} : index",
            f"    %vo{k} = pto.subview %O, offsets = [%off{k}, %c0], sizes = [%cr, %cc] : "
            f"!pto.tensor_view<2x{dtype}> -> !pto.tile_view<{rows}x{cols}x{dtype}>",
            "    " + op.format(a="%a", b="%b", o="%o", t=t, s="%s"),
            f"    pto.tstore ins(%o : {t}) outs(%vo{k} : !pto.tile_view<{rows}x{cols}x{dtype}>)",
        ]
    lines += ["    return", "  }", "}"]
    return "\n".join(lines) + "\n"


INT_OPS = {
    "add": ("pto.tadd ins({a}, {b} : {t}, {t}) outs({o} : {t})", lambda a, b, s: a + b),
    "sub": ("pto.tsub ins({a}, {b} : {t}, {t}) outs({o} : {t})", lambda a, b, s: a - b),
    "mul": ("pto.tmul ins({a} : {t}, {b} : {t}) outs({o} : {t})", lambda a, b, s: a * b),
    "max": ("pto.tmax ins({a} : {t}, {b} : {t}) outs({o} : {t})", lambda a, b, s: (a > b) * a + (a <= b) * b),
    "min": ("pto.tmin ins({a} : {t}, {b} : {t}) outs({o} : {t})", lambda a, b, s: (a < b) * a + (a >= b) * b),
    "and": ("pto.tand ins({a}, {b} : {t}, {t}) outs({o} : {t})", lambda a, b, s: a & b),
    "xor": ("pto.txor ins({a}, {b} : {t}, {t}) outs({o} : {t})", lambda a, b, s: a ^ b),
    "or": ("pto.tor ins({a} : {t}, {b} : {t}) outs({o} : {t})", lambda a, b, s: a | b),
    "shl": ("pto.tshl ins({a} : {t}, {b} : {t}) outs({o} : {t})", lambda a, b, s: a << b),
    "shr": ("pto.tshr ins({a} : {t}, {b} : {t}) outs({o} : {t})", lambda a, b, s: a >> b),
    "rem": ("pto.trem ins({a} : {t}, {b} : {t}) outs({o} : {t})", lambda a, b, s: a % b),
    "not": ("pto.tnot ins({a} : {t}) outs({o} : {t})", lambda a, b, s: ~a),
    "abs": ("pto.tabs ins({a} : {t}) outs({o} : {t})", lambda a, b, s: abs(a)),
    "adds": ("pto.tadds ins({a}, {s} : {t}, i32) outs({o} : {t})", lambda a, b, s: a + s),
    "expands": ("pto.texpands ins({s} : i32) outs({o} : {t})", lambda a, b, s: a * 0 + s),
}
