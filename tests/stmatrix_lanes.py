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

from mma_layout import layouts, wgmma_element


def placements(rows, cols):
    """Element index of (r, c) in each arrangement a matrixStoreReady tile has."""
    found = {"plain": lambda r, c: r * cols + c}
    if cols % 64 == 0:  # swizzleColumn
        found["swizzled"] = lambda r, c: r * cols + (c ^ ((r % 8) * 8))
    for atom in (32, 64, 128):
        if cols % (atom // 2) == 0:
            found[f"wgmma{atom}"] = wgmma_element(rows, atom, 16)
    return found


def check(layout):
    rows, cols, tiles_n = layout.rows, layout.cols, layout.tiles_n
    for name, element in placements(rows, cols).items():
        for warp in range(layout.warps_m * layout.warps_n):
            wm, wn = layout.warp_grid(warp)
            for tr in range(layout.tiles_m):
                for tc in range(0, tiles_n - tiles_n % 2, 2):
                    # matrixLane, for each lane of the warp
                    address = []
                    for lane in range(32):
                        r = wm * layout.warp_row_step + lane % 16 + tr * layout.tile_row_step
                        c = wn * (cols // layout.warps_n) + 8 * (lane // 16) + tc * 8
                        segment = [element(r, c + k) for k in range(8)]
                        if segment != list(range(segment[0], segment[0] + 8)) or segment[0] % 8:
                            return f"{name} {layout}: lane {lane}'s row segment {segment}"
                        address.append(segment[0])
                    first_tile = tr * tiles_n + tc
                    for t in range(32):
                        row_base, col_base = layout.bases(warp, t)
                        for i in range(4):  # register i: stmatrix's placement
                            at = address[8 * i + t // 4] + 2 * (t % 4)
                            got = (at, at + 1)
                            ro, co = layout.slot_offset(4 * first_tile + 2 * i)  # storeMatrix's
                            expected = (element(row_base + ro, col_base + co),
                                        element(row_base + ro, col_base + co + 1))
                            if got != expected:
                                return (f"{name} {layout} warp={warp} lane={t} block=({tr},{tc}) "
                                        f"register {i}: {got} != {expected}")
    return "ok"


checked = 0
for layout in layouts((16, 32, 64, 128), (16, 48, 64, 128, 256)):
    result = check(layout)
    if result != "ok":
        print("FAIL:", result)
        sys.exit(1)
    checked += 1
print(f"stmatrix lanes: {checked} layouts, each tile arrangement: ok")
