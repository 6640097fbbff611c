// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "device_ops.h"

#include <iterator>

namespace torch_mlu {
namespace {

const char* const kDeviceOps[] = {
    // memory, views, metadata
    "as_strided", "view", "_reshape_alias", "unfold", "view_as_real", "view_as_complex", "resize_", "set_",
    "_local_scalar_dense", "fill_", "zero_", "clone", "contiguous", "_unsafe_view", "masked_fill_", "where",
    "index", "index_put_", "_index_put_impl_", "index_select", "index_add_", "index_fill_", "index_copy_",
    "gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce", "masked_select",
    "masked_scatter_", "nonzero", "cat", "stack", "flip", "roll", "tril", "triu", "repeat", "repeat_interleave",
    "constant_pad_nd", "take", "put_", "_unique2", "sort", "topk", "argsort", "kthvalue", "cumsum", "cumprod",
    "arange", "linspace", "logspace", "eye", "_to_copy", "equal", "median", "nanmedian", "_cummax_helper",
    "_cummin_helper", "isin", "complex", "polar", "reflection_pad1d", "reflection_pad2d", "replication_pad1d",
    "replication_pad2d", "_cdist_forward", "_cdist_backward", "_pdist_forward", "renorm", "diag_embed",
    "unique_consecutive", "_unique", "unique_dim", "bincount",
    // elementwise arithmetic and math
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "remainder", "fmod", "pow", "pow_", "neg", "neg_",
    "abs", "abs_", "sign", "sgn", "reciprocal", "sqrt", "rsqrt", "exp", "exp2", "expm1", "log", "log2", "log10",
    "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "tanh_", "asinh",
    "acosh", "atanh", "floor", "ceil", "round", "trunc", "frac", "clamp", "clamp_", "clamp_min", "clamp_max",
    "clamp_min_", "clamp_max_", "minimum", "maximum", "fmin", "fmax", "lerp", "lerp_", "addcmul", "addcmul_",
    "addcdiv", "addcdiv_", "erf", "erfc", "erfinv", "lgamma", "digamma", "sigmoid", "sigmoid_", "logit",
    "hypot", "copysign", "nan_to_num", "xlogy", "logaddexp", "logaddexp2", "heaviside", "square",
    "floor_divide", "frexp", "i0", "ldexp", "nextafter", "sinc", "deg2rad", "rad2deg", "exp2", "float_power",
    "true_divide", "mvlgamma", "polygamma", "special_entr", "rsub", "linalg_cross",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "isnan", "isinf", "isfinite", "signbit",
    "_conj_physical", "conj_physical", "_neg_view",
    // reductions
    "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "aminmax", "std", "var",
    "std_mean", "var_mean", "norm", "linalg_vector_norm", "all", "any", "logsumexp", "count_nonzero",
    "_softmax", "_log_softmax", "_softmax_backward_data", "_log_softmax_backward_data",
    // linear algebra
    "mm", "addmm", "bmm", "baddbmm", "addmv", "mv", "dot", "vdot", "addbmm", "addr", "_addmm_activation",
    // convolution and pooling
    "max_pool2d_with_indices", "max_pool2d_with_indices_backward", "avg_pool2d", "avg_pool2d_backward",
    "adaptive_avg_pool2d", "_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward", "adaptive_max_pool2d",
    "adaptive_max_pool2d_backward", "max_pool3d_with_indices", "avg_pool3d", "_adaptive_avg_pool3d",
    "upsample_nearest2d", "upsample_nearest2d_backward", "upsample_bilinear2d", "upsample_bilinear2d_backward",
    "im2col", "col2im",
    // activations
    "relu", "relu_", "threshold", "threshold_backward", "gelu", "gelu_backward", "silu", "silu_",
    "silu_backward", "elu", "elu_backward", "leaky_relu", "leaky_relu_backward", "hardtanh", "hardtanh_",
    "hardtanh_backward", "hardsigmoid", "hardsigmoid_backward", "hardswish", "hardswish_backward", "softplus",
    "softplus_backward", "mish", "mish_backward", "sigmoid_backward", "tanh_backward", "logit_backward",
    "_prelu_kernel", "_prelu_kernel_backward", "glu", "glu_backward", "log_sigmoid_forward",
    "log_sigmoid_backward",
    // losses
    "nll_loss_forward", "nll_loss_backward", "nll_loss2d_forward", "nll_loss2d_backward", "mse_loss",
    "mse_loss_backward", "smooth_l1_loss", "smooth_l1_loss_backward", "huber_loss", "huber_loss_backward",
    "binary_cross_entropy", "binary_cross_entropy_backward", "binary_cross_entropy_with_logits",
    // embedding and normalization
    "embedding_dense_backward", "_embedding_bag", "_embedding_bag_backward", "native_layer_norm",
    "native_layer_norm_backward", "native_batch_norm", "native_batch_norm_backward", "_native_batch_norm_legit",
    "_native_batch_norm_legit_no_training", "native_group_norm", "native_group_norm_backward",
    "_batch_norm_with_update", "batch_norm_backward", "_fused_rms_norm", "_fused_rms_norm_backward",
    // dropout and random
    "native_dropout", "native_dropout_backward", "bernoulli", "bernoulli_", "uniform_", "normal_", "normal",
    "random_", "exponential_", "geometric_", "log_normal_", "cauchy_", "multinomial", "randperm",
    // optimizers (torch.optim foreach paths) and AMP
    "_foreach_add", "_foreach_add_", "_foreach_sub", "_foreach_sub_", "_foreach_mul", "_foreach_mul_",
    "_foreach_div", "_foreach_div_", "_foreach_addcmul", "_foreach_addcmul_", "_foreach_addcdiv",
    "_foreach_addcdiv_", "_foreach_sqrt", "_foreach_sqrt_", "_foreach_lerp", "_foreach_lerp_", "_foreach_neg",
    "_foreach_neg_", "_foreach_norm", "_foreach_maximum", "_foreach_maximum_", "_foreach_copy_", "_foreach_zero_",
    "_foreach_pow", "_foreach_reciprocal_", "_foreach_sign", "_foreach_abs", "_foreach_exp", "_foreach_clamp_min_",
    "_foreach_clamp_max_", "_fused_sgd_", "_fused_adam_", "_fused_adamw_", "_amp_foreach_non_finite_check_and_unscale_",
    "_amp_update_scale_",
    // more reductions, pooling/upsampling and losses
    "nansum", "trace", "angle", "isposinf", "isneginf", "mode", "_logcumsumexp", "softshrink", "hardshrink",
    "softshrink_backward", "hardshrink_backward", "upsample_nearest1d", "upsample_nearest1d_backward",
    "upsample_nearest3d", "upsample_nearest3d_backward", "_upsample_nearest_exact1d",
    "_upsample_nearest_exact1d_backward", "_upsample_nearest_exact2d", "_upsample_nearest_exact2d_backward",
    "_upsample_nearest_exact3d", "_upsample_nearest_exact3d_backward", "upsample_linear1d",
    "upsample_linear1d_backward", "upsample_bicubic2d", "upsample_bicubic2d_backward", "upsample_trilinear3d",
    "upsample_trilinear3d_backward", "_upsample_bilinear2d_aa", "_upsample_bilinear2d_aa_backward",
    "grid_sampler_2d", "grid_sampler_2d_backward", "grid_sampler_3d", "grid_sampler_3d_backward", "max_unpool2d",
    "max_unpool3d", "embedding_renorm_", "multi_margin_loss", "multi_margin_loss_backward",
    "multilabel_margin_loss_forward", "multilabel_margin_loss_backward", "rrelu_with_noise",
    "fractional_max_pool2d", "fractional_max_pool2d_backward", "fractional_max_pool3d",
    "fractional_max_pool3d_backward", "channel_shuffle", "reflection_pad3d", "replication_pad3d",
    "reflection_pad1d_backward", "reflection_pad2d_backward", "reflection_pad3d_backward",
    "replication_pad1d_backward", "replication_pad2d_backward", "replication_pad3d_backward", "adaptive_max_pool3d",
    "adaptive_max_pool3d_backward", "avg_pool3d_backward", "max_pool3d_with_indices_backward",
    "_adaptive_avg_pool3d_backward", "_ctc_loss", "_ctc_loss_backward", "nonzero_static",
    "_embedding_bag_forward_only", "igamma", "igammac", "index_reduce",
    // linear algebra (LAPACK on the host side of the emulated device) and FFT
    "_linalg_svd", "linalg_qr", "linalg_cholesky_ex", "_linalg_eigh", "linalg_inv_ex", "_linalg_solve_ex",
    "linalg_lu_factor_ex", "linalg_lu_solve", "linalg_lu", "_linalg_det", "_linalg_slogdet", "lu_unpack",
    "linalg_ldl_factor_ex", "linalg_ldl_solve", "cholesky", "cholesky_inverse", "_cholesky_solve_helper",
    "triangular_solve", "linalg_solve_triangular", "geqrf", "ormqr", "linalg_householder_product", "linalg_lstsq",
    "linalg_eig", "_linalg_eigvals", "linalg_matrix_exp", "_fft_r2c", "_fft_c2c", "_fft_c2r",
    // fused attention: CPU's flash kernels (chosen by mlu_fused_sdp_choice, redirects.h)
    "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention_for_cpu_backward",
};

}  // namespace

const std::set<std::string>& device_op_base_names() {
  static const std::set<std::string> names(std::begin(kDeviceOps), std::end(kDeviceOps));
  return names;
}

}  // namespace torch_mlu
