// Host literals fold; device expressions promote and convert as documented.
#include "tl/dsl.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace tl::dsl;

TEST_CASE("host literals fold on the host", "[expr]") {
  Expr a = Expr(7) + 5;
  CHECK(a.isIntLiteral());
  CHECK(a.intValue() == 12);
  CHECK((Expr(-7) / 2).intValue() == -4); // floor division
  CHECK((Expr(-7) % 2).intValue() == 1);  // floor modulo
  CHECK((Expr(1.5) * 2).literalValue() == 3.0);
  CHECK(ceildiv(257, 64) == 5);
  CHECK(floordiv(-1, 8) == -1);
  Expr inf = -infinity(f32);
  CHECK(inf.isLiteral());
  CHECK(inf.dtype() == DType::f32);
  CHECK(std::isinf(inf.literalValue()));
  CHECK((Expr(3) < 4).dtype() == DType::i1);
}

TEST_CASE("device expressions promote and convert", "[expr]") {
  Program p("promote");
  Buffer out = p.output("out", {64}, f32);
  p.kernel({1}, 32, [&](Expr bx) {
    Buffer h = alloc_fragment({64}, f16);
    Buffer s = alloc_fragment({64}, f32);
    parallel({64}, [&](Expr i) {
      Expr x = h(i) * h(i); // f16 * f16 stays f16
      CHECK(x.dtype() == DType::f16);
      Expr y = s(i) + x; // f32 + f16 promotes to f32
      CHECK(y.dtype() == DType::f32);
      Expr z = i * 0.5; // index * float literal: f32
      CHECK(z.dtype() == DType::f32);
      Expr c = bx * 64 + i >= 3;
      CHECK(c.dtype() == DType::i1);
      h(i) = y; // stores convert to the buffer's type
      out(i) = select(c, y, -infinity(f32));
    });
  });
  REQUIRE_NOTHROW(p.verify());
  std::string ir = p.str();
  CHECK(ir.find("arith.extf") != std::string::npos);
  CHECK(ir.find("arith.truncf") != std::string::npos);
  CHECK(ir.find("arith.sitofp") != std::string::npos);
  CHECK(ir.find("0xFF800000") != std::string::npos); // -inf
}

TEST_CASE("host values in device arithmetic become constants", "[expr]") {
  Program p("fold");
  Buffer out = p.output("out", {4}, i32);
  p.kernel({4}, 32, [&](Expr bx) {
    Buffer l = alloc_local({1}, i32);
    l(0) = cast(bx * (64 / 2), i32);
    copy(l, out(slice(bx, 1)));
  });
  REQUIRE_NOTHROW(p.verify());
  CHECK(p.str().find("arith.constant 32 : index") != std::string::npos);
}
