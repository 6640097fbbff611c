# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""int8 Conv2d/Linear on mlu through torch.ao.quantization's eager flows: static PTQ (prepare -> calibrate ->
convert), dynamic quantization of Linear, and QAT, on the digits CNN of examples/train_digits.py (trained briefly
in float on mlu first). The bar: the int8 model keeps test accuracy within 1 point of float."""

from __future__ import annotations

import copy
import importlib.util
import warnings
from dataclasses import dataclass

import pytest
import torch
from mlu_helpers import REPO
from torch import nn
from torch.ao import quantization as tq
from torch.ao.quantization.observer import MinMaxObserver, PerChannelMinMaxObserver

import torch_mlu.quantization as mq

DEV = "mlu"

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore:.*quantiz.*:UserWarning")


def _example():
    spec = importlib.util.spec_from_file_location("train_digits_example", REPO / "examples" / "train_digits.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@dataclass
class Digits:
    model: nn.Module  # trained float model on mlu, eval mode
    x_train: torch.Tensor  # on mlu
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor  # on cpu
    float_acc: float


def _accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return (model(x).argmax(1).cpu() == y).float().mean().item()


def _train(model: nn.Module, x: torch.Tensor, y: torch.Tensor, epochs: int, lr: float, seed: int) -> list[float]:
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    losses = []
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=gen).to(DEV)
        for start in range(0, len(order), 64):
            idx = order[start:start + 64]
            opt.zero_grad(set_to_none=True)
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
            losses.append(loss.item())
    model.eval()
    return losses


@pytest.fixture(scope="module")
def digits() -> Digits:
    ex = _example()
    torch.manual_seed(0)
    x_train, y_train, x_test, y_test = ex.load_data(0)
    model = ex.DigitsCNN().to(DEV)
    x_dev, y_dev = x_train.to(DEV), y_train.to(DEV)
    _train(model, x_dev, y_dev, epochs=6, lr=2e-3, seed=1)
    xt = x_test.to(DEV)
    acc = _accuracy(model, xt, y_test)
    assert acc >= 0.9, f"float training did not converge (accuracy {acc})"
    return Digits(model, x_dev, y_dev, xt, y_test, acc)


def _calibrate(model: nn.Module, x: torch.Tensor, n: int = 512) -> None:
    with torch.no_grad():
        for start in range(0, n, 128):
            model(x[start:start + 128])


def _int8_layers(model: nn.Module) -> list[nn.Module]:
    return [m for m in model.modules() if isinstance(m, (mq.Conv2d, mq.Linear, mq.DynamicLinear))]


def _check_close_to_float(q: nn.Module, d: Digits, same_weights: bool = True) -> float:
    acc = _accuracy(q, d.x_test, d.y_test)
    print(f"float accuracy {d.float_acc:.4f}  int8 accuracy {acc:.4f}")
    assert acc >= d.float_acc - 0.01
    with torch.no_grad():
        ref, got = d.model(d.x_test), q(d.x_test)
    assert not torch.equal(ref, got)  # it really ran quantized
    if same_weights:  # PTQ keeps the float model's weights: predictions should mostly agree
        assert (ref.argmax(1) == got.argmax(1)).float().mean().item() >= 0.97
    return acc


def test_static_ptq_through_torch_ao_prepare_and_convert(digits):
    model = copy.deepcopy(digits.model)
    model.qconfig = mq.get_default_qconfig("histogram")
    prepared = tq.prepare(model, prepare_custom_config_dict=mq.get_prepare_custom_config_dict())
    observed = [m for m in prepared.modules() if isinstance(m, (mq.ObservedConv2d, mq.ObservedLinear))]
    assert len(observed) == 4
    _calibrate(prepared, digits.x_train)
    assert all(m.input_observer.min_val.device.type == "mlu" for m in observed)
    q = tq.convert(prepared, mapping=mq.get_static_quant_module_mappings())
    layers = _int8_layers(q)
    assert [type(m) for m in layers] == [mq.Conv2d, mq.Conv2d, mq.Linear, mq.Linear]
    assert all(m.weight.dtype == torch.int8 and m.weight.device.type == "mlu" for m in layers)
    assert all(m.weight_scale.numel() == m.weight.shape[0] for m in layers)  # per output channel
    _check_close_to_float(q, digits)


def test_static_ptq_wrappers_minmax_without_cpu_fallback(digits):
    torch.mlu.reset_fallback_report()
    torch.mlu.set_fallback_strict(True)
    try:
        prepared = mq.prepare(digits.model, mq.get_default_qconfig("minmax"))
        _calibrate(prepared, digits.x_train)
        q = mq.convert(prepared)
        _check_close_to_float(q, digits)
    finally:
        torch.mlu.set_fallback_strict(False)
    assert torch.mlu.fallback_report() == {}


def test_conv_input_qparams_come_from_the_calibration_data(digits):
    prepared = mq.prepare(digits.model, mq.get_default_qconfig("minmax"))
    _calibrate(prepared, digits.x_train, n=256)
    q = mq.convert(prepared)
    first = _int8_layers(q)[0]
    # digits pixels are in [0, 1]: MinMaxObserver over [0, max] gives scale max/255 with zero point 0
    ref = MinMaxObserver(dtype=torch.quint8)
    ref(digits.x_train[:256].cpu())
    scale, zero_point = ref.calculate_qparams()
    assert first.zero_point == int(zero_point) == 0
    assert first.scale == pytest.approx(float(scale), rel=1e-6)


def test_weights_are_quantized_like_aten_per_channel(digits):
    prepared = mq.prepare(digits.model, mq.get_default_qconfig("minmax"))
    _calibrate(prepared, digits.x_train, n=128)
    q = mq.convert(prepared)
    conv = _int8_layers(q)[1]
    w = digits.model.features[2].weight.detach().cpu()
    ob = PerChannelMinMaxObserver(dtype=torch.qint8, qscheme=torch.per_channel_symmetric, ch_axis=0)
    ob(w)
    scale, zp = ob.calculate_qparams()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.quantize_per_channel(w, scale.double(), zp, 0, torch.qint8).int_repr()
    assert torch.equal(conv.weight.cpu(), ref)
    torch.testing.assert_close(conv.weight_scale.cpu(), scale.float(), rtol=0, atol=0)


def test_state_dict_round_trip(digits):
    prepared = mq.prepare(digits.model, mq.get_default_qconfig("minmax"))
    _calibrate(prepared, digits.x_train, n=256)
    q = mq.convert(prepared)
    other = mq.prepare(digits.model, mq.get_default_qconfig("minmax"))
    _calibrate(other, digits.x_train[700:], n=128)  # different calibration -> different qparams
    q2 = mq.convert(other)
    assert [m.scale for m in _int8_layers(q2)] != [m.scale for m in _int8_layers(q)]
    q2.load_state_dict(q.state_dict())
    assert [m.scale for m in _int8_layers(q2)] == [m.scale for m in _int8_layers(q)]
    with torch.no_grad():
        assert torch.equal(q(digits.x_test), q2(digits.x_test))


def test_dynamic_quantization_of_linear_through_torch_ao(digits):
    model = copy.deepcopy(digits.model)
    q = tq.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8, mapping=mq.get_dynamic_quant_module_mappings())
    layers = _int8_layers(q)
    assert [type(m) for m in layers] == [mq.DynamicLinear, mq.DynamicLinear]
    assert isinstance(q.features[0], nn.Conv2d)  # convs stay float in the dynamic flow
    _check_close_to_float(q, digits)


def test_dynamic_linear_matches_an_explicit_reference():
    torch.manual_seed(5)
    mlp = nn.Sequential(nn.Linear(48, 96), nn.GELU(), nn.Linear(96, 16)).to(DEV)
    x = (torch.randn(200, 48) * 2 + 0.5).to(DEV)
    q = mq.quantize_dynamic(mlp)  # per-channel weights
    with torch.no_grad():
        ref, got = mlp(x), q(x)
    assert (got - ref).abs().max().item() <= 0.02 * ref.abs().max().item()
    # first layer by hand: MinMaxObserver qparams for the input, ATen's quantizer, int64 GEMM, float rescale
    lin, qlin = mlp[0], q[0]
    ob = MinMaxObserver(dtype=torch.quint8)
    ob(x.cpu())
    scale, zp = ob.calculate_qparams()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qx = torch.quantize_per_tensor(x.cpu(), float(scale), int(zp), torch.quint8).int_repr()
    acc = (qx.to(torch.int64) - int(zp)) @ qlin.weight.cpu().to(torch.int64).T
    expect = acc.float() * (torch.tensor(float(scale)) * qlin.weight_scale.cpu()) + lin.bias.detach().cpu()
    with torch.no_grad():
        torch.testing.assert_close(qlin(x).cpu(), expect, rtol=1e-5, atol=1e-5)


def test_qat_on_mlu_then_convert(digits):
    model = copy.deepcopy(digits.model).train()
    model.qconfig = mq.get_default_qat_qconfig()
    torch.mlu.reset_fallback_report()
    torch.mlu.set_fallback_strict(True)
    try:
        qat = tq.prepare_qat(model, mapping=mq.get_qat_module_mappings())
        qat_layers = [m for m in qat.modules() if isinstance(m, (mq.QATConv2d, mq.QATLinear))]
        assert len(qat_layers) == 4
        before = qat_layers[0].weight.detach().clone()
        losses = _train(qat, digits.x_train, digits.y_train, epochs=1, lr=3e-4, seed=7)
        assert all(m.weight_fake_quant.scale.device.type == "mlu" for m in qat_layers)
        assert all(m.input_fake_quant.scale.numel() == 1 for m in qat_layers)
        assert not torch.equal(before, qat_layers[0].weight.detach())
        assert all(torch.isfinite(torch.tensor(losses)))
        q = tq.convert(qat.eval(), mapping=mq.get_static_quant_module_mappings())
        assert [type(m) for m in _int8_layers(q)] == [mq.Conv2d, mq.Conv2d, mq.Linear, mq.Linear]
        _check_close_to_float(q, digits, same_weights=False)  # QAT fine-tuned the weights
    finally:
        torch.mlu.set_fallback_strict(False)
    assert torch.mlu.fallback_report() == {}


def test_bad_inputs_and_misuse_are_clear_errors(digits):
    prepared = mq.prepare(digits.model, mq.get_default_qconfig("minmax"))
    with pytest.raises(RuntimeError, match="has seen no data; run calibration"):
        mq.convert(prepared)
    _calibrate(prepared, digits.x_train, n=128)
    q = mq.convert(prepared)
    with pytest.raises(RuntimeError, match="expected a float32 tensor"):
        q(digits.x_test.double())
    # torch's default eager prepare observes outputs; swapping those modules straight to int8 is refused
    plain = copy.deepcopy(digits.model)
    plain.qconfig = mq.get_default_qconfig("minmax")
    plain = tq.prepare(plain)
    _calibrate(plain, digits.x_train, n=128)
    with pytest.raises(TypeError, match="observes module outputs"):
        tq.convert(plain, mapping={nn.Linear: mq.Linear, nn.Conv2d: mq.Conv2d})
    with pytest.raises(ValueError, match="int8 only"):
        tq.quantize_dynamic(copy.deepcopy(digits.model), {nn.Linear}, dtype=torch.float16,
                            mapping=mq.get_dynamic_quant_module_mappings())
    affine_w = tq.QConfig(activation=mq.get_default_qconfig("minmax").activation,
                          weight=MinMaxObserver.with_args(dtype=torch.qint8, qscheme=torch.per_tensor_affine))
    bad = mq.prepare(digits.model, affine_w)
    _calibrate(bad, digits.x_train, n=128)
    with pytest.raises(ValueError, match="weights must be symmetric"):
        mq.convert(bad)


def test_int8_model_traces_under_torch_compile(digits):
    prepared = mq.prepare(digits.model, mq.get_default_qconfig("minmax"))
    _calibrate(prepared, digits.x_train, n=128)
    q = mq.convert(prepared)
    x = digits.x_test[:64]
    with torch.no_grad():
        ref = q(x)
        out = torch.compile(q, backend="aot_eager", fullgraph=True)(x)  # FakeTensor tracing needs the fake kernels
    assert torch.equal(out, ref)


def test_qat_with_torch_own_fused_qat_qconfig(digits):
    # PyTorch's x86 QAT qconfig: FusedMovingAvgObsFakeQuantize (per-channel weights, 7-bit activations)
    model = copy.deepcopy(digits.model).train()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    torch.mlu.reset_fallback_report()
    torch.mlu.set_fallback_strict(True)
    try:
        qat = tq.prepare_qat(model, mapping=mq.get_qat_module_mappings())
        opt = torch.optim.SGD(qat.parameters(), lr=1e-3)
        for start in range(0, 192, 64):
            opt.zero_grad()
            nn.functional.cross_entropy(qat(digits.x_train[start:start + 64]),
                                        digits.y_train[start:start + 64]).backward()
            opt.step()
        q = tq.convert(qat.eval(), mapping=mq.get_static_quant_module_mappings())
        acc = _accuracy(q, digits.x_test, digits.y_test)
    finally:
        torch.mlu.set_fallback_strict(False)
    assert torch.mlu.fallback_report() == {}
    first = _int8_layers(q)[0]
    assert first.weight_scale.numel() == first.weight.shape[0] and first.zero_point <= 127
    assert acc >= digits.float_acc - 0.02  # three small SGD steps barely move the weights


def test_wrappers_touch_only_conv_and_linear(digits):
    qat = mq.prepare_qat(copy.deepcopy(digits.model).train())
    assert [type(m) for m in qat.modules() if isinstance(m, (nn.Conv2d, nn.Linear))] == \
        [mq.QATConv2d, mq.QATConv2d, mq.QATLinear, mq.QATLinear]
    assert isinstance(qat.features[1], nn.ReLU) and not hasattr(qat.features[1], "activation_post_process")
    assert isinstance(digits.model.features[0], nn.Conv2d) and type(digits.model.features[0]) is nn.Conv2d
    prepared = mq.prepare(digits.model)
    assert type(prepared.head[1]) is mq.ObservedLinear and isinstance(prepared.head[1].input_observer,
                                                                         tq.HistogramObserver)
    assert not hasattr(prepared.features[4], "activation_post_process")  # MaxPool2d: no observer
