# Finds every dependency of podsched. A missing one stops configure with the name of the Debian
# package that provides it; deploy/deps.sh installs them all.

function(podsched_missing what debian_package)
  message(FATAL_ERROR
    "podsched: ${what} not found. Install the Debian package '${debian_package}' "
    "(or run deploy/deps.sh, which installs everything the build needs).")
endfunction()

find_package(Threads REQUIRED)
find_package(PkgConfig)
if(NOT PkgConfig_FOUND)
  podsched_missing("pkg-config" "pkg-config")
endif()

find_package(Boost 1.74 QUIET COMPONENTS system)
if(NOT Boost_FOUND)
  podsched_missing("Boost (Asio, Beast, Boost.System)" "libboost-dev libboost-system-dev")
endif()

pkg_check_modules(ZMQ QUIET IMPORTED_TARGET libzmq)
if(NOT ZMQ_FOUND)
  podsched_missing("libzmq" "libzmq3-dev")
endif()
find_package(cppzmq QUIET)
if(NOT cppzmq_FOUND)
  podsched_missing("cppzmq" "cppzmq-dev")
endif()

# Keep OpenMPI's deprecated C++ bindings out of <mpi.h>.
set(MPI_CXX_SKIP_MPICXX ON)
find_package(MPI QUIET COMPONENTS C CXX)
if(NOT MPI_FOUND)
  podsched_missing("OpenMPI" "libopenmpi-dev openmpi-bin")
endif()

find_package(Protobuf QUIET)
if(NOT Protobuf_FOUND OR NOT Protobuf_PROTOC_EXECUTABLE)
  podsched_missing("protobuf (library and protoc)" "libprotobuf-dev protobuf-compiler")
endif()

find_package(SQLite3 QUIET)
if(NOT SQLite3_FOUND)
  podsched_missing("SQLite3" "libsqlite3-dev")
endif()

find_package(GTest QUIET)
if(NOT GTest_FOUND)
  podsched_missing("GoogleTest" "libgtest-dev libgmock-dev")
endif()

find_package(nlohmann_json 3 QUIET)
if(NOT nlohmann_json_FOUND)
  podsched_missing("nlohmann-json" "nlohmann-json3-dev")
endif()

find_package(CLI11 QUIET)
if(NOT CLI11_FOUND)
  podsched_missing("CLI11" "libcli11-dev")
endif()

find_package(spdlog QUIET)
if(NOT spdlog_FOUND)
  podsched_missing("spdlog" "libspdlog-dev")
endif()

find_package(yaml-cpp QUIET)
if(NOT yaml-cpp_FOUND)
  podsched_missing("yaml-cpp" "libyaml-cpp-dev")
endif()

find_package(OpenSSL QUIET)
if(NOT OpenSSL_FOUND)
  podsched_missing("OpenSSL" "libssl-dev")
endif()

find_package(CURL QUIET)
if(NOT CURL_FOUND)
  podsched_missing("libcurl" "libcurl4-openssl-dev")
endif()

find_package(benchmark QUIET)
if(NOT benchmark_FOUND)
  podsched_missing("Google Benchmark" "libbenchmark-dev")
endif()

# Programs that start many times a second (podctl, podworker-helper, podworker-rank: issue 29)
# link protobuf, yaml-cpp, OpenSSL and zlib from their static archives, and libstdc++ too
# (podsched_static_deps), so that the dynamic loader has only libc to map: podctl's start was
# two thirds loader work. Libraries name these dependencies through the podsched::* targets
# below, which resolve to the shared library for every other program. Debian ships the
# archives in the same -dev packages; where one is missing the shared library is used.
# (A static copy does not follow Debian's security updates of the library until podsched is
# rebuilt: docs/deploy.md.)
function(podsched_dep name shared)
  set(archives "")
  foreach(archive ${ARGN})
    find_library(PODSCHED_STATIC_${archive} NAMES lib${archive}.a)
    if(NOT PODSCHED_STATIC_${archive})
      set(archives "")
      break()
    endif()
    list(APPEND archives ${PODSCHED_STATIC_${archive}})
  endforeach()
  add_library(podsched_dep_${name} INTERFACE)
  if(archives)
    string(REPLACE ";" "$<SEMICOLON>" archives "${archives}")
    target_link_libraries(podsched_dep_${name} INTERFACE
      "$<IF:$<BOOL:$<TARGET_PROPERTY:PODSCHED_STATIC_DEPS>>,${archives},${shared}>")
  else()
    target_link_libraries(podsched_dep_${name} INTERFACE ${shared})
  endif()
  add_library(podsched::${name} ALIAS podsched_dep_${name})
endfunction()
# zlib and the thread library follow the archives that need them (protobuf, libcrypto).
podsched_dep(protobuf protobuf::libprotobuf protobuf z)
podsched_dep(yaml yaml-cpp yaml-cpp)
podsched_dep(crypto OpenSSL::Crypto crypto z)
podsched_dep(ssl OpenSSL::SSL ssl crypto z)

function(podsched_static_deps target)
  set_target_properties(${target} PROPERTIES PODSCHED_STATIC_DEPS ON)
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  target_link_libraries(${target} PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
endfunction()
