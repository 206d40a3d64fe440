"""The chip-compile samples of a distributed host dispatch: window views become zero tensors."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from pypto.ir.types import DataType
from pypto.jit.distributed.build import sample_value
from pypto.jit.distributed.plan import WindowBuffer, WindowView


def _view(dtype: DataType, shape: tuple[int, ...] = (2, 8)) -> WindowView:
    return WindowView(WindowBuffer(0, shape, dtype, 0, 4096), shape, dtype)


@pytest.mark.parametrize(("dtype", "np_dtype"), [(DataType.FP32, np.float32), (DataType.INT32, np.int32),
                                                 (DataType.FP16, np.float16)])
def test_a_window_view_with_a_numpy_type_samples_as_numpy_zeros(dtype: DataType, np_dtype: type) -> None:
    got = sample_value(_view(dtype))
    assert isinstance(got, np.ndarray) and got.dtype == np_dtype and got.shape == (2, 8) and not got.any()


def test_other_arguments_pass_through() -> None:
    x = np.ones(3)
    assert sample_value(x) is x and sample_value(7) == 7


def test_sampling_a_window_view_does_not_import_torch() -> None:
    code = ("import sys\nfrom pypto.ir.types import DataType\nfrom pypto.jit.distributed.build import sample_value\n"
            "from pypto.jit.distributed.plan import WindowBuffer, WindowView\n"
            "v = WindowView(WindowBuffer(0, (4,), DataType.FP32, 0, 4096), (4,), DataType.FP32)\n"
            "sample_value(v)\nprint('torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_bf16_samples_as_a_torch_tensor(torch) -> None:
    got = sample_value(_view(DataType.BF16))
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bfloat16
