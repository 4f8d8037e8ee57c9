// SPDX-License-Identifier: Apache-2.0
// What both programs (gpusched-replay, gpusched-experiment) write into --out besides their
// tables: files written whole (a temporary name, then a rename), never through a link planted
// inside --out (make_out_dirs, write_out_file: the one way both programs write there), and `run.json`, the record of
// how an output folder was made (command line, input files and their SHA-256, options, library
// version, start time). Header-only; no dependency beyond the library.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <gpusched/core/error.hpp>
#include <gpusched/core/parse.hpp>
#include <gpusched/metrics/report.hpp>  // detail::json_string, detail::num
#include <gpusched/version.hpp>

namespace gpusched_experiment {

namespace detail {

/// An open file descriptor, closed when it goes.
class fd_holder {
 public:
  explicit fd_holder(int fd = -1) noexcept : fd_(fd) {}
  fd_holder(fd_holder&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  fd_holder& operator=(fd_holder&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  fd_holder(const fd_holder&) = delete;
  fd_holder& operator=(const fd_holder&) = delete;
  ~fd_holder() { reset(); }
  [[nodiscard]] int get() const noexcept { return fd_; }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

[[noreturn]] inline void out_error(const std::filesystem::path& p, const std::string& what) {
  throw gpusched::parse_error(p.string(), 0, "--out", what);
}

/// The components of `rel`, which must be relative and free of "." and "..".
inline std::vector<std::string> out_components(const std::filesystem::path& root,
                                               const std::filesystem::path& rel) {
  std::vector<std::string> parts;
  if (rel.is_absolute()) out_error(root / rel, "is not a name inside --out");
  for (const auto& c : rel) {
    const std::string s = c.string();
    if (s.empty()) continue;
    if (s == "." || s == "..") {
      out_error(root / rel, "'" + s + "' may not be part of a name written under --out");
    }
    if (s.find('\0') != std::string::npos) out_error(root / rel, "holds a NUL byte");
    parts.push_back(s);
  }
  if (parts.empty()) out_error(root / rel, "is not a name inside --out");
  return parts;
}

/// Why `root` could not be made as a folder: a dangling symbolic link is named as one (the
/// system's message would only say "File exists").
inline std::string cannot_create(const std::filesystem::path& root, const std::error_code& ec) {
  std::error_code e2;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(root, e2))) {
    const auto target = std::filesystem::read_symlink(root, e2);
    return "is a symbolic link to '" + target.string() +
           "', which is not a folder (a dangling link?): cannot create the folder: " + ec.message();
  }
  return "cannot create the folder: " + ec.message();
}

inline fd_holder open_out_subdir(int dir, const std::string& name, const std::filesystem::path& shown);

/// Opens the --out folder `root` itself as a directory descriptor, made when missing. By
/// default it is the user's own path, followed as given; with `no_link` (out_root::no_link:
/// the folder a generated script names, e.g. a --slurm-array task's
/// OUT/cells/<i>) its last component must not be a link: a link planted there is refused.
inline fd_holder open_out_root(const std::filesystem::path& root, bool no_link = false) {
  std::filesystem::path r = root.lexically_normal();
  if (!r.empty() && !r.has_filename()) r = r.parent_path();  // "a/b/" -> "a/b"
  const std::string last = r.filename().string();
  if (no_link && !last.empty() && last != "." && last != "..") {
    const std::filesystem::path parent = r.has_parent_path() ? r.parent_path() : ".";
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) out_error(parent, cannot_create(parent, ec));
    fd_holder up(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (up.get() < 0) out_error(parent, std::string("cannot open the folder: ") + std::strerror(errno));
    return open_out_subdir(up.get(), last, root);
  }
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) out_error(root, cannot_create(root, ec));
  fd_holder fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) out_error(root, std::string("cannot open the folder: ") + std::strerror(errno));
  return fd;
}

/// Opens (and makes, when missing) the folder `name` inside `dir`, never through a link.
inline fd_holder open_out_subdir(int dir, const std::string& name, const std::filesystem::path& shown) {
  if (::mkdirat(dir, name.c_str(), 0777) != 0 && errno != EEXIST) {
    out_error(shown, std::string("cannot create the folder: ") + std::strerror(errno));
  }
  fd_holder fd(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    struct stat st {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
      out_error(shown, "is a symbolic link: refusing to write through it (remove it)");
    }
    out_error(shown, std::string("cannot open the folder: ") + std::strerror(errno));
  }
  return fd;
}

/// The folder `rel` inside `root`, made component by component.
inline fd_holder open_out_dirs(const std::filesystem::path& root, const std::vector<std::string>& parts,
                               std::size_t count, bool no_link) {
  fd_holder fd = open_out_root(root, no_link);
  std::filesystem::path shown = root;
  for (std::size_t i = 0; i < count; ++i) {
    shown /= parts[i];
    fd = open_out_subdir(fd.get(), parts[i], shown);
  }
  return fd;
}

}  // namespace detail

/// Everything both programs create under --out goes through make_out_dirs and write_out_file:
/// the one way to write there. `root` is the --out folder as the user gave it (made when
/// missing); every folder and file below it is created relative to the folder's descriptor
/// (mkdirat, openat with O_NOFOLLOW and O_EXCL, renameat), so a symbolic link planted at any
/// name inside --out never redirects a write: a linked folder is refused with an error that
/// names it, a linked file is replaced, never written through. `rel` must be relative, without
/// "." or "..".
/// @throws gpusched::parse_error naming the path when it cannot be made or written.
/// How the --out folder itself is opened: `follow` (the user's own path, followed as given) or
/// `no_link` (a folder named by a generated script, such as a --slurm-array task's
/// OUT/cells/<i>: a symbolic link at its last component is refused, like one at any name
/// below it).
enum class out_root { follow, no_link };

inline void make_out_dirs(const std::filesystem::path& root, const std::filesystem::path& rel,
                          out_root mode = out_root::follow) {
  const auto parts = detail::out_components(root, rel);
  (void)detail::open_out_dirs(root, parts, parts.size(), mode == out_root::no_link);
}

/// Checks before any work that the --out folder `root` can be made and written (the programs
/// call it first: nothing runs for an output that cannot be kept).
inline void check_out_root(const std::filesystem::path& root, out_root mode = out_root::follow) {
  if (mode == out_root::follow) {
    std::error_code ec;
    std::filesystem::create_directories(root, ec);
    if (ec) detail::out_error(root, detail::cannot_create(root, ec) + " (nothing was run)");
  }
  const auto fd = detail::open_out_root(root, mode == out_root::no_link);
  if (::faccessat(fd.get(), ".", W_OK, 0) != 0) {
    detail::out_error(root, std::string("cannot write into the folder: ") + std::strerror(errno) +
                                " (nothing was run)");
  }
}

/// Writes `text` to `root / rel` whole: to `<name>.partial` first (a leftover of that name, or
/// a link planted there, is removed, and the temporary is created with O_EXCL | O_NOFOLLOW),
/// then renamed over the name, so an interrupted run never leaves a file that looks complete
/// and a link at the name is replaced by the file. Folders on the way are made as by
/// make_out_dirs. `executable` adds the owner's and group's execute bits.
/// @throws gpusched::parse_error naming the file when it cannot be written.
inline void write_out_file(const std::filesystem::path& root, const std::filesystem::path& rel,
                           std::string_view text, bool executable = false,
                           out_root root_mode = out_root::follow) {
  const auto parts = detail::out_components(root, rel);
  const auto dir =
      detail::open_out_dirs(root, parts, parts.size() - 1, root_mode == out_root::no_link);
  const std::string& name = parts.back();
  const std::string tmp = name + ".partial";
  const std::filesystem::path shown = root / rel;
  if (::unlinkat(dir.get(), tmp.c_str(), 0) != 0 && errno != ENOENT) {
    detail::out_error(shown.string() + ".partial",
                      std::string("cannot remove the leftover temporary: ") + std::strerror(errno));
  }
  const mode_t mode = executable ? 0775 : 0664;
  detail::fd_holder f(
      ::openat(dir.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (f.get() < 0) {
    throw gpusched::parse_error(shown.string() + ".partial", 0, "file",
                                std::string("cannot write: ") + std::strerror(errno));
  }
  std::size_t done = 0;
  while (done < text.size()) {
    const ::ssize_t n = ::write(f.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      f.reset();
      (void)::unlinkat(dir.get(), tmp.c_str(), 0);
      throw gpusched::parse_error(shown.string() + ".partial", 0, "file",
                                  "write failed (disk full?): " + why);
    }
    done += static_cast<std::size_t>(n);
  }
  if (executable) (void)::fchmod(f.get(), mode);  // the umask may have taken the bits
  f.reset();
  if (::renameat(dir.get(), tmp.c_str(), dir.get(), name.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    (void)::unlinkat(dir.get(), tmp.c_str(), 0);
    throw gpusched::parse_error(shown.string(), 0, "file", "cannot put the file in place: " + why);
  }
}

/// SHA-256 (FIPS 180-4) of a byte stream, fed in pieces. O(bytes).
class sha256 {
 public:
  void update(std::string_view data) {
    for (const char c : data) {
      block_[fill_++] = static_cast<std::uint8_t>(c);
      if (fill_ == 64) {
        compress();
        fill_ = 0;
      }
    }
    bytes_ += data.size();
  }
  /// The digest as 64 lowercase hex digits; the object is spent afterwards.
  std::string hex() {
    const std::uint64_t bits = bytes_ * 8;
    block_[fill_++] = 0x80;
    if (fill_ > 56) {
      while (fill_ < 64) block_[fill_++] = 0;
      compress();
      fill_ = 0;
    }
    while (fill_ < 56) block_[fill_++] = 0;
    for (int i = 7; i >= 0; --i) block_[fill_++] = static_cast<std::uint8_t>(bits >> (8 * i));
    compress();
    std::string out;
    constexpr const char* digits = "0123456789abcdef";
    for (const std::uint32_t w : h_) {
      for (int i = 28; i >= 0; i -= 4) out += digits[(w >> i) & 0xF];
    }
    return out;
  }

 private:
  static constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
  void compress() {
    static constexpr std::array<std::uint32_t, 64> k{
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2};
    std::array<std::uint32_t, 64> w{};
    for (std::size_t i = 0; i < 16; ++i) {
      w[i] = static_cast<std::uint32_t>(block_[4 * i]) << 24 |
             static_cast<std::uint32_t>(block_[4 * i + 1]) << 16 |
             static_cast<std::uint32_t>(block_[4 * i + 2]) << 8 |
             static_cast<std::uint32_t>(block_[4 * i + 3]);
    }
    for (std::size_t i = 16; i < 64; ++i) {
      const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    auto [a, b, c, d, e, f, g, h] = h_;
    for (std::size_t i = 0; i < 64; ++i) {
      const std::uint32_t t1 =
          h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    const std::array<std::uint32_t, 8> add{a, b, c, d, e, f, g, h};
    for (std::size_t i = 0; i < 8; ++i) h_[i] += add[i];
  }
  std::array<std::uint32_t, 8> h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<std::uint8_t, 64> block_{};
  std::size_t fill_ = 0;
  std::uint64_t bytes_ = 0;
};

/// A file's SHA-256 and size, read in 64 KiB pieces (bounded memory).
struct file_digest {
  std::string sha256;
  std::uintmax_t bytes = 0;
};
/// The input files of one run, each read once: the loaders parse the bytes kept here and
/// run.json records the SHA-256 and size of those same bytes. So a trace read from a pipe or a
/// FIFO (`--trace philly:<(zcat t.gz)`, `/dev/stdin`) is hashed as it streams, and a file that
/// changes during the run is recorded as it was read. Reading a path again returns the kept
/// bytes (a pipe cannot be read twice). Not thread-safe; read before the cells start.
class input_files {
 public:
  /// The bytes of `path`, read on the first call. @throws parse_error (line 0, field `file`)
  /// naming the path (a NUL in it, a directory, cannot open, a read error).
  const std::string& read(const std::string& path) {
    for (const auto& f : files_) {
      if (f.path == path) return f.text;
    }
    std::ifstream in = gpusched::open_input(path);
    entry e{path, {}, {}};
    sha256 h;
    std::string buf(1 << 16, '\0');
    while (in) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      const auto n = static_cast<std::size_t>(in.gcount());
      h.update(std::string_view(buf.data(), n));
      e.text.append(buf.data(), n);
    }
    if (in.bad()) throw gpusched::parse_error(path, 0, "file", "read error");
    e.digest = {h.hex(), e.text.size()};
    files_.push_back(std::move(e));
    return files_.back().text;
  }
  /// The digest of what `read(path)` returned (reading it first if it was not read).
  file_digest digest(const std::string& path) {
    (void)read(path);
    for (const auto& f : files_) {
      if (f.path == path) return f.digest;
    }
    return {};
  }

 private:
  struct entry {
    std::string path, text;
    file_digest digest;
  };
  std::deque<entry> files_;  // few, in the order read; a deque keeps returned references valid
};

/// The current time as UTC ISO 8601 to the second, e.g. `2026-12-05T14:50:00Z`.
inline std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// `run.json`: built field by field, in the order added; every string is written as valid
/// UTF-8 JSON (`detail::json_string`), every number as the shortest decimal that reads back.
class run_record {
 public:
  /// Starts the record: the program, its command line and the start time.
  run_record(std::string program, const std::vector<std::string>& argv) {
    std::string cmd = "[";
    for (std::size_t i = 0; i < argv.size(); ++i) {
      cmd += (i ? ", " : "") + gpusched::detail::json_string(argv[i]);
    }
    add_raw("program", gpusched::detail::json_string(program));
    add_raw("command", cmd + "]");
    add_raw("started_utc", gpusched::detail::json_string(utc_now()));
    add_raw("gpusched_version",
            gpusched::detail::json_string(std::to_string(GPUSCHED_VERSION_MAJOR) + "." +
                                          std::to_string(GPUSCHED_VERSION_MINOR) + "." +
                                          std::to_string(GPUSCHED_VERSION_PATCH)));
  }
  void add(const std::string& key, const std::string& value) {
    add_raw(key, gpusched::detail::json_string(value));
  }
  void add(const std::string& key, const char* value) { add(key, std::string(value)); }
  void add(const std::string& key, double value) { add_raw(key, gpusched::detail::json_num(value)); }
  void add(const std::string& key, std::uint64_t value) { add_raw(key, std::to_string(value)); }
  void add(const std::string& key, bool value) { add_raw(key, value ? "true" : "false"); }
  /// `value` is JSON text already (an object or an array built by the caller).
  void add_raw(const std::string& key, std::string value) {
    fields_.emplace_back(key, std::move(value));
  }
  /// An input file under `role`: its path as given, and the SHA-256 and size of the bytes the
  /// run read from it (`input_files`).
  void add_input(const std::string& role, const std::string& path, input_files& files) {
    add_input(role, path, files.digest(path));
  }
  /// An input file under `role` with the digest of what was read from it.
  void add_input(const std::string& role, const std::string& path, const file_digest& d) {
    inputs_ += std::string(inputs_.empty() ? "" : ",") + "\n    {\"role\": " +
               gpusched::detail::json_string(role) +
               ", \"path\": " + gpusched::detail::json_string(path) +
               ", \"sha256\": " + gpusched::detail::json_string(d.sha256) +
               ", \"bytes\": " + std::to_string(d.bytes) + "}";
  }
  [[nodiscard]] std::string text() const {
    std::string out = "{";
    for (std::size_t i = 0; i < fields_.size(); ++i) {
      out += (i ? ",\n  " : "\n  ") + gpusched::detail::json_string(fields_[i].first) + ": " +
             fields_[i].second;
      if (fields_[i].first == "gpusched_version") {
        out += ",\n  \"inputs\": [" + inputs_ + (inputs_.empty() ? "]" : "\n  ]");
      }
    }
    return out + "\n}\n";
  }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
  std::string inputs_;
};

/// A JSON object text from (key, JSON text) pairs, on one line.
inline std::string json_object(const std::vector<std::pair<std::string, std::string>>& kv) {
  std::string out = "{";
  for (std::size_t i = 0; i < kv.size(); ++i) {
    out += (i ? ", " : "") + gpusched::detail::json_string(kv[i].first) + ": " + kv[i].second;
  }
  return out + "}";
}

}  // namespace gpusched_experiment
