"""Upstream's ``pypto.pypto_core.testing``: hooks into its C++ library for its own unit tests.

The ``raise_*`` helpers and ``rethrow_with_message`` are :mod:`pypto.testing`'s (upstream's
``pypto.testing`` is this module's face);
the C++ analysis hooks are stand-ins that raise UnsupportedFeatureError when used.
"""

from __future__ import annotations

from pypto.pypto_core._standin import stand_ins
from pypto.testing import (  # noqa: F401 - upstream's pypto.testing is this module's face: one implementation
    raise_assertion_error,
    raise_generic_error,
    raise_index_error,
    raise_internal_error,
    raise_internal_error_with_span,
    raise_not_implemented_error,
    raise_runtime_error,
    raise_type_error,
    raise_value_error,
    rethrow_with_message,
)

globals().update(stand_ins(__name__, "DsaReusePenaltyEdge classify_call_affinity get_declared_core_affinity "
                           "get_execution_memory_access_evidence is_no_duplicate_op recognize_dsa_reuse_penalties try_infer_pipe",
                           "a test hook into upstream's C++ passes, which pypto does not have"))
