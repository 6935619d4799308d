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
