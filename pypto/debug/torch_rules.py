"""The op -> torch rule table of ``torch_codegen`` (one entry per registry op, both namespaces)."""

from __future__ import annotations

from typing import Any

from pypto.debug.torch_codegen import RULES, _Emitter, torch_dtype
from pypto.ir.expr import Call
from pypto.ir.ops.common import (
    ARG_REDUCE,
    BINARY,
    COL_EXPAND,
    COL_REDUCE,
    ROW_EXPAND,
    ROW_REDUCE,
    SCALAR,
    UNARY,
)
from pypto.ir.ops.pipe_ops import FREE, POP, PUSH, SETUP
from pypto.ir.types import ShapedType

_BINARY = {"add": "torch.add({a}, {b})", "sub": "torch.sub({a}, {b})", "mul": "torch.mul({a}, {b})",
           "div": "_div({a}, {b})", "maximum": "torch.maximum({a}, {b})", "minimum": "torch.minimum({a}, {b})",
           "and_": "torch.bitwise_and({a}, {b})", "or_": "torch.bitwise_or({a}, {b})",
           "xor": "torch.bitwise_xor({a}, {b})", "rem": "_rem({a}, {b})",
           "shl": "torch.bitwise_left_shift({a}, {b})", "shr": "torch.bitwise_right_shift({a}, {b})"}
_SCALAR = {"adds": "_same({a}, {a} + {b})", "subs": "_same({a}, {a} - {b})", "muls": "_same({a}, {a} * {b})",
           "divs": "_div({a}, {b})", "maximums": "_same({a}, torch.clamp({a}, min={b}))",
           "minimums": "_same({a}, torch.clamp({a}, max={b}))", "ands": "torch.bitwise_and({a}, {b})",
           "ors": "torch.bitwise_or({a}, {b})", "rems": "_rem({a}, {b})",
           "shls": "torch.bitwise_left_shift({a}, {b})", "shrs": "torch.bitwise_right_shift({a}, {b})"}
_UNARY = {"neg": "torch.neg({a})", "abs": "torch.abs({a})", "exp": "torch.exp({a})", "log": "torch.log({a})",
          "sqrt": "torch.sqrt({a})", "rsqrt": "torch.rsqrt({a})", "recip": "torch.reciprocal({a})",
          "relu": "torch.relu({a})", "not_": "_not({a})", "sin": "torch.sin({a})", "cos": "torch.cos({a})"}


def _template(text: str):
    def rule(em: _Emitter, c: Call) -> str:
        return text.format(a=em.arg(c, 0), b=em.arg(c, 1))
    return rule


def _reduce(kind: str, dim: int):
    return lambda em, c: f"_reduce({em.arg(c, 0)}, {kind!r}, {dim})"


def _expand(kind: str):
    return lambda em, c: f"_expand({kind!r}, {em.arg(c, 0)}, {em.arg(c, 1)})"


def _out_dtype(c: Call) -> str:
    t = c.result_type
    if not isinstance(t, ShapedType):
        raise ValueError(f"{c.op}: result type unknown")
    return torch_dtype(t.dtype)


def _atomic_add(c: Any) -> bool:
    """Does the store or assemble ``c`` add into its window (``atomic=pl.AtomicType.Add``)?"""
    return int(c.kwargs.get("atomic") or 0) == 1


def _valid(em: _Emitter, x: Any) -> str:
    """The operand's valid shape from its type view (None: the whole tile / tensor)."""
    view = getattr(getattr(x, "type", None), "view", None)
    valid = getattr(view, "valid_shape", None)
    if not valid:
        return "None"
    return em.expr(tuple(valid))


def _enum_name(v: Any, default: str) -> str:
    if v is None:
        return default
    return str(getattr(v, "name", None) or getattr(v, "value", v)).lower()


def _cast(em: _Emitter, c: Call) -> str:
    return f"_cast({em.arg(c, 0)}, {torch_dtype(c.kwargs['target_type'])}, {_enum_name(em.kw(c, 'mode'), 'round')!r})"


def _matmul(em: _Emitter, c: Call) -> str:
    return (f"_matmul({em.arg(c, 0)}, {em.arg(c, 1)}, {_out_dtype(c)}, {bool(em.kw(c, 'a_trans'))}, "
            f"{bool(em.kw(c, 'b_trans'))})")


def _batch_matmul(em: _Emitter, c: Call) -> str:
    """Matrices stacked by rows: split into the batch, multiply (a batch of 1 broadcasts), stack again."""
    a, b = em.arg(c, 0), em.arg(c, 1)
    na, nb = em.kw(c, "lhs_batch", 1), em.kw(c, "rhs_batch", 1)
    prod = (f"_matmul({a}.reshape({na}, -1, {a}.shape[-1]), {b}.reshape({nb}, -1, {b}.shape[-1]), "
            f"{_out_dtype(c)}, {bool(em.kw(c, 'a_trans'))}, {bool(em.kw(c, 'b_trans'))})")
    return f"{prod}.flatten(0, 1)"


def _matmul_acc(em: _Emitter, c: Call) -> str:
    acc = em.arg(c, 0)
    prod = (f"_matmul({em.arg(c, 1)}, {em.arg(c, 2)}, {acc}.dtype, {bool(em.kw(c, 'a_trans'))}, "
            f"{bool(em.kw(c, 'b_trans'))})")
    cond = c.args[3] if len(c.args) > 3 else em.kw(c, "init_cond")
    if cond is None:
        return f"_same({acc}, {acc} + {prod})"
    return f"({prod} if {em.expr(cond)} else _same({acc}, {acc} + {prod}))"


def _create(em: _Emitter, c: Call) -> str:
    init = em.kw(c, "init_value")
    value = "0" if init is None else em.expr(init)
    return f"torch.full({em.arg(c, 0)}, {value}, dtype={torch_dtype(c.kwargs['dtype'])})"


def _fillpad(em: _Emitter, c: Call) -> str:
    return f"_fillpad({em.arg(c, 0)}, {_valid(em, c.args[0])}, {_enum_name(em.kw(c, 'pad_value'), 'zero')!r})"


def _fillpad_expand(em: _Emitter, c: Call) -> str:
    from pypto.ir.ops.elementwise_extra import pad_of

    pad = pad_of(em.kw(c, "pad_value"))
    return f"_fillpad_expand({em.arg(c, 0)}, {_valid(em, c.args[0])}, {em.arg(c, 1)}, {_enum_name(pad, 'zero')!r})"


def _register() -> None:
    for ns in ("tensor", "tile"):
        for op in BINARY:
            RULES[f"{ns}.{op}"] = _template(_BINARY[op])
        for op in SCALAR:
            RULES[f"{ns}.{op}"] = _template(_SCALAR[op])
        for op in UNARY:
            RULES[f"{ns}.{op}"] = _template(_UNARY[op])
        for op in ROW_REDUCE:
            RULES[f"{ns}.{op}"] = _reduce(op.split("_")[1], 1)
        for op in COL_REDUCE:
            RULES[f"{ns}.{op}"] = _reduce(op.split("_")[1], 0)
        for op in ARG_REDUCE:
            RULES[f"{ns}.{op}"] = _reduce(op.split("_")[1], 0 if op.startswith("col") else 1)
        for op in (*ROW_EXPAND, *COL_EXPAND):
            RULES[f"{ns}.{op}"] = _expand(op.split("_expand")[1].lstrip("_"))
        RULES.update({
            f"{ns}.cast": _cast,
            f"{ns}.matmul": _matmul,
            f"{ns}.matmul_acc": _matmul_acc,
            f"{ns}.slice": lambda em, c: f"_slice({em.arg(c, 0)}, {em.arg(c, 1)}, {em.arg(c, 2)}, {em.arg(c, 3)})",
            f"{ns}.assemble": lambda em, c: (f"_assemble({em.arg(c, 0)}, {em.arg(c, 1)}, {em.arg(c, 2)}, "
                                             f"{_atomic_add(c)})"),
            f"{ns}.concat": lambda em, c: f"torch.cat([{em.arg(c, 0)}, {em.arg(c, 1)}], dim=1)",
            f"{ns}.read": lambda em, c: f"_read({em.arg(c, 0)}, {em.arg(c, 1)})",
            f"{ns}.write": lambda em, c: f"_write({em.arg(c, 0)}, {em.arg(c, 1)}, {em.arg(c, 2)})",
            f"{ns}.reshape": lambda em, c: f"{em.arg(c, 0)}.reshape({em.arg(c, 1)})",
            f"{ns}.transpose": lambda em, c: f"{em.arg(c, 0)}.transpose({em.arg(c, 1)}, {em.arg(c, 2)})",
            f"{ns}.fillpad": _fillpad,
            f"{ns}.fillpad_expand": _fillpad_expand,
            f"{ns}.fmod": lambda em, c: f"torch.fmod({em.arg(c, 0)}, {em.arg(c, 1)})",
            f"{ns}.fmods": lambda em, c: f"torch.fmod({em.arg(c, 0)}, {em.arg(c, 1)})",
            f"{ns}.expands": lambda em, c: f"torch.full_like({em.arg(c, 0)}, {em.arg(c, 1)})",
            f"{ns}.full": lambda em, c: (f"torch.full({em.arg(c, 0)}, {em.arg(c, 1)}, "
                                         f"dtype={torch_dtype(c.kwargs['dtype'])})"),
        })
    RULES.update({
        "tensor.create": _create,
        "tensor.dim": lambda em, c: f"{em.arg(c, 0)}.shape[{em.arg(c, 1)}]",
        "tensor.expand_clone": lambda em, c: f"{em.arg(c, 1)}.copy_({em.arg(c, 0)}.expand_as({em.arg(c, 1)}))",
        "tile.create": lambda em, c: f"torch.zeros({em.arg(c, 0)}, dtype={torch_dtype(c.kwargs['dtype'])})",
        "tile.alloc": lambda em, c: "None",
        "tile.load": lambda em, c: f"_load({em.arg(c, 0)}, {em.arg(c, 1)}, {em.arg(c, 2)}, {em.arg(c, 3)})",
        "tile.mscatter": lambda em, c: f"_mscatter({em.arg(c, 2)}, {em.arg(c, 0)}, {em.arg(c, 1)})",
        "tile.store": lambda em, c: (f"_store({em.arg(c, 0)}, {em.arg(c, 1)}, {em.arg(c, 2)}, "
                                     f"{_valid(em, c.args[0])}, {_atomic_add(c)})"),
        "tile.move": lambda em, c: f"{em.arg(c, 0)}.clone()",
        "tile.matmul_bias": lambda em, c: (f"(_matmul({em.arg(c, 0)}, {em.arg(c, 1)}, torch.float32) + "
                                           f"{em.arg(c, 2)}.float())"),
        "tile.batch_matmul": _batch_matmul,
    })
    _register_extra()


# tile.subc / tile.subsc are a - b - c (the lowering emits two subtractions, see codegen.pto_rules)
_TERNARY = {"addc": "_same({a}, {a} + {b} + {c})", "subc": "_same({a}, {a} - {b} - {c})",
            "addsc": "_same({a}, {a} + {b} + {c})", "subsc": "_same({a}, {a} - {b} - {c})"}
_SPMD = {"get_block_idx": '_BLOCK["idx"]', "get_block_num": '_BLOCK["num"]', "get_subblock_idx": '_BLOCK["sub"]'}


def _ternary(text: str):
    return lambda em, c: text.format(a=em.arg(c, 0), b=em.arg(c, 1), c=em.arg(c, 2))


def _ci(em: _Emitter, c: Call) -> str:
    return (f"_ci({em.arg(c, 0)}, {em.arg(c, 1)}, {_out_dtype(c)}, "
            f"{bool(em.kw(c, 'descending'))})")


def _random(em: _Emitter, c: Call) -> str:
    seeds = ", ".join(em.arg(c, i) for i in range(6))
    from pypto.ir.ops.random_ops import valid_dims

    valid = valid_dims(c.kwargs.get("valid_shape"))
    valid_text = repr(list(valid)) if valid is not None else "None"
    return (f"_random([{seeds}], {em.arg(c, 6)}, {valid_text}, {_out_dtype(c)}, "
            f"{int(c.kwargs.get('rounds', 10))})")


def _array_create(em: _Emitter, c: Call) -> str:
    from pypto.ir.dtypes import DataType

    fill = "None" if c.kwargs["dtype"] is DataType.TASK_ID else "0"  # task ids only order the device's tasks
    return f"[{fill}] * {int(c.kwargs['extent'])}"


def _gather(em: _Emitter, c: Call) -> str:
    from pypto.ir.dtypes import DataType
    from pypto.ir.ops.sort_ops import MASK_STEP

    if c.kwargs.get("cmp_mode") is not None:
        count = torch_dtype(c.kwargs.get("count_dtype") or DataType.INT32)
        return (f"_gather_compare({em.arg(c, 0)}, {em.expr(c.kwargs['kvalue'])}, {c.kwargs['cmp_mode']!r}, "
                f"{em.kw(c, 'out_cols')}, {em.kw(c, 'offset') or 0}, {count})")
    if c.kwargs.get("dim") is not None:  # torch.gather along an axis (N-D shapes kept on the 2-D tiles)
        shapes = ", ".join(f"{k}={list(c.kwargs[k])!r}" for k in ("src_shape", "index_shape") if c.kwargs.get(k))
        col0 = f", col0={int(c.kwargs['src_col0'])}" if c.kwargs.get("src_col0") else ""
        return f"_gather_dim({em.arg(c, 0)}, {em.arg(c, 1)}, {int(c.kwargs['dim'])}{', ' + shapes if shapes else ''}{col0})"
    if len(c.args) > 1:  # by flat positions in the source
        return f"{em.arg(c, 0)}.reshape(-1)[{em.arg(c, 1)}.long()]"
    stride, phase = MASK_STEP[c.kwargs["mask_pattern"]]
    cols = em.kw(c, "src_cols") or f"{em.arg(c, 0)}.shape[1]"
    out = c.kwargs.get("output_dtype")
    return f"_gather_mask({em.arg(c, 0)}, {stride}, {phase}, {cols}, {torch_dtype(out) if out else None})"


def _scatter(em: _Emitter, c: Call) -> str:
    from pypto.ir.ops.sort_ops import MASK_STEP

    if c.kwargs.get("mask_pattern") is not None:
        stride, phase = MASK_STEP[c.kwargs["mask_pattern"]]
        return f"_scatter_mask({em.arg(c, 0)}, {em.arg(c, 1)}, {stride}, {phase})"
    return f"_scatter({em.arg(c, 0)}, {em.arg(c, 1)}, {em.arg(c, 2)})"


_SORTING = {
    "scatter": _scatter,
    "scatter_update": lambda em, c: f"_scatter_update({em.arg(c, 0)}, {em.arg(c, 2)}, {em.arg(c, 3)})",
    "sort32": lambda em, c: f"_sort32({em.arg(c, 0)}, {em.arg(c, 1)})",
    "mrgsort": lambda em, c: (f"_mrgsort({em.arg(c, 0)}, {em.kw(c, 'block_len')})" if len(c.args) == 1 else
                              f"_mrgsort_lists({', '.join(em.arg(c, i) for i in range(len(c.args)))})"),
    "gather": _gather,
    "set_validshape": lambda em, c: f"_mark_valid({em.arg(c, 0)}.clone(), ({em.arg(c, 1)}, {em.arg(c, 2)}))",
}


def _register_extra() -> None:
    for ns in ("tensor", "tile"):
        for op, text in _SPMD.items():
            RULES[f"{ns}.{op}"] = lambda em, c, text=text: text
        for kind in ("add", "max", "min"):
            RULES[f"{ns}.part_{kind}"] = lambda em, c, kind=kind: f"_part({em.arg(c, 0)}, {em.arg(c, 1)}, {kind!r})"
        RULES[f"{ns}.ci"] = _ci
        RULES[f"{ns}.random"] = _random
        RULES[f"{ns}.xors"] = lambda em, c: f"_xors({em.arg(c, 0)}, {em.arg(c, 1)})"
    for op, text in _TERNARY.items():
        RULES[f"tile.{op}"] = _ternary(text)
    RULES.update({
        "tile.prelu": lambda em, c: f"_prelu({em.arg(c, 0)}, {em.arg(c, 1)})",
        "tile.extract": lambda em, c: f"_extract({em.arg(c, 0)}, {em.arg(c, 1)}, {em.arg(c, 2)}, {em.arg(c, 3)})",
        "tile.fillpad_inplace": _fillpad,
        "tensor.gather_row": lambda em, c: "_gather_row(" + ", ".join(em.arg(c, i) for i in range(6)) + ")",
        "tensor.paged_gather": lambda em, c: (f"_paged_gather({em.arg(c, 0)}, {em.arg(c, 1)}, {em.arg(c, 2)}, "
                                              f"{em.kw(c, 'block_size')}, {em.kw(c, 'size')}, "
                                              f"{em.kw(c, 'max_indices')}, {em.kw(c, 'col_off', 0)})"),
        "array.create": _array_create,
        "array.get_element": lambda em, c: f"{em.arg(c, 0)}[int({em.arg(c, 1)})]",
        "array.update_element": lambda em, c: f"_array_set({em.arg(c, 0)}, {em.arg(c, 1)}, {em.arg(c, 2)})",
        "system.task_dummy": lambda em, c: "None",  # a dependency join: no data
        # upstream's cross-core pipes: a FIFO per (direction, id); set-up and slot release carry no data
        **{op: (lambda em, c, d=d: f"_pipe_push({d!r}, {em.kw(c, 'id')!r}, {em.arg(c, 0)})") for op, d in PUSH.items()},
        **{op: (lambda em, c, d=d: f"_pipe_pop({d!r}, {em.kw(c, 'id')!r})") for op, d in POP.items()},
        **{op: (lambda em, c: "None") for op in (*FREE, *SETUP[:2])},
        **{op: (lambda em, c: "0") for op in SETUP[2:]},  # a slot buffer's address: unused without pipes
        "system.syncall": lambda em, c: "_syncall()",
        "system.unsupported": lambda em, c: f"_unsupported({str(em.kw(c, 'message', ''))!r})",
        "tile.transpose_view": lambda em, c: f"{em.arg(c, 0)}.mT",
        "tile.reinterpret_view": lambda em, c: (f"{em.arg(c, 0)}.contiguous().view({torch_dtype(c.kwargs['dtype'])})"
                                                f".reshape({[int(d) for d in c.result_type.shape]})"),
        **{f"{ns}.{op}": rule for ns in ("tile", "tensor") for op, rule in _SORTING.items()},
        # distributed chip programs: one rank (the prelude's _COMM); several ranks run on the sims
        "comm.rank": lambda em, c: '_COMM["rank"]',
        "comm.nranks": lambda em, c: '_COMM["nranks"]',
        "comm.notify": lambda em, c: f"_comm_notify({em.arg(c, 0)}, {em.arg(c, 1)}, {em.arg(c, 2)}, "
                                     f"{em.arg(c, 3)}, {int(em.kw(c, 'op', 1))})",
        "comm.wait": lambda em, c: f"_comm_wait({em.arg(c, 0)}, {em.arg(c, 1)}, {em.arg(c, 2)}, "
                                   f"{int(em.kw(c, 'cmp', 1))})",
        "comm.copy": lambda em, c: f"_comm_copy({em.arg(c, 0)}, {em.arg(c, 1)}, {em.arg(c, 2)}, {em.arg(c, 3)}, "
                                   f"{int(em.kw(c, 'atomic', 0))})",
        "comm.barrier": lambda em, c: em.arg(c, 0),  # every rank (this one) has arrived
    })


_register()
