"""Records the PyTorch profiler traces in this folder (CPU only) and PyTorch's own
per-op figures for them, which tests/torch_traces.rs compares grove against.

    python3 testdata/torch/record.py testdata/torch

Writes train_stack.json.gz (with_stack=True, record_shapes=True, a schedule of
wait 1, warmup 1, active 3, on the main thread while two worker threads run ops) and
train_stack.key_averages.json: for each op name, PyTorch's key_averages() count, self
CPU time and CPU time total in microseconds.
"""
import gzip
import json
import os
import sys
import threading

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule


def train_cnn(model, opt, x, y):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()


def train_mlp(model, opt, x, y):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()


def worker(stop, n):
    a = torch.randn(64, 64)
    while not stop.is_set():
        for _ in range(n):
            a = torch.tanh(a @ a.T / 64)


def main(out):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    cnn = nn.Sequential(
        nn.Conv2d(3, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 15 * 15, 10)
    )
    mlp = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 32))
    opt_c = torch.optim.SGD(cnn.parameters(), lr=0.01)
    opt_m = torch.optim.Adam(mlp.parameters(), lr=0.001)
    xc, yc = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
    xm, ym = torch.randn(64, 128), torch.randn(64, 32)
    stop = threading.Event()
    threads = [threading.Thread(target=worker, args=(stop, 3)) for _ in range(2)]
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=1, warmup=1, active=3),
        record_shapes=True,
        with_stack=True,
    ) as prof:
        for t in threads:
            t.start()
        for _ in range(5):
            train_cnn(cnn, opt_c, xc, yc)
            train_mlp(mlp, opt_m, xm, ym)
            prof.step()
        stop.set()
        for t in threads:
            t.join()
    trace = os.path.join(out, "train_stack.json")
    prof.export_chrome_trace(trace)
    with open(trace, "rb") as f, gzip.open(trace + ".gz", "wb", compresslevel=9) as g:
        g.write(f.read())
    os.remove(trace)
    ops = {}
    for e in prof.key_averages():
        ops[e.key] = {
            "count": e.count,
            "self_cpu_us": e.self_cpu_time_total,
            "cpu_total_us": e.cpu_time_total,
        }
    with open(os.path.join(out, "train_stack.key_averages.json"), "w") as f:
        json.dump({"torch": torch.__version__, "ops": ops}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
