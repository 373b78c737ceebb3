#!/usr/bin/env python3
"""The identity crossedPairBases (compiler/lib/Conversion/TLToGPU/LowerCopy.cpp)
rests on, checked over every Mma and wgmma fragment layout it accepts: each
crossed pair store's swizzled element in a 128-byte atom of 32-bit elements
(wgmmaElement's formula) equals one of the thread's eight bases plus the
slot's constant. The GPU test of the hand-over checks the numbers; this
checks the algebra on every layout, without a GPU."""
import sys

from mma_layout import layouts, wgmma_element


def check(layout):
    rows, cols, tiles_n = layout.rows, layout.cols, layout.tiles_n
    if (layout.warp_row_step % 8 or layout.tile_row_step % 8 or cols % 32 or
            (layout.warps_n > 1 and (cols // layout.warps_n) % 32)):
        return None  # crossedPairBases declines these
    element = wgmma_element(rows, 128, 32)
    for warp in range(layout.warps_m * layout.warps_n):
        for lane in range(32):
            quad = lane // 4
            row_base, col_base = layout.bases(warp, lane)
            pair = col_base % 8  # crossedPairBases
            col_start = col_base - pair
            odd = quad & 1
            high = (quad & 6) * 4
            base = row_base * 32 + (pair ^ (odd * 4)) + (col_start // 32) * rows * 32
            first, second = base + odd, base + 1 - odd
            for slot in range(0, layout.slots(), 2):
                ro, co = layout.slot_offset(slot)
                r, c = row_base + ro, col_base + co
                o = r & 1  # storeCrossedPair: the odd rows' second element first
                expected = (element(r, c + o), element(r, c + 1 - o))
                chunk = (8 * ((co % 32) // 8)) ^ high
                constant = ro * 32 + (co // 32) * rows * 32
                got = (first + chunk + constant, second + chunk + constant)
                if got != expected:
                    return f"{layout} warp={warp} lane={lane} slot={slot}: {got} != {expected}"
    return "ok"


checked = 0
for layout in layouts((16, 32, 64, 128, 256), (32, 64, 96, 128, 256)):
    result = check(layout)
    if result is None:
        continue
    if result != "ok":
        print("crossedPairBases identity fails:", result)
        sys.exit(1)
    checked += 1
print(f"crossedPairBases identity holds on {checked} layouts")
