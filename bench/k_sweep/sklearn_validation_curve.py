#!/usr/bin/python3
"""scikit-learn's way to sweep k, on the folds libknn used (k-sweep --save-folds): one fit and
predict per k and fold, as validation_curve does, with min-max scaling fitted per fold exactly as
libknn scales. Times a few k values and reports the mean cost per k, so the full sweep's time can
be estimated. Usage: sklearn_validation_curve.py DATA.csv FOLDS.csv K [K ...]"""
import sys
import time

import numpy as np
import pandas as pd
from sklearn.neighbors import KNeighborsClassifier


def main():
    data = pd.read_csv(sys.argv[1])
    folds = pd.read_csv(sys.argv[2])["fold"].to_numpy()
    ks = [int(k) for k in sys.argv[3:]]
    x = data.iloc[:, :-1].to_numpy(np.float32)
    y = data.iloc[:, -1].to_numpy()
    per_k = []
    for k in ks:
        t = time.perf_counter()
        acc = []
        for f in range(folds.max() + 1):
            tr, te = folds != f, folds == f
            lo, hi = x[tr].min(0).astype(np.float64), x[tr].max(0).astype(np.float64)
            rng = np.where(hi > lo, hi - lo, 1.0)
            xtr = ((x[tr] - lo) / rng).astype(np.float32)
            xte = ((x[te] - lo) / rng).astype(np.float32)
            clf = KNeighborsClassifier(n_neighbors=k, algorithm="brute", n_jobs=-1).fit(xtr, y[tr])
            acc.append((clf.predict(xte) == y[te]).mean())
        dt = time.perf_counter() - t
        per_k.append(dt)
        print(f"sklearn k={k}: {dt:.1f} s for {folds.max() + 1} folds, accuracy mean {np.mean(acc):.4f}")
    print(f"sklearn mean per k: {np.mean(per_k):.1f} s")


if __name__ == "__main__":
    main()
