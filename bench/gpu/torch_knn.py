#!/usr/bin/env python3
"""PyTorch baselines beside bench_knn_gpu, in the same command on the same GPU: exact kNN as
norms + matrix product + topk (fp32, then TF32), on Fashion-MNIST (IDX .gz files in the folder
given, min-max scaled on the training rows), on the synthetic 1,000,000 x 128 set, and with k
above 2,048 on 100,000 x 64.

Usage: torch_knn.py [FASHION_MNIST_FOLDER] [--large-k]   (--large-k: only the large-k rows)"""
import gzip
import os
import sys

import numpy as np
import torch


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def median_ms(fn, reps):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    return sorted(times)[len(times) // 2]


def topk_search(train, queries, k, chunk, to_host=False):
    """Indices of each query's k smallest approximate squared distances; with to_host, the
    distances and indices both copied to host memory, as libknn returns them."""
    norms = (train * train).sum(1)
    out, dist = [], []
    for s in range(0, queries.shape[0], chunk):
        q = queries[s:s + chunk]
        d2 = (q * q).sum(1, keepdim=True) + norms[None, :] - 2.0 * (q @ train.T)
        top = torch.topk(d2, k, dim=1, largest=False, sorted=True)
        out.append(top.indices)
        dist.append(top.values)
    if to_host:
        return torch.cat(dist).cpu(), torch.cat(out).cpu()
    return torch.cat(out)


def main():
    dev = torch.device("cuda")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    folder = args[0] if args else ".carry/fm"
    print("\n| PyTorch baseline | time (ms) | accuracy |\n|---|---|---|")
    g = torch.Generator(device=dev).manual_seed(0)
    if "--large-k" not in sys.argv:
        fashion_mnist(dev, folder)
        synthetic(dev, g)
    large_k(dev, g)


def fashion_mnist(dev, folder):
    if not os.path.exists(os.path.join(folder, "train-images-idx3-ubyte.gz")):
        return
    xtr = read_idx(os.path.join(folder, "train-images-idx3-ubyte.gz")).reshape(60000, -1).astype(np.float32)
    ytr = read_idx(os.path.join(folder, "train-labels-idx1-ubyte.gz")).astype(np.int64)
    xte = read_idx(os.path.join(folder, "t10k-images-idx3-ubyte.gz")).reshape(10000, -1).astype(np.float32)
    yte = read_idx(os.path.join(folder, "t10k-labels-idx1-ubyte.gz")).astype(np.int64)
    lo, hi = xtr.min(0).astype(np.float64), xtr.max(0).astype(np.float64)
    rng = np.where(hi > lo, hi - lo, 1.0)
    tr = torch.from_numpy(((xtr - lo) / rng).astype(np.float32)).to(dev)
    te = torch.from_numpy(((xte - lo) / rng).astype(np.float32)).to(dev)
    ytr_d = torch.from_numpy(ytr).to(dev)
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        ms = median_ms(lambda: topk_search(tr, te, 5, 10000), 7)
        idx = topk_search(tr, te, 5, 10000)
        votes = torch.zeros(10000, 10, device=dev).scatter_add_(1, ytr_d[idx], torch.ones(idx.shape, device=dev))
        acc = (votes.argmax(1).cpu().numpy() == yte).mean()
        print(f"| Fashion-MNIST k = 5, {'tf32' if tf32 else 'fp32'} (data on the GPU) | {ms:.2f} | {acc:.4f} |")
    torch.backends.cuda.matmul.allow_tf32 = False


def synthetic(dev, g):
    tr = torch.rand(1000000, 128, device=dev, generator=g)
    te = torch.rand(10000, 128, device=dev, generator=g)
    for k in (10, 1000):
        for tf32 in (False, True):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            ms = median_ms(lambda: topk_search(tr, te, k, 1024), 3)
            print(f"| synthetic 1,000,000 x 128, k = {k}, {'tf32' if tf32 else 'fp32'}, 1024-query chunks | {ms:.1f} | |")
    torch.backends.cuda.matmul.allow_tf32 = False


def large_k(dev, g):
    """k above libknn's two-pass limit, the shapes of bench_knn_gpu's large-k table."""
    tr = torch.rand(100000, 64, device=dev, generator=g)
    for nq, k in ((2000, 4096), (200, 4096), (200, 16384)):
        te = torch.rand(nq, 64, device=dev, generator=g)
        for tf32 in (False, True):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            ms = median_ms(lambda: topk_search(tr, te, k, 1024), 3)
            print(f"| synthetic 100,000 x 64, {nq} queries, k = {k}, {'tf32' if tf32 else 'fp32'} | {ms:.1f} | |")
            ms = median_ms(lambda: topk_search(tr, te, k, 1024, to_host=True), 3)
            print(f"| same, distances and indices copied to the host | {ms:.1f} | |")
    torch.backends.cuda.matmul.allow_tf32 = False


if __name__ == "__main__":
    main()
