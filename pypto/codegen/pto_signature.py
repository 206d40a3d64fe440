"""The kernel signature of a PTO ``func.func``: which MLIR argument each parameter arrives as.

Tensors come first (``!pto.ptr``), then scalars, then one ``index`` per dynamic dim, then the SPMD
ids a loop bound needs. ptoas 0.1.1 cannot use an ``arith.index_cast`` result as an ``scf.for``
bound, so an integer parameter or block id that reaches one arrives as ``index`` itself. Each
argument is recorded as a :class:`~pypto.artifact.model.KernelParam`, from which the kernel wrapper
(:mod:`pypto.backend.kernel_wrapper`) reads it out of the runtime's argument array. A kernel that
takes more tensors or scalars than a task carries is refused here.
"""

from __future__ import annotations

from typing import Any

from pypto.artifact.model import KernelParam
from pypto.codegen.emitter import base_name
from pypto.codegen.pto_types import TOOLCHAIN, carrier, check_dtype, scalar_type
from pypto.codegen.pto_values import GmView, Scalar, Tile
from pypto.errors import UserError
from pypto.ir.expr import Call, Var, as_int
from pypto.ir.fold import affine
from pypto.ir.function import Function
from pypto.ir.stmt import AssignStmt, ForStmt, Stmt
from pypto.ir.types import ScalarType, TensorType
from pypto.toolchain.platforms import TASK_MAX_SCALARS, TASK_MAX_TENSORS

_ID_PARAM = {"tile.get_block_idx": "block_idx", "tile.get_block_num": "block_num",
             "tile.get_subblock_idx": "sub_block_idx"}


def params_in_loop_bounds(body: Stmt) -> set[Var]:
    """Vars used directly as a ``for`` bound: an integer kernel parameter among them arrives as ``index``
    (an ``arith.index_cast`` result cannot be an scf.for bound in ptoas 0.1.1)."""
    from pypto.passes._util import iter_stmts

    return {e for s in iter_stmts(body) if isinstance(s, ForStmt) for e in (s.start, s.stop, s.step)
            if isinstance(e, Var)}


def block_ids_in_loop_bounds(body: Stmt) -> set[str]:
    """The SPMD id ops whose values reach a ``for`` bound (directly or through scalar arithmetic).

    ``pto.get_block_idx`` yields an i64 that needs ``arith.index_cast``, and ptoas 0.1.1 cannot use an
    index_cast result as a loop bound; such ids are passed to the kernel as ``index`` arguments instead
    (the wrapper reads them from the runtime's per-block context).
    """
    from pypto.passes._util import iter_stmts, used_vars

    origin: dict[Var, set[str]] = {}
    loops: list[ForStmt] = []
    for s in iter_stmts(body):
        if isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op in _ID_PARAM:
            origin[s.var] = {s.value.op}  # type: ignore[dict-item]
        elif isinstance(s, AssignStmt) and isinstance(s.var.type, ScalarType):
            ops = set().union(*(origin.get(v, set()) for v in used_vars(s.value)))
            if ops:
                origin[s.var] = ops
        elif isinstance(s, ForStmt):
            loops.append(s)
    return set().union(*(origin.get(v, set()) for lp in loops for v in used_vars([lp.start, lp.stop, lp.step])))


class KernelSignature:
    """Mixin of KernelCodegen: binds the function's parameters to MLIR arguments."""

    # provided by KernelCodegen, the class this mixin is used in
    func: Function
    names: Any
    env: dict[Var, Tile | GmView | Scalar]
    params: list[KernelParam]
    id_args: dict[str, str]

    def signature(self) -> str:
        """Bind params to MLIR arguments: tensors, then scalars, then one index per dynamic dim."""
        tensors = [p for p in self.func.params if isinstance(p.type, TensorType)]
        scalars = [p for p in self.func.params if isinstance(p.type, ScalarType)]
        others = [p for p in self.func.params if p not in tensors and p not in scalars]
        if others:
            raise UserError(f"kernel '{self.func.name}': parameter '{others[0].name}' of type "
                            f"{others[0].type} cannot be passed to a {TOOLCHAIN} kernel", self.func.span)
        self._check_task_limits(len(tensors), len(scalars))
        args: list[str] = []
        for i, p in enumerate(tensors):
            t = p.type
            assert isinstance(t, TensorType)
            dt = check_dtype(t.dtype, f"kernel '{self.func.name}' parameter '{p.name}'", self.func.span)
            ssa = self.names.unique(f"arg{len(args)}")
            args.append(f"%{ssa}: !pto.ptr<{dt}>")
            self.params.append(KernelParam(base_name(p.name), "tensor", t.dtype.value, carrier(t.dtype).ctype, i))
            self.env[p] = Scalar(ssa, "ptr")
        bounds = params_in_loop_bounds(self.func.body)
        for j, p in enumerate(scalars):
            t = p.type
            assert isinstance(t, ScalarType)
            ty = scalar_type(t.dtype, f"kernel '{self.func.name}' parameter '{p.name}'", self.func.span)
            if p in bounds and t.dtype.is_int:
                ty = "index"
            ssa = self.names.unique(f"arg{len(args)}")
            args.append(f"%{ssa}: {ty}")
            ctype = "int32_t" if ty == "index" else t.dtype.ctype
            self.params.append(KernelParam(base_name(p.name), "scalar", t.dtype.value, ctype, len(tensors) + j))
            self.env[p] = Scalar(ssa, ty)
        for i, p in enumerate(tensors):
            for axis, d in enumerate(p.type.shape):  # type: ignore[union-attr]
                args += self._dim_arg(d, i, axis, len(args))
        for op in sorted(block_ids_in_loop_bounds(self.func.body)):
            ssa = self.names.unique(f"arg{len(args)}")
            args.append(f"%{ssa}: index")
            kind = _ID_PARAM[op]
            self.id_args[op] = ssa
            self.params.append(KernelParam(kind, kind, "INDEX", "int32_t", -1))  # type: ignore[arg-type]
        return ", ".join(args)

    def _check_task_limits(self, n_tensors: int, n_scalars: int) -> None:
        for n, most, what in ((n_tensors, TASK_MAX_TENSORS, "tensors"), (n_scalars, TASK_MAX_SCALARS, "scalars")):
            if n > most:
                raise UserError(f"kernel '{self.func.name}' takes {n} {what}; a task takes at most {most} {what}",
                                self.func.span, hint=f"split the kernel into kernels of at most {most} {what} each, "
                                                     f"or pass the {what} packed into fewer ones")

    def _dim_arg(self, d: object, tensor_idx: int, axis: int, pos: int) -> list[str]:
        """The index argument that binds a dynamic dim's variable (``M``, or ``M`` of ``M * 2 + 1``)."""
        if as_int(d) is not None:
            return []
        form = affine(d)
        if form is None:
            raise UserError(f"kernel '{self.func.name}': dynamic dim {d} of tensor #{tensor_idx} must be a "
                            "pl.dynamic name or a * name + b with integer a, b", self.func.span)
        var, scale, offset = form
        if var in self.env:
            return []
        ssa = self.names.unique(f"arg{pos}")
        self.env[var] = Scalar(ssa, "index")
        self.params.append(KernelParam(base_name(var.name), "dim", "INDEX", "int32_t", tensor_idx, axis,
                                       scale, offset))
        return [f"%{ssa}: index"]
