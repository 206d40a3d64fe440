"""pypto.language exposes every public name of upstream PyPTO's ``pypto.language`` (``__all__``), ``pl.tile``
and ``pl.tensor`` (their ``__all__``), as of upstream commit e2d0f78ae. Names pypto implements resolve to
DSL constructs/ops; the rest are stand-ins whose use is a compile-time UnsupportedFeatureError naming
the construct and ptoas 0.1.1 (never an AttributeError).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import pypto.language as pl
from pypto.errors import UnsupportedFeatureError
from pypto.language.unsupported import Unsupported, UnsupportedNamespace

# Upstream's lists, copied as data (python/pypto/language/__init__.py, op/tile_ops.py, op/tensor_ops.py).
UPSTREAM_PL = """
jit JITFunction function inline program InlineFunction parse parser loads parse_program loads_program Tensor
Tile Scalar Array Tuple DynVar InOut IntLike Out RUNTIME dynamic const range parallel unroll pipeline while_
yield_ cond static_print static_assert func_attr at cluster spmd split_aiv optimizations split cross_core_slot
adir array prefetch tile system tensor add sub mul div part_add part_mul part_max part_min maximum exp log
cast concat reshape reinterpret_view transpose slice matmul batch_matmul row_max row_sum row_min row_prod
col_sum col_max col_min col_prod row_argmax row_argmin col_argmax col_argmin row_expand row_expand_add
row_expand_sub row_expand_mul row_expand_div row_expand_max row_expand_min row_expand_expdif col_expand
col_expand_mul col_expand_div col_expand_sub col_expand_add col_expand_max col_expand_min col_expand_expdif
expand_clone expands neg abs recip read write create_tile fillpad fillpad_expand load store move gatherb
mgather mscatter sqrt rsqrt relu matmul_acc matmul_bias matmul_mx matmul_mx_acc matmul_mx_bias gemv gemv_acc
gemv_bias minimum min max cmp cmps set_validshape rem rems fmod fmods and_ ands or_ ors xor xors shl shls shr
shrs maximums minimums prelu not_ addc subc addsc subsc lrelu sel sels tri AUTO tpush_to_aiv tpush_to_aic
aiv_shard aic_gather tpop_from_aic tpop_from_aiv aic_initialize_pipe aiv_initialize_pipe reserve_buffer
import_peer_buffer tfree_to_aic tfree_to_aiv assemble cos gather_row mrgsort scatter_update sin sort32
create_tensor dim full ScopeMode scope manual_scope submit spmd_submit no_dep dump_tag scatter arange gather
paged_gather random create_l1 get_block_idx get_block_num get_subblock_idx FunctionType ForKind AtomicType
Level MemRef Role SplitMode Mem MemRefType MemorySpace PipeType Ptr PrefetchAsyncContext AsyncEvent
AsyncSession PtrType TensorLayout TensorView TileLayout PadValue CompactMode TileView ND DN NZ MX_A_ZZ MX_B_NN
FP4 FP8E4M3FN FP8E5M2 FP8E8M0 FP16 FP32 BF16 HF4 HF8 INT4 INT8 INT16 INT32 INT64 UINT4 UINT8 UINT16 UINT32
UINT64 BOOL INDEX TASK_ID TaskId
""".split()

UPSTREAM_TILE = """
MemRefType alloc create_tile create read write load store assemble gather_row extract scatter_update concat
move aiv_shard aic_gather full ci arange tri random fillpad fillpad_inplace fillpad_expand get_block_idx
get_subblock_idx get_block_num add sub mul div adds subs muls divs neg exp sin cos sqrt rsqrt recip log abs
relu cast matmul batch_matmul matmul_acc batch_matmul_acc matmul_bias matmul_mx matmul_mx_acc matmul_mx_bias
gemv gemv_acc gemv_bias row_max row_sum row_min row_prod col_sum col_max col_min col_prod row_argmax
row_argmin col_argmax col_argmin maximum row_expand row_expand_sub row_expand_div row_expand_mul
row_expand_add row_expand_max row_expand_min row_expand_expdif col_expand col_expand_mul col_expand_div
col_expand_sub col_expand_add col_expand_max col_expand_min col_expand_expdif expands minimum cmp cmps max min
slice reshape reinterpret_view transpose transpose_view set_validshape rem rems part_add part_mul part_max
part_min fmod fmods and_ ands or_ ors xor xors shl shls shr shrs maximums minimums prelu not_ addc subc addsc
subsc lrelu sel sels tpush_to_aiv tpush_to_aic tpop_from_aic tpop_from_aiv sort32 gather gatherb gather_mask
gather_compare scatter scatter_mask mscatter mgather MaskPattern mrgsort
""".split()

UPSTREAM_TENSOR = """
create_tensor create no_dep dump_tag read write dim slice fillpad fillpad_expand full ci arange random matmul
matmul_acc mul muls add adds sub subs div divs part_add part_mul part_max part_min fmod fmods maximum minimum
cmp and_ ands or_ ors xor xors not_ shl shls shr shrs row_max row_sum row_min row_prod col_sum col_max col_min
col_prod row_argmax row_argmin col_argmax col_argmin row_expand row_expand_mul row_expand_div row_expand_add
row_expand_sub row_expand_max row_expand_min row_expand_expdif col_expand_mul col_expand col_expand_div
col_expand_sub col_expand_add col_expand_max col_expand_min col_expand_expdif expands expand_clone exp log sin
cos neg abs recip sqrt rsqrt cast assemble concat reshape reinterpret_view transpose view scatter_update
set_validshape sort32 mrgsort gather paged_gather create_l1 gather_row scatter alloc get_block_idx
get_subblock_idx get_block_num
""".split()

UPSTREAM_SYSTEM = """AUTO sync_src sync_dst sync_set sync_wait set_ffts bar_v bar_m bar_all fence cacheinvalid syncall
tpush_to_aiv tpush_to_aic tpop_from_aic tpop_from_aiv aic_initialize_pipe aiv_initialize_pipe reserve_buffer
import_peer_buffer tfree_to_aic tfree_to_aiv task_invalid task_dummy available_cluster_count
available_aiv_count""".split()


def test_lists_have_upstreams_sizes():
    assert (len(UPSTREAM_PL), len(UPSTREAM_TILE), len(UPSTREAM_TENSOR)) == (241, 142, 103)


def test_every_upstream_pl_name_is_in_all_and_resolves():
    assert not [n for n in UPSTREAM_PL if n not in pl.__all__]
    assert not [n for n in UPSTREAM_PL if not hasattr(pl, n)]
    assert set(UPSTREAM_PL) <= set(dir(pl))


@pytest.mark.parametrize(("ns", "names"), [("tile", UPSTREAM_TILE), ("tensor", UPSTREAM_TENSOR)])
def test_every_upstream_op_name_resolves(ns, names):
    module = getattr(pl, ns)
    assert not [n for n in names if not hasattr(module, n)]
    assert set(names) <= set(dir(module))


def test_pl_system_names_resolve():
    assert not [n for n in UPSTREAM_SYSTEM if not hasattr(pl.system, n)]


def test_unknown_names_are_still_attribute_errors():
    for obj, name in ((pl, "no_such_thing"), (pl.tile, "no_such_op"), (pl.tensor, "no_such_op"),
                      (pl.system, "no_such_op")):
        with pytest.raises(AttributeError):
            getattr(obj, name)


def test_implemented_names_are_not_stand_ins():
    for name in ("spmd", "submit", "spmd_submit", "array", "Array", "split", "cross_core_slot", "get_block_idx",
                 "get_block_num", "get_subblock_idx", "optimizations", "tpush_to_aic", "tpop_from_aiv",
                 "import_peer_buffer", "reserve_buffer", "aic_initialize_pipe", "tfree_to_aiv"):
        assert not isinstance(getattr(pl, name), Unsupported | UnsupportedNamespace), name
    for ns, name in (("tile", "get_block_idx"), ("tile", "create_tile"), ("tensor", "create_tensor"),
                     ("tensor", "get_block_num"), ("system", "task_dummy"), ("system", "syncall"),
                     ("system", "tpush_to_aiv"), ("system", "tfree_to_aic"), ("tile", "tpop_from_aic")):
        assert not isinstance(getattr(getattr(pl, ns), name), Unsupported), (ns, name)


def _stand_ins():
    out = [("pl", n) for n in UPSTREAM_PL if isinstance(getattr(pl, n), Unsupported)]
    out += [(ns, n) for ns, names in (("tile", UPSTREAM_TILE), ("tensor", UPSTREAM_TENSOR))
            for n in names if isinstance(getattr(getattr(pl, ns), n), Unsupported)]
    return out + [("system", n) for n in UPSTREAM_SYSTEM if isinstance(getattr(pl.system, n), Unsupported)]


@pytest.mark.parametrize(("ns", "name"), _stand_ins(), ids=lambda x: x)
def test_stand_ins_raise_a_user_error_naming_the_construct_and_ptoas(ns, name):
    stub = getattr(pl, name) if ns == "pl" else getattr(getattr(pl, ns), name)
    qual = f"pl.{name}" if ns == "pl" else f"pl.{ns}.{name}"
    with pytest.raises(UnsupportedFeatureError) as ei:
        stub()
    assert ei.value.message.startswith(f"{qual} is not supported by pypto with ptoas 0.1.1: ")
    assert ei.value.hint


def test_a_stand_in_in_a_kernel_fails_at_parse_time_with_its_location():
    src = """import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def k(x: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
    t = pl.load(x, [0, 0], [16, 16])
    r = pl.part_mul(t, t)
    o = pl.store(t, [0, 0], o)
    return o
"""
    with pytest.raises(UnsupportedFeatureError, match=r"pl[.]part_mul is not supported by pypto with ptoas 0[.]1[.]1") as ei:
        pl.parse(src)
    assert (ei.value.span.line, ei.value.span.col) == (6, 9)


def test_for_and_with_over_a_stand_in_name_it():
    src = """import pypto.language as pl

@pl.function
def f(x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
    for lane in pl.split_aiv(2):
        x = pl.add(x, x)
    return x
"""
    with pytest.raises(UnsupportedFeatureError, match="pl[.]split_aiv is not supported .*ptoas 0[.]1[.]1"):
        pl.parse(src)


HEAVY = ("torch", "numpy", "pydantic", "pydantic_settings", "docker", "rich", "structlog", "distributed", "click")


def test_star_import_and_import_time():
    """``import pypto.language`` loads none of the heavy libraries and costs at most 0.3 s of CPU.

    CPU time, best of three fresh interpreters: a wall-clock figure on a shared machine measures the
    machine's load, not the import (benchmarks/compile_bench.py prints the wall figures)."""
    code = ("import sys, time; t = time.process_time(); import pypto.language; "
            "print(time.process_time() - t); from pypto.language import *; "
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
            for _ in range(3)]
    assert all(r[1] == "" for r in runs), f"import pypto.language loaded heavy modules: {runs[0][1]}"
    assert min(float(r[0]) for r in runs) <= 0.3
