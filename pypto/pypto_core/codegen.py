"""Upstream's ``pypto.pypto_core.codegen``: its C++ code generators. pypto's code generation is
:mod:`pypto.codegen` (PTO MLIR and orchestration C++ for ptoas 0.1.1) with a different interface, so these
names are stand-ins that raise UnsupportedFeatureError when used."""

from pypto.pypto_core._standin import stand_ins

globals().update(stand_ins(__name__, "BuiltinNextLevelSpec DistributedCodegen OrchestrationResult PTOCodegen "
                           "collect_vars_from_shape_expr generate_orchestration infer_function_core_type",
                           "pypto generates code with pypto.codegen (through ir.compile), not these C++ classes"))
