#!/usr/bin/env bash
# Writes the seed corpus of the model file fuzz target: small model files of tests/cli_cases,
# one of each kind the command line makes (categories, imputed cells, dropped rows, identifiers).
# Run again from the repository root when the format changes; test_model_file checks that the
# committed seeds load.
#   tests/fuzz/make_model_seeds.sh build/apps/knn-cli/knn-cli
set -euo pipefail
cli=$1 cases=tests/cli_cases out=tests/fuzz/corpus/model
mkdir -p "$out"
"$cli" fit --train $cases/line_classify.csv -k 2 -o $out/line_classify.knn
"$cli" fit --train $cases/line_regress.csv -k 3 --task regress --weights gaussian:2 --scale standard -o $out/line_regress.knn
"$cli" fit --train $cases/tabular/rnames.csv -k 2 --impute most_frequent --metric l1 -o $out/rnames_categories.knn
"$cli" fit --train $cases/tabular/rnames.csv -k 1 --drop-missing --id 0 --scale none -o $out/rnames_dropped.knn
