"""Error categories and codes of the frontend's errors (upstream's E0xx-E3xx numbering)."""

from __future__ import annotations

from enum import Enum

from pypto.errors import (
    InvalidOperationError,
    ParserSyntaxError,
    ParserTypeError,
    SSAViolationError,
    UndefinedVariableError,
    UnsupportedFeatureError,
)


class ErrorCategory(Enum):
    """The code prefix of a family of errors."""

    SYNTAX = "E0"
    TYPE = "E1"
    NAME = "E2"
    OPERATION = "E3"


class ErrorCode(Enum):
    """One diagnostic code; its category is the first two characters."""

    UNSUPPORTED_STATEMENT = "E001"
    INVALID_ASSIGNMENT = "E002"
    INVALID_LOOP_TARGET = "E003"
    INVALID_RANGE_USAGE = "E004"
    MISSING_RANGE_CALL = "E005"
    TUPLE_UNPACKING_ERROR = "E006"
    ITER_ARG_MISMATCH = "E007"
    MISSING_TYPE_ANNOTATION = "E100"
    INVALID_TYPE_ANNOTATION = "E101"
    UNSUPPORTED_TYPE = "E102"
    INCOMPLETE_TYPE = "E103"
    TENSOR_TYPE_ERROR = "E104"
    DTYPE_ERROR = "E105"
    UNDEFINED_VARIABLE = "E200"
    SSA_VIOLATION = "E201"
    SCOPE_ISOLATION_ERROR = "E202"
    UNKNOWN_OPERATION = "E300"
    UNSUPPORTED_OPERATION = "E301"
    INVALID_OPERATION_ARGS = "E302"
    UNSUPPORTED_BINARY_OP = "E303"
    UNSUPPORTED_UNARY_OP = "E304"
    UNSUPPORTED_COMPARISON = "E305"

    @property
    def category(self) -> ErrorCategory:
        return ErrorCategory(self.value[:2])


_CODES = {
    ParserSyntaxError: ErrorCode.UNSUPPORTED_STATEMENT, ParserTypeError: ErrorCode.INVALID_TYPE_ANNOTATION,
    UndefinedVariableError: ErrorCode.UNDEFINED_VARIABLE, SSAViolationError: ErrorCode.SSA_VIOLATION,
    UnsupportedFeatureError: ErrorCode.UNSUPPORTED_OPERATION, InvalidOperationError: ErrorCode.UNKNOWN_OPERATION,
}


def get_error_code(exception_type: type) -> ErrorCode | None:
    """The code of an exception class (exact class, as upstream), or None."""
    return _CODES.get(exception_type)


__all__ = ["ErrorCategory", "ErrorCode", "get_error_code"]
