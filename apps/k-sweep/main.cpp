#include <iostream>

#include "sweep.hpp"

int main(int argc, char** argv) { return knn::sweep::run(argc, argv, std::cout, std::cerr); }
