// SPDX-License-Identifier: Apache-2.0
// Independent cells of an experiment grid ((composition, seed) pairs) run on N threads, with
// results handed back in cell order, so that every output is the same bytes for every N.
// Shared by gpusched-replay and gpusched-experiment (packing, mig, replay).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>  // isatty

namespace gpusched_experiment {

/// The machine's cores (at least 1): the default of --jobs.
inline unsigned default_jobs() { return std::max(1u, std::thread::hardware_concurrency()); }

/// Runs `run(i)` for i in [0, cells) on `jobs` threads (at most `cells`; 1 runs them in the
/// calling thread, in order). `done(i)` is called once per cell, in increasing i, under a lock,
/// as soon as cells 0..i have all finished: print or collect there, and the output is the same
/// as a sequential run's. A cell that throws stops the hand-out of new cells; after the running
/// ones finish, the exception of the lowest such cell is rethrown (cells after it are not
/// handed to `done`).
inline void run_cells(std::size_t cells, unsigned jobs, const std::function<void(std::size_t)>& run,
                      const std::function<void(std::size_t)>& done) {
  if (cells == 0) return;
  if (jobs <= 1 || cells == 1) {
    for (std::size_t i = 0; i < cells; ++i) {
      run(i);
      done(i);
    }
    return;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex m;
  std::vector<char> finished(cells, 0);
  std::vector<std::exception_ptr> errors(cells);
  std::size_t handed = 0;  // cells 0..handed-1 were given to `done`
  const auto worker = [&] {
    while (!stop.load()) {
      const std::size_t i = next.fetch_add(1);
      if (i >= cells) return;
      std::exception_ptr e;
      try {
        run(i);
      } catch (...) {
        e = std::current_exception();
        stop = true;
      }
      const std::lock_guard lock(m);
      finished[i] = 1;
      errors[i] = e;
      while (handed < cells && finished[handed] && !errors[handed]) done(handed++);
    }
  };
  {
    std::vector<std::jthread> pool;
    const unsigned n = static_cast<unsigned>(std::min<std::size_t>(jobs, cells));
    for (unsigned t = 0; t < n; ++t) pool.emplace_back(worker);
  }
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

/// A progress report on standard error for a whole grid: one line rewritten in place on a
/// terminal (at most once a second), plain lines every 10 s otherwise (a log file). Thread-safe.
class grid_progress {
 public:
  grid_progress(std::ostream& err, bool on, bool terminal)
      : err_(err), on_(on), terminal_(terminal), start_(clock::now()), last_(start_) {}
  /// Whether standard error is a terminal.
  static bool stderr_is_terminal() { return ::isatty(2) == 1; }
  [[nodiscard]] bool on() const noexcept { return on_; }
  /// Seconds since the start.
  [[nodiscard]] double elapsed() const {
    return std::chrono::duration<double>(clock::now() - start_).count();
  }
  /// "elapsed 12 s, ETA 25 s" for `fraction` (0..1) of the work done.
  [[nodiscard]] std::string timing(double fraction) const {
    const double e = elapsed();
    std::string s = "elapsed " + seconds(e);
    if (fraction > 0 && fraction < 1) s += ", ETA " + seconds(e * (1 - fraction) / fraction);
    return s;
  }
  /// Prints `line` if the interval passed (or `force`); rewritten in place on a terminal.
  void report(const std::string& line, bool force = false) {
    if (!on_) return;
    const std::lock_guard lock(m_);
    const auto now = clock::now();
    if (!force && now - last_ < (terminal_ ? std::chrono::seconds(1) : std::chrono::seconds(10))) {
      return;
    }
    last_ = now;
    if (terminal_) {
      err_ << "\r" << line << "\x1b[K" << (force ? "\n" : "") << std::flush;
    } else {
      err_ << line << "\n" << std::flush;
    }
  }

 private:
  using clock = std::chrono::steady_clock;
  static std::string seconds(double s) {
    char buf[32];
    if (s < 100) {
      std::snprintf(buf, sizeof buf, "%.1f s", s);
    } else {
      std::snprintf(buf, sizeof buf, "%.0f s", s);
    }
    return buf;
  }
  std::ostream& err_;
  bool on_, terminal_;
  clock::time_point start_, last_;
  std::mutex m_;
};

}  // namespace gpusched_experiment
