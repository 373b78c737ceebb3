//===- InferLayouts.cpp - tl-infer-layouts: fragment layouts in the IR ----===//
//
// The first step of the GPU path. Every tl.alloc_fragment gets the layout the
// lowering will give it (FragmentLayout.h: #tl.mma / #tl.mma_row where the
// kernel's gemms allow, else #tl.row for all), and the tl.kernel a summary,
// `tl.fragment_layout = "mma"` or "row: <why not>" with the source line that
// decided it. Decided here, on the tile program, so that the decision can be
// read (tl-opt, tlc --emit=layouts), tested and overridden by hand, and the
// lowering only follows it.
//
//===----------------------------------------------------------------------===//
#include "FragmentLayout.h"

#include "tl/Conversion/Passes.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace tl {
#define GEN_PASS_DEF_INFERFRAGMENTLAYOUTS
#include "tl/Conversion/Passes.h.inc"
} // namespace tl

namespace tl::gpu_lowering {

Attribute layoutAttr(MLIRContext *context, const FragmentLayout &layout) {
  switch (layout.kind) {
  case FragmentLayout::Kind::Row:
    return RowLayoutAttr::get(context, layout.split);
  case FragmentLayout::Kind::Mma:
    if (layout.warpgroup)
      return WgmmaLayoutAttr::get(context, layout.warpsM, layout.warpsN);
    return MmaLayoutAttr::get(context, layout.warpsM, layout.warpsN);
  case FragmentLayout::Kind::MmaRow:
    if (layout.warpgroup)
      return WgmmaRowLayoutAttr::get(context, layout.warpsM, layout.warpsN);
    return MmaRowLayoutAttr::get(context, layout.warpsM, layout.warpsN);
  }
  return {};
}

FailureOr<FragmentLayout> attachedLayout(AllocFragmentOp alloc, int64_t threads) {
  Attribute attr = tlDialect(alloc).getLayoutAttrHelper().getAttr(alloc);
  if (!attr)
    return alloc.emitOpError("has no fragment layout: run tl-infer-layouts before the lowering");
  MemRefType type = alloc.getType();
  FragmentLayout layout;
  layout.rows = type.getDimSize(0);
  layout.cols = type.getRank() > 1 ? type.getDimSize(1) : 0;
  int64_t warps = threads / 32;
  if (auto row = dyn_cast<RowLayoutAttr>(attr)) {
    layout.split = row.getSplit();
    if (type.getRank() > 2 || threads % layout.split ||
        (type.getRank() == 2 && layout.cols % layout.split))
      return alloc.emitOpError() << "cannot take " << attr << ": a row split must divide "
                                 << threads << " threads and the fragment's columns";
    return layout;
  }
  bool vector = isa<MmaRowLayoutAttr, WgmmaRowLayoutAttr>(attr);
  auto take = [&](FragmentLayout::Kind kind, auto attr, bool warpgroup) {
    layout.kind = kind, layout.warpsM = attr.getWarpsM(), layout.warpsN = attr.getWarpsN();
    layout.warpgroup = warpgroup;
  };
  if (auto mma = dyn_cast<MmaLayoutAttr>(attr))
    take(FragmentLayout::Kind::Mma, mma, false);
  else if (auto mmaRow = dyn_cast<MmaRowLayoutAttr>(attr))
    take(FragmentLayout::Kind::MmaRow, mmaRow, false);
  else if (auto wgmma = dyn_cast<WgmmaLayoutAttr>(attr))
    take(FragmentLayout::Kind::Mma, wgmma, true);
  else if (auto wgmmaRow = dyn_cast<WgmmaRowLayoutAttr>(attr))
    take(FragmentLayout::Kind::MmaRow, wgmmaRow, true);
  else
    return alloc.emitOpError() << "has " << attr << " where a fragment layout belongs";
  if (type.getRank() != (vector ? 1 : 2) || layout.warpsM * layout.warpsN != warps ||
      layout.rows % (16 * layout.warpsM) || (!vector && layout.cols % (8 * layout.warpsN)))
    return alloc.emitOpError() << "cannot take " << attr << " with " << warps
                               << " warps: the fragment must split into "
                               << (vector ? "16-row" : "16x8") << " tiles per warp";
  if (layout.warpgroup && (warps % 4 || layout.warpsM % 4))
    return alloc.emitOpError() << "cannot take " << attr << " with " << warps
                               << " warps: wgmma needs whole warpgroups, each holding 64-row "
                                  "blocks";
  return layout;
}

namespace {

struct InferFragmentLayoutsPass
    : public tl::impl::InferFragmentLayoutsBase<InferFragmentLayoutsPass> {
  using InferFragmentLayoutsBase::InferFragmentLayoutsBase;
  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      std::string why;
      FragmentLayouts layouts = inferFragmentLayouts(kernel, why, wgmma);
      bool mma = llvm::any_of(
          layouts, [](auto &entry) { return entry.second.kind != FragmentLayout::Kind::Row; });
      TLDialect &tl = tlDialect(kernel);
      tl.getFragmentLayoutAttrHelper().setAttr(
          kernel, StringAttr::get(kernel.getContext(), !mma ? "row: " + why
                                                       : layouts.front().second.warpgroup ? "wgmma"
                                                                                          : "mma"));
      kernel.walk([&](AllocFragmentOp alloc) {
        tl.getLayoutAttrHelper().setAttr(
            alloc, layoutAttr(kernel.getContext(), layouts.lookup(alloc.getResult())));
      });
    });
  }
};

} // namespace
} // namespace tl::gpu_lowering
