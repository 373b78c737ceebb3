// The numeric reference for the MHA programs: attention forward and backward
// computed plainly (every score, every probability, no tiling, no online
// softmax), accumulating in `Acc` (double by default; float for the large
// random sweeps), on all host threads. Tensors are [batch, seq, heads, dim];
// lse is [batch, heads, seq] in the log2 domain, as the reference kernels
// write it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

namespace tl::testing {

struct AttentionShape {
  int batch, heads, seq, dim;
  std::size_t at(int b, int s, int h, int d) const {
    return ((static_cast<std::size_t>(b) * seq + s) * heads + h) * dim + d;
  }
};

struct AttentionGrads {
  std::vector<float> O, lse, dQ, dK, dV;
};

namespace detail {

/// Runs body(i) for i in [0, count) over the host's threads.
template <typename Body> void parallelFor(int count, Body body) {
  int workers = std::max(1, std::min<int>(count, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      for (int i = w; i < count; i += workers)
        body(i);
    });
  for (std::thread &t : threads)
    t.join();
}

/// x . y with eight independent partial sums (vectorisable without
/// reassociating a single chain).
template <typename Acc> Acc dot(const Acc *x, const Acc *y, int n) {
  Acc partial[8] = {};
  int d = 0;
  for (; d + 8 <= n; d += 8)
    for (int k = 0; k < 8; ++k)
      partial[k] += x[d + k] * y[d + k];
  for (; d < n; ++d)
    partial[0] += x[d] * y[d];
  Acc sum = 0;
  for (Acc p : partial)
    sum += p;
  return sum;
}

/// y += a * x
template <typename Acc> void axpy(Acc a, const Acc *x, Acc *y, int n) {
  for (int d = 0; d < n; ++d)
    y[d] += a * x[d];
}

} // namespace detail

template <typename Acc = double>
AttentionGrads attentionReference(const AttentionShape &sh, bool causal,
                                  const std::vector<float> &Q, const std::vector<float> &K,
                                  const std::vector<float> &V, const std::vector<float> &dO) {
  using detail::axpy, detail::dot;
  const Acc scale = Acc(1) / std::sqrt(static_cast<Acc>(sh.dim));
  const int S = sh.seq, D = sh.dim;
  AttentionGrads g;
  std::size_t n = static_cast<std::size_t>(sh.batch) * S * sh.heads * D;
  g.O.assign(n, 0);
  g.dQ.assign(n, 0);
  g.dK.assign(n, 0);
  g.dV.assign(n, 0);
  g.lse.assign(static_cast<std::size_t>(sh.batch) * sh.heads * S, 0);
  const auto rows = static_cast<std::size_t>(S), cols = static_cast<std::size_t>(D);
  // One head at a time, its rows contiguous: q, k, v, dout, o, and the
  // probabilities P and dS = P * (dP - Delta), [S, S] each.
  std::vector<Acc> q(rows * cols), k(q.size()), v(q.size()), dout(q.size()), o(q.size());
  std::vector<Acc> dq(q.size()), dk(q.size()), dv(q.size());
  std::vector<Acc> P(rows * rows), dS(P.size()), lse(rows);
  for (int b = 0; b < sh.batch; ++b)
    for (int h = 0; h < sh.heads; ++h) {
      for (int i = 0; i < S; ++i)
        for (int d = 0; d < D; ++d) {
          std::size_t from = sh.at(b, i, h, d), to = i * cols + d;
          q[to] = Q[from], k[to] = K[from], v[to] = V[from], dout[to] = dO[from];
        }
      // Forward: a row of scores, its softmax, its output.
      detail::parallelFor(S, [&](int i) {
        Acc *p = &P[i * rows];
        const int keys = causal ? i + 1 : S; // key j > i is masked
        Acc m = -std::numeric_limits<Acc>::infinity();
        for (int j = 0; j < keys; ++j)
          m = std::max(m, p[j] = dot(&q[i * cols], &k[j * cols], D) * scale);
        Acc sum = 0;
        for (int j = 0; j < keys; ++j)
          sum += p[j] = std::exp(p[j] - m);
        std::fill(p + keys, p + S, Acc(0));
        Acc *out = &o[i * cols];
        std::fill(out, out + D, Acc(0));
        for (int j = 0; j < keys; ++j)
          axpy(p[j] /= sum, &v[j * cols], out, D);
        lse[i] = (std::log(sum) + m) / std::log(Acc(2));
        // Backward, row i: dS = P * (dP - Delta), Delta = dO . O.
        Acc delta = dot(&dout[i * cols], out, D);
        Acc *ds = &dS[i * rows];
        for (int j = 0; j < S; ++j)
          ds[j] = j < keys ? p[j] * (dot(&dout[i * cols], &v[j * cols], D) - delta) : 0;
        Acc *dqi = &dq[i * cols];
        std::fill(dqi, dqi + D, Acc(0));
        for (int j = 0; j < keys; ++j)
          axpy(ds[j] * scale, &k[j * cols], dqi, D);
      });
      // dK and dV: columns of dS and P, 16 keys a task (rows of P read in
      // 16-element runs).
      constexpr int kKeys = 16;
      detail::parallelFor((S + kKeys - 1) / kKeys, [&](int task) {
        int first = task * kKeys, last = std::min(S, first + kKeys);
        std::fill(&dk[first * cols], &dk[last * cols], Acc(0));
        std::fill(&dv[first * cols], &dv[last * cols], Acc(0));
        for (int i = causal ? first : 0; i < S; ++i)
          for (int j = first; j < last; ++j) {
            axpy(dS[i * rows + j] * scale, &q[i * cols], &dk[j * cols], D);
            axpy(P[i * rows + j], &dout[i * cols], &dv[j * cols], D);
          }
      });
      for (int i = 0; i < S; ++i) {
        g.lse[(static_cast<std::size_t>(b) * sh.heads + h) * S + i] = static_cast<float>(lse[i]);
        for (int d = 0; d < D; ++d) {
          std::size_t to = sh.at(b, i, h, d), from = i * cols + d;
          g.O[to] = static_cast<float>(o[from]);
          g.dQ[to] = static_cast<float>(dq[from]);
          g.dK[to] = static_cast<float>(dk[from]);
          g.dV[to] = static_cast<float>(dv[from]);
        }
      }
    }
  return g;
}

} // namespace tl::testing
