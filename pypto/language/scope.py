"""Runtime scopes and task submission: ``pl.scope``, ``pl.manual_scope``, ``pl.submit``, ``pl.spmd_submit``.

Like every DSL construct they have meaning only inside a ``@pl.function`` body (parsed, never run);
``ScopeMode`` is ``pl.ScopeMode`` (AUTO / MANUAL dependency tracking of a scope).
"""

from pypto.ir.enums import ScopeMode
from pypto.language.dsl import manual_scope, scope, spmd_submit, submit

__all__ = ["ScopeMode", "manual_scope", "scope", "spmd_submit", "submit"]
