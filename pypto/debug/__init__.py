"""Host-side debugging of the IR: run its meaning in PyTorch and find the pass that changed it.

Floor: above ``ir``, ``passes`` and ``runtime``, below ``compiled`` (whose ``validate_ir`` calls it).

- :func:`torch_codegen` - a Program / Function as runnable PyTorch source.
- :func:`validate_pass_ir_codegen_results` (also ``CompiledProgram.validate_ir``) - run every
  ``passes_dump/NN_after_<Pass>.py`` through torch and name the first pass whose result diverges.

torch is only needed to *run* the generated code; import errors name it.
"""

from pypto.debug.torch_codegen import torch_codegen
from pypto.debug.validate import validate_ir, validate_pass_ir_codegen_results

__all__ = ["torch_codegen", "validate_ir", "validate_pass_ir_codegen_results"]
