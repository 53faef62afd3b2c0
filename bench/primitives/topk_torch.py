#!/usr/bin/env python3
"""torch.topk(largest=False) on the shapes of bench_primitives' radix select (1,024 x 2^20
float32 rows, k = 10 / 100 / 1,000), and torch.kthvalue on the shapes of its "radix kth" rows,
timed like it: CUDA events, warm-up, median.

Usage: topk_torch.py [--rows R] [--cols C] [--reps N] [--kth-only]
"""
import argparse
import statistics
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--rows", type=int, default=1024)
    p.add_argument("--cols", type=int, default=1 << 20)
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--kth-only", action="store_true", help="only the torch.kthvalue rows")
    args = p.parse_args()
    try:
        import torch
    except ImportError:
        print("topk_torch: PyTorch is not installed; skipped")
        return 0
    if not torch.cuda.is_available():
        print("topk_torch: no CUDA device; skipped")
        return 0
    dev = torch.device("cuda")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    x = torch.rand(args.rows, args.cols, device=dev, dtype=torch.float32)
    # Same memcpy figure as bench_primitives: a device copy of 2^28 floats, read + write.
    a = torch.empty(1 << 28, device=dev, dtype=torch.float32)
    b = torch.empty_like(a)
    copy_ms = time_ms(lambda: b.copy_(a), args.reps)
    memcpy_gbps = 2 * a.numel() * 4 / (copy_ms * 1e-3) / 1e9
    del a, b
    print(f"{'operation':34s} {'ms':>10s} {'GB/s':>10s} {'% memcpy':>9s}")
    for k in (10, 100, 1000):
        if k > args.cols or args.kth_only:
            continue
        ms = time_ms(lambda: torch.topk(x, k, dim=1, largest=False, sorted=True), args.reps)
        gbps = x.numel() * 4 / (ms * 1e-3) / 1e9
        print(f"{f'torch.topk {args.rows}x{args.cols} k={k}':34s} {ms:10.3f} {gbps:10.1f} {100 * gbps / memcpy_gbps:8.0f}%")
    # torch.kthvalue on the shapes of bench_primitives' "radix kth" rows.
    del x
    for rows, cols in ((1024, 1 << 16), (16, 1 << 22)):
        y = torch.rand(rows, cols, device=dev, dtype=torch.float32)
        for k in (10, 1000, cols // 2):
            ms = time_ms(lambda: torch.kthvalue(y, k, dim=1), args.reps)
            gbps = y.numel() * 4 / (ms * 1e-3) / 1e9
            print(f"{f'torch.kthvalue {rows}x{cols} k={k}':34s} {ms:10.3f} {gbps:10.1f} {100 * gbps / memcpy_gbps:8.0f}%")
        del y
    return 0


def time_ms(fn, reps):
    import torch
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


if __name__ == "__main__":
    sys.exit(main())
