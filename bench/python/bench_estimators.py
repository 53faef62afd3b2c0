#!/usr/bin/env python3
"""The Python package against scikit-learn (and PyTorch on a GPU), in one process on the same
numpy arrays: Fashion-MNIST (60,000 x 784 training rows, 10,000 queries, raw pixel values as
float32, scaling='none'), fit + predict at k = 5, and the k-sweep against validation_curve on the
same folds. Every pair runs in this one run with the same thread count (libknn's n_jobs,
scikit-learn's n_jobs and its BLAS/OpenMP pools through threadpoolctl). Prints a markdown table
with the ratios.

scikit-learn's speed depends on numpy's BLAS: Debian's numpy takes the slow reference BLAS unless
libopenblas0-pthread is installed, and OpenBLAS takes this machine's EPYC for an old core unless
OPENBLAS_CORETYPE=SkylakeX is set (our benchmark method: an optimised BLAS for every baseline); the first line printed names the BLAS.

Usage (from the repository root, after the build):
  OPENBLAS_CORETYPE=SkylakeX PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_estimators.py [--threads 2]
  PYTHONPATH=build-gpu/python python3 bench/python/bench_estimators.py --device cuda

--device cuda times libknn on the GPU against PyTorch (torch.cdist + topk + a vote on the GPU,
the arrays copied from numpy inside the timing, as libknn's are) when torch imports; the CPU rows
against scikit-learn run as well unless --skip-sklearn.
"""

import argparse
import os
import platform
import sys
import time

import numpy as np

import libknn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import fashion_mnist_csv as fm  # noqa: E402

DEFAULT_DATA = fm.DEFAULT_IDX_DIR  # Debian's dataset-fashion-mnist


def fashion_mnist(folder):
    """(train rows, train labels, test rows, test labels): pixels as float32, labels as int64,
    read and checked by scripts/fashion_mnist_csv.py."""
    out = []
    for _, images, labels, count in fm.SPLITS:
        pixels, classes = fm.load_split(folder, images, labels, count)
        out.append(np.frombuffer(pixels, dtype=np.uint8).reshape(count, -1).astype(np.float32))
        out.append(np.frombuffer(classes, dtype=np.uint8).astype(np.int64))
    return tuple(out)


def best_of(repeat, fn):
    """(seconds of the fastest call, its result)."""
    best, result = None, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best, result


class Table:
    def __init__(self):
        self.rows = []

    def add(self, work, ours, baseline_name, theirs, note=""):
        self.rows.append((work, ours, baseline_name, theirs, note))

    def print(self, title):
        print(f"\n{title}\n")
        print("| work | libknn | baseline | ratio libknn / baseline | note |")
        print("|---|---|---|---|---|")
        for work, ours, name, theirs, note in self.rows:
            ratio = f"**{ours / theirs:.3g}x**" if theirs else "-"
            print(f"| {work} | {ours:.3f} s | {name}: {theirs:.3f} s | {ratio} | {note} |")


def fit_predict(est, xtr, ytr, xte, repeat):
    est.fit(xtr[:100], ytr[:100]).predict(xte[:10])  # first-call costs (thread pools, the GPU's context) untimed
    t_fit, model = best_of(repeat, lambda: est.fit(xtr, ytr))
    t_pred, pred = best_of(repeat, lambda: model.predict(xte))
    return t_fit, t_pred, pred


def cpu_against_sklearn(args, data, table):
    from sklearn.model_selection import StratifiedKFold, validation_curve
    from sklearn.neighbors import KNeighborsClassifier
    from threadpoolctl import threadpool_limits

    xtr, ytr, xte, yte = data
    ours = libknn.KNeighborsClassifier(args.k, device="cpu", n_jobs=args.threads)
    theirs = KNeighborsClassifier(args.k, algorithm="brute", n_jobs=args.threads)
    with threadpool_limits(limits=args.threads):
        lf, lp, lpred = fit_predict(ours, xtr, ytr, xte, args.repeat)
        sf, sp, spred = fit_predict(theirs, xtr, ytr, xte, args.repeat)
    same = int((lpred == spred).sum())
    table.add(f"fit, {len(xtr):,} x {xtr.shape[1]}", lf, "scikit-learn brute", sf)
    table.add(f"predict, {len(xte):,} queries, k = {args.k}", lp, "scikit-learn brute", sp,
              f"accuracy {np.mean(lpred == yte):.4f} vs {np.mean(spred == yte):.4f}; {same:,} of {len(xte):,} predictions equal")
    table.add("fit + predict", lf + lp, "scikit-learn brute", sf + sp)

    if args.skip_sweep:
        return
    # The k-sweep on the first rows of the training set, the same 5 stratified folds for both.
    n = args.sweep_rows
    x, y = xtr[:n], ytr[:n]
    ks = list(range(1, args.sweep_k + 1))
    splits = list(StratifiedKFold(5, shuffle=True, random_state=0).split(x, y))
    with threadpool_limits(limits=args.threads):
        t_sweep, sweep = best_of(1, lambda: libknn.k_sweep(x, y, k=ks, cv=splits, device="cpu", n_jobs=args.threads))
        t_curve, (_, scores) = best_of(1, lambda: validation_curve(
            KNeighborsClassifier(algorithm="brute", n_jobs=args.threads), x, y, param_name="n_neighbors",
            param_range=ks, cv=splits, scoring="accuracy", n_jobs=1))
    gap = float(np.max(np.abs(sweep["accuracy_mean"].to_numpy() - scores.mean(axis=1))))
    table.add(f"k-sweep, k = 1..{args.sweep_k}, 5 folds of {n:,} rows", t_sweep, "validation_curve", t_curve,
              f"largest difference of mean accuracy over k: {gap:.2g}")


def gpu_against_torch(args, data, table):
    try:
        import torch
    except ImportError:
        print("torch does not import: no PyTorch rows")
        return
    xtr, ytr, xte, yte = data
    dev = torch.device("cuda")

    def torch_fit():
        return torch.from_numpy(xtr).to(dev), torch.from_numpy(ytr).to(dev)

    def torch_predict(fitted):
        train, labels = fitted
        out = []
        for s in range(0, len(xte), args.chunk):
            q = torch.from_numpy(xte[s:s + args.chunk]).to(dev)
            idx = torch.topk(torch.cdist(q, train), args.k, dim=1, largest=False).indices
            votes = torch.zeros(q.shape[0], int(ytr.max()) + 1, device=dev).scatter_add_(
                1, labels[idx], torch.ones(idx.shape, device=dev))
            out.append(votes.argmax(1))
        result = torch.cat(out).cpu().numpy()
        torch.cuda.synchronize()
        return result

    torch.backends.cuda.matmul.allow_tf32 = False
    ours = libknn.KNeighborsClassifier(args.k, device="cuda")
    lf, lp, lpred = fit_predict(ours, xtr, ytr, xte, args.repeat)
    torch_predict(torch_fit())  # the CUDA context and kernels loaded before the timing
    tf, fitted = best_of(args.repeat, lambda: (torch_fit(), torch.cuda.synchronize())[0])
    tp, tpred = best_of(args.repeat, lambda: torch_predict(fitted))
    same = int((lpred == tpred).sum())
    table.add(f"GPU fit, {len(xtr):,} x {xtr.shape[1]} (upload)", lf, f"PyTorch {torch.__version__} to(cuda)", tf)
    table.add(f"GPU predict, {len(xte):,} queries, k = {args.k}", lp, "PyTorch cdist + topk (fp32)", tp,
              f"accuracy {np.mean(lpred == yte):.4f} vs {np.mean(tpred == yte):.4f}; {same:,} predictions equal")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=DEFAULT_DATA, help="folder of the four Fashion-MNIST IDX .gz files")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--repeat", type=int, default=3, help="calls per timing of fit and predict; the fastest counts")
    p.add_argument("--sweep-rows", type=int, default=10000)
    p.add_argument("--sweep-k", type=int, default=50)
    p.add_argument("--chunk", type=int, default=2500, help="PyTorch: queries per cdist")
    p.add_argument("--train-rows", type=int, default=60000, help="the first rows of the training set (a quick run)")
    p.add_argument("--queries", type=int, default=10000, help="the first rows of the test set")
    p.add_argument("--skip-sklearn", action="store_true")
    p.add_argument("--skip-sweep", action="store_true", help="leave out the k-sweep against validation_curve (minutes)")
    args = p.parse_args()

    xtr, ytr, xte, yte = fashion_mnist(args.data)
    data = xtr[:args.train_rows], ytr[:args.train_rows], xte[:args.queries], yte[:args.queries]
    import sklearn
    from threadpoolctl import threadpool_info

    blas = ", ".join(f"{i.get('internal_api')} {i.get('architecture', '')}".strip() for i in threadpool_info()
                     if i.get("user_api") == "blas") or "none found"
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}, {platform.node()}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores; libknn {libknn.__version__} ({libknn.__file__}), scikit-learn {sklearn.__version__}, "
          f"numpy {np.__version__} (BLAS: {blas}), {args.threads} threads")
    table = Table()
    if not args.skip_sklearn:
        cpu_against_sklearn(args, data, table)
    if args.device == "cuda":
        gpu_against_torch(args, data, table)
    table.print("Fashion-MNIST from numpy arrays, one process (seconds; ratios under 1: libknn faster)")


if __name__ == "__main__":
    main()
