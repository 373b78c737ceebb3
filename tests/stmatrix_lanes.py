#!/usr/bin/env python3
"""The algebra the stmatrix stores rest on (compiler/lib/Conversion/TLToGPU/
LowerMatrixStores.cpp), checked over every Mma and wgmma fragment layout and
every tile arrangement they write to, without a GPU: stmatrix.x4 as the PTX
ISA defines it (lanes 8i..8i+7 name the rows of 8x8 matrix i; lane t's
register i holds row t/4, columns 2(t%4) and 2(t%4)+1 of matrix i), fed by
matrixLane's addresses and storeMatrix's registers (slots 4T+2i, 4T+2i+1 of
the block's first tile T), puts every element where the column-pair stores
(mmaBases, mmaSlotOffset) put it; and every lane's 8-element row segment is
contiguous and 16-byte aligned through the tile's swizzle."""
import sys


def placements(rows, cols):
    """Element index of (r, c) in each arrangement a matrixStoreReady tile has."""
    def plain(r, c):
        return r * cols + c

    def swizzled(r, c):  # swizzleColumn
        return r * cols + (c ^ ((r % 8) * 8))

    def wgmma(atom):  # wgmmaElement, 16-bit elements
        per_row = atom * 8 // 16

        def element(r, c):
            phase = (r // (128 // atom)) & (atom // 16 - 1)
            return (c // per_row) * rows * per_row + r * per_row + ((c % per_row) ^ (phase * 8))
        return element

    found = {"plain": plain}
    if cols % 64 == 0:
        found["swizzled"] = swizzled
    for atom in (32, 64, 128):
        if cols % (atom // 2) == 0:
            found[f"wgmma{atom}"] = wgmma(atom)
    return found


def check(rows, cols, warps_m, warps_n, warpgroup):
    tiles_n, tiles_m = cols // warps_n // 8, rows // warps_m // 16
    tile_row_step = warps_m * 16 if warpgroup else 16
    warp_row_step = 16 if warpgroup else rows // warps_m
    for name, element in placements(rows, cols).items():
        for warp in range(warps_m * warps_n):
            if warpgroup and warps_n > 1:  # warpGrid
                group = warp // 4
                wm, wn = (group // warps_n) * 4 + warp % 4, group % warps_n
            else:
                wm, wn = warp // warps_n, warp % warps_n
            for tr in range(tiles_m):
                for tc in range(0, tiles_n - tiles_n % 2, 2):
                    # matrixLane, for each lane of the warp
                    address = []
                    for lane in range(32):
                        r = wm * warp_row_step + lane % 16 + tr * tile_row_step
                        c = wn * (cols // warps_n) + 8 * (lane // 16) + tc * 8
                        segment = [element(r, c + k) for k in range(8)]
                        if segment != list(range(segment[0], segment[0] + 8)) or segment[0] % 8:
                            return f"{name} rows={rows} cols={cols}: lane {lane}'s row segment {segment}"
                        address.append(segment[0])
                    first_tile = tr * tiles_n + tc
                    for t in range(32):
                        quad = t // 4  # mmaBases
                        row_base = wm * warp_row_step + quad
                        col_base = wn * (cols // warps_n) + (t % 4) * 2
                        for i in range(4):  # register i: stmatrix's placement
                            at = address[8 * i + t // 4] + 2 * (t % 4)
                            got = (at, at + 1)
                            slot = 4 * first_tile + 2 * i  # storeMatrix's slots
                            tile, e = slot // 4, slot % 4  # mmaSlotOffset
                            ro = (tile // tiles_n) * tile_row_step + (e // 2) * 8
                            co = (tile % tiles_n) * 8 + e % 2
                            expected = (element(row_base + ro, col_base + co),
                                        element(row_base + ro, col_base + co + 1))
                            if got != expected:
                                return (f"{name} rows={rows} cols={cols} warps={warps_m}x{warps_n} "
                                        f"warpgroup={warpgroup} warp={warp} lane={t} block=({tr},{tc}) "
                                        f"register {i}: {got} != {expected}")
    return "ok"


checked = 0
for rows in (16, 32, 64, 128):
    for cols in (16, 48, 64, 128, 256):
        for warps_m in (1, 2, 4, 8):
            for warps_n in (1, 2, 4):
                for warpgroup in (False, True):
                    if rows % (warps_m * 16) or cols % (warps_n * 8):
                        continue
                    if warpgroup and (warps_m * warps_n) % 4:
                        continue
                    result = check(rows, cols, warps_m, warps_n, warpgroup)
                    if result != "ok":
                        print("FAIL:", result)
                        sys.exit(1)
                    checked += 1
print(f"stmatrix lanes: {checked} layouts, each tile arrangement: ok")
