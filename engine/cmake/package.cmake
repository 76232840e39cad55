# A standalone install's package files: rankwise.pc (librankwise, no MPI),
# rankwise-coll.pc and rankwise-profile.pc (the MPI libraries), and the
# CMake package rankwise (rankwiseConfig.cmake: rankwise::rankwise,
# rankwise::coll, rankwise::profile). Included by engine/CMakeLists.txt.
include(CMakePackageConfigHelpers)
set(RW_CMAKE_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rankwise)
set(RW_PC_DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# librankwise links METIS and hwloc itself; a static link would need them.
set(RW_PC_LIBS_PRIVATE "-lm")
if(RW_MAP_LIBS)
  string(APPEND RW_PC_LIBS_PRIVATE " ${METIS_LIBRARY}")
endif()
set(RW_PC_REQUIRES_PRIVATE "")
if(HWLOC_FOUND)
  set(RW_PC_REQUIRES_PRIVATE "hwloc")
endif()

if(RW_HAVE_MPI)
  # The MPI's own pkg-config module, when it has one (the headers include
  # mpi.h): Open MPI's ompi-c, MPICH's mpich. Without one the file says to
  # compile with the MPI's wrapper, named in its mpicc variable.
  include(CheckSymbolExists)
  set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
  check_symbol_exists(OPEN_MPI mpi.h RW_MPI_IS_OPEN_MPI)
  unset(CMAKE_REQUIRED_INCLUDES)
  set(RW_PC_MPI_MODULE "")
  if(RW_MPI_IS_OPEN_MPI)
    set(RW_PC_MPI_CANDIDATE ompi-c)
  elseif(RW_MPI_IS_MPICH)
    set(RW_PC_MPI_CANDIDATE mpich)
  endif()
  if(RW_PC_MPI_CANDIDATE AND PkgConfig_FOUND)
    pkg_check_modules(RW_PC_MPI QUIET ${RW_PC_MPI_CANDIDATE})
    if(RW_PC_MPI_FOUND)
      set(RW_PC_MPI_MODULE ${RW_PC_MPI_CANDIDATE})
    endif()
  endif()
  if(RW_PC_MPI_MODULE)
    message(STATUS "rankwise: rankwise-coll.pc requires the MPI's pkg-config module ${RW_PC_MPI_MODULE}")
  else()
    message(STATUS "rankwise: no pkg-config module for this MPI; rankwise-coll.pc says to compile with ${MPI_C_COMPILER}")
  endif()
endif()

# The prefix is the one installed into (cmake --install --prefix may differ
# from CMAKE_INSTALL_PREFIX): written as a placeholder now, put in at install.
set(RW_PC_PREFIX "@RW_INSTALL_PREFIX@")
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(RW_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(RW_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
set(RW_PC_FILES rankwise)
if(RW_HAVE_MPI)
  list(APPEND RW_PC_FILES rankwise-coll rankwise-profile)
endif()
foreach(pc ${RW_PC_FILES})
  configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/${pc}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc.in @ONLY)
  install(CODE "
    file(READ \"${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc.in\" rw_pc)
    string(REPLACE \"@RW_INSTALL_PREFIX@\" \"\${CMAKE_INSTALL_PREFIX}\" rw_pc \"\${rw_pc}\")
    file(WRITE \"${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc\" \"\${rw_pc}\")")
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc DESTINATION ${RW_PC_DESTINATION})
endforeach()

install(EXPORT rankwiseTargets NAMESPACE rankwise:: FILE rankwiseTargets.cmake
        DESTINATION ${RW_CMAKE_DESTINATION})
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/rankwiseConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/rankwiseConfig.cmake INSTALL_DESTINATION ${RW_CMAKE_DESTINATION})
# 0.x: only the same minor release is compatible (as the SOVERSION says).
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/rankwiseConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rankwiseConfig.cmake
        ${CMAKE_CURRENT_BINARY_DIR}/rankwiseConfigVersion.cmake DESTINATION ${RW_CMAKE_DESTINATION})
