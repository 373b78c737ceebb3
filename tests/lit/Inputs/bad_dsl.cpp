// tlc input whose program misuses the DSL: gemm with mismatched K (line 10).
#include "tl/dsl.h"
using namespace tl::dsl;

TLC_GENERATOR(bad_gemm, ({{"k", 32}}))(const GeneratorArgs &a) {
  Program p("bad_gemm");
  p.kernel({1}, 128, [&](Expr) {
    Buffer A = alloc_shared({64, a["k"]}, f16), B = alloc_shared({64, 64}, f16);
    Buffer C = alloc_fragment({64, 64}, f32);
    gemm(A, B, C);
  });
  return p;
}
