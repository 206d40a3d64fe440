"""OutlineClusterScopes: ``with pl.cluster():`` groups its kernels; here it dissolves into its body.

Upstream outlines a cluster into a Group function so that its cube and vector kernels land on one
physical cluster. pypto's mixed regions already run as AIC/AIV tasks that exchange data through GM,
and the runtime orders them by the tensors they touch, so co-scheduling changes no result: the pass
splices each cluster's statements into the enclosing block. The frontend rejects what a Group could
not carry (see ``pypto.language.cluster_scope``).
"""

from __future__ import annotations

from dataclasses import dataclass

from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import ClusterScopeStmt, flatten
from pypto.passes._rewrite import expand_stmts
from pypto.passes.base import Pass


@dataclass(frozen=True)
class OutlineClusterScopes(Pass):
    """Replace every ``pl.cluster()`` scope by its statements."""

    name = "OutlineClusterScopes"
    produces = frozenset({IRProperty.ClusterOutlined})

    def run_function(self, func: Function, program: Program) -> Function:
        body = expand_stmts(func.body, lambda s: flatten(s.body) if isinstance(s, ClusterScopeStmt) else None)
        return func if body is func.body else func.with_(body=body)
