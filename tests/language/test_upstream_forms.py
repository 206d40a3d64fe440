"""Source forms upstream programs use: names bound in both branches of a plain if, scalar pl.cast,
and scalar reads of input tensors inside a pl.at region (hoisted into the orchestration)."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.errors import UndefinedVariableError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import Call, GlobalVar, UnaryExpr, UnOp
from pypto.ir.function import Function
from pypto.ir.stmt import AssignStmt, IfStmt, preorder
from pypto.ir.types import ScalarType

T = "pl.Tensor[[64, 64], pl.FP32]"
HEAD = "import pypto.language as pl\n\n@pl.function(type=pl.FunctionType.InCore)\n"


def _parse(body: str, params: str = f"n: pl.Scalar[pl.INT64], out: pl.Out[{T}]") -> Function:
    lines = "\n".join("    " + ln for ln in body.strip("\n").splitlines())
    f = pl.parse(f"{HEAD}def f({params}) -> {T}:\n{lines}\n")
    assert isinstance(f, Function)
    return f


def test_name_bound_in_both_branches_is_visible_after_the_if() -> None:
    f = _parse("""
if n == 1:
    k = n
else:
    k = n + 1
t = pl.load(out, [0, 0], [64, 64])
out = pl.store(t, [0, k], out)
return out
""")
    assert any(isinstance(s, IfStmt) for s in preorder(f.body))


def test_name_bound_in_one_branch_only_stays_undefined() -> None:
    with pytest.raises(UndefinedVariableError, match="name 'k' is not defined"):
        _parse("""
if n == 1:
    k = n
t = pl.load(out, [0, 0], [64, 64])
out = pl.store(t, [0, k], out)
return out
""")


def test_scalar_cast_parses_and_prints_with_its_dtype() -> None:
    f = _parse("""
k = pl.cast(n, pl.INDEX)
t = pl.load(out, [0, 0], [64, 64])
out = pl.store(t, [0, k], out)
return out
""")
    cast = next(s.value for s in preorder(f.body) if isinstance(s, AssignStmt) and s.var.name == "k")
    assert isinstance(cast, UnaryExpr) and cast.op is UnOp.Cast and cast.dtype is DataType.INDEX
    from pypto.ir.printer import python_print

    text = python_print(f)
    assert "pl.cast(n, pl.INDEX)" in text
    again = pl.parse(text)
    assert isinstance(again, Function)


def test_scalar_cast_without_dtype_is_a_user_error() -> None:
    with pytest.raises(Exception, match=r"pl.cast\(scalar, dtype\)"):
        _parse("k = pl.cast(n)\nreturn out")


@pl.jit
def _read_in_region(data: pl.Tensor, cfg: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        col = pl.read(cfg, [0])
        t = pl.load(data, [0, 0], [32, 32])
        pl.store(t, [0, col], out)
    return out


def test_scalar_read_in_a_region_is_hoisted_into_the_orchestration(torch) -> None:
    data = torch.zeros(32, 64)
    prog = _read_in_region.lower(data, torch.tensor([32], dtype=torch.int32), torch.zeros(32, 64))
    orch = next(f for f in prog.functions.values() if f.is_orchestration)
    kernel = next(f for f in prog.functions.values() if f.is_incore)
    reads = [s for s in preorder(orch.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
             and s.value.op == "tensor.read"]
    assert reads, "the read should run in the orchestration"
    assert not any(isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op == "tensor.read"
                   for s in preorder(kernel.body))
    assert any(isinstance(p.var_type, ScalarType) for p in kernel.params)
    calls = [s.value for s in preorder(orch.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
             and isinstance(s.value.op, GlobalVar)]
    assert calls and calls[0].op.name == kernel.name


@pl.jit
def _split_k_sum(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero"):
        c = pl.assemble(c, pl.full([32, 32], dtype=pl.FP32, value=0.0), [0, 0])
    for k in pl.parallel(0, 2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="part"):
            k0 = k * 64
            part = pl.matmul(a[:, k0 : k0 + 64], b[k0 : k0 + 64, :], out_dtype=pl.FP32)
            c = pl.assemble(c, part, [0, 0], atomic=pl.AtomicType.Add)
    return c


def test_split_k_matmul_on_slices_with_atomic_add_matches_numpy(torch) -> None:
    """Slices feeding a matmul load into Mat; atomic add becomes a runtime-ordered read-modify-write;
    the loop after the zero-init region starts from that region's result."""
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(32, 128, generator=g), torch.randn(128, 32, generator=g)
    c = torch.full((32, 32), 7.0)
    _split_k_sum(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


@pl.jit
def _same_name(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="_same_name"):
        out = pl.assemble(out, pl.add(x, 1.0), [0, 0])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="twice"):
        out = pl.assemble(out, pl.add(out, 1.0), [0, 0])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="twice"):
        out = pl.assemble(out, pl.add(out, 1.0), [0, 0])
    return out


def test_outlined_names_never_clash_with_other_functions(torch) -> None:
    prog = _same_name.lower(torch.zeros(16, 16), torch.zeros(16, 16))
    names = prog.functions.keys()
    assert len(set(names)) == len(names)
    assert {"_same_name__same_name", "twice", "twice_0"} <= set(names)


def _make_scale(factor: float):
    @pl.jit
    def scale(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.muls(x, factor), [0, 0])
        return out

    return scale


def test_jit_kernel_sees_names_of_its_enclosing_function(torch) -> None:
    x = torch.arange(256, dtype=torch.float32).reshape(16, 16)
    for factor in (2.0, 3.0):  # same source, different closure values: separate compiles
        out = torch.zeros(16, 16)
        _make_scale(factor)(x, out)
        torch.testing.assert_close(out, x * factor)


@pl.jit
def _acc_into_mat_window(x: pl.Tensor, a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        window = pl.load(x, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
        left = pl.move(pl.load(a, [0, 0], [32, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.Mem.Left)
        right = pl.move(pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.Mem.Right)
        joined = pl.tile.assemble(window, pl.matmul(left, right), [0, 16])
        pl.store(pl.move(joined, target_memory=pl.MemorySpace.Vec), [0, 0], y)
    return y


def test_mat_window_with_an_acc_block_crosses_to_vector_through_gm(torch) -> None:
    g = torch.Generator().manual_seed(5)
    x, a, b = torch.randn(32, 32, generator=g), torch.randn(32, 16, generator=g), torch.randn(16, 16, generator=g)
    y = torch.zeros(32, 32)
    _acc_into_mat_window(x, a, b, y)
    want = x.clone()
    want[:, 16:] = a @ b
    torch.testing.assert_close(y, want, rtol=1e-5, atol=1e-5)


@pl.program
class _BranchStores:
    @pl.function(type=pl.FunctionType.InCore)
    def pick(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             double: pl.Scalar[pl.BOOL]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        if double:
            res = pl.store(pl.add(t, t), [0, 0], out)
        else:
            res = pl.store(t, [0, 0], out)
        return res

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             ) -> pl.Tensor[[16, 16], pl.FP32]:
        out = self.pick(a, out, True)
        return out


def test_kernel_returning_a_name_stored_in_both_branches_returns_its_out_param(torch) -> None:
    from pypto.runtime import run

    a = torch.randn(16, 16, generator=torch.Generator().manual_seed(9))
    out = torch.zeros(16, 16)
    run(_BranchStores, a, out)
    torch.testing.assert_close(out, a + a)


ROWS_DYN = pl.dynamic("ROWS_DYN")
VALID_DYN = pl.dynamic("VALID_DYN")


def test_dynamic_names_in_a_tensor_view_print_and_reparse() -> None:
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[ROWS_DYN, 64], pl.FP32,
                       pl.TensorView(valid_shape=[ROWS_DYN, VALID_DYN], layout=pl.TensorLayout.ND)],
          out: pl.Out[pl.Tensor[[ROWS_DYN, 64], pl.FP32]]) -> pl.Tensor[[ROWS_DYN, 64], pl.FP32]:
        return out

    from pypto.ir.printer import python_print

    text = python_print(k)
    assert "valid_shape=[ROWS_DYN, VALID_DYN]" in text.replace("'", "")


@pl.jit
def _escaping_tensor(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj"):
        acc = pl.matmul(x, w, out_dtype=pl.FP32)  # a tensor made in this region, used by the next one
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="act"):
        out = pl.assemble(out, pl.relu(acc), [0, 0])
    return out


def test_a_tensor_computed_in_a_region_flows_to_the_next_through_gm(torch) -> None:
    g = torch.Generator().manual_seed(2)
    x, w = torch.randn(16, 32, generator=g), torch.randn(32, 16, generator=g)
    out = torch.zeros(16, 16)
    _escaping_tensor(x, w, out)
    torch.testing.assert_close(out, torch.relu(x @ w), rtol=1e-5, atol=1e-5)


@pl.jit
def _mixed_loop(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    for c in pl.parallel(0, 4, 2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_relu"):
            for j in pl.range(c, c + 2):  # cube then vector work per iteration, two iterations
                j0 = j * 16
                y = pl.matmul(x, w[:, j0 : j0 + 16], out_dtype=pl.FP32)
                out = pl.assemble(out, pl.relu(y), [0, j0])
    return out


def test_a_small_loop_mixing_cube_and_vector_is_unrolled_and_split(torch) -> None:
    g = torch.Generator().manual_seed(4)
    x, w = torch.randn(16, 32, generator=g), torch.randn(32, 64, generator=g)
    out = torch.zeros(16, 64)
    _mixed_loop(x, w, out)
    torch.testing.assert_close(out, torch.relu(x @ w), rtol=1e-5, atol=1e-5)


def test_slice_bounds_that_differ_by_a_constant_have_a_static_extent() -> None:
    f = _parse("""
c = pl.cast(n, pl.INDEX)
s = out[:, c * 2 + 8 : c * 2 + 24]
return out
""")
    sl = next(s.value for s in preorder(f.body) if isinstance(s, AssignStmt) and s.var.name == "s")
    assert [int(d) for d in sl.type.shape] == [64, 16]
    with pytest.raises(Exception, match="slice extent must be static"):
        _parse("c = pl.cast(n, pl.INDEX)\ns = out[:, c : c * 2]\nreturn out")


@pl.jit
def _rebinds_output(x: pl.Tensor, result: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        result = pl.add(x, 1.0)  # rebinding: the caller's result is never written
    return result


def test_rebinding_the_output_is_a_partial_codegen_error_naming_the_fix(tmp_path, torch) -> None:
    from pypto.backend.pto_backend import PartialCodegenError
    from pypto.runtime import RunConfig

    with pytest.raises(PartialCodegenError) as exc:
        _rebinds_output(torch.zeros(64), torch.zeros(64), config=RunConfig(save_kernels_dir=str(tmp_path / "o"),
                                                                           jit_cache=False))
    text = str(exc.value)
    assert "never writes its output 'result'" in text and "result[:] = <value>" in text
    assert "test_upstream_forms.py" in text
    assert exc.value.files and all(k.startswith("kernels/") for k in exc.value.files)
    assert list((tmp_path / "o" / "kernels").rglob("*.pto"))
    assert not (tmp_path / "o" / "compiled_meta.json").exists()


@pl.jit
def _ragged_tail(src: pl.Tensor, cfg: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        n = pl.cast(pl.read(cfg, [0]), pl.INDEX)  # read + cast move to the orchestration
        tail = pl.cast(pl.read(cfg, [1]), pl.INDEX)
        full = pl.cast(pl.read(cfg, [2]), pl.INDEX)
        for i in pl.range(n):
            if i == n - 1:
                width = tail
            else:
                width = full
            t = pl.load(src, [i * 16, 0], [16, 32], valid_shape=[16, width], target_memory=pl.MemorySpace.Vec)
            pl.store(pl.tile.fillpad(t, pad_value=pl.PadValue.zero), [i * 16, 0], out)
    return out


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_if_choosing_a_scalar_in_a_kernel_loop_runs(platform: str, torch) -> None:
    from pypto.runtime import RunConfig

    src = torch.randn(48, 32, generator=torch.Generator().manual_seed(8))
    out = torch.full((48, 32), 5.0)
    _ragged_tail(src, torch.tensor([3, 20, 32], dtype=torch.int64), out, config=RunConfig(platform=platform))
    want = src.clone()
    want[32:, 20:] = 0.0
    torch.testing.assert_close(out, want)


def test_load_takes_offsets_shapes_and_valid_shape_as_keywords() -> None:
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[40, 64], pl.FP32], out: pl.Out[pl.Tensor[[48, 64], pl.FP32]]) -> pl.Tensor[[48, 64], pl.FP32]:
        t: pl.Tile[[48, 64], pl.FP32] = pl.load(a, shapes=[48, 64], offsets=[0, 0], valid_shape=[40, 64])
        return pl.store(pl.fillpad(t, pad_value=pl.PadValue.zero), offsets=[0, 0], output_tensor=out)

    load = k.body.stmts[0].value  # type: ignore[attr-defined]
    assert load.op == "tile.load"
    assert [[getattr(x, "value", x) for x in e.elements] for e in load.args[1:]] == [[0, 0], [48, 64], [40, 64]]
