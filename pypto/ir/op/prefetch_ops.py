"""``ir.op.prefetch``: ptoas 0.1.1 has no prefetch instruction; each name raises UnsupportedFeatureError."""

from pypto.ir.op._standin import stand_in

async_prefetch = stand_in("ir.op.prefetch.async_prefetch", "ptoas 0.1.1 has no tprefetch instruction")
make_context = stand_in("ir.op.prefetch.make_context", "ptoas 0.1.1 has no tprefetch instruction")
session = stand_in("ir.op.prefetch.session", "ptoas 0.1.1 has no tprefetch instruction")
wait = stand_in("ir.op.prefetch.wait", "ptoas 0.1.1 has no tprefetch instruction")

__all__ = ["async_prefetch", "make_context", "session", "wait"]
