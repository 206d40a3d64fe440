"""Per-op memory facts used by the planners."""

from __future__ import annotations

from pypto.ir.ops.common import COL_REDUCE, ROW_REDUCE

# Ops the ptoas 0.1.1 codegen lowers lazily (at the store), so their operands must outlive the result.
DEFERRED_VIEWS: frozenset[str] = frozenset({"tile.concat", "tile.assemble"})

# Ops whose result is a view of the operand's bytes (``pto.treshape``): the operand's buffer must not be
# reused while the result is live either.
BYTE_VIEWS: frozenset[str] = frozenset({"tile.reshape"})

# Ops whose result must not overwrite an operand that dies at the same statement.
NOT_IN_PLACE: frozenset[str] = frozenset({
    "tile.recip", "tile.matmul", "tile.matmul_acc", "tile.matmul_bias", "tile.move", "tile.transpose",
    "tile.subc", "tile.subsc",  # two instructions: the first writes the result before the last operand is read
    *(f"tile.{op}" for op in (*ROW_REDUCE, *COL_REDUCE)),
})
