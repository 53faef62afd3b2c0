#pragma once
// libknn: exact k-nearest-neighbour classification and regression.
#include "knn/dataset.hpp"
#include "knn/error.hpp"
#include "knn/evaluation.hpp"
#include "knn/matrix.hpp"
#include "knn/metric.hpp"
#include "knn/metrics.hpp"
#include "knn/model.hpp"
#include "knn/scaler.hpp"
#include "knn/search.hpp"
#include "knn/version.hpp"
#include "knn/vote.hpp"
#include "knn/weights.hpp"
