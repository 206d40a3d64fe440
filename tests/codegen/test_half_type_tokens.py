"""The bf16/f16 element-type tokens of a .pto text (the one-half-type check, the bf16 stand-in): the
token forms MLIR spells are found, names, SSA values, attributes and string literals are not."""

from __future__ import annotations

import pytest

from pypto.backend import bf16_standin
from pypto.codegen import pto_module


@pytest.mark.parametrize("text", ["dtype=bf16", "<bf16>", ": bf16", "32x64xbf16", "?xbf16", "bf16"])
def test_bf16_token_forms_are_found(text):
    assert pto_module._HALF_TYPES["bf16"].search(text)
    assert bf16_standin.uses(text) == (True, False)


@pytest.mark.parametrize("text", ["%bf16", "@bf16", "$bf16", "x.bf16", "my_bf16", "bf16x", "bf16_t", "abf16",
                                  'loc("dir/bf16.py":3:1)', "2bf16"])
def test_names_and_string_literals_are_not_tokens(text):
    code = pto_module._STRING.sub('""', text)
    assert not pto_module._HALF_TYPES["bf16"].search(code)
    assert bf16_standin.uses(text) == (False, False)


def test_f16_is_not_found_inside_bf16():
    assert not pto_module._HALF_TYPES["f16"].search("tile<16x16xbf16>, dtype=bf16")
    assert pto_module._HALF_TYPES["f16"].search("tile<16x16xf16>")


def test_standin_renames_every_token_outside_strings():
    text = 'x : tile<16x16xbf16> loc("k/bf16.py":1:1) dtype=bf16 %bf16_v'
    assert bf16_standin._outside_strings(text, lambda part: bf16_standin._BF16.sub("f16", part)) == (
        'x : tile<16x16xf16> loc("k/bf16.py":1:1) dtype=f16 %bf16_v')


def test_a_unit_with_both_types_outside_strings_is_refused():
    from pypto.errors import UserError

    f = type("F", (), {"name": "k", "span": None})()
    with pytest.raises(UserError, match="both BF16 and FP16"):
        pto_module._check_one_half_type([f], ["a : tile<1x16xbf16>\nb : tile<1x16xf16>"])
    pto_module._check_one_half_type([f], ['a : tile<1x16xbf16> loc("f16.py":1:1)'])  # f16 only in a string
