# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Inference with side streams, events and memory accounting (uses the torch.cuda stream and memory APIs).

Splits a batch in two halves, runs each half of a fixed MLP on its own stream with events for ordering and
timing, and reports the allocator's numbers around a large temporary buffer. Writes the outputs' checksums and the
memory figures (bytes) to --out (JSON). Without CUDA it runs the same math on the CPU and reports no memory figures.
"""

import argparse
import json

import torch


def mlp(x, w1, w2):
    return torch.relu(x @ w1) @ w2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    gen = torch.Generator().manual_seed(3)
    x = torch.randn(256, 64, generator=gen)
    w1 = torch.randn(64, 128, generator=gen) / 8
    w2 = torch.randn(128, 16, generator=gen) / 8
    result = {}

    if torch.cuda.is_available():
        torch.cuda.set_device(0)
        dev = torch.device("cuda", torch.cuda.current_device())
        x, w1, w2 = x.cuda(), w1.cuda(dev), w2.to(dev)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()

        big = torch.empty(1024, 1024, device="cuda")  # 4 MiB temporary
        big.fill_(1.0)
        result["allocated_delta"] = torch.cuda.memory_allocated() - base
        result["big_nbytes"] = big.numel() * big.element_size()
        del big
        result["allocated_after_free"] = torch.cuda.memory_allocated() - base
        result["reserved_before_empty_cache"] = torch.cuda.memory_reserved()
        torch.cuda.empty_cache()
        result["reserved_after_empty_cache"] = torch.cuda.memory_reserved()
        result["peak_delta"] = torch.cuda.max_memory_allocated() - base
        free, total = torch.cuda.mem_get_info()
        result["mem_info_ok"] = 0 < free <= total == torch.cuda.get_device_properties(0).total_memory

        s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
        start, done1, done2 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        start.record()
        s1.wait_stream(torch.cuda.current_stream())
        s2.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s1):
            y1 = mlp(x[:128], w1, w2)
            done1.record(s1)
        with torch.cuda.stream(s2):
            y2 = mlp(x[128:], w1, w2)
            done2.record(s2)
        torch.cuda.current_stream().wait_event(done1)
        torch.cuda.current_stream().wait_event(done2)
        y = torch.cat([y1, y2])
        torch.cuda.synchronize()
        result["elapsed_ms_nonnegative"] = start.elapsed_time(done2) >= 0
        result["streams_distinct"] = s1 != s2 and s1 != torch.cuda.default_stream()
    else:
        y = torch.cat([mlp(x[:128], w1, w2), mlp(x[128:], w1, w2)])

    result["device"] = str(y.device)
    result["y_sum"] = float(y.sum())
    result["y_abs_sum"] = float(y.abs().sum())
    result["y_first_row"] = y[0].cpu().tolist()
    with open(args.out, "w") as f:
        json.dump(result, f)
    print(result)


if __name__ == "__main__":
    main()
