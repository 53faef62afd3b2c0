# Dependencies come from Debian's packages: libeigen3-dev, libcxxopts-dev, libfccp-dev, googletest.
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(Threads REQUIRED)

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
if(KNN_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()

# Optional tools, reported when absent.
find_program(KNN_GNUPLOT gnuplot)
if(NOT KNN_GNUPLOT)
  message(STATUS "gnuplot not found: k-sweep --plot will report that it is unavailable")
endif()
