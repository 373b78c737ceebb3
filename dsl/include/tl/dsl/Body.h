// Adapts the lambdas that kernel/parallel/pipelined bodies are written as
// (one Expr per index) to one callable type the library can take.
#pragma once

#include "tl/dsl/Expr.h"

#include <functional>
#include <vector>

namespace tl::dsl::detail {

using Body = std::function<void(const std::vector<Expr> &)>;

/// Number of Expr indices the body takes (0..6), or -1 if it takes none of
/// those forms.
template <typename F> constexpr int bodyArity() {
  using E = Expr;
  if constexpr (std::is_invocable_v<F &, E>)
    return 1;
  else if constexpr (std::is_invocable_v<F &, E, E>)
    return 2;
  else if constexpr (std::is_invocable_v<F &, E, E, E>)
    return 3;
  else if constexpr (std::is_invocable_v<F &, E, E, E, E>)
    return 4;
  else if constexpr (std::is_invocable_v<F &, E, E, E, E, E>)
    return 5;
  else if constexpr (std::is_invocable_v<F &, E, E, E, E, E, E>)
    return 6;
  else if constexpr (std::is_invocable_v<F &>)
    return 0;
  else
    return -1;
}

template <typename F> Body makeBody(F &f) {
  constexpr int n = bodyArity<F>();
  static_assert(n >= 0, "a body must take 0 to 6 tl::dsl::Expr indices");
  return [&f](const std::vector<Expr> &a) {
    if constexpr (n == 0)
      f();
    else if constexpr (n == 1)
      f(a[0]);
    else if constexpr (n == 2)
      f(a[0], a[1]);
    else if constexpr (n == 3)
      f(a[0], a[1], a[2]);
    else if constexpr (n == 4)
      f(a[0], a[1], a[2], a[3]);
    else if constexpr (n == 5)
      f(a[0], a[1], a[2], a[3], a[4]);
    else
      f(a[0], a[1], a[2], a[3], a[4], a[5]);
  };
}

} // namespace tl::dsl::detail
