"""bench/kernel_report.py's main-loop SASS counter on a small nvdisasm
listing (no CUDA tool needed): the loop is the longest span between a
label and a backward branch to it, the function-ending BRA to itself is
no loop, and opcodes are counted by pipe (predicated ones included)."""

import os
import sys

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import kernel_report  # noqa: E402

LISTING = """
//--------------------- .text.fp4_matmul_1 --------------------------
\t.section\t.text.fp4_matmul_1,"ax",@progbits
.text.fp4_matmul_1:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_0:
        /*0010*/                   LOP3.LUT R2, R2, 0xf, RZ, 0xc0, !PT ;
        /*0020*/                   HSETP2.EQ.AND P0, P1, R3, 1024, 1024, PT ;
        /*0030*/               @P0 PRMT R4, R4, 0x3254, R5 ;
        /*0040*/                   HMUL2.BF16_V2 R4, R4, R6 ;
        /*0050*/                   IMAD.SHL.U32 R7, R2, 0x4, RZ ;
        /*0060*/                   LDG.E.128 R8, desc[UR4][R10.64] ;
        /*0070*/               @P1 BRA `(.L_x_0) ;
        /*0080*/                   EXIT ;
.L_x_1:
        /*0090*/                   BRA `(.L_x_1);
//--------------------- .text.fp4_quantize_0 --------------------------
.text.fp4_quantize_0:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   EXIT ;
.L_x_2:
        /*0020*/                   BRA `(.L_x_2);
"""


def test_main_loop_counts_by_pipe():
    loops = kernel_report.sass_loops(LISTING)
    n, alu, fma, ops = loops["fp4_matmul_1"]
    # LOP3 HSETP2 PRMT HMUL2 IMAD LDG BRA
    assert n == 7
    assert alu == 3 and fma == 2
    assert ops["PRMT"] == 1 and ops["BRA"] == 1 and "MOV" not in ops
    assert loops["fp4_quantize_0"][0] == 0
