#include "cli/options.hpp"

#include <stdexcept>

namespace sparsetc_cli {

const char* usage() {
  return "usage: sparsetc_cli [options]\n"
         "  --op spmm|spgemm|both   operation (default both)\n"
         "  --matrix FILE           Matrix Market file (.mtx or .mtx.gz)\n"
         "  --gen SPEC              generated matrix, e.g. band:16384:64, poisson3d27:64, rmat:16:16,\n"
         "                          uniform:200000:16, blocks:8192:64:0.1:0.2 (default poisson2d5:512)\n"
         "  --b FILE|SPEC           SpGEMM: B (default A, i.e. A*A)\n"
         "  --n N                   SpMM: columns of the dense B (default 32)\n"
         "  --precision f32|f64     value and compute precision (default f64)\n"
         "  --backend auto|cpu|gpu  where to run (default auto: the GPU when present)\n"
         "  --warmup K --iters K    timing repetitions (median is reported; default 2 and 10)\n"
         "  --threads T             CPU threads (default all)\n"
         "  --seed S                seed of generated values (default 1)\n"
         "  --analyze               print A's structure statistics (sparsetc_analyze on the CPU\n"
         "                          engine) as one CSV line after a header, and multiply nothing\n"
         "  --strip-width W         --analyze: strip width of the DCSR statistics (SSF); the tiled\n"
         "                          kernel uses 512, 256, 128 or 64 by type and N (default 256)\n"
         "  --no-header             --analyze: the CSV line only\n";
}

Options parse_options(int argc, char** argv) {
  Options o;
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) throw std::invalid_argument(std::string(argv[i]) + " needs a value");
    return argv[++i];
  };
  auto number = [&](int& i) -> int64_t {
    std::string text = value(i);
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || v < 0) throw std::invalid_argument(std::string(argv[i - 1]) + ": bad number " + text);
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") o.help = true;
    else if (a == "--op") o.op = value(i);
    else if (a == "--matrix") o.matrix = value(i);
    else if (a == "--gen") o.generate = value(i);
    else if (a == "--b") o.matrix_b = value(i);
    else if (a == "--n") o.n = number(i);
    else if (a == "--precision") o.precision = value(i);
    else if (a == "--backend") o.backend = value(i);
    else if (a == "--warmup") o.warmup = int(number(i));
    else if (a == "--iters") o.iterations = int(number(i));
    else if (a == "--threads") o.threads = int(number(i));
    else if (a == "--seed") o.seed = uint64_t(number(i));
    else if (a == "--analyze") o.analyze = true;
    else if (a == "--strip-width") o.strip_width = number(i);
    else if (a == "--no-header") o.header = false;
    else throw std::invalid_argument("unknown option " + a);
  }
  if (o.op != "spmm" && o.op != "spgemm" && o.op != "both") throw std::invalid_argument("--op: " + o.op);
  if (o.precision != "f32" && o.precision != "f64") throw std::invalid_argument("--precision: " + o.precision);
  if (o.backend != "auto" && o.backend != "cpu" && o.backend != "gpu")
    throw std::invalid_argument("--backend: " + o.backend);
  if (o.iterations < 1) throw std::invalid_argument("--iters must be at least 1");
  if (o.n < 1) throw std::invalid_argument("--n must be at least 1");
  if (!o.matrix.empty() && !o.generate.empty()) throw std::invalid_argument("give --matrix or --gen, not both");
  if (o.matrix.empty() && o.generate.empty()) o.generate = "poisson2d5:512";
  return o;
}

}  // namespace sparsetc_cli
