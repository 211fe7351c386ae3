//===- Recurrent.cpp - One direction of an RNN, GRU or LSTM ---------------===//
//
// The recurrence of ONNX's recurrent ops for sequences too long to unroll:
// each step is one or two products (h R^T, and for GRU without
// linear_before_reset (r * h) R_h^T) and one pass over the gates. The input
// projection X W^T + Wb is a Gemm before this kernel, or with params.input
// the kernel's own, a chunk of steps at a time. A batch row's state
// depends on that row alone, so threads split the batch into blocks of rows
// and each runs its block through every step: no barrier between steps.
//
//===----------------------------------------------------------------------===//

#include "RecurrentSupport.h"

#include "heterps/Runtime/AlignedBuffer.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

namespace heterps::rt::cpu {

using namespace recurrent;

/// How much of the input's projection a block keeps at a time. Blocks run
/// side by side keep it within their core's L2, beside R, while the chunk's
/// gemm still has rows enough to run fast. A lone block (a batch too small
/// to split) projects long stretches on every thread instead: at batch 1 a
/// chunk of 128 steps took 1.6 ms of 1000 steps' 7.7 on two threads, twice
/// the sequence's whole projection in one gemm.
constexpr int64_t kProjectedChunkBytes = 256 << 10;
constexpr int64_t kLoneProjectedChunkBytes = 8 << 20;

struct Recurrent::Impl {
  RecurrentParams p;
  int64_t gates = 0; // G = gatesPerUnit(cell) * hidden
  /// GRU without linear_before_reset: the step multiplies h by R's z and r
  /// rows (`multiplied` = 2H of G), then r * h by R_h.
  bool split = false;
  int64_t multiplied = 0;
  /// Rows [first, first + rows) of the batch, run by one thread: blocks of
  /// up to kSmallBatch rows multiply by R's rows packed into panels
  /// (fromHPanels; candidatePanels: R_h), larger ones by their own Gemms on
  /// their own oneDNN stream.
  struct RowBlock {
    int64_t first = 0, rows = 0;
    std::unique_ptr<Context> ctx;
    std::optional<Gemm> fromH, candidate;
    /// With the input projected here: X W^T + Wb of `chunk` steps' rows at
    /// a time (`projectLast`: the sequence's shorter final chunk), from the
    /// rows of x gathered into `x`, into `projected`, which stays in cache.
    int64_t chunk = 0;
    std::optional<Gemm> project, projectLast;
    /// 64-byte aligned: the gemm took about 1.15x as long on a vector's
    /// 16-byte aligned buffers.
    std::optional<AlignedBuffer> x, projected;
    float *xRows() const { return reinterpret_cast<float *>(x->data()); }
    float *projectedRows() const {
      return reinterpret_cast<float *>(projected->data());
    }
  };
  std::deque<RowBlock> blocks; // Gemm does not move
  bool anySmall = false;
  /// Wb when the run passes none.
  std::vector<float> zeros;
  std::vector<float> h, c, hs, rh, hc;
  PanelProduct fromHPanels, candidatePanels;

  Impl(Context &ctx, const RecurrentParams &params) : p(params) {
    checkRecurrentParams(p);
    const int64_t hidden = p.hidden, batch = p.batch;
    gates = gatesPerUnit(p.cell) * hidden;
    split = p.cell == RecurrentCell::GRU && !p.linearBeforeReset;
    multiplied = split ? 2 * hidden : gates;
    // Transcendentals per gate element, plus the step's gemm(s).
    bool parallel = worthThreads(
        double(batch) * double(gates) *
        (kTranscendentalElementWork + 2.0 * double(hidden + p.input)));
    int64_t count =
        parallel ? std::min<int64_t>(omp_get_max_threads(), batch) : 1;
    // Blocks' Gemms run on their block's thread; a lone block's (a batch
    // too small to split) may use the others, as the projection's does.
    SerialScope serial(count > 1);
    if (p.input > 0)
      zeros.assign(gates, 0.0f);
    for (int64_t k = 0; k < count; ++k) {
      RowBlock &block = blocks.emplace_back();
      block.first = batch * k / count;
      block.rows = batch * (k + 1) / count - block.first;
      // oneDNN streams are not for concurrent use: one per block.
      block.ctx = count > 1 ? std::make_unique<Context>(1) : nullptr;
      Context &on = block.ctx ? *block.ctx : ctx;
      Activation none;
      if (p.input > 0) {
        int64_t budget =
            count > 1 ? kProjectedChunkBytes : kLoneProjectedChunkBytes;
        block.chunk = std::clamp<int64_t>(
            budget / (block.rows * gates * int64_t(sizeof(float))), 1, p.steps);
        const Shape bias{gates};
        block.project.emplace(on, DType::F32, block.chunk * block.rows, gates,
                              p.input, false, true, 1.0f, 1.0f, &bias, none,
                              false);
        if (int64_t rest = p.steps % block.chunk)
          block.projectLast.emplace(on, DType::F32, rest * block.rows, gates,
                                    p.input, false, true, 1.0f, 1.0f, &bias,
                                    none, false);
        block.x.emplace(block.chunk * block.rows * p.input * sizeof(float));
        block.projected.emplace(block.chunk * block.rows * gates *
                                sizeof(float));
      }
      if (block.rows <= kSmallBatch) {
        anySmall = true;
        continue;
      }
      block.fromH.emplace(on, DType::F32, block.rows, multiplied, hidden, false,
                          true, 1.0f, 0.0f, nullptr, none, false);
      if (split)
        block.candidate.emplace(on, DType::F32, block.rows, hidden, hidden,
                                false, true, 1.0f, 0.0f, nullptr, none, false);
    }
    if (split) {
      rh.resize(batch * hidden);
      hc.resize(batch * hidden);
    }
    h.resize(batch * hidden);
    if (p.cell == RecurrentCell::LSTM)
      c.resize(batch * hidden);
    hs.resize(batch * multiplied);
  }

  /// y = x R[first row, + cols)^T for the block's rows of x [B, H]: rows of
  /// R from `first` (`panels`: the same rows packed).
  void product(const RowBlock &block, const float *x, const float *r,
               int64_t first, const PanelProduct &panels,
               std::optional<Gemm> &gemm, float *y) {
    if (gemm)
      gemm->run(x, r + first * p.hidden, nullptr, y);
    else
      panels.run(x, block.rows, y);
  }

  void run(const float *projected, const float *r, const float *rb,
           const int64_t *lengths, const float *h0, const float *c0,
           const float *peep, float *y, float *hLast, float *cLast,
           const float *w, const float *wb) {
    const int64_t hidden = p.hidden, batch = p.batch,
                  stateSize = batch * hidden;
    const bool lstm = p.cell == RecurrentCell::LSTM;
    if (!h0 || (lstm && !c0))
      throw Error("Recurrent: the initial state was not passed");
    if ((p.hasRecurrentBias && !rb) || (p.hasLengths && !lengths) ||
        (p.hasPeepholes && !peep) || (p.input > 0 && !w))
      throw Error("Recurrent: a declared operand was not passed");
    checkLengths("Recurrent", p, lengths);
    std::memcpy(h.data(), h0, stateSize * sizeof(float));
    if (lstm)
      std::memcpy(c.data(), c0, stateSize * sizeof(float));
    // R packed for the small blocks' products: the rows h R^T multiplies,
    // then (split) R_h. R may change between runs, so once per run.
    if (anySmall) {
      fromHPanels.pack(r, multiplied, hidden);
      if (split)
        candidatePanels.pack(r + multiplied * hidden, hidden, hidden);
    }
    const int64_t count = static_cast<int64_t>(blocks.size());
    // Each block on its own thread; an exception leaves its thread as the
    // first error, raised once all are done.
    std::exception_ptr failure;
#pragma omp parallel for schedule(static, 1) if (count > 1)
    for (int64_t k = 0; k < count; ++k) {
      SerialScope serial(count > 1);
      try {
        runBlock(blocks[k], projected, w, wb, r, rb, lengths, peep, y);
      } catch (...) {
#pragma omp critical(heterps_recurrent_failure)
        if (!failure)
          failure = std::current_exception();
      }
    }
    if (failure)
      std::rethrow_exception(failure);
    std::memcpy(hLast, h.data(), stateSize * sizeof(float));
    if (lstm && cLast)
      std::memcpy(cLast, c.data(), stateSize * sizeof(float));
    // Rows of length 0 end with a zero state, as onnxruntime gives them.
    if (lengths)
      for (int64_t b = 0; b < batch; ++b)
        if (lengths[b] == 0) {
          std::fill_n(hLast + b * hidden, hidden, 0.0f);
          if (lstm && cLast)
            std::fill_n(cLast + b * hidden, hidden, 0.0f);
        }
  }

  /// The block's rows of X W^T + Wb for `count` steps from step s.
  void projectChunk(RowBlock &block, const float *x, const float *w,
                    const float *wb, int64_t s, int64_t count) {
    const int64_t input = p.input, rows = block.rows;
    for (int64_t k = 0; k < count; ++k) {
      const int64_t t = p.reverse ? p.steps - 1 - (s + k) : s + k;
      std::copy_n(x + (t * p.batch + block.first) * input, rows * input,
                  block.xRows() + k * rows * input);
    }
    Gemm &gemm = count == block.chunk ? *block.project : *block.projectLast;
    gemm.run(block.xRows(), w, wb ? wb : zeros.data(), block.projectedRows());
  }

  /// Every step of the block's rows; `projected` is X when the kernel
  /// projects the input (by W and Wb).
  void runBlock(RowBlock &block, const float *projected, const float *w,
                const float *wb, const float *r, const float *rb,
                const int64_t *lengths, const float *peep, float *y) {
    const int64_t hidden = p.hidden, batch = p.batch;
    const int64_t begin = block.first, end = block.first + block.rows;
    const bool projecting = p.input > 0;
    for (int64_t s = 0; s < p.steps; ++s) {
      const int64_t t = p.reverse ? p.steps - 1 - s : s;
      // Step t's projection: X W^T + Wb's rows, for all rows of the batch
      // or (projecting) for the block's.
      const float *xt = projected + t * batch * gates;
      if (projecting) {
        const int64_t inChunk = s % block.chunk;
        if (inChunk == 0)
          projectChunk(block, projected, w, wb, s,
                       std::min(block.chunk, p.steps - s));
        xt = block.projectedRows() + (inChunk * block.rows - begin) * gates;
      }
      float *yt = y + t * batch * hidden;
      product(block, h.data() + begin * hidden, r, 0, fromHPanels, block.fromH,
              hs.data() + begin * multiplied);
      if (split)
        resetTimesH(block, xt, r, rb);
      for (int64_t b = begin; b < end; ++b) {
        float *yb = yt + b * hidden;
        if (lengths && t >= lengths[b]) {
          std::fill_n(yb, hidden, 0.0f);
          continue;
        }
        const float *xb = xt + b * gates;
        float *gb = hs.data() + b * multiplied;
        switch (p.cell) {
        case RecurrentCell::RNN:
          rowRnn(xb, gb, rb, b, yb);
          break;
        case RecurrentCell::LSTM:
          rowLstm(xb, gb, rb, peep, b, yb);
          break;
        case RecurrentCell::GRU:
          rowGru(xb, gb, rb, b, yb);
          break;
        }
      }
    }
  }

  // Each row works in place in its row of hs (h R^T, G or 2H wide), one
  // contiguous pass per gate so that the loops vectorise. The gates'
  // activations are most of a step's time outside the products: each row
  // function has an AVX-512 copy.

  HPS_AVX512_CLONE void rowRnn(const float *x, float *g, const float *rb,
                               int64_t b, float *y) {
    const int64_t hidden = p.hidden;
    for (int64_t j = 0; j < hidden; ++j)
      g[j] += x[j] + (rb ? rb[j] : 0.0f);
    activate(p.activations[0], g, hidden, p, true);
    std::copy_n(g, hidden, h.data() + b * hidden);
    std::copy_n(g, hidden, y);
  }

  /// Gates i, o, f, c (each H wide) of the row's g.
  HPS_AVX512_CLONE void rowLstm(const float *x, float *g, const float *rb,
                                const float *peep, int64_t b, float *y) {
    const int64_t hidden = p.hidden;
    float *in = g, *out = g + hidden, *forget = g + 2 * hidden,
          *cand = g + 3 * hidden, *cb = c.data() + b * hidden,
          *hb = h.data() + b * hidden;
    for (int64_t j = 0; j < gates; ++j)
      g[j] += x[j] + (rb ? rb[j] : 0.0f);
    if (peep)
      for (int64_t j = 0; j < hidden; ++j) {
        in[j] += peep[j] * cb[j];
        forget[j] += peep[2 * hidden + j] * cb[j];
      }
    activate(p.activations[0], in, hidden, p, true);
    activate(p.activations[0], forget, hidden, p, true);
    activate(p.activations[1], cand, hidden, p, true);
    for (int64_t j = 0; j < hidden; ++j)
      cb[j] = forget[j] * cb[j] + in[j] * cand[j];
    if (peep)
      for (int64_t j = 0; j < hidden; ++j)
        out[j] += peep[hidden + j] * cb[j];
    activate(p.activations[0], out, hidden, p, true);
    // h(c), unclipped, in the input gate's place (no longer needed).
    std::copy_n(cb, hidden, in);
    activate(p.activations[2], in, hidden, p, false);
    for (int64_t j = 0; j < hidden; ++j)
      hb[j] = out[j] * in[j];
    std::copy_n(hb, hidden, y);
  }

  /// GRU without linear_before_reset: r = f(x_r + (h R_r^T + Rb_r)) into
  /// hs's r columns, r * h into rh, then the candidate's product (r * h)
  /// R_h^T into hc; every row of the block, whether its sequence goes on or
  /// not.
  HPS_AVX512_CLONE void resetTimesH(RowBlock &block, const float *xt,
                                    const float *r, const float *rb) {
    const int64_t hidden = p.hidden;
    for (int64_t b = block.first; b < block.first + block.rows; ++b) {
      float *reset = hs.data() + b * multiplied + hidden;
      const float *x = xt + b * gates + hidden;
      for (int64_t j = 0; j < hidden; ++j)
        reset[j] += x[j] + (rb ? rb[hidden + j] : 0.0f);
      activate(p.activations[0], reset, hidden, p, true);
      for (int64_t j = 0; j < hidden; ++j)
        rh[b * hidden + j] = reset[j] * h[b * hidden + j];
    }
    product(block, rh.data() + block.first * hidden, r, multiplied,
            candidatePanels, block.candidate, hc.data() + block.first * hidden);
  }

  /// Gates z, r, h (each H wide); with linear_before_reset g holds all
  /// three h R^T columns, else z and r (r already activated by
  /// resetTimesH) and hc holds (r * h) R_h^T.
  HPS_AVX512_CLONE void rowGru(const float *x, float *g, const float *rb,
                               int64_t b, float *y) {
    const int64_t hidden = p.hidden;
    float *update = g, *reset = g + hidden, *hb = h.data() + b * hidden;
    for (int64_t j = 0; j < hidden; ++j)
      update[j] += x[j] + (rb ? rb[j] : 0.0f);
    activate(p.activations[0], update, hidden, p, true);
    // The candidate goes where r was (r is used up by then).
    float *cand = reset;
    if (split) {
      const float *hcb = hc.data() + b * hidden;
      for (int64_t j = 0; j < hidden; ++j)
        cand[j] = x[2 * hidden + j] + hcb[j] + (rb ? rb[2 * hidden + j] : 0.0f);
    } else {
      float *fromH = g + 2 * hidden;
      for (int64_t j = 0; j < hidden; ++j)
        reset[j] += x[hidden + j] + (rb ? rb[hidden + j] : 0.0f);
      activate(p.activations[0], reset, hidden, p, true);
      for (int64_t j = 0; j < hidden; ++j)
        cand[j] = x[2 * hidden + j] +
                  reset[j] * (fromH[j] + (rb ? rb[2 * hidden + j] : 0.0f));
    }
    activate(p.activations[1], cand, hidden, p, true);
    for (int64_t j = 0; j < hidden; ++j)
      hb[j] = cand[j] + update[j] * (hb[j] - cand[j]);
    std::copy_n(hb, hidden, y);
  }
};

Recurrent::Recurrent(Context &ctx, const RecurrentParams &params)
    : impl(std::make_unique<Impl>(ctx, params)) {}

Recurrent::~Recurrent() = default;

void Recurrent::run(const void *projected, const void *r,
                    const void *recurrentBias, const void *lengths,
                    const void *h0, const void *c0, const void *peepholes,
                    void *y, void *hLast, void *cLast, const void *inputWeights,
                    const void *inputBias) {
  impl->run(
      static_cast<const float *>(projected), static_cast<const float *>(r),
      static_cast<const float *>(recurrentBias),
      static_cast<const int64_t *>(lengths), static_cast<const float *>(h0),
      static_cast<const float *>(c0), static_cast<const float *>(peepholes),
      static_cast<float *>(y), static_cast<float *>(hLast),
      static_cast<float *>(cLast), static_cast<const float *>(inputWeights),
      static_cast<const float *>(inputBias));
}

} // namespace heterps::rt::cpu
