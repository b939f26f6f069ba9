#include "harness/output.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace bench {
namespace {

std::string case_key(const Result& r) { return r.matrix + '\x1f' + r.op + '\x1f' + std::to_string(r.n); }

bool is_vendor(const Result& r) { return r.provider != "sparsetc"; }

// Results grouped by case, cases in order of first appearance.
std::vector<std::vector<const Result*>> group_cases(const std::vector<Result>& results) {
  std::vector<std::vector<const Result*>> cases;
  std::map<std::string, size_t> index;
  for (const Result& r : results) {
    auto [it, added] = index.emplace(case_key(r), cases.size());
    if (added) cases.emplace_back();
    cases[it->second].push_back(&r);
  }
  return cases;
}

const Result* fastest(const std::vector<const Result*>& rs, bool vendor, const Result* like = nullptr) {
  const Result* best = nullptr;
  for (const Result* r : rs) {
    if (r->status != Status::ok || is_vendor(*r) != vendor) continue;
    if (like && (r->value_type != like->value_type || r->layout != like->layout)) continue;
    if (!best || r->median_ms < best->median_ms) best = r;
  }
  return best;
}

std::string shorten(const std::string& s, size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 2) + "..";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c == '\n' || c == '\r' ? ' ' : c;
  }
  return out + "\"";
}

std::string number(double v, const char* fmt = "%.6g") {
  if (!std::isfinite(v)) return "";
  char text[48];
  std::snprintf(text, sizeof text, fmt, v);
  return text;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\u%04x", c);
          out += esc;
        } else {
          out += char(c);
        }
    }
  }
  return out + "\"";
}

std::string json_number(double v) { return std::isfinite(v) ? number(v, "%.9g") : "null"; }

std::string json_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + json_string(items[i]);
  return out + "]";
}

const char* const kSections[][2] = {
    {"spmm", "SpMM C = A*B (B dense K x N; fp32 C)"},
    {"spgemm", "SpGEMM C = A*A (A*At where rows != cols)"},
    {"csr2csc", "conversion CSR -> CSC (fp32 values)"},
    {"csr2bsr16", "conversion CSR -> BSR, 16x16 blocks (fp32 values)"},
};

}  // namespace

void compute_speedups(std::vector<Result>& results) {
  std::map<std::string, double> best;
  for (const Result& r : results)
    if (r.status == Status::ok && is_vendor(r)) {
      auto [it, added] = best.emplace(case_key(r), r.median_ms);
      if (!added) it->second = std::min(it->second, r.median_ms);
    }
  for (Result& r : results) {
    auto it = best.find(case_key(r));
    if (r.status == Status::ok && it != best.end()) r.speedup = it->second / r.median_ms;
  }
}

void print_summary(std::FILE* out, const std::vector<Result>& results) {
  const auto cases = group_cases(results);
  for (const auto& section : kSections) {
    bool header = false;
    for (const auto& rs : cases) {
      const Result& c = *rs.front();
      if (c.op != section[0]) continue;
      if (!header) {
        std::fprintf(out, "\n== %s ==\n", section[1]);
        std::fprintf(out, "   median ms of the fastest checked variant; speedup = best vendor ms / sparsetc ms (> 1: "
                          "sparsetc faster);\n   same-type: against the fastest vendor variant of sparsetc's type "
                          "and layout; %%BW: floor bytes / time / measured copy bandwidth\n");
        std::fprintf(out, "%-26s %8s %8s %10s %4s | %-25s %10s %8s %5s | %-17s %10s %7s %9s | %s\n", "matrix", "rows",
                     "cols", "nnz", "N", "best vendor", "ms", "GFLOP/s", "%BW", "sparsetc", "ms", "speedup",
                     "same-type", "ok/wrong/fail/unsup/skip");
        header = true;
      }
      int counts[6] = {0, 0, 0, 0, 0, 0};
      for (const Result* r : rs) ++counts[int(r->status)];
      const Result* vendor = fastest(rs, true);
      const Result* mine = fastest(rs, false);
      const Result* same = mine ? fastest(rs, true, mine) : nullptr;
      std::string mine_text = "-";
      if (!mine)  // say why there is no sparsetc time
        for (const Result* r : rs)
          if (!is_vendor(*r)) {
            mine_text = std::string("(") + status_name(r->status) + ")";
            break;
          }
      std::fprintf(out, "%-26s %8lld %8lld %10lld %4s | %-25s %10s %8s %5s | %-17s %10s %7s %9s | %d/%d/%d/%d/%d\n",
                   shorten(c.matrix, 26).c_str(), (long long)c.rows, (long long)c.cols, (long long)c.nnz,
                   c.n ? std::to_string(c.n).c_str() : "-", vendor ? shorten(vendor->variant, 25).c_str() : "-",
                   vendor ? number(vendor->median_ms, "%.4f").c_str() : "-",
                   vendor ? number(vendor->gflops, "%.1f").c_str() : "",
                   vendor ? number(100 * vendor->bw_fraction, "%.0f").c_str() : "",
                   mine ? shorten(mine->variant, 17).c_str() : mine_text.c_str(),
                   mine ? number(mine->median_ms, "%.4f").c_str() : "-",
                   mine && vendor ? number(vendor->median_ms / mine->median_ms, "%.2fx").c_str() : "-",
                   mine && same ? number(same->median_ms / mine->median_ms, "%.2fx").c_str() : "-", counts[0],
                   counts[1], counts[2], counts[3], counts[4] + counts[5]);
    }
  }
}

void print_problems(std::FILE* out, const std::vector<Result>& results) {
  bool any_wrong = false;
  for (const Result& r : results)
    if (r.status == Status::wrong) {
      if (!any_wrong) std::fprintf(out, "\n== wrong results (checked, reported as wrong, never timed) ==\n");
      any_wrong = true;
      std::fprintf(out, "%s %s%s %s: %s\n", r.matrix.c_str(), r.op.c_str(),
                   r.n ? (" N=" + std::to_string(r.n)).c_str() : "", r.variant.c_str(), r.reason.c_str());
    }
  struct Group {
    int count = 0;
    std::string first_reason, where;
  };
  for (Status status : {Status::failed, Status::unsupported, Status::skipped, Status::pending}) {
    std::map<std::string, Group> groups;  // by variant name
    std::vector<std::string> order;
    for (const Result& r : results) {
      if (r.status != status) continue;
      auto [it, added] = groups.emplace(r.op + " " + r.variant, Group{});
      if (added) {
        order.push_back(it->first);
        it->second.first_reason = r.reason;
      }
      Group& g = it->second;
      if (++g.count <= 4) g.where += (g.where.empty() ? "" : ", ") + r.matrix + (r.n ? "/N=" + std::to_string(r.n) : "");
      else if (g.count == 5) g.where += ", ...";
    }
    if (order.empty()) continue;
    std::fprintf(out, "\n== %s variants (by variant: count, where, first reason) ==\n", status_name(status));
    for (const std::string& name : order) {
      const Group& g = groups[name];
      std::fprintf(out, "%-36s x%-4d [%s]\n    %s\n", name.c_str(), g.count, g.where.c_str(), g.first_reason.c_str());
    }
  }
}

bool write_csv(const std::string& path, const std::vector<Result>& results, double copy_gbps, std::string& error) {
  std::ofstream f(path);
  if (!f) {
    error = "cannot write " + path;
    return false;
  }
  f << "matrix,rows,cols,nnz,op,n,variant,provider,format,alg,value_type,layout,mode,status,median_ms,min_ms,max_ms,"
       "runs,setup_ms,flops,gflops,floor_bytes,gbps,bw_fraction,copy_gbps,mem_bytes,rel_err,speedup_vs_best_vendor,"
       "note,reason\n";
  for (const Result& r : results) {
    f << csv_field(r.matrix) << ',' << r.rows << ',' << r.cols << ',' << r.nnz << ',' << r.op << ',' << r.n << ','
      << csv_field(r.variant) << ',' << r.provider << ',' << r.format << ',' << csv_field(r.alg) << ','
      << r.value_type << ',' << r.layout << ',' << r.mode << ',' << status_name(r.status) << ','
      << number(r.median_ms) << ',' << number(r.min_ms) << ',' << number(r.max_ms) << ',' << r.runs << ','
      << number(r.setup_ms) << ',' << number(r.flops) << ',' << number(r.gflops) << ',' << number(r.floor_bytes)
      << ',' << number(r.gbps) << ',' << number(r.bw_fraction) << ',' << number(copy_gbps) << ','
      << number(r.mem_bytes) << ',' << number(r.rel_err, "%.3g") << ',' << number(r.speedup) << ','
      << csv_field(r.note) << ',' << csv_field(r.reason) << '\n';
  }
  if (!f) {
    error = "error while writing " + path;
    return false;
  }
  return true;
}

bool write_json(const std::string& path, const DeviceInfo& d, const Options& o, const TimingConfig& t,
                size_t flush_bytes, const std::vector<Result>& results, std::string& error) {
  std::ofstream f(path);
  if (!f) {
    error = "cannot write " + path;
    return false;
  }
  std::vector<std::string> n_list;
  for (int64_t n : o.n_list) n_list.push_back(std::to_string(n));
  f << "{\n  \"device\": {\"index\": " << d.device << ", \"name\": " << json_string(d.name)
    << ", \"compute_capability\": \"" << d.cc_major << "." << d.cc_minor << "\", \"sms\": " << d.sms
    << ", \"l2_bytes\": " << d.l2_bytes << ", \"memory_bytes\": " << d.memory_bytes
    << ", \"sm_clock_mhz\": " << d.sm_clock_mhz << ", \"memory_clock_mhz\": " << d.memory_clock_mhz
    << ", \"bus_width_bits\": " << d.bus_width_bits << ", \"cuda_runtime\": " << d.runtime_version
    << ", \"cuda_driver\": " << d.driver_version << ", \"driver\": " << json_string(d.driver)
    << ", \"cusparse\": " << d.cusparse_version << ", \"cublas\": " << d.cublas_version
    << ", \"sparsetc\": " << json_string(d.sparsetc) << ", \"copy_gbps\": " << json_number(d.copy_gbps) << "},\n";
  f << "  \"timing\": {\"warmup\": " << t.warmup << ", \"iters\": " << t.iters << ", \"min_iters\": " << t.min_iters
    << ", \"variant_budget_s\": " << json_number(t.budget_s) << ", \"l2_flush\": " << (t.flush_l2 ? "true" : "false")
    << ", \"flush_bytes\": " << flush_bytes << ", \"statistic\": \"median\", \"clock\": \"cudaEvent\"},\n";
  f << "  \"options\": {\"values\": " << json_string(o.values) << ", \"seed\": " << o.seed
    << ", \"n\": [" << [&] {
         std::string s;
         for (size_t i = 0; i < n_list.size(); ++i) s += (i ? ", " : "") + n_list[i];
         return s;
       }()
    << "], \"layouts\": " << json_list(o.layouts) << ", \"spmm_types\": " << json_list(o.spmm_types)
    << ", \"spgemm_types\": " << json_list(o.spgemm_types) << ", \"spgemm_modes\": " << json_list(o.spgemm_modes)
    << ", \"only\": " << json_list(o.only) << ", \"skip\": " << json_list(o.skip)
    << ", \"chunk_fraction\": " << json_number(o.chunk_fraction) << ", \"min_nnz\": " << o.min_nnz
    << ", \"sample_rows\": " << o.sample_rows << ", \"timeout_per_case_s\": " << json_number(o.timeout_per_case_s)
    << ", \"max_seconds\": " << json_number(o.max_seconds) << ", \"dense_max_gb\": " << json_number(o.dense_max_gb)
    << ", \"ell_max_gb\": " << json_number(o.ell_max_gb) << ", \"ref_max_products\": " << json_number(o.ref_max_products)
    << "},\n  \"results\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    f << "    {\"matrix\": " << json_string(r.matrix) << ", \"rows\": " << r.rows << ", \"cols\": " << r.cols
      << ", \"nnz\": " << r.nnz << ", \"op\": " << json_string(r.op) << ", \"n\": " << r.n
      << ", \"variant\": " << json_string(r.variant) << ", \"provider\": " << json_string(r.provider)
      << ", \"format\": " << json_string(r.format) << ", \"alg\": " << json_string(r.alg)
      << ", \"value_type\": " << json_string(r.value_type) << ", \"layout\": " << json_string(r.layout)
      << ", \"mode\": " << json_string(r.mode) << ", \"status\": " << json_string(status_name(r.status))
      << ", \"median_ms\": " << json_number(r.median_ms) << ", \"min_ms\": " << json_number(r.min_ms)
      << ", \"max_ms\": " << json_number(r.max_ms) << ", \"runs\": " << r.runs
      << ", \"setup_ms\": " << json_number(r.setup_ms) << ", \"flops\": " << json_number(r.flops)
      << ", \"gflops\": " << json_number(r.gflops) << ", \"floor_bytes\": " << json_number(r.floor_bytes)
      << ", \"gbps\": " << json_number(r.gbps) << ", \"bw_fraction\": " << json_number(r.bw_fraction)
      << ", \"mem_bytes\": " << json_number(r.mem_bytes) << ", \"rel_err\": " << json_number(r.rel_err)
      << ", \"speedup_vs_best_vendor\": " << json_number(r.speedup) << ", \"note\": " << json_string(r.note)
      << ", \"reason\": " << json_string(r.reason) << "}" << (i + 1 < results.size() ? "," : "") << "\n";
  }
  f << "  ]\n}\n";
  if (!f) {
    error = "error while writing " + path;
    return false;
  }
  return true;
}

}  // namespace bench
