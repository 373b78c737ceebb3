// A test program of two chained gemms whose second A is a fragment, as
// attention's P V: O = (Q K^T, rounded to dtype) V, one block a bM-row slice
// of Q. On sm_90a the second gemm is an RS wgmma (A from registers).
#pragma once

#include "tl/dsl.h"

namespace tl::testing {

/// O = (Q K^T as dtype) V, one block a bM-row slice of Q: the second gemm's A
/// is a fragment, as attention's P. On sm_90a both gemms are wgmma, the
/// second with A from registers (RS).
inline dsl::Program twoGemms(int M, int N, int D, dsl::DType dtype, int bM, int threads) {
  using namespace dsl;
  Program p("two_gemms");
  Buffer Q = p.tensor("Q", {M, D}, dtype);
  Buffer K = p.tensor("K", {N, D}, dtype);
  Buffer V = p.tensor("V", {N, D}, dtype);
  Buffer O = p.output("O", {M, D}, f32);
  p.kernel({ceildiv(M, bM)}, threads, [&](Expr bx) {
    Buffer Qs = alloc_shared({bM, D}, dtype);
    Buffer Ks = alloc_shared({N, D}, dtype);
    Buffer Vs = alloc_shared({N, D}, dtype);
    Buffer S = alloc_fragment({bM, N}, f32);
    Buffer P = alloc_fragment({bM, N}, dtype);
    Buffer Oacc = alloc_fragment({bM, D}, f32);
    copy(Q(slice(bx * bM, bM), all), Qs);
    copy(K, Ks);
    copy(V, Vs);
    gemm(Qs, Ks, S, {.transpose_B = true, .clear_accum = true});
    copy(S, P);
    gemm(P, Vs, Oacc, {.clear_accum = true});
    copy(Oacc, O(slice(bx * bM, bM), all));
  });
  return p;
}

} // namespace tl::testing
