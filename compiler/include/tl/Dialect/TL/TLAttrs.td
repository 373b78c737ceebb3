//===- TLAttrs.td - tl enums and layout attributes ---------*- tablegen -*-===//
#ifndef TL_ATTRS_TD
#define TL_ATTRS_TD

include "tl/Dialect/TL/TLDialect.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

// Where a buffer lives. Used as the memref memory space of on-chip buffers.
def TL_MemoryScopeEnum : I32EnumAttr<"MemoryScope", "buffer memory scope", [
    I32EnumAttrCase<"global", 0>, I32EnumAttrCase<"shared", 1>,
    I32EnumAttrCase<"fragment", 2>, I32EnumAttrCase<"local", 3>]> {
  let cppNamespace = "::tl";
  let genSpecializedAttr = 0;
}
def TL_MemoryScopeAttr : EnumAttr<TL_Dialect, TL_MemoryScopeEnum, "scope"> {
  let assemblyFormat = "`<` $value `>`";
}

// How gemm spreads its warps over the output tile.
def TL_GemmWarpPolicyEnum : I32EnumAttr<"GemmWarpPolicy", "gemm warp partition", [
    I32EnumAttrCase<"Square", 0>, I32EnumAttrCase<"FullRow", 1>,
    I32EnumAttrCase<"FullCol", 2>]> {
  let cppNamespace = "::tl";
  let genSpecializedAttr = 0;
}
def TL_GemmWarpPolicyAttr : EnumAttr<TL_Dialect, TL_GemmWarpPolicyEnum, "policy"> {
  let assemblyFormat = "`<` $value `>`";
}

def TL_ReduceKind : I32EnumAttr<"ReduceKind", "reduction kind", [
    I32EnumAttrCase<"max", 0>, I32EnumAttrCase<"sum", 1>,
    I32EnumAttrCase<"min", 2>, I32EnumAttrCase<"abssum", 3>]> {
  let cppNamespace = "::tl";
}

class TL_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<TL_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

// A shared-memory tile stored with an XOR swizzle chosen from its row width,
// so that 16-byte column accesses (ldmatrix, cp.async) avoid bank conflicts.
def TL_SwizzleLayoutAttr : TL_Attr<"SwizzleLayout", "swizzle"> {
  let summary = "swizzled shared-memory layout";
  let assemblyFormat = "";
}

// An index map layout: logical index (d0..dn) -> physical index into a
// row-major array of `physical_shape`, as TileLang's T.Layout.
def TL_IndexMapLayoutAttr : TL_Attr<"IndexMapLayout", "index_map"> {
  let summary = "affine index-map layout";
  let parameters = (ins "::mlir::AffineMap":$map,
                        ArrayRefParameter<"int64_t">:$physical_shape);
  let assemblyFormat = "`<` $map `,` `[` $physical_shape `]` `>`";
  let extraClassDeclaration = [{
    /// Number of elements of the physical array the map points into.
    int64_t getPhysicalSize() const;
  }];
}

//===----------------------------------------------------------------------===//
// Fragment layouts: which thread holds which element of a fragment. The
// fragment's shape comes from its memref type; the attribute says how it is
// spread. tl-infer-layouts attaches one to every tl.alloc_fragment.
//===----------------------------------------------------------------------===//

// Thread t holds rows t, t + T, ... (T threads), in a per-thread array: every
// program can take it. With split s > 1, s consecutive threads share each row,
// each holding a contiguous 1/s of its columns.
def TL_RowLayoutAttr : TL_Attr<"RowLayout", "row"> {
  let summary = "Row fragment layout (threads own rows)";
  let parameters = (ins "int64_t":$split);
  let assemblyFormat = "`<` `split` `=` $split `>`";
  let genVerifyDecl = 1;
}

// The accumulator layout of mma.sync m16n8: warps tiled warpsM x warpsN over
// the fragment; lane l of each 16x8 tile holds rows l/4 and l/4 + 8, columns
// 2(l%4) and 2(l%4) + 1.
def TL_MmaLayoutAttr : TL_Attr<"MmaLayout", "mma"> {
  let summary = "mma.sync accumulator fragment layout";
  let parameters = (ins "int64_t":$warpsM, "int64_t":$warpsN);
  let assemblyFormat = "`<` `warps` `=` `[` $warpsM `,` $warpsN `]` `>`";
  let genVerifyDecl = 1;
}

// A row vector of an Mma fragment (its row max, its row sum): held by the four
// lanes that share each row of the Mma layout with the same warps.
def TL_MmaRowLayoutAttr : TL_Attr<"MmaRowLayout", "mma_row"> {
  let summary = "row vector of an mma.sync accumulator";
  let parameters = (ins "int64_t":$warpsM, "int64_t":$warpsN);
  let assemblyFormat = "`<` `warps` `=` `[` $warpsM `,` $warpsN `]` `>`";
  let genVerifyDecl = 1;
}

// The accumulator layout of wgmma (sm_90a): the m16n8 pattern of #tl.mma, but
// each warp's 16-row tiles interleaved with the other warps' (tile t of warp w
// holds rows (t * warpsM + w) * 16 ..), so that the four warps of a warpgroup
// hold one contiguous 64-row block, as wgmma m64nNk16 writes it.
def TL_WgmmaLayoutAttr : TL_Attr<"WgmmaLayout", "wgmma"> {
  let summary = "wgmma accumulator fragment layout";
  let parameters = (ins "int64_t":$warpsM, "int64_t":$warpsN);
  let assemblyFormat = "`<` `warps` `=` `[` $warpsM `,` $warpsN `]` `>`";
  let genVerifyDecl = 1;
}

// A row vector of a wgmma accumulator.
def TL_WgmmaRowLayoutAttr : TL_Attr<"WgmmaRowLayout", "wgmma_row"> {
  let summary = "row vector of a wgmma accumulator";
  let parameters = (ins "int64_t":$warpsM, "int64_t":$warpsN);
  let assemblyFormat = "`<` `warps` `=` `[` $warpsM `,` $warpsN `]` `>`";
  let genVerifyDecl = 1;
}

// A TMA tensor map a lowered kernel takes after its parameters (a 128-byte
// CUtensorMap by value, __grid_constant__), which the runtime encodes at
// launch from parameter `param`'s address, shape and element type: boxes of
// `box` elements (the tensor's dimensions, outermost first), landing in
// shared memory with a `swizzle`-byte swizzle (0, 32, 64 or 128).
def TL_TensorMapAttr : TL_Attr<"TensorMap", "tensor_map"> {
  let summary = "a TMA tensor map parameter of a lowered kernel";
  let parameters = (ins "int64_t":$param, ArrayRefParameter<"int64_t">:$box,
                        "int64_t":$swizzle);
  let assemblyFormat =
      "`<` `param` `=` $param `,` `box` `=` `[` $box `]` `,` `swizzle` `=` $swizzle `>`";
  let genVerifyDecl = 1;
}

#endif // TL_ATTRS_TD
