"""The ``harness.core`` API of upstream PyPTO's system tests, implemented on pypto's own runtime.

``harness.core.harness`` holds the case description (:class:`DataType`, :class:`TensorSpec`,
:class:`PTOTestCase`, the platform lists), ``harness.core.test_runner`` runs a case (compile with
``ir.compile``, run on a simulator, compare with the case's golden), ``harness.core.environment``
says whether Ascend hardware is present. Written from the API's documented behaviour.
"""

from harness.core.harness import DataType, PTOTestCase, TensorSpec
from harness.core.test_runner import CaseResult, TestRunner, TestSuite

__all__ = ["CaseResult", "DataType", "PTOTestCase", "TensorSpec", "TestRunner", "TestSuite"]
