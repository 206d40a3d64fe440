"""A ``@pl.jit.incore`` kernel that uses ``pld`` comm ops is specialized as its split form.

See :mod:`pypto.language.distributed.comm_split`: the kernel becomes an Inline function of its
orchestration (tile segments in ``pl.at(CORE_GROUP)`` scopes, comm ops as ``comm.*`` ops). Errors the
split finds point at the original source; the split text is parsed under the name
``<file> (kernel <name> split at its comm ops)``.
"""

from __future__ import annotations

import ast
from typing import Any

from pypto.ir.enums import FunctionType
from pypto.jit.specialize import SourceInfo
from pypto.language.distributed.comm_split import COMM, split_text, uses_comm
from pypto.language.ops import OpNamespace
from pypto.language.source import Source


def split_at_comm_ops(info: SourceInfo, func_type: FunctionType, env: dict[str, Any]) -> tuple[
        SourceInfo, FunctionType, dict[str, Any]]:
    """(source, function type, names) to specialize: the split Inline form when the kernel uses comm ops."""
    if not uses_comm(info.tree, env):
        return info, func_type, env
    src = Source(info.filename, info.text, info.first_line - 1, info.indent)
    body = split_text(info.tree, env, src.span)
    first = info.tree.body[0].lineno - 1
    text = "".join(info.text.splitlines(keepends=True)[:first]) + body
    tree = ast.parse(text).body[0]
    assert isinstance(tree, ast.FunctionDef)
    name = f"{info.filename} (kernel {info.tree.name} split at its comm ops)"
    return SourceInfo(text, name, info.first_line, info.indent, tree), FunctionType.Inline, {**env, COMM: OpNamespace("comm")}
