// SPDX-License-Identifier: Apache-2.0
// gpusched-experiment: reproducible experiments over real traces.
//
//   gpusched-experiment packing --nodes NODE_CSV --pods POD_CSV
//       [--policy random|dotprod|clustering|packing|bestfit|fgd|all[,...]] [--seeds 42-51]
//       [--tune 1.3] [--out DIR] [--published ALLO_CSV] [--workload NAME] [--popularity 95]
//       [--random-ties] [--name-order] [--no-timing]
//   gpusched-experiment mig --nodes NODE_CSV --pods POD_CSV [--model A100-40GB|H100-80GB]
//       [--cover compute|memory] [--policy first-fit|mig-aware|all[,...]] [--seeds 42-51]
//       [--tune 1.3] [--with-fractional] [--out DIR] [--workload NAME] [--check-invariants]
//       [--no-timing]
//
// Subcommands are rows of the `commands` table below: adding one is a function and a line.
#include <algorithm>
#include <atomic>
#include <iostream>
#include <cstdio>
#include <stdio.h>  // popen, pclose
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>  // std::bad_alloc
#include <span>
#include <sstream>
#include <string>
#include <system_error>
#include <string_view>
#include <utility>
#include <vector>

#include <gpusched/core/error.hpp>
#include <gpusched/core/parse.hpp>
#include <gpusched/trace/openb.hpp>

#include "fgd_experiment.hpp"
#include "mig_experiment.hpp"
#include "cells.hpp"            // run_cells, grid_progress (benchmarks/replay/)
#include "experiment_args.hpp"  // the command line (CLI11)
#include "outputs.hpp"          // write_out_file, run_record (benchmarks/replay/)
#include "replay.hpp"   // the replay subcommand (benchmarks/replay/)

namespace gs = gpusched;

namespace {

using gpusched_experiment::experiment_args;
using gpusched_experiment::usage_error;

// What the program is doing, for the message of an exception that ends it.
std::string g_stage = "reading the options";
// The command line, for run.json.
std::vector<std::string> g_command;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// Published means of unallocated GPU % at arrived 100 and the last bin, per policy label, for
/// one workload, read from an `analysis_allo_discrete.csv` of the FGD artifact.
struct published_means {
  std::map<std::string, std::pair<double, double>> by_label;  // label -> (at 100, at last)
  std::map<std::string, int> runs;
};
/// The nodes of an openb node list, read through `files` (run.json hashes the bytes read).
std::vector<gs::openb_node> load_nodes(const std::string& path,
                                       gpusched_experiment::input_files& files) {
  std::istringstream in(files.read(path));
  return gs::read_openb_nodes(in, path);
}
/// The pods of an openb pod list; a list without any pod is an error (an experiment over no
/// workload would report every arrived-workload bin as fully served).
std::vector<gs::openb_pod> load_pods(const std::string& path,
                                     gpusched_experiment::input_files& files) {
  std::istringstream in(files.read(path));
  auto pods = gs::read_openb_pods(in, path);
  if (pods.empty()) throw gs::parse_error(path, 1, "(file)", "no pods: the file has a header only");
  return pods;
}

/// The cells of one CSV line, every one kept (an empty one too, so that columns never shift).
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells;
  for (std::size_t start = 0;;) {
    const auto comma = line.find(',', start);
    cells.push_back(line.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return cells;
}

published_means read_published(const std::string& path, const std::string& workload,
                               const std::string& last_bin,
                               gpusched_experiment::input_files& files) {
  std::istringstream in(files.read(path));
  std::string line;
  std::size_t n = 1;
  // One line: its final CR (CRLF endings) dropped; a CR left inside is refused by name.
  const auto next_line = [&]() -> bool {
    if (!std::getline(in, line)) return false;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find('\r') != std::string::npos) {
      throw gs::parse_error(path, n, "(line)",
                            "carriage return inside a line (CR-only or mixed line endings)");
    }
    return true;
  };
  next_line();
  line = std::string(gs::strip_bom(line));
  const auto header = csv_cells(line);
  const auto col = [&](const std::string& name) -> std::size_t {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw gs::parse_error(path, 1, name, "missing column");
    return static_cast<std::size_t>(it - header.begin());
  };
  const auto c_work = col("workload"), c_pol = col("sc_policy"), c100 = col("100"),
             clast = col(last_bin);
  published_means out;
  const std::size_t need = std::max({c_work, c_pol, c100, clast}) + 1;
  const auto percent = [&](const std::string& cell, const std::string& field) {
    const auto r = gs::parse_real(cell);
    if (!r.ok()) throw gs::parse_error(path, n, field, gs::number_problem(cell, r.status));
    if (r.value < 0 || r.value > 100) {
      throw gs::parse_error(path, n, field, "'" + cell + "' is not a percentage in 0..100");
    }
    return r.value;
  };
  while (++n, next_line()) {
    if (line.empty()) continue;
    const std::vector<std::string> cells = csv_cells(line);
    if (cells.size() < need) {
      throw gs::parse_error(
          path, n, "(line)",
          "too few columns: " + std::to_string(cells.size()) + ", need " + std::to_string(need));
    }
    if (cells[c_work] != workload) continue;
    auto& m = out.by_label[cells[c_pol]];
    m.first += 100.0 - percent(cells[c100], "100");
    m.second += 100.0 - percent(cells[clast], last_bin);
    ++out.runs[cells[c_pol]];
  }
  for (auto& [k, v] : out.by_label) {
    v.first /= out.runs[k];
    v.second /= out.runs[k];
  }
  return out;
}

/// One row of an `analysis_*_discrete.csv`: the key columns and the binned series.
struct csv_row {
  std::string label;
  double tune = 0;
  std::uint64_t seed = 0;
  std::int64_t total_gpus = 0;
  const std::vector<double>* values = nullptr;
};

/// Writes one file in the published layout: workload, sc_policy, tune, seed, [total_gpus,]
/// then one column per arrived-% bin.
void write_discrete_csv(const std::filesystem::path& dir, const char* name, const std::string& workload,
                        const std::vector<csv_row>& rows, bool with_total, const char* number) {
  std::ostringstream out;
  const std::size_t bins = rows.empty() ? 0 : rows.front().values->size();
  out << "workload,sc_policy,tune,seed" << (with_total ? ",total_gpus" : "");
  for (std::size_t k = 0; k < bins; ++k) out << "," << k;
  out << "\n";
  for (const auto& r : rows) {
    // The workload is the pod list's file name by default: quoted when it holds a comma, a
    // quote or a line break, so it stays one column.
    out << gs::detail::csv_field(workload) << "," << r.label << "," << fmt("%g", r.tune) << ","
        << r.seed;
    if (with_total) out << "," << r.total_gpus;
    for (const double v : *r.values) out << "," << fmt(number, v);
    out << "\n";
  }
  // Written to a temporary name and renamed: an interrupted run never leaves a table that looks
  // complete, and no link planted in --out is followed (gpusched_experiment::write_out_file).
  gpusched_experiment::write_out_file(dir, name, out.str());
}

/// Makes --out before any run and writes its run.json: the command line, the input files with
/// their SHA-256, and `fields` (the experiment's settings as JSON text).
void start_out_dir(const std::string& dir, const char* subcommand,
                   const std::vector<std::pair<std::string, std::string>>& inputs,
                   gpusched_experiment::input_files& files,
                   const std::vector<std::pair<std::string, std::string>>& fields) {
  g_stage = "preparing --out " + dir;
  gpusched_experiment::check_out_root(dir);
  gpusched_experiment::run_record rec(std::string("gpusched-experiment ") + subcommand, g_command);
  for (const auto& [role, path] : inputs) rec.add_input(role, path, files);
  for (const auto& [k, v] : fields) rec.add_raw(k, v);
  gpusched_experiment::write_out_file(dir, "run.json", rec.text());
}

/// `v` as a JSON array of numbers.
template <class T>
std::string json_array(const std::vector<T>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}
std::string json_strings(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + gs::detail::json_string(v[i]);
  return out + "]";
}

void write_csvs(const std::filesystem::path& dir, const std::string& workload,
                const std::vector<gs::fgd_run_result>& runs) {
  std::vector<csv_row> allo, frag, ratio;
  for (const auto& r : runs) {
    const csv_row key{std::string(gs::fgd_policy_label(r.policy)), r.tune, r.seed, r.total_gpus,
                      &r.alloc};
    allo.push_back(key);
    frag.push_back(key);
    frag.back().values = &r.frag;
    ratio.push_back(key);
    ratio.back().values = &r.frag_ratio;
  }
  write_discrete_csv(dir, "analysis_allo_discrete.csv", workload, allo, true, "%.2f");
  write_discrete_csv(dir, "analysis_frag_discrete.csv", workload, frag, false, "%.2f");
  write_discrete_csv(dir, "analysis_frag_ratio_discrete.csv", workload, ratio, false, "%.15g");
}

/// What every cell of one packing grid shares: the options that change a cell's result besides
/// its (policy, seed), and the digests of the two input files. A cell records it and --merge
/// refuses a cell whose record differs from the grid's (a cell of another --tune, or of another
/// pod list, would otherwise be mixed in silently).
struct cell_grid {
  double tune = 0, popularity = 0;
  bool random_ties = false, name_order = false;
  std::string nodes_sha256, pods_sha256;
};

/// One cell's result as text (--cell writes it, --merge reads it): every number as the shortest
/// decimal that reads back exactly, so that the merged outputs equal a local run's; then the
/// grid it belongs to (`cell_grid`).
std::string cell_text(const gs::fgd_run_result& r, const cell_grid& g) {
  std::string t = "gpusched-experiment packing cell 2\n";
  t += "policy " + std::to_string(static_cast<int>(r.policy)) + "\nseed " + std::to_string(r.seed) +
       "\ntune " + gs::detail::num(r.tune) + "\ntotal_gpus " + std::to_string(r.total_gpus) +
       "\npods " + std::to_string(r.pods) + "\nplaced " + std::to_string(r.placed) + "\nfailed " +
       std::to_string(r.failed) + "\nseconds " + gs::detail::num(r.seconds) + "\n";
  for (const auto& [name, v] : {std::pair<const char*, const std::vector<double>*>{"alloc", &r.alloc},
                                {"frag", &r.frag},
                                {"frag_ratio", &r.frag_ratio}}) {
    t += name;
    for (const double x : *v) t += " " + gs::detail::num(x);
    t += "\n";
  }
  t += "popularity " + gs::detail::num(g.popularity) + "\nrandom_ties " +
       (g.random_ties ? "1" : "0") + "\nname_order " + (g.name_order ? "1" : "0") +
       "\nnodes_sha256 " + g.nodes_sha256 + "\npods_sha256 " + g.pods_sha256 + "\n";
  return t;
}

/// Reads a cell file written by `cell_text`; `policy` and `seed` are the cell's expected key (a
/// file of another grid is refused by name).
gs::fgd_run_result read_cell(const std::string& path, gs::fgd_policy_kind policy,
                             std::uint64_t seed, const cell_grid& grid) {
  std::ifstream in = gs::open_input(path);
  std::string line;
  std::size_t n = 0;
  gs::fgd_run_result r;
  const auto whole = [&](const std::string& v, const std::string& field) {
    const auto x = gs::parse_integer<std::uint64_t>(v);
    if (!x.ok()) throw gs::parse_error(path, n, field, gs::number_problem(v, x.status));
    return x.value;
  };
  const auto real = [&](const std::string& v, const std::string& field) {
    const auto x = gs::parse_real(v);
    if (!x.ok()) throw gs::parse_error(path, n, field, gs::number_problem(v, x.status));
    return x.value;
  };
  std::size_t seen = 0;
  cell_grid got;                             // the grid the cell records
  std::map<std::string, std::size_t> where;  // field -> its line
  while (std::getline(in, line)) {
    ++n;
    if (n == 1) {
      if (line == "gpusched-experiment packing cell 1") {
        throw gs::parse_error(path, n, "(header)",
                              "a cell file of an older gpusched-experiment (format 1 records "
                              "no options to check): run the cell again");
      }
      if (line != "gpusched-experiment packing cell 2") {
        throw gs::parse_error(path, n, "(header)", "not a packing cell file");
      }
      continue;
    }
    std::istringstream words(line);
    std::string key, v;
    words >> key;
    ++seen;
    if (key == "alloc" || key == "frag" || key == "frag_ratio") {
      auto& out = key == "alloc" ? r.alloc : key == "frag" ? r.frag : r.frag_ratio;
      while (words >> v) out.push_back(real(v, key));
      continue;
    }
    words >> v;
    if (key == "policy") {
      r.policy = static_cast<gs::fgd_policy_kind>(whole(v, key));
    } else if (key == "seed") {
      r.seed = whole(v, key);
    } else if (key == "tune") {
      r.tune = real(v, key);
      where[key] = n;
    } else if (key == "total_gpus") {
      r.total_gpus = static_cast<std::int64_t>(whole(v, key));
    } else if (key == "pods") {
      r.pods = whole(v, key);
    } else if (key == "placed") {
      r.placed = whole(v, key);
    } else if (key == "failed") {
      r.failed = whole(v, key);
    } else if (key == "seconds") {
      r.seconds = real(v, key);
    } else if (key == "popularity") {
      got.popularity = real(v, key);
      where[key] = n;
    } else if (key == "random_ties" || key == "name_order") {
      if (v != "0" && v != "1") throw gs::parse_error(path, n, key, "'" + v + "' is not 0 or 1");
      (key == "random_ties" ? got.random_ties : got.name_order) = v == "1";
      where[key] = n;
    } else if (key == "nodes_sha256" || key == "pods_sha256") {
      (key == "nodes_sha256" ? got.nodes_sha256 : got.pods_sha256) = v;
      where[key] = n;
    } else {
      throw gs::parse_error(path, n, key, "unknown field");
    }
  }
  if (seen != 16 || r.alloc.empty() || r.alloc.size() != r.frag.size() ||
      r.alloc.size() != r.frag_ratio.size()) {
    throw gs::parse_error(path, n, "(file)", "incomplete cell file (an unfinished task?)");
  }
  if (r.policy != policy || r.seed != seed) {
    throw gs::parse_error(path, 2, "policy/seed",
                          "the cell is " + std::string(gs::fgd_policy_label(r.policy)) + " seed " +
                              std::to_string(r.seed) + ", this grid expects " +
                              std::string(gs::fgd_policy_label(policy)) + " seed " +
                              std::to_string(seed) + " (a folder of another run?)");
  }
  // The options and inputs the cell was made with must be this grid's.
  const auto differ = [&](const std::string& field, const std::string& option,
                          const std::string& cell_v, const std::string& grid_v) {
    if (cell_v == grid_v) return;
    const auto it = where.find(field);
    throw gs::parse_error(path, it != where.end() ? it->second : 0, field,
                          "the cell was made with " + option + " " + cell_v +
                              ", this grid has " + option + " " + grid_v +
                              " (a cell of another run: run it again with this grid's options)");
  };
  differ("tune", "--tune", gs::detail::num(r.tune), gs::detail::num(grid.tune));
  differ("popularity", "--popularity", gs::detail::num(got.popularity),
         gs::detail::num(grid.popularity));
  const auto flag = [](bool b) { return std::string(b ? "on" : "off"); };
  differ("random_ties", "--random-ties", flag(got.random_ties), flag(grid.random_ties));
  differ("name_order", "--name-order", flag(got.name_order), flag(grid.name_order));
  differ("nodes_sha256", "a --nodes file of SHA-256", got.nodes_sha256, grid.nodes_sha256);
  differ("pods_sha256", "a --pods file of SHA-256", got.pods_sha256, grid.pods_sha256);
  return r;
}

/// `s` as one word of a POSIX shell script: in single quotes, each ' written as '\'' (no
/// character is special inside single quotes, a newline included). The one quoting routine of
/// every script and command line the programs generate. A NUL byte (which no argument or path
/// can hold) is refused, naming `what`.
std::string shell_quote(const std::string& s, const std::string& what = "a value") {
  if (s.find('\0') != std::string::npos) {
    throw usage_error(what + ": holds a NUL byte, which no script can hold");
  }
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

/// --slurm-array: writes OUT/slurm/array.sh (task i runs cell i into OUT/cells/<i>) and
/// OUT/slurm/merge.sh (builds OUT as a local run would, its table in OUT/slurm/table.txt), and
/// with --submit submits both, the merge after the whole array (afterok). The tasks run this
/// program with the same options (paths made absolute: a task runs in the submit directory).
/// Every word a user supplied (paths, option values) reaches the scripts through shell_quote
/// only: the #SBATCH lines hold constants, and each task sends its output to
/// OUT/slurm/task-<i>.out (merge.out for the merge) with a quoted redirection.
int write_slurm_array(const experiment_args& o, std::size_t n_cells) {
  namespace fs = std::filesystem;
  const fs::path out = fs::absolute(o.out);
  const fs::path dir = out / "slurm";
  gpusched_experiment::check_out_root(out);
  gpusched_experiment::make_out_dirs(out, "slurm");
  // The tasks' folders' parent, made here (never through a link) so that a task's --out is
  // a fresh folder inside a checked one.
  gpusched_experiment::make_out_dirs(out, "cells");
  const std::string self = fs::canonical("/proc/self/exe").string();
  // The command's own words, less those that choose the mode, the output and the threads.
  std::vector<std::string> base;
  for (std::size_t i = 2; i < g_command.size(); ++i) {
    const std::string& a = g_command[i];
    if (a == "--slurm-array" || a == "--submit" || a == "--progress") continue;
    if (a == "--out" || a == "--jobs") {
      ++i;
      continue;
    }
    if (a.rfind("--out=", 0) == 0 || a.rfind("--jobs=", 0) == 0) continue;
    base.push_back(a);
    const bool path_next = a == "--nodes" || a == "--pods" || a == "--published";
    if (path_next && i + 1 < g_command.size()) base.push_back(fs::absolute(g_command[++i]).string());
  }
  std::string cmd = shell_quote(self, "the program's path") + " " + shell_quote(o.subcommand);
  for (const auto& a : base) cmd += " " + shell_quote(a, "argument '" + a + "'");
  // The subcommand is one of the parser's own words (packing), never a user's text.
  if (o.subcommand.empty() || o.subcommand.find_first_not_of("abcdefghijklmnopqrstuvwxyz") != std::string::npos) {
    throw std::logic_error("write_slurm_array: subcommand '" + o.subcommand + "'");
  }
  // No link planted in OUT after the generator ran redirects a write of the scripts: each
  // refuses a symbolic link at the folders and files it writes (OUT/slurm, OUT/cells, the
  // task's folder, its log, the table), removes a stale log or table and creates it anew with
  // noclobber (O_EXCL: a link planted in between makes the redirection fail). The task's own
  // folder is also refused as a link by the program (--cell opens its --out no-follow).
  const std::string guard =
      "set -o noclobber\n"
      "refuse_link() {\n"
      "  local p\n"
      "  for p in \"$@\"; do\n"
      "    if [ -L \"${p}\" ]; then\n"
      "      echo \"$0: ${p} is a symbolic link: refusing to write through it (remove it)\" >&2\n"
      "      exit 1\n"
      "    fi\n"
      "  done\n"
      "}\n"
      "fresh() { refuse_link \"$1\"; rm -f -- \"$1\"; }  # a stale file goes; noclobber makes it anew\n"
      "out=" + shell_quote(out.string(), "--out") + "\n"
      "refuse_link \"${out}/slurm\" \"${out}/cells\"\n";
  std::string array = "#!/bin/bash\n"
                      "# Written by gpusched-experiment --slurm-array: task i runs cell i of the\n"
                      "# grid (in the order of the printed rows) into cells/<i>; its output goes to\n"
                      "# slurm/task-<i>.out.\n"
                      "#SBATCH --job-name=gpusched-" + o.subcommand + "\n"
                      "#SBATCH --array=0-" + std::to_string(n_cells - 1) + "\n"
                      "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n"
                      "#SBATCH --output=/dev/null\n"
                      "set -euo pipefail\n" + guard +
                      "id=\"${SLURM_ARRAY_TASK_ID}\"\n"
                      "case \"${id}\" in ''|*[!0-9]*) echo \"$0: SLURM_ARRAY_TASK_ID '${id}' is not a task number\" >&2; exit 1 ;; esac\n"
                      "refuse_link \"${out}/cells/${id}\"\n"
                      "fresh \"${out}/slurm/task-${id}.out\"\n"
                      "exec >\"${out}/slurm/task-${id}.out\" 2>&1\n"
                      "exec " + cmd + " --jobs 1 --cell \"${id}\" --out \"${out}/cells/${id}\"\n";
  std::string merge = "#!/bin/bash\n"
                      "# Written by gpusched-experiment --slurm-array: after every task, builds the\n"
                      "# outputs of a local run (the table in slurm/table.txt, messages in\n"
                      "# slurm/merge.out).\n"
                      "#SBATCH --job-name=gpusched-" + o.subcommand + "-merge\n"
                      "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n"
                      "#SBATCH --output=/dev/null\n"
                      "set -euo pipefail\n" + guard +
                      "fresh \"${out}/slurm/merge.out\"\n"
                      "exec 2>\"${out}/slurm/merge.out\"\n"
                      "fresh \"${out}/slurm/table.txt\"\n" +
                      cmd + " --merge \"${out}/cells\" --out \"${out}\" >\"${out}/slurm/table.txt\"\n";
  gpusched_experiment::write_out_file(out, "slurm/array.sh", array, true);
  gpusched_experiment::write_out_file(out, "slurm/merge.sh", merge, true);
  const std::string array_q = shell_quote((dir / "array.sh").string(), "--out");
  const std::string merge_q = shell_quote((dir / "merge.sh").string(), "--out");
  std::printf("wrote %s (%zu tasks) and %s\n", (dir / "array.sh").c_str(), n_cells,
              (dir / "merge.sh").c_str());
  if (!o.submit) {
    std::printf("submit: id=$(sbatch --parsable %s) && sbatch --dependency=afterok:${id%%%%;*} %s\n",
                array_q.c_str(), merge_q.c_str());
    return 0;
  }
  const auto run = [](const std::string& c) {
    std::string text;
    FILE* p = ::popen(c.c_str(), "r");
    if (p == nullptr) throw std::runtime_error("cannot run: " + c);
    char buf[256];
    while (std::fgets(buf, sizeof buf, p) != nullptr) text += buf;
    const int rc = ::pclose(p);
    if (rc != 0) throw std::runtime_error("'" + c + "' failed (exit " + std::to_string(rc) + ")");
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    return text;
  };
  std::string id = run("sbatch --parsable " + array_q);
  id = id.substr(0, id.find(';'));
  // The job id is sbatch's answer: digits only, or it is not put into a command.
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    throw std::runtime_error("sbatch answered '" + id + "', not a job id");
  }
  const std::string mid = run("sbatch --parsable --dependency=afterok:" + id + " " + merge_q);
  std::printf("submitted: array job %s (%zu tasks), merge job %s after it\n", id.c_str(), n_cells,
              mid.substr(0, mid.find(';')).c_str());
  return 0;
}

int run_packing(const experiment_args& o) {
  const auto& nodes_path = o.nodes;
  const auto& pods_path = o.pods;
  const auto& policies = o.policies;
  const auto& seeds = o.seeds;
  const double tune = o.tune;
  const double popularity = o.popularity;
  const bool timing = o.timing;
  const std::string workload =
      o.workload.empty() ? std::filesystem::path(pods_path).stem().string() : o.workload;

  g_stage = "loading " + nodes_path + " and " + pods_path;
  gpusched_experiment::input_files files;  // each input read once (run.json hashes those bytes)
  const gs::fgd_experiment exp(load_nodes(nodes_path, files), load_pods(pods_path, files));
  const std::size_t n_cells = policies.size() * seeds.size();
  // The published table is read (and checked) before any cell runs.
  const auto last = static_cast<std::size_t>(std::lround(tune * 100));
  const std::string last_s = std::to_string(last);
  published_means pub;
  const bool have_pub = !o.published.empty();
  g_stage = "reading the published table " + o.published;
  if (have_pub) pub = read_published(o.published, workload, last_s, files);
  const cell_grid grid{tune,
                       popularity,
                       o.random_ties,
                       o.name_order,
                       files.digest(nodes_path).sha256,
                       files.digest(pods_path).sha256};
  if (o.slurm_array) return write_slurm_array(o, n_cells);
  if (o.cell) {
    // One cell of the grid into --out (a Slurm array task): cell.txt, read back by --merge.
    if (*o.cell >= n_cells) {
      throw usage_error("packing: --cell: '" + std::to_string(*o.cell) + "' is not in 0.." +
                        std::to_string(n_cells - 1) + " (" + std::to_string(n_cells) + " cells)");
    }
    gs::fgd_run_config cfg;
    cfg.policy = policies[*o.cell / seeds.size()];
    cfg.seed = seeds[*o.cell % seeds.size()];
    cfg.tune = tune;
    cfg.popularity = popularity;
    cfg.random_ties = o.random_ties;
    cfg.permute_nodes = !o.name_order;
    // --out is checked before the cell runs: a task never computes what it cannot keep. A
    // cell's --out is its own folder (a --slurm-array task's OUT/cells/<i>, inside the grid's
    // --out): a symbolic link planted at it is refused, never written through.
    g_stage = "preparing --out " + o.out;
    const auto no_link = gpusched_experiment::out_root::no_link;
    gpusched_experiment::check_out_root(o.out, no_link);
    g_stage = "running cell " + std::to_string(*o.cell);
    const auto r = exp.run(cfg);
    gpusched_experiment::write_out_file(o.out, "cell.txt", cell_text(r, grid), false, no_link);
    std::printf("cell %zu (%s, seed %llu) written to %s\n", *o.cell,
                std::string(gs::fgd_policy_label(cfg.policy)).c_str(),
                static_cast<unsigned long long>(cfg.seed), o.out.c_str());
    return 0;
  }
  if (!o.out.empty()) {
    std::vector<std::pair<std::string, std::string>> inputs{{"nodes", nodes_path},
                                                            {"pods", pods_path}};
    if (!o.published.empty()) inputs.emplace_back("published", o.published);
    std::vector<std::string> names;
    for (const auto k : policies) names.emplace_back(gs::fgd_policy_label(k));
    start_out_dir(o.out, "packing", inputs, files,
                  {{"workload", gs::detail::json_string(workload)},
                   {"policies", json_strings(names)},
                   {"seeds", json_array(seeds)},
                   {"tune", gs::detail::num(tune)},
                   {"popularity", gs::detail::num(popularity)},
                   {"random_ties", o.random_ties ? "true" : "false"},
                   {"name_order", o.name_order ? "true" : "false"},
                   {"nodes", std::to_string(exp.node_count())},
                   {"gpus", std::to_string(exp.total_gpus())},
                   {"pods", std::to_string(exp.pod_count())}});
  }
  g_stage = "running the packing experiment";
  std::printf("FGD packing experiment: %zu nodes, %lld GPUs, %zu pods (%s), tune %g, %zu seed(s)\n",
              exp.node_count(), static_cast<long long>(exp.total_gpus()), exp.pod_count(),
              workload.c_str(), tune, seeds.size());
  std::printf("%-17s %5s %8s %8s %8s %8s %8s %7s%s\n", "policy", "seed", "pods", "failed",
              "alloc100", "unalc100", ("unalc" + last_s).c_str(), "frag100",
              timing ? "   wall_s" : "");
  std::vector<gs::fgd_run_result> runs;
  std::map<gs::fgd_policy_kind, std::pair<double, double>> mean;
  // The (policy, seed) cells run on --jobs threads; each row is printed in cell order, so the
  // output is the same bytes for every --jobs (with --no-timing).
  std::vector<gs::fgd_run_result> cell(n_cells);
  gpusched_experiment::grid_progress progress(
      std::cerr, o.progress, gpusched_experiment::grid_progress::stderr_is_terminal());
  std::atomic<std::size_t> cells_done{0};
  const auto run_cell = [&](std::size_t i) {
    gs::fgd_run_config cfg;
    cfg.policy = policies[i / seeds.size()];
    cfg.seed = seeds[i % seeds.size()];
    cfg.tune = tune;
    cfg.popularity = popularity;
    cfg.random_ties = o.random_ties;
    cfg.permute_nodes = !o.name_order;
    cell[i] = exp.run(cfg);
    const auto d = ++cells_done;
    progress.report(std::to_string(d) + "/" + std::to_string(n_cells) + " cells done, " +
                        progress.timing(static_cast<double>(d) / static_cast<double>(n_cells)),
                    d == n_cells);
  };
  const auto hand_back = [&](std::size_t i) {
    const auto k = policies[i / seeds.size()];
    const auto seed = seeds[i % seeds.size()];
    auto r = std::move(cell[i]);
    std::printf("%-17s %5llu %8zu %8zu %8.2f %8.2f %8.2f %7.2f",
                std::string(gs::fgd_policy_label(k)).c_str(),
                static_cast<unsigned long long>(seed), r.pods, r.failed,
                r.alloc[std::min<std::size_t>(100, r.bins() - 1)], r.unallocated_at(100),
                r.unallocated_at(last), r.frag[std::min<std::size_t>(100, r.bins() - 1)]);
    if (timing) std::printf(" %8.3f", r.seconds);
    std::printf("\n");
    std::fflush(stdout);
    mean[k].first += r.unallocated_at(100) / static_cast<double>(seeds.size());
    mean[k].second += r.unallocated_at(last) / static_cast<double>(seeds.size());
    runs.push_back(std::move(r));
  };
  if (!o.merge.empty()) {
    // The cells of a Slurm array (or any --cell runs), handed back in order as a local run's.
    g_stage = "merging the cells under " + o.merge;
    for (std::size_t i = 0; i < n_cells; ++i) {
      cell[i] = read_cell((std::filesystem::path(o.merge) / std::to_string(i) / "cell.txt").string(),
                          policies[i / seeds.size()], seeds[i % seeds.size()], grid);
      hand_back(i);
    }
  } else {
    gpusched_experiment::run_cells(n_cells,
                                   o.jobs > 0 ? o.jobs : gpusched_experiment::default_jobs(),
                                   run_cell, hand_back);
  }
  std::printf("\nUnallocated GPU %% (mean over %zu seed(s))%s\n", seeds.size(),
              have_pub ? ", ours vs published (FGD artifact, same workload)" : "");
  std::printf("%-17s %9s %9s", "policy", "ours@100", ("ours@" + last_s).c_str());
  if (have_pub)
    std::printf(" %9s %9s %7s %7s", "pub@100", ("pub@" + last_s).c_str(), "d@100",
                ("d@" + last_s).c_str());
  std::printf("\n");
  for (const auto& [k, v] : mean) {
    const std::string label(gs::fgd_policy_label(k));
    std::printf("%-17s %9.2f %9.2f", label.c_str(), v.first, v.second);
    if (have_pub) {
      const auto it = pub.by_label.find(label);
      if (it != pub.by_label.end()) {
        std::printf(" %9.2f %9.2f %+7.2f %+7.2f", it->second.first, it->second.second,
                    v.first - it->second.first, v.second - it->second.second);
      } else {
        std::printf(" %9s %9s", "-", "-");
      }
    }
    std::printf("\n");
  }
  if (!o.out.empty()) {
    g_stage = "writing the tables under " + o.out;
    write_csvs(o.out, workload, runs);
    std::printf(
        "\nwrote analysis_allo_discrete.csv, analysis_frag_discrete.csv, "
        "analysis_frag_ratio_discrete.csv to %s\n",
        o.out.c_str());
  }
  return 0;
}

/// The MIG variant: the packing experiment's pods and seeded workload on a MIG-partitioned
/// copy of the cluster (benchmarks/experiment/mig_experiment.hpp).
int run_mig(const experiment_args& o) {
  const auto& nodes_path = o.nodes;
  const auto& pods_path = o.pods;
  const std::string& model = o.model;
  const std::string& cover_s = o.cover;
  const auto cover = cover_s == "compute" ? gs::mig_cover::compute : gs::mig_cover::memory;
  const auto& policies = o.mig_policies;
  const auto& seeds = o.seeds;
  const double tune = o.tune;
  const bool timing = o.timing;
  const bool fractional = o.fractional;
  const std::string workload =
      o.workload.empty() ? std::filesystem::path(pods_path).stem().string() : o.workload;

  g_stage = "loading " + nodes_path + " and " + pods_path;
  gpusched_experiment::input_files files;  // each input read once (run.json hashes those bytes)
  const gs::mig_experiment exp(load_nodes(nodes_path, files), load_pods(pods_path, files), model,
                               cover);
  if (!o.out.empty()) {
    std::vector<std::string> names;
    for (const auto k : policies) names.emplace_back(gs::mig_policy_label(k));
    if (fractional) names.emplace_back(gs::fgd_policy_label(gs::fgd_policy_kind::fgd));
    start_out_dir(o.out, "mig", {{"nodes", nodes_path}, {"pods", pods_path}}, files,
                  {{"workload", gs::detail::json_string(workload)},
                   {"model", gs::detail::json_string(model)},
                   {"cover", gs::detail::json_string(cover_s)},
                   {"policies", json_strings(names)},
                   {"seeds", json_array(seeds)},
                   {"tune", gs::detail::num(tune)},
                   {"nodes", std::to_string(exp.node_count())},
                   {"gpus", std::to_string(exp.total_gpus())},
                   {"pods", std::to_string(exp.pod_count())}});
  }
  g_stage = "running the MIG experiment";
  std::printf(
      "MIG packing experiment: %zu nodes, %lld GPUs (%s, MIG on every GPU), %zu pods (%s), "
      "cover %s, tune %g, %zu seed(s)\n",
      exp.node_count(), static_cast<long long>(exp.total_gpus()), model.c_str(), exp.pod_count(),
      workload.c_str(), cover_s.c_str(), tune, seeds.size());
  const auto last = static_cast<std::size_t>(std::lround(tune * 100));
  const std::string last_s = std::to_string(last);
  std::printf("%-13s %5s %7s %7s %7s %8s %8s %8s %8s%s\n", "policy", "seed", "pods", "failed",
              "served%", "alloc100", "unalc100", ("unalc" + last_s).c_str(), "used100",
              timing ? "   wall_s" : "");
  struct mean_row {
    double unalc100 = 0, unalc_last = 0, served = 0, used100 = 0;
  };
  std::vector<std::pair<std::string, mean_row>> means;
  const auto row = [&](const std::string& label, std::uint64_t seed, std::size_t pods,
                       std::size_t failed, double served, const std::vector<double>& alloc,
                       const std::vector<double>& used, double seconds) {
    const auto at = [](const std::vector<double>& v, std::size_t k) {
      return v[std::min(k, v.size() - 1)];
    };
    std::printf("%-13s %5llu %7zu %7zu %7.2f %8.2f %8.2f %8.2f %8.2f", label.c_str(),
                static_cast<unsigned long long>(seed), pods, failed, served, at(alloc, 100),
                100.0 - at(alloc, 100), 100.0 - at(alloc, last), at(used, 100));
    if (timing) std::printf(" %8.3f", seconds);
    std::printf("\n");
    if (means.empty() || means.back().first != label) means.emplace_back(label, mean_row{});
    auto& m = means.back().second;
    const auto n = static_cast<double>(seeds.size());
    m.unalc100 += (100.0 - at(alloc, 100)) / n;
    m.unalc_last += (100.0 - at(alloc, last)) / n;
    m.served += served / n;
    m.used100 += at(used, 100) / n;
  };
  std::vector<gs::mig_run_result> runs;
  std::vector<gs::fgd_run_result> fgd_runs;
  // Cells: (MIG policy, seed), then (fractional FGD, seed); run on --jobs threads, printed in
  // cell order (the same bytes for every --jobs, with --no-timing).
  const std::size_t n_mig = policies.size() * seeds.size();
  const std::size_t n_cells = n_mig + (fractional ? seeds.size() : 0);
  std::vector<gs::mig_run_result> mig_cell(n_mig);
  std::vector<gs::fgd_run_result> fgd_cell(n_cells - n_mig);
  gpusched_experiment::grid_progress progress(
      std::cerr, o.progress, gpusched_experiment::grid_progress::stderr_is_terminal());
  std::atomic<std::size_t> cells_done{0};
  const auto run_cell = [&](std::size_t i) {
    if (i < n_mig) {
      gs::mig_run_config cfg;
      cfg.policy = policies[i / seeds.size()];
      cfg.seed = seeds[i % seeds.size()];
      cfg.tune = tune;
      cfg.check_invariants = o.check_invariants;
      mig_cell[i] = exp.run(cfg);
    } else {
      gs::fgd_run_config cfg;
      cfg.policy = gs::fgd_policy_kind::fgd;
      cfg.seed = seeds[i - n_mig];
      cfg.tune = tune;
      fgd_cell[i - n_mig] = exp.fractional().run(cfg);
    }
    const auto d = ++cells_done;
    progress.report(std::to_string(d) + "/" + std::to_string(n_cells) + " cells done, " +
                        progress.timing(static_cast<double>(d) / static_cast<double>(n_cells)),
                    d == n_cells);
  };
  const auto hand_back = [&](std::size_t i) {
    if (i < n_mig) {
      const auto k = policies[i / seeds.size()];
      const auto seed = seeds[i % seeds.size()];
      auto r = std::move(mig_cell[i]);
      if (!r.violations.empty()) {
        throw std::runtime_error("invariant violated (" + std::string(gs::mig_policy_label(k)) +
                                 ", seed " + std::to_string(seed) + "): " + r.violations.front());
      }
      row(std::string(gs::mig_policy_label(k)), seed, r.pods, r.failed, r.served_pct(), r.alloc,
          r.used, r.seconds);
      runs.push_back(std::move(r));
    } else {
      auto r = std::move(fgd_cell[i - n_mig]);
      const double served =
          r.pods == 0 ? 100.0 : 100.0 * static_cast<double>(r.placed) / static_cast<double>(r.pods);
      // Fractional shares: what is allocated is what the placed pods asked for.
      row(std::string(gs::fgd_policy_label(r.policy)), seeds[i - n_mig], r.pods, r.failed, served,
          r.alloc, r.alloc, r.seconds);
      fgd_runs.push_back(std::move(r));
    }
    std::fflush(stdout);
  };
  gpusched_experiment::run_cells(n_cells, o.jobs > 0 ? o.jobs : gpusched_experiment::default_jobs(),
                                 run_cell, hand_back);
  std::printf(
      "\nMean over %zu seed(s): unallocated GPU %% (free compute slices; fractional: free "
      "share), pods served %%, GPU share used by placed pods %%\n",
      seeds.size());
  std::printf("%-13s %9s %9s %8s %8s\n", "policy", "unalc@100", ("unalc@" + last_s).c_str(),
              "served%", "used@100");
  for (const auto& [label, m] : means) {
    std::printf("%-13s %9.2f %9.2f %8.2f %8.2f\n", label.c_str(), m.unalc100, m.unalc_last,
                m.served, m.used100);
  }
  if (!o.out.empty()) {
    g_stage = "writing the tables under " + o.out;
    const std::filesystem::path dir = o.out;
    std::vector<csv_row> allo, used;
    for (const auto& r : runs) {
      allo.push_back(
          {std::string(gs::mig_policy_label(r.policy)), r.tune, r.seed, r.total_gpus, &r.alloc});
      used.push_back(allo.back());
      used.back().values = &r.used;
    }
    for (const auto& r : fgd_runs) {
      allo.push_back(
          {std::string(gs::fgd_policy_label(r.policy)), r.tune, r.seed, r.total_gpus, &r.alloc});
      used.push_back(allo.back());
    }
    write_discrete_csv(dir, "analysis_allo_discrete.csv", workload, allo, true, "%.2f");
    write_discrete_csv(dir, "analysis_used_discrete.csv", workload, used, true, "%.2f");
    std::printf("\nwrote analysis_allo_discrete.csv, analysis_used_discrete.csv to %s\n",
                dir.string().c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  g_command.assign(argv, argv + argc);
  std::string sub = args.empty() ? std::string() : args.front();
  try {
    const auto cmd = gpusched_experiment::parse_experiment_command(args);
    if (cmd.what == gpusched_experiment::parsed_command::kind::help) {
      std::fputs(cmd.help.c_str(), stdout);
      return 0;
    }
    // `replay` parses its own options (benchmarks/replay/replay.hpp); argv[0] is its name.
    if (cmd.what == gpusched_experiment::parsed_command::kind::replay) {
      return gpusched_experiment::run_replay(argc - 1, argv + 1);
    }
    sub = cmd.args.subcommand;
    return sub == "packing" ? run_packing(cmd.args) : run_mig(cmd.args);
  } catch (const usage_error& e) {
    const std::string what = e.what();
    const bool named = what.starts_with("packing: ") || what.starts_with("mig: ");
    std::fprintf(stderr, "gpusched-experiment%s%s\n(gpusched-experiment %s--help for usage)\n",
                 named ? " " : ": ", what.c_str(), named ? (sub + " ").c_str() : "");
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "gpusched-experiment %s: out of memory while %s\n", sub.c_str(),
                 g_stage.c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpusched-experiment %s: %s (while %s)\n", sub.c_str(), e.what(),
                 g_stage.c_str());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "gpusched-experiment %s: unknown exception while %s\n", sub.c_str(),
                 g_stage.c_str());
    return 1;
  }
}
