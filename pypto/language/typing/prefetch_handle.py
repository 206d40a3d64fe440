"""Prefetch handles: ptoas 0.1.1 has no prefetch, so these are pl's stand-ins (UnsupportedFeatureError)."""

from pypto.language.unsupported import lookup

AsyncEvent = lookup("pl", "AsyncEvent")
AsyncSession = lookup("pl", "AsyncSession")
PrefetchAsyncContext = lookup("pl", "PrefetchAsyncContext")

__all__ = ["AsyncEvent", "AsyncSession", "PrefetchAsyncContext"]
