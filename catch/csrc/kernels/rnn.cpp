// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Fused RNN cells for mlu: aten::_thnn_fused_lstm_cell / _thnn_fused_gru_cell and their backwards.
//
// ATen's LSTM/GRU (aten/src/ATen/native/RNN.cpp, LSTMCell/GRUCell) take the fused-cell path for cuda, xpu and
// PrivateUse1 inputs: the two GEMMs run as ordinary ops and the pointwise rest of the cell is one op,
// _thnn_fused_*_cell, which has kernels for CUDA only. On mlu the CPU fallback had nothing to call ("Could not run
// 'aten::_thnn_fused_lstm_cell' with arguments from the 'CPU' backend"), so nn.LSTM/GRU/LSTMCell/GRUCell failed.
// These kernels compute the cells with the math of CUDA's kernels (aten/src/ATen/native/cuda/RNN.cu) out of mlu
// ops; biases are added per side first ((x W_ih + b_ih) + (h W_hh + b_hh)), as the unfused CPU cell's linear layers
// do, so results match a CPU run.
//
// Workspaces (private to this file: only these backwards read them):
//   LSTM: (B, 4H) = [sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)]
//   GRU:  (B, 5H) = [r, z, n, hx, hn]  (r, z gates, new gate n, previous hidden, hidden part of the new gate)
#include "rnn.h"

#include <ATen/ATen.h>

#include <optional>
#include <tuple>

namespace torch_mlu {
namespace {

at::Tensor with_bias(const at::Tensor& gates, const std::optional<at::Tensor>& bias) {
  return bias.has_value() && bias->defined() ? gates + *bias : gates;
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell(const at::Tensor& input_gates,
                                                               const at::Tensor& hidden_gates, const at::Tensor& cx,
                                                               const std::optional<at::Tensor>& input_bias,
                                                               const std::optional<at::Tensor>& hidden_bias) {
  TORCH_CHECK(input_gates.dim() == 2 && input_gates.sizes() == hidden_gates.sizes() &&
                  input_gates.size(1) == 4 * cx.size(-1),
              "_thnn_fused_lstm_cell: gates must be (batch, 4 * hidden) and match cx; got ", input_gates.sizes(),
              ", ", hidden_gates.sizes(), " and cx ", cx.sizes());
  at::Tensor gates = with_bias(input_gates, input_bias) + with_bias(hidden_gates, hidden_bias);
  auto chunks = gates.chunk(4, 1);
  at::Tensor i = chunks[0].sigmoid();
  at::Tensor f = chunks[1].sigmoid();
  at::Tensor g = chunks[2].tanh();
  at::Tensor o = chunks[3].sigmoid();
  at::Tensor cy = f * cx + i * g;
  at::Tensor hy = o * cy.tanh();
  at::Tensor workspace = at::cat({i, f, g, o}, 1);
  return {hy, cy, workspace};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell_backward_impl(
    const std::optional<at::Tensor>& grad_hy, const std::optional<at::Tensor>& grad_cy, const at::Tensor& cx,
    const at::Tensor& cy, const at::Tensor& workspace, bool has_bias) {
  const bool has_ghy = grad_hy.has_value() && grad_hy->defined();
  const bool has_gcy = grad_cy.has_value() && grad_cy->defined();
  if (!has_ghy && !has_gcy) return {at::Tensor(), at::Tensor(), at::Tensor()};
  auto w = workspace.chunk(4, 1);
  const at::Tensor& i = w[0];
  const at::Tensor& f = w[1];
  const at::Tensor& g = w[2];
  const at::Tensor& o = w[3];
  at::Tensor tanh_cy = cy.tanh();
  at::Tensor gcx = has_gcy ? grad_cy->clone() : at::zeros_like(cy);
  at::Tensor go;
  if (has_ghy) {
    gcx = gcx + *grad_hy * o * (1 - tanh_cy * tanh_cy);
    go = *grad_hy * tanh_cy * o * (1 - o);
  } else {
    go = at::zeros_like(o);
  }
  at::Tensor gi = gcx * g * i * (1 - i);
  at::Tensor gf = gcx * cx * f * (1 - f);
  at::Tensor gg = gcx * i * (1 - g * g);
  at::Tensor grad_gates = at::cat({gi, gf, gg, go}, 1);
  at::Tensor grad_cx = gcx * f;
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0, /*keepdim=*/false) : at::Tensor();
  return {grad_gates, grad_cx, grad_bias};
}

std::tuple<at::Tensor, at::Tensor> fused_gru_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                                  const at::Tensor& hx, const std::optional<at::Tensor>& input_bias,
                                                  const std::optional<at::Tensor>& hidden_bias) {
  TORCH_CHECK(input_gates.dim() == 2 && input_gates.sizes() == hidden_gates.sizes() &&
                  input_gates.size(1) == 3 * hx.size(-1),
              "_thnn_fused_gru_cell: gates must be (batch, 3 * hidden) and match hx; got ", input_gates.sizes(),
              ", ", hidden_gates.sizes(), " and hx ", hx.sizes());
  auto ic = with_bias(input_gates, input_bias).chunk(3, 1);
  auto hc = with_bias(hidden_gates, hidden_bias).chunk(3, 1);
  at::Tensor r = (ic[0] + hc[0]).sigmoid();
  at::Tensor z = (ic[1] + hc[1]).sigmoid();
  const at::Tensor& hn = hc[2];
  at::Tensor n = (ic[2] + r * hn).tanh();
  at::Tensor hy = n + z * (hx - n);  // ATen's unfused GRU cell: (hx - n) * z + n
  at::Tensor workspace = at::cat({r, z, n, hx.expand_as(n), hn}, 1);
  return {hy, workspace};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  auto w = workspace.chunk(5, 1);
  const at::Tensor& r = w[0];
  const at::Tensor& z = w[1];
  const at::Tensor& n = w[2];
  const at::Tensor& hx = w[3];
  const at::Tensor& hn = w[4];
  at::Tensor gz = grad_hy * (hx - n) * (1 - z) * z;
  at::Tensor ghx = grad_hy * z;
  at::Tensor gn = grad_hy * (1 - z) * (1 - n * n);
  at::Tensor ghn = gn * r;
  at::Tensor gr = gn * hn * (1 - r) * r;
  at::Tensor grad_input_gates = at::cat({gr, gz, gn}, 1);
  at::Tensor grad_hidden_gates = at::cat({gr, gz, ghn}, 1);
  at::Tensor grad_input_bias = has_bias ? grad_input_gates.sum(0) : at::Tensor();
  at::Tensor grad_hidden_bias = has_bias ? grad_hidden_gates.sum(0) : at::Tensor();
  return {grad_input_gates, grad_hidden_gates, ghx, grad_input_bias, grad_hidden_bias};
}

}  // namespace torch_mlu
