"""ConvertToSSA renames the names a type reads (a TileView valid shape, a dynamic dim) with the
definitions they denote, so the dump after it re-parses; a dynamic dim the function does not bind
keeps its Var even when a parameter has its name (an outlined kernel's ``M`` for ``pl.dynamic("M")``)."""

from __future__ import annotations

import pypto.language as pl
from pypto.driver import lower
from pypto.ir.expr import Var
from pypto.ir.stmt import AssignStmt, preorder
from pypto.ir.types import TensorType, TileType
from pypto.passes.convert_to_ssa import ConvertToSSA

M = pl.dynamic("M")


def _narrowed_program():
    @pl.program
    class Narrowed:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
              vr: pl.Scalar[pl.INDEX], vc: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[vr, vc])] = pl.load(
                a, [0, 0], [16, 16], valid_shape=[vr, vc])
            r = vr - 1
            r = r - 1
            u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[r, 16])] = pl.load(
                a, [0, 0], [16, 16], valid_shape=[r, 16])
            pl.store(t, [0, 0], o)
            return pl.store(u, [0, 0], o)

    return Narrowed


def _defs(func) -> dict[str, Var]:
    return {s.var.name: s.var for s in preorder(func.body) if isinstance(s, AssignStmt)}


def test_a_valid_shape_naming_parameters_reads_the_renamed_parameters():
    [k] = ConvertToSSA().run(_narrowed_program()).functions
    t = _defs(k)["t__ssa_v0"].var_type
    assert isinstance(t, TileType) and t.view is not None
    vr, vc = k.params[2], k.params[3]
    assert (vr.name, vc.name) == ("vr__ssa_v0", "vc__ssa_v0")
    assert t.view.valid_shape[0] is vr and t.view.valid_shape[1] is vc
    assert "valid_shape=[vr__ssa_v0, vc__ssa_v0]" in k.as_python()


def test_a_valid_shape_naming_a_rebound_scalar_reads_the_version_it_was_built_from():
    [k] = ConvertToSSA().run(_narrowed_program()).functions
    defs = _defs(k)
    u = defs["u__ssa_v0"].var_type
    assert isinstance(u, TileType) and u.view is not None
    assert u.view.valid_shape[0] is defs["r__ssa_v1"]  # the second binding of r, not the first
    assert pl.parse(k.as_python()) is not None          # every name a type reads is defined in the dump


@pl.program
class _DynRows:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]
             ) -> pl.Tensor[[32, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [32, 64], valid_shape=[M, 64])
            pl.store(pl.fillpad(t, pad_value=pl.PadValue.zero), [0, 0], out)
        return out


def test_a_dynamic_dim_keeps_its_var_beside_a_parameter_of_its_name():
    """The outlined kernel takes ``M`` as a scalar parameter and its tensor keeps the ``pl.dynamic`` dim:
    two Vars named M. Converting the lowered program again must not merge them (kernel codegen binds
    a dim that is no parameter to an index argument of its own)."""
    kernel = next(f for f in lower(_DynRows).functions if f.func_type is not pl.FunctionType.Orchestration)
    again = next(f for f in ConvertToSSA().run(lower(_DynRows)).functions if f.name == kernel.name)
    x, dim_param = again.params[0], next(p for p in again.params if p.name.startswith("M"))
    assert isinstance(x.var_type, TensorType)
    dim = x.var_type.shape[0]
    assert isinstance(dim, Var) and dim.name == "M" and dim is not dim_param
    assert dim is kernel.params[0].var_type.shape[0]  # the same pl.dynamic Var as before
