#!/usr/bin/python3
"""Builds the small real data sets in data/ from the copies shipped with scikit-learn.

The inputs are the raw files of Debian's python3-sklearn package (sklearn/datasets/data and
sklearn/datasets/descr); scikit-learn itself is never imported, so any Python 3 runs this.

Outputs, each a comma-separated file with a header row and the label as the last column:

  iris.csv           150 x 4,  label: setosa / versicolor / virginica
  wine.csv           178 x 13, label: class_0 / class_1 / class_2
  breast_cancer.csv  569 x 30, label: malignant / benign
  diabetes.csv       442 x 10, label column `target` (numeric, regression)

Cell values are copied as text, byte for byte: nothing is parsed and printed again, so the
numbers in data/ are exactly the numbers in the source files.

Usage: /usr/bin/python3 scripts/make_datasets.py [--sklearn-dir DIR] [--out DIR]
"""

import argparse
import gzip
import os
import re
import sys

DEFAULT_SKLEARN_DIR = "/usr/lib/python3/dist-packages/sklearn/datasets"
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class SourceError(Exception):
    pass


def snake(text):
    """'Malic acid' -> 'malic_acid', 'OD280/OD315 of diluted wines' -> 'od280_od315_of_diluted_wines';
    remarks in parentheses are dropped: 'radius (mean of distances ...)' -> 'radius'."""
    text = re.sub(r"\(.*\)", " ", text)
    text = re.sub(r"[^0-9A-Za-z]+", "_", text.strip().lower())
    return text.strip("_")


def attribute_items(rst_path):
    """The '- item' lines of the ':Attribute Information:' field of a descr/*.rst file, up to
    the '- class:' item, the next ':Field:' or the next unindented line."""
    with open(rst_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = None
    for i, line in enumerate(lines):
        if line.strip() == ":Attribute Information:":
            start = i + 1
            break
    if start is None:
        raise SourceError(f"{rst_path}: no ':Attribute Information:' field")
    items = []
    for line in lines[start:]:
        stripped = line.strip()
        if line and not line[0].isspace():
            break
        if stripped.startswith(":"):
            break
        if stripped.startswith("- "):
            item = stripped[2:].strip()
            if item.lower().startswith("class:"):
                break
            items.append(item)
    if not items:
        raise SourceError(f"{rst_path}: ':Attribute Information:' lists no attributes")
    return items


def iris_names(descr):
    # "sepal length in cm" -> "sepal_length_cm" (scikit-learn calls it "sepal length (cm)").
    return [snake(item.replace(" in cm", " cm")) for item in attribute_items(descr)]


def wine_names(descr):
    return [snake(item) for item in attribute_items(descr)]


def breast_cancer_names(descr):
    # Ten measurements, each as mean, standard error and worst value, in that order of blocks
    # ("field 0 is Mean Radius, field 10 is Radius SE, field 20 is Worst Radius"). The names
    # follow scikit-learn's: "mean radius", "radius error", "worst radius".
    base = [snake(item) for item in attribute_items(descr)]
    return ([f"mean_{b}" for b in base] + [f"{b}_error" for b in base] +
            [f"worst_{b}" for b in base])


def diabetes_names(descr):
    # "age     age in years", "s1      tc, total serum cholesterol": the name is the first word.
    return [item.split()[0] for item in attribute_items(descr)]


def read_lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="ascii", newline="") as f:
        text = f.read()
    if "\r" in text:
        raise SourceError(f"{path}: carriage return in file (expected plain \\n line ends)")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, 1):
        if line.strip() == "":
            raise SourceError(f"{path}:{number}: empty line")
    return lines


def check_number(path, number, column, cell):
    try:
        value = float(cell)
    except ValueError:
        raise SourceError(f"{path}:{number}:{column}: not a number: {cell!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise SourceError(f"{path}:{number}:{column}: not a finite number: {cell!r}")


def convert_counted(path, names):
    """scikit-learn's classification CSVs: a first line 'ROWS,FEATURES,CLASS0,CLASS1,...', then
    rows of FEATURES numbers and a class index. Returns (header, rows) with class names."""
    lines = read_lines(path)
    head = lines[0].split(",")
    try:
        n_rows, n_features = int(head[0]), int(head[1])
    except (IndexError, ValueError):
        raise SourceError(f"{path}:1: expected 'rows,features,class names...', got {lines[0]!r}")
    classes = head[2:]
    if not classes:
        raise SourceError(f"{path}:1: no class names")
    if len(names) != n_features:
        raise SourceError(f"{path}: {n_features} features, but the description names "
                          f"{len(names)}: {names}")
    if len(set(names)) != len(names):
        raise SourceError(f"{path}: repeated feature names {names}")
    if len(lines) - 1 != n_rows:
        raise SourceError(f"{path}: first line says {n_rows} rows, file has {len(lines) - 1}")
    rows = []
    for number, line in enumerate(lines[1:], 2):
        cells = line.split(",")
        if len(cells) != n_features + 1:
            raise SourceError(f"{path}:{number}: {len(cells)} fields, expected {n_features + 1}")
        for column, cell in enumerate(cells[:-1], 1):
            check_number(path, number, column, cell)
        label = cells[-1]
        if not label.isdigit() or int(label) >= len(classes):
            raise SourceError(f"{path}:{number}:{n_features + 1}: class index {label!r} "
                              f"not in 0..{len(classes) - 1}")
        rows.append(cells[:-1] + [classes[int(label)]])
    return names + ["label"], rows


def convert_diabetes(features_path, target_path, names):
    features = read_lines(features_path)
    targets = read_lines(target_path)
    if len(features) != len(targets):
        raise SourceError(f"{features_path} has {len(features)} lines, {target_path} has "
                          f"{len(targets)}")
    if "target" in names:
        raise SourceError(f"feature names {names} clash with the label column 'target'")
    rows = []
    for number, (line, target) in enumerate(zip(features, targets), 1):
        cells = line.split(" ")
        if len(cells) != len(names):
            raise SourceError(f"{features_path}:{number}: {len(cells)} fields, expected "
                              f"{len(names)} (single spaces between them)")
        for column, cell in enumerate(cells, 1):
            check_number(features_path, number, column, cell)
        target = target.strip()
        check_number(target_path, number, 1, target)
        rows.append(cells + [target])
    return names + ["target"], rows


def write_csv(path, header, rows):
    for row in [header] + rows:
        for cell in row:
            if "," in cell or '"' in cell or "\n" in cell:
                raise SourceError(f"{path}: cell {cell!r} would need CSV quoting")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="ascii", newline="\n") as f:
        f.write(",".join(header) + "\n")
        for row in rows:
            f.write(",".join(row) + "\n")
    os.replace(tmp, path)
    print(f"{path}: {len(rows)} rows x {len(header) - 1} features")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sklearn-dir", default=DEFAULT_SKLEARN_DIR,
                        help="scikit-learn's datasets folder, holding data/ and descr/ "
                             "(default: %(default)s)")
    parser.add_argument("--out", default=os.path.join(REPO_ROOT, "data"),
                        help="output folder (default: the repository's data/)")
    args = parser.parse_args(argv)
    data = os.path.join(args.sklearn_dir, "data")
    descr = os.path.join(args.sklearn_dir, "descr")
    os.makedirs(args.out, exist_ok=True)
    try:
        jobs = [
            ("iris.csv", lambda: convert_counted(
                os.path.join(data, "iris.csv"), iris_names(os.path.join(descr, "iris.rst")))),
            ("wine.csv", lambda: convert_counted(
                os.path.join(data, "wine_data.csv"),
                wine_names(os.path.join(descr, "wine_data.rst")))),
            ("breast_cancer.csv", lambda: convert_counted(
                os.path.join(data, "breast_cancer.csv"),
                breast_cancer_names(os.path.join(descr, "breast_cancer.rst")))),
            ("diabetes.csv", lambda: convert_diabetes(
                os.path.join(data, "diabetes_data_raw.csv.gz"),
                os.path.join(data, "diabetes_target.csv.gz"),
                diabetes_names(os.path.join(descr, "diabetes.rst")))),
        ]
        for name, job in jobs:
            header, rows = job()
            write_csv(os.path.join(args.out, name), header, rows)
    except (SourceError, OSError) as e:
        print(f"make_datasets.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
