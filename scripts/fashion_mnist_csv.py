#!/usr/bin/env python3
"""Converts Fashion-MNIST from its IDX files to two CSV files that knn-cli and k-sweep read.

Reads train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and
t10k-labels-idx1-ubyte.gz and writes

  fashion-mnist-train.csv   60000 rows
  fashion-mnist-test.csv    10000 rows

each with the header pixel1,...,pixel784,label: one row per 28x28 image, pixels row by row as
integers 0..255, then the class as its integer 0..9.

Plain Python 3.8+ standard library; no numpy.

Usage: scripts/fashion_mnist_csv.py [--idx DIR] [--out DIR]
"""

import argparse
import gzip
import os
import struct
import sys
import zlib

DEFAULT_IDX_DIR = "/usr/share/datasets/fashion-mnist"
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT_DIR = os.path.join(REPO_ROOT, "data", "fashion-mnist")

IMAGE_MAGIC = 0x00000803  # unsigned bytes, 3 dimensions
LABEL_MAGIC = 0x00000801  # unsigned bytes, 1 dimension
ROWS = COLS = 28
CLASSES = 10

SPLITS = (
    # (output name, image file, label file, expected count)
    ("fashion-mnist-train.csv", "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", 60000),
    ("fashion-mnist-test.csv", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", 10000),
)


class IdxError(Exception):
    pass


def read_gzip(path):
    try:
        with gzip.open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise IdxError(f"{path}: no such file") from None
    except (OSError, EOFError, zlib.error) as e:
        raise IdxError(f"{path}: cannot decompress: {e}") from None


def parse_idx(path, magic, ndims):
    """Returns (dims, payload) of an IDX file of unsigned bytes, after checking its magic number
    and that the payload is exactly the size the dimensions promise."""
    data = read_gzip(path)
    header_size = 4 + 4 * ndims
    if len(data) < header_size:
        raise IdxError(f"{path}: {len(data)} bytes, too short for an IDX header")
    (found,) = struct.unpack_from(">I", data, 0)
    if found != magic:
        raise IdxError(f"{path}: magic number 0x{found:08x}, expected 0x{magic:08x} "
                       f"(unsigned bytes, {ndims} dimension{'s' if ndims > 1 else ''})")
    dims = struct.unpack_from(">" + "I" * ndims, data, 4)
    size = 1
    for d in dims:
        size *= d
    if len(data) - header_size != size:
        raise IdxError(f"{path}: header promises {'x'.join(map(str, dims))} = {size} bytes of "
                       f"data, file has {len(data) - header_size}")
    return dims, memoryview(data)[header_size:]


def load_split(idx_dir, image_file, label_file, expected):
    image_path = os.path.join(idx_dir, image_file)
    label_path = os.path.join(idx_dir, label_file)
    (n_images, rows, cols), pixels = parse_idx(image_path, IMAGE_MAGIC, 3)
    (n_labels,), labels = parse_idx(label_path, LABEL_MAGIC, 1)
    if (rows, cols) != (ROWS, COLS):
        raise IdxError(f"{image_path}: images are {rows}x{cols}, expected {ROWS}x{COLS}")
    if n_images != expected:
        raise IdxError(f"{image_path}: {n_images} images, expected {expected}")
    if n_labels != n_images:
        raise IdxError(f"{label_path}: {n_labels} labels for {n_images} images")
    bad = [i for i, y in enumerate(labels) if y >= CLASSES]
    if bad:
        raise IdxError(f"{label_path}: label {labels[bad[0]]} at item {bad[0]}, "
                       f"expected 0..{CLASSES - 1}")
    return pixels, labels


def write_csv(path, pixels, labels):
    width = ROWS * COLS
    text = [str(v) for v in range(256)]
    cell = text.__getitem__
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="ascii", newline="\n") as f:
            f.write(",".join(f"pixel{j}" for j in range(1, width + 1)) + ",label\n")
            lines = []
            for i, label in enumerate(labels):
                row = pixels[i * width:(i + 1) * width]
                lines.append(",".join(map(cell, row)))
                lines.append("," + text[label] + "\n")
                if len(lines) >= 2000:
                    f.write("".join(lines))
                    lines.clear()
            f.write("".join(lines))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def main(argv):
    parser = argparse.ArgumentParser(
        description="Convert Fashion-MNIST IDX files to fashion-mnist-train.csv and "
                    "fashion-mnist-test.csv (header pixel1..pixel784,label).")
    parser.add_argument("--idx", default=DEFAULT_IDX_DIR, metavar="DIR",
                        help="folder with the four *-ubyte.gz files (default: %(default)s, "
                             "from Debian's dataset-fashion-mnist package)")
    parser.add_argument("--out", default=DEFAULT_OUT_DIR, metavar="DIR",
                        help="output folder, created if missing (default: data/fashion-mnist/ "
                             "of the repository)")
    args = parser.parse_args(argv)
    try:
        # Read and check every input before writing anything.
        splits = [(name, load_split(args.idx, images, labels, expected))
                  for name, images, labels, expected in SPLITS]
        os.makedirs(args.out, exist_ok=True)
        for name, (pixels, labels) in splits:
            path = os.path.join(args.out, name)
            write_csv(path, pixels, labels)
            print(f"{path}: {len(labels)} rows")
    except IdxError as e:
        print(f"fashion_mnist_csv.py: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"fashion_mnist_csv.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
