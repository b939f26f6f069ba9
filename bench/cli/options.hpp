// Command line of sparsetc_cli.
#pragma once

#include <cstdint>
#include <string>

namespace sparsetc_cli {

struct Options {
  std::string op = "both";        // spmm, spgemm or both
  std::string matrix;             // Matrix Market path, or empty
  std::string generate;           // generator spec, or empty
  std::string matrix_b;           // SpGEMM: B's path or spec; empty means A·A
  int64_t n = 32;                 // SpMM: columns of B
  std::string precision = "f64";  // f32 or f64
  std::string backend = "auto";   // auto, cpu or gpu
  int warmup = 2;
  int iterations = 10;
  int threads = 0;
  uint64_t seed = 1;
  bool analyze = false;           // print A's structure statistics as CSV instead of multiplying
  int64_t strip_width = 0;        // --analyze: DCSR strip width (0: the library's default)
  bool header = true;             // --analyze: print the CSV header line
  bool help = false;
};

// Parses argv; throws std::invalid_argument with a message naming the bad option.
Options parse_options(int argc, char** argv);
const char* usage();

}  // namespace sparsetc_cli
