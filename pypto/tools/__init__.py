"""Command-line tools for people reading a run or a compile: swimlane, memory map, IR trace, simulator traces.

Floor: beside ``flows``; reads artifact directories, dumps and ``dfx_outputs/`` offline.

``python -m pypto.tools.swimlane <dfx_outputs>``, ``python -m pypto.tools.memory_map <dump|artifact dir>``,
``python -m pypto.tools.ir_trace <passes_dump>`` (also installed as ``pypto-ir-trace``),
``python -m pypto.tools.clean_sim_trace <visualize_data.bin>`` (CANN operator-simulator dumps).
"""
