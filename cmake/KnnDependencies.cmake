# Dependencies come from Debian's packages: libeigen3-dev, libcxxopts-dev, libfccp-dev, googletest,
# nlohmann-json3-dev, zlib1g-dev.
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
# The model files' checksum (CRC-32), Debian's zlib1g-dev.
find_package(ZLIB REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(Threads REQUIRED)

# MPI (Debian: libopenmpi-dev, openmpi-bin) for sharded training sets; KNN_ENABLE_MPI defaults to
# on when it is found, and a build without it is unchanged.
find_package(MPI COMPONENTS CXX QUIET)
set(_knn_mpi_default OFF)
if(MPI_CXX_FOUND)
  set(_knn_mpi_default ON)
endif()
option(KNN_ENABLE_MPI "Shard training sets over MPI ranks (knn/mpi.hpp; mpirun -np N knn-cli ...)" ${_knn_mpi_default})
if(KNN_ENABLE_MPI AND NOT MPI_CXX_FOUND)
  find_package(MPI REQUIRED COMPONENTS CXX)
endif()

find_path(KNN_FCCP_INCLUDE_DIR libfccp/csv.h REQUIRED
  DOC "fast-cpp-csv-parser (Debian package libfccp-dev)")
if(NOT TARGET knn_fccp)
  add_library(knn_fccp INTERFACE)
  target_include_directories(knn_fccp SYSTEM INTERFACE $<BUILD_INTERFACE:${KNN_FCCP_INCLUDE_DIR}>)
  target_link_libraries(knn_fccp INTERFACE Threads::Threads)
endif()

if(KNN_BUILD_APPS OR KNN_BUILD_TESTS OR KNN_BUILD_BENCH)
  find_package(cxxopts REQUIRED)
endif()
# The apps' JSON output (their tests build only with the apps).
if(KNN_BUILD_APPS)
  find_package(nlohmann_json 3 REQUIRED)
endif()
if(KNN_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()

# Optional tools, reported when absent.
find_program(KNN_GNUPLOT gnuplot)
if(NOT KNN_GNUPLOT)
  message(STATUS "gnuplot not found: k-sweep --plot will report that it is unavailable")
endif()
