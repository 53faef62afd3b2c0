#include <iostream>

#include "cli.hpp"
#include "knn/search.hpp"

int main(int argc, char** argv) {
  const int status = knn::cli::run(argc, argv, std::cout, std::cerr);
  knn::end_process_after_gpu(status);  // output and files are complete by now
  return status;
}
