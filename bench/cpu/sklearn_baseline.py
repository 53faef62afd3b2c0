#!/usr/bin/python3
"""Baselines for bench_knn_cpu on the same Fashion-MNIST CSVs: pandas.read_csv for loading, and
scikit-learn's brute-force KNeighborsClassifier for search + prediction on the same min-max
scaled float32 rows. Run with Debian's python3 (python3-sklearn, python3-pandas) and
OPENBLAS_CORETYPE=SkylakeX, as BENCHMARKS.md describes."""
import resource
import sys
import time

import numpy as np
import pandas as pd
from sklearn.neighbors import KNeighborsClassifier
from threadpoolctl import threadpool_info


def main():
    train_csv, test_csv = sys.argv[1], sys.argv[2]
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    t = time.perf_counter()
    train = pd.read_csv(train_csv)
    t_load = time.perf_counter() - t
    test = pd.read_csv(test_csv)
    xtr = train.iloc[:, :-1].to_numpy(np.float32)
    ytr = train.iloc[:, -1].to_numpy()
    xte = test.iloc[:, :-1].to_numpy(np.float32)
    yte = test.iloc[:, -1].to_numpy()
    lo, hi = xtr.min(0).astype(np.float64), xtr.max(0).astype(np.float64)
    rng = np.where(hi > lo, hi - lo, 1.0)
    xtr_s = ((xtr - lo) / rng).astype(np.float32)
    xte_s = ((xte - lo) / rng).astype(np.float32)
    blas = [(i.get("internal_api"), i.get("architecture"), i.get("num_threads")) for i in threadpool_info()]
    clf = KNeighborsClassifier(n_neighbors=k, algorithm="brute", n_jobs=threads).fit(xtr_s, ytr)
    t = time.perf_counter()
    pred = clf.predict(xte_s)
    t_pred = time.perf_counter() - t
    acc = float((pred == yte).mean())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f"pandas.read_csv {train_csv}: {t_load:.3f} s")
    print(f"sklearn brute k={k} n_jobs={threads}: search + predict {t_pred:.3f} s, accuracy {acc:.4f}, "
          f"peak resident {peak:.2f} GB, BLAS {blas}")


if __name__ == "__main__":
    main()
