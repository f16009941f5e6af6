# Debian's libraries in place of the third-party targets that MuJoCo 2.2.2's CMake would download
# (FindOrFetch uses a target that already exists). Included by this project's CMakeLists.txt, and
# copied into the Debian packages' debian/ by packaging/debian-standin.sh, where upstream's
# project(mujoco) includes it (CMAKE_PROJECT_mujoco_INCLUDE): one statement of the mapping.
#
#   MJPOS_DEBIAN_GLFW          also glfw (simulate and the samples)
#   MJPOS_DEBIAN_TEST_TARGETS  also gtest, gmock, gtest_main, gmock_main and eigen, the names
#                              upstream's test CMake links, from Debian's GoogleTest and Eigen
#                              (and find abseil and Google Benchmark)

find_library(MJPOS_DEB_CCD ccd REQUIRED)
find_library(MJPOS_DEB_TINYXML2 tinyxml2 REQUIRED)
find_library(MJPOS_DEB_TINYOBJLOADER tinyobjloader REQUIRED)
find_library(MJPOS_DEB_LODEPNG lodepng REQUIRED)
find_library(MJPOS_DEB_QHULL qhull_r REQUIRED)
find_path(MJPOS_DEB_QHULL_INCLUDE qhull_ra.h PATH_SUFFIXES libqhull_r REQUIRED)
find_path(MJPOS_DEB_CCD_INCLUDE ccd/ccd.h REQUIRED)

# MuJoCo's dependency script adds options to some of these targets, so they must be ordinary
# (non-IMPORTED, non-INTERFACE) targets: each is an empty static library that links Debian's.
set(_mjpos_deps ccd tinyxml2 qhull qhullstatic_r lodepng)
if(MJPOS_DEBIAN_GLFW)
  find_library(MJPOS_DEB_GLFW glfw REQUIRED)
  list(APPEND _mjpos_deps glfw)
endif()
file(WRITE ${CMAKE_BINARY_DIR}/mjpos_empty.c "typedef int mjpos_empty;\n")
foreach(dep ${_mjpos_deps})
  add_library(${dep} STATIC ${CMAKE_BINARY_DIR}/mjpos_empty.c)
  set_target_properties(${dep} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endforeach()
target_link_libraries(ccd PUBLIC ${MJPOS_DEB_CCD})
target_include_directories(ccd SYSTEM PUBLIC ${MJPOS_DEB_CCD_INCLUDE})
target_link_libraries(tinyxml2 PUBLIC ${MJPOS_DEB_TINYXML2})
# Debian's libqhullstatic_r.a is not position independent: link the shared reentrant qhull.
target_link_libraries(qhullstatic_r PUBLIC ${MJPOS_DEB_QHULL})
target_include_directories(qhullstatic_r SYSTEM PUBLIC ${MJPOS_DEB_QHULL_INCLUDE})
target_link_libraries(lodepng PUBLIC ${MJPOS_DEB_LODEPNG})
if(MJPOS_DEBIAN_GLFW)
  target_link_libraries(glfw PUBLIC ${MJPOS_DEB_GLFW})
endif()
add_library(tinyobjloader INTERFACE)
target_link_libraries(tinyobjloader INTERFACE ${MJPOS_DEB_TINYOBJLOADER})

if(MJPOS_DEBIAN_TEST_TARGETS)
  find_package(GTest REQUIRED)
  find_package(absl REQUIRED)
  find_package(benchmark REQUIRED)
  find_package(Eigen3 REQUIRED NO_MODULE)
  foreach(t gtest gmock gtest_main gmock_main)
    add_library(${t} INTERFACE)
  endforeach()
  target_link_libraries(gtest INTERFACE GTest::gtest)
  target_link_libraries(gmock INTERFACE GTest::gmock GTest::gtest)
  target_link_libraries(gtest_main INTERFACE GTest::gtest_main GTest::gtest)
  target_link_libraries(gmock_main INTERFACE GTest::gmock_main GTest::gmock)
  add_library(eigen INTERFACE)
  target_link_libraries(eigen INTERFACE Eigen3::Eigen)
endif()
