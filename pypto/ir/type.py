"""Upstream's ``pypto.ir.type``: the shaped types and their views. pypto's types already take Python
ints for static dimensions (``TensorType((16, 16), DataType.FP32)``), so these are the IR's own classes."""

from pypto.ir.types import TensorType, TensorView, TileType, TileView

__all__ = ["TensorType", "TensorView", "TileType", "TileView"]
