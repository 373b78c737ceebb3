"""The Mma and wgmma fragment layouts as the GPU lowering computes them
(FragmentLayout.h; KernelLowering.cpp's warpGrid, mmaBases, mmaSlotOffset),
for the scripts that check address algebra on them without a GPU
(crossed_pair_bases.py, stmatrix_lanes.py)."""


class Layout:
    def __init__(self, rows, cols, warps_m, warps_n, warpgroup):
        self.rows, self.cols, self.warps_m, self.warps_n = rows, cols, warps_m, warps_n
        self.warpgroup = warpgroup
        self.tiles_m, self.tiles_n = rows // warps_m // 16, cols // warps_n // 8
        self.tile_row_step = warps_m * 16 if warpgroup else 16
        self.warp_row_step = 16 if warpgroup else rows // warps_m

    def __str__(self):
        return (f"rows={self.rows} cols={self.cols} warps={self.warps_m}x{self.warps_n} "
                f"warpgroup={self.warpgroup}")

    def warp_grid(self, warp):  # warpGrid: (wm, wn)
        if self.warpgroup and self.warps_n > 1:
            group = warp // 4
            return (group // self.warps_n) * 4 + warp % 4, group % self.warps_n
        return warp // self.warps_n, warp % self.warps_n

    def bases(self, warp, lane):  # mmaBases: the lane's first row and column
        wm, wn = self.warp_grid(warp)
        return (wm * self.warp_row_step + lane // 4,
                wn * (self.cols // self.warps_n) + (lane % 4) * 2)

    def slot_offset(self, slot):  # mmaSlotOffset
        tile, e = slot // 4, slot % 4
        return ((tile // self.tiles_n) * self.tile_row_step + (e // 2) * 8,
                (tile % self.tiles_n) * 8 + e % 2)

    def slots(self):
        return self.tiles_m * self.tiles_n * 4


def layouts(row_choices, col_choices):
    """Every layout the lowering makes of these fragment shapes: warps along M
    and N that tile them (a warpgroup layout: whole warpgroups)."""
    for rows in row_choices:
        for cols in col_choices:
            for warps_m in (1, 2, 4, 8):
                for warps_n in (1, 2, 4):
                    for warpgroup in (False, True):
                        if rows % (warps_m * 16) or cols % (warps_n * 8):
                            continue
                        if warpgroup and (warps_m * warps_n) % 4:
                            continue
                        yield Layout(rows, cols, warps_m, warps_n, warpgroup)


def wgmma_element(rows, atom, bits):
    """wgmmaElement: the element index of (r, c) in a wgmma operand tile of
    `rows` rows, `atom`-byte swizzle atoms and `bits`-bit elements."""
    per_row, per_chunk = atom * 8 // bits, 128 // bits

    def element(r, c):
        phase = (r // (128 // atom)) & (atom // 16 - 1)
        return (c // per_row) * rows * per_row + r * per_row + ((c % per_row) ^ (phase * per_chunk))
    return element
