include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS knn EXPORT knnTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/libknn/include/knn DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The GPU plugin goes beside libknn.so, where libknn looks for it; programs never link it.
if(TARGET knn_cuda)
  install(TARGETS knn_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
if(TARGET knn_primitives AND KNN_ENABLE_CUDA)
  install(TARGETS knn_primitives EXPORT knnTargets)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/primitives/include/knn DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()

install(EXPORT knnTargets NAMESPACE knn:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/knn)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/knnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/knnConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/knn)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/knnConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/knnConfig.cmake ${PROJECT_BINARY_DIR}/knnConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/knn)
