"""Upstream's ``pypto.pypto_core.testing``: hooks into its C++ library for its own unit tests.

The ``raise_*`` helpers raise the Python exception each names (as upstream's translate C++ errors);
the C++ analysis hooks are stand-ins that raise UnsupportedFeatureError when used.
"""

from __future__ import annotations

from pypto.errors import InternalError
from pypto.pypto_core._standin import stand_ins


def raise_value_error(message: str) -> None:
    raise ValueError(message)


def raise_type_error(message: str) -> None:
    raise TypeError(message)


def raise_runtime_error(message: str) -> None:
    raise RuntimeError(message)


def raise_index_error(message: str) -> None:
    raise IndexError(message)


def raise_not_implemented_error(message: str) -> None:
    raise NotImplementedError(message)


def raise_assertion_error(message: str) -> None:
    raise AssertionError(message)


def raise_internal_error(message: str) -> None:
    raise InternalError(message)


def raise_internal_error_with_span(message: str, span: object) -> None:
    raise InternalError(f"{message} [{span}]")


def raise_generic_error(message: str) -> None:
    from pypto.errors import PyptoError

    raise PyptoError(message)


globals().update(stand_ins(__name__, "DsaReusePenaltyEdge classify_call_affinity get_declared_core_affinity "
                           "get_execution_memory_access_evidence is_no_duplicate_op recognize_dsa_reuse_penalties try_infer_pipe rethrow_with_message",
                           "a test hook into upstream's C++ passes, which pypto does not have"))
