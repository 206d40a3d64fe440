"""Public face for upstream's ``pypto.backend.pto_backend`` import path.

Programs written for upstream PyPTO catch ``PartialCodegenError`` from here; it is the same class
as :class:`pypto.errors.PartialCodegenError` (raised when code generation produced some files and
failed on others, with ``.files`` holding what was produced).
"""

from pypto.errors import PartialCodegenError

__all__ = ["PartialCodegenError"]
