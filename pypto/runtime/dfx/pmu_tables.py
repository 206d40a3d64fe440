"""PMU counter column names per architecture and event type (the names simpler's ``pmu.csv`` uses).

The simulator has no performance counters: these names only label columns that stay 0.
"""

from __future__ import annotations

EVENT_TYPES = {1: "ARITHMETIC_UTILIZATION", 2: "PIPE_UTILIZATION", 4: "MEMORY", 5: "MEMORY_L0",
               6: "RESOURCE_CONFLICT", 7: "MEMORY_UB", 8: "L2_CACHE"}
DEFAULT_EVENT = 2

A2A3: dict[int, tuple[str, ...]] = {
    1: ("cube_fp16_exec", "cube_int8_exec", "vec_fp32_exec", "vec_fp16_128lane_exec", "vec_fp16_64lane_exec",
        "vec_int32_exec", "vec_misc_exec"),
    2: ("vec_busy_cycles", "cube_busy_cycles", "scalar_busy_cycles", "mte1_busy_cycles", "mte2_busy_cycles",
        "mte3_busy_cycles", "icache_miss", "icache_req"),
    4: ("ub_read_req", "ub_write_req", "l1_read_req", "l1_write_req", "l2_read_req", "l2_write_req",
        "main_read_req", "main_write_req"),
    5: ("l0a_read_req", "l0a_write_req", "l0b_read_req", "l0b_write_req", "l0c_read_req", "l0c_write_req"),
    6: ("bankgroup_stall_cycles", "bank_stall_cycles", "vec_resc_conflict_cycles"),
    7: ("ub_read_bw_mte", "l2_write_bw", "main_mem_write_bw", "ub_write_bw_mte", "ub_read_bw_vector",
        "ub_write_bw_vector", "ub_read_bw_scalar", "ub_write_bw_scalar"),
    8: ("write_cache_hit", "write_cache_miss_allocate", "r0_read_cache_hit", "r0_read_cache_miss_allocate",
        "r1_read_cache_hit", "r1_read_cache_miss_allocate"),
}

A5: dict[int, tuple[str, ...]] = {
    1: ("cube_fp_instr_busy", "cube_int_instr_busy"),
    2: ("pmu_idc_aic_vec_busy_o", "cube_instr_busy", "scalar_instr_busy", "mte1_instr_busy", "mte2_instr_busy",
        "mte3_instr_busy", "icache_req", "icache_miss", "pmu_fix_instr_busy"),
    4: ("bif_sc_pmu_read_main_instr_core", "bif_sc_pmu_write_main_instr_core", "pmu_aiv_ext_rd_ub_instr",
        "ub_pmu_vec_rd_ub_acc", "pmu_aiv_ext_wr_ub_instr", "ub_pmu_vec_wr_ub_acc", "pmu_rd_l1_instr",
        "pmu_wr_l1_instr"),
    5: ("cube_sc_pmu_read_l0a_instr", "pmu_wr_l0a_instr", "cube_sc_pmu_read_l0b_instr", "pmu_wr_l0b_instr",
        "fixp_rd_l0c_instr", "cube_sc_pmu_read_l0c_instr", "cube_sc_pmu_write_l0c_instr"),
    6: ("stu_pmu_wctl_ub_cflt", "ldu_pmu_ib_ub_cflt", "pmu_idc_aic_vec_instr_vf_busy_o", "idu_pmu_ins_iss_cnt"),
    7: ("pmu_rd_acc_ub_instr_p", "pmu_wr_acc_ub_instr_p", "pmu_fix_wr_ub_instr", "mte_sc_pmu_write_acc_ub_instr_0",
        "mte_sc_pmu_read_acc_ub_instr_0", "ub_pmu_vec_rd_ub_acc", "ub_pmu_vec_wr_ub_acc"),
    8: ("bif_sc_pmu_ar_close_l2_hit_core", "bif_sc_pmu_ar_close_l2_miss_core", "bif_sc_pmu_ar_close_l2_victim_core",
        "bif_sc_pmu_aw_close_l2_hit_core", "bif_sc_pmu_aw_close_l2_miss_core", "bif_sc_pmu_aw_close_l2_victim_core"),
}

FIXED_COLUMNS = ("thread_id", "core_id", "task_id", "func_id", "core_type", "pmu_total_cycles")


def resolve(platform: str, event_type: int) -> tuple[int, tuple[str, ...]]:
    """(effective event type, counter names); unknown non-zero types fall back to PIPE_UTILIZATION."""
    table = A5 if platform.startswith("a5") else A2A3
    event = event_type if event_type in table else DEFAULT_EVENT
    return event, table[event]
