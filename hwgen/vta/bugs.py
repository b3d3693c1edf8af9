"""Named bugs the generator can inject into the RTL, to show that trace comparison
pinpoints where a design goes wrong. Never used by a normal build."""
from __future__ import annotations

from ..errors import HwgenError

BUGS = {
    "alu_opcode_off_by_one": "the ALU executes MAX as the next opcode (ADD)",
    "gemm_weight_swap_last_lane": "the GEMM's last output lane uses the previous lane's weight row",
    "load_skips_pad_row": "tensor loads do not write the last row of bottom padding",
    "load_drives_masked_writes": "a load's cycles that write no element (a beat's elements outside the row) still "
                                 "drive the scratchpad write port's address and data, which the accumulator ORs "
                                 "with the other units' writes under COMPUTE_OVERLAP",
    "load_crosses_4k_boundary": "tensor loads split their rows into bursts by AXI_MAX_BURST alone, across 4 KiB "
                                "pages",
    "load_ignores_max_burst": "tensor loads issue AXI4-length bursts (256 beats) whatever AXI_MAX_BURST says",
    "queue_room_off_by_one": "an instruction queue says it has room when it is full (with QUEUE_ROOM_REGISTER: "
                             "one entry short)",
    "fetch_dispatch_waits_for_room": "fetch raises an instruction queue's enable only while that queue has room: "
                                     "the same transfers, through a combinational path from the queue's ready to "
                                     "fetch's enable, which the unit-boundary check names",
    "sequencer_pops_without_token": "a sequencer pops its token queues when any of them has a token",
    "token_have_stale": "a token queue's have flag stays up when its last token is popped",
    "skid_takes_while_holding": "a skid buffer is ready while it holds a beat in its skid register when its "
                                "consumer takes the beat offered: the held beat moves up and the one taken is lost",
    "vme_reuses_busy_slot": "the memory engine issues a read burst under an AXI ID whose burst is still in flight",
    "store_wlast_early": "the store marks a burst's second-to-last beat as its last (WLAST a beat early; none on a "
                         "one-beat burst), which a memory that counts a burst's beats by its AWLEN does not notice",
    "vcr_rdata_changes_while_waiting": "the control registers load a read's data whenever ARVALID is up, also "
                                       "while the previous read's response waits for RREADY",
    "vcr_drops_bvalid": "the control registers' write response lasts one cycle whether or not BREADY took it",
    "gemm_forwards_newest_only": "the GEMM forwards only the newest write to its entry, the older writes since "
                                 "its read not at all",
    "gemm_history_one_short": "the GEMM's write history holds one write fewer than the cycles from its read of "
                              "an entry to its use, so the oldest write in between is not forwarded",
    "alu_dst_unforwarded": "the ALU forwards no write to its operand ACC[dst]: it uses the entry as read",
    "alu_src_unforwarded": "the ALU forwards no write to its operand ACC[src]: it uses the entry as read",
    "alu_history_one_short": "the ALU's write history holds one write fewer than the cycles from its reads of "
                             "its operands to their use, so the oldest write in between is not forwarded",
    "overlap_ignores_acc_halves": "under COMPUTE_OVERLAP an instruction issues beside those executing on other "
                                  "units even when they use the same half of ACC/OUT (their writes then meet "
                                  "in that half)",
    "overlap_load_without_padding": "under COMPUTE_OVERLAP a load's footprint counts its data rows only, not its "
                                    "padding rows (which it writes as well)",
}


def check_bugs(bugs) -> frozenset:
    bugs = frozenset(bugs or ())
    unknown = bugs - set(BUGS)
    if unknown:
        raise HwgenError(f"unknown injected bug {sorted(unknown)}; known: " + ", ".join(BUGS))
    return bugs
