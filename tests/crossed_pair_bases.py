#!/usr/bin/env python3
"""The identity crossedPairBases (compiler/lib/Conversion/TLToGPU/LowerCopy.cpp)
rests on, checked over every Mma and wgmma fragment layout it accepts: each
crossed pair store's swizzled element in a 128-byte atom of 32-bit elements
(wgmmaElement's formula) equals one of the thread's eight bases plus the
slot's constant. The GPU test of the hand-over checks the numbers; this
checks the algebra on every layout, without a GPU."""
import sys


def check(rows, cols, warps_m, warps_n, warpgroup):
    tiles_n, tiles_m = cols // warps_n // 8, rows // warps_m // 16
    tile_row_step = warps_m * 16 if warpgroup else 16
    warp_row_step = 16 if warpgroup else rows // warps_m
    if warp_row_step % 8 or tile_row_step % 8 or cols % 32 or (warps_n > 1 and (cols // warps_n) % 32):
        return None  # crossedPairBases declines these

    def element(r, c):  # wgmmaElement, atom 128, 32-bit elements
        return (c // 32) * rows * 32 + r * 32 + ((c % 32) ^ ((r & 7) * 4))

    for warp in range(warps_m * warps_n):
        if warpgroup and warps_n > 1:  # warpGrid
            group = warp // 4
            wm, wn = (group // warps_n) * 4 + warp % 4, group % warps_n
        else:
            wm, wn = warp // warps_n, warp % warps_n
        for lane in range(32):
            quad = lane // 4
            row_base = wm * warp_row_step + quad  # mmaBases
            col_base = wn * (cols // warps_n) + (lane % 4) * 2
            pair = col_base % 8  # crossedPairBases
            col_start = col_base - pair
            odd = quad & 1
            high = (quad & 6) * 4
            base = row_base * 32 + (pair ^ (odd * 4)) + (col_start // 32) * rows * 32
            first, second = base + odd, base + 1 - odd
            for slot in range(0, tiles_m * tiles_n * 4, 2):
                tile, e = slot // 4, slot % 4  # mmaSlotOffset
                ro, co = (tile // tiles_n) * tile_row_step + (e // 2) * 8, (tile % tiles_n) * 8 + e % 2
                r, c = row_base + ro, col_base + co
                o = r & 1  # storeCrossedPair: the odd rows' second element first
                expected = (element(r, c + o), element(r, c + 1 - o))
                chunk = (8 * ((co % 32) // 8)) ^ high
                constant = ro * 32 + (co // 32) * rows * 32
                got = (first + chunk + constant, second + chunk + constant)
                if got != expected:
                    return (f"rows={rows} cols={cols} warps={warps_m}x{warps_n} warpgroup={warpgroup} "
                            f"warp={warp} lane={lane} slot={slot}: {got} != {expected}")
    return "ok"


checked = 0
for rows in (16, 32, 64, 128, 256):
    for cols in (32, 64, 96, 128, 256):
        for warps_m in (1, 2, 4, 8):
            for warps_n in (1, 2, 4):
                for warpgroup in (False, True):
                    if rows % (warps_m * 16) or cols % (warps_n * 8):
                        continue
                    result = check(rows, cols, warps_m, warps_n, warpgroup)
                    if result is None:
                        continue
                    if result != "ok":
                        print("crossedPairBases identity fails:", result)
                        sys.exit(1)
                    checked += 1
print(f"crossedPairBases identity holds on {checked} layouts")
