// A naive fp64 attention forward and backward, the numeric reference for the
// MHA programs. Tensors are [batch, seq, heads, dim]; lse is [batch, heads,
// seq] in the log2 domain, as the reference kernels write it.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
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

inline AttentionGrads attentionReference(const AttentionShape &sh, bool causal,
                                         const std::vector<float> &Q,
                                         const std::vector<float> &K,
                                         const std::vector<float> &V,
                                         const std::vector<float> &dO) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(sh.dim));
  const int S = sh.seq, D = sh.dim;
  AttentionGrads g;
  std::size_t n = static_cast<std::size_t>(sh.batch) * S * sh.heads * D;
  g.O.assign(n, 0);
  g.dQ.assign(n, 0);
  g.dK.assign(n, 0);
  g.dV.assign(n, 0);
  g.lse.assign(static_cast<std::size_t>(sh.batch) * sh.heads * S, 0);
  std::vector<double> P(static_cast<std::size_t>(S) * S), dP(P.size());
  for (int b = 0; b < sh.batch; ++b)
    for (int h = 0; h < sh.heads; ++h) {
      for (int i = 0; i < S; ++i) {
        double m = -std::numeric_limits<double>::infinity();
        for (int j = 0; j < S; ++j) {
          double s = 0;
          for (int d = 0; d < D; ++d)
            s += double(Q[sh.at(b, i, h, d)]) * K[sh.at(b, j, h, d)];
          s *= scale;
          if (causal && j > i)
            s = -std::numeric_limits<double>::infinity();
          P[i * S + j] = s;
          m = std::max(m, s);
        }
        double sum = 0;
        for (int j = 0; j < S; ++j)
          sum += P[i * S + j] = std::exp(P[i * S + j] - m);
        for (int j = 0; j < S; ++j)
          P[i * S + j] /= sum;
        g.lse[(static_cast<std::size_t>(b) * sh.heads + h) * S + i] =
            static_cast<float>((std::log(sum) + m) / std::log(2.0));
        for (int d = 0; d < D; ++d) {
          double o = 0;
          for (int j = 0; j < S; ++j)
            o += P[i * S + j] * V[sh.at(b, j, h, d)];
          g.O[sh.at(b, i, h, d)] = static_cast<float>(o);
        }
      }
      for (int i = 0; i < S; ++i) {
        double delta = 0;
        for (int d = 0; d < D; ++d)
          delta += double(dO[sh.at(b, i, h, d)]) * g.O[sh.at(b, i, h, d)];
        for (int j = 0; j < S; ++j) {
          double dp = 0;
          for (int d = 0; d < D; ++d)
            dp += double(dO[sh.at(b, i, h, d)]) * V[sh.at(b, j, h, d)];
          dP[i * S + j] = P[i * S + j] * (dp - delta); // dS
        }
      }
      for (int i = 0; i < S; ++i)
        for (int d = 0; d < D; ++d) {
          double dq = 0, dk = 0, dv = 0;
          for (int j = 0; j < S; ++j) {
            dq += dP[i * S + j] * K[sh.at(b, j, h, d)];
            dk += dP[j * S + i] * Q[sh.at(b, j, h, d)];
            dv += P[j * S + i] * dO[sh.at(b, j, h, d)];
          }
          g.dQ[sh.at(b, i, h, d)] = static_cast<float>(dq * scale);
          g.dK[sh.at(b, i, h, d)] = static_cast<float>(dk * scale);
          g.dV[sh.at(b, i, h, d)] = static_cast<float>(dv);
        }
    }
  return g;
}

} // namespace tl::testing
