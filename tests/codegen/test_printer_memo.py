"""Pass dumps re-print only functions a pass changed: print_function remembers text by function identity."""

from __future__ import annotations

import irbuild as B

from pypto.ir.printer import print_function, python_print


def test_same_function_object_reuses_its_text_and_a_new_one_is_printed_afresh():
    prog = B.add_program()
    f = prog.functions[0]
    first = print_function(f)
    assert print_function(f) is first  # remembered
    renamed = f.with_(name=f"{f.name}_v2")
    text = print_function(renamed)
    assert text != first and f"{f.name}_v2" in text
    assert print_function(f, indent=1) != first  # options are part of the key
    assert python_print(B.add_program()) == python_print(prog)  # equal programs print equally
