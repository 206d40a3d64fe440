"""torch_codegen of distributed chip programs: comm.* ops in a world of one rank (the prelude's _COMM).

The rendering runs one chip's program; a peer is always this rank. Addressing another rank, or a wait
that only another rank could satisfy, is an error that points at the distributed simulator.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")

sys.path.insert(0, str(Path(__file__).parents[1] / "distributed"))
from dist_programs import W, chip_pull, chip_push  # noqa: E402

from pypto.debug import torch_codegen  # noqa: E402


def _render(kernel, *args):
    ns: dict = {}
    exec(torch_codegen(kernel.lower(*args)), ns)  # noqa: S102
    return ns


def test_barrier_and_remote_load_of_this_rank_match_the_model() -> None:
    x, y = torch.randn(1, W), torch.zeros(1, W)
    box, sig = torch.zeros(1, W), torch.zeros(1, 1, dtype=torch.int32)
    ns = _render(chip_pull, x, y, box, sig)
    ns["chip_pull"](x, y, box, sig)
    torch.testing.assert_close(box, x)          # the staged payload
    torch.testing.assert_close(y, 2 * x)        # pulled from rank (0 + 2) % 1 = 0 and doubled


def test_remote_store_notify_and_wait_on_one_rank() -> None:
    x, y = torch.randn(1, W), torch.zeros(1, W)
    inbox, flag = torch.zeros(1, W), torch.zeros(1, 1, dtype=torch.int32)
    ns = _render(chip_push, x, y, inbox, flag)
    ns["chip_push"](x, y, inbox, flag)
    assert int(flag[0, 0]) == 1                 # Set by the notify, then seen by the wait
    torch.testing.assert_close(y, x)


def test_another_rank_is_refused_with_the_way_to_run_it() -> None:
    x, y = torch.randn(1, W), torch.zeros(1, W)
    inbox, flag = torch.zeros(1, W), torch.zeros(1, 1, dtype=torch.int32)
    ns = _render(chip_push, x, y, inbox, flag)
    ns["_COMM"].update(rank=0, nranks=2)        # rank 0 of 2 pushes to rank 1
    with pytest.raises(NotImplementedError, match="addresses rank 1.*a2a3sim/a5sim"):
        ns["chip_push"](x, y, inbox, flag)


def test_a_wait_no_rank_can_satisfy_is_an_error_not_a_hang() -> None:
    ns: dict = {}
    exec(torch_codegen(chip_push.lower(torch.zeros(1, W), torch.zeros(1, W), torch.zeros(1, W),  # noqa: S102
                                       torch.zeros(1, 1, dtype=torch.int32))), ns)
    sig = torch.zeros(2, 1, dtype=torch.int32)
    with pytest.raises(RuntimeError, match=r"comm.wait on cell \[1, 0\]: 0 is not >= 1"):
        ns["_comm_wait"](sig, [1, 0], 1, 1)
