// SPDX-License-Identifier: Apache-2.0
/// @file
/// The interconnect graph of one node type: GPUs, NVSwitches, PCIe switches, host bridges, CPU
/// sockets (NUMA nodes) and NICs, joined by NVLink, PCIe and SMP (QPI/UPI) links that carry a
/// link count and a per-link bandwidth; plus builders for the common systems (DGX-1 V100, DGX
/// A100, DGX/HGX H100/H200, HGX generic, 8-GPU PCIe dual-socket host, GB200 NVL72 compute tray).
///
/// Model. Every vertex except the root has a *PCIe-tree parent* (GPU -> PCIe switch -> host
/// bridge -> CPU socket -> system root); the parent link is a PCIe (or SMP, for CPU -> root)
/// link. NVLink links join GPUs directly (DGX-1) or join GPUs to NVSwitch vertices (NVSwitch
/// systems). From this graph the `nvidia-smi topo -m` relation of a GPU pair follows:
/// - NV# when the pair shares NVLinks: the direct links plus, for every NVSwitch both reach,
///   the smaller of their link counts to it (DGX A100: 6 switches x 2 links = NV12);
/// - otherwise the PCIe level of their lowest common tree ancestor: PIX (both hang off the
///   same PCIe switch), PXB (a common PCIe switch higher up), PHB (a common host bridge),
///   NODE (same CPU socket, different host bridges), SYS (across sockets).
///
/// Bandwidths are GB/s per direction per link (hardware-facts 2.2: NVLink 2/3/4 = 25 GB/s per
/// link, NVLink 5 = 50 GB/s; PCIe Gen3/4/5 x16 ~ 16/32/64 GB/s).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// What a vertex of a node's interconnect graph is.
enum class vertex_kind : std::uint8_t { gpu, nvswitch, pcie_switch, host_bridge, cpu, nic, root };

/// The physical kind of a link.
enum class link_kind : std::uint8_t {
  nvlink,  ///< GPU-GPU or GPU-NVSwitch NVLink bundle
  pcie,    ///< PCIe (device to switch to host bridge to CPU)
  smp,     ///< inter-socket interconnect (QPI/UPI/xGMI), CPU to the system root
};

/// The `nvidia-smi topo -m` relation between two GPUs, best first (hardware-facts 2.1).
enum class p2p_level : std::uint8_t {
  self,    ///< X
  nvlink,  ///< NV# (the count is separate)
  pix,     ///< at most one PCIe switch (also PSB)
  pxb,     ///< several PCIe switches, no host bridge
  phb,     ///< through a PCIe host bridge
  node,    ///< across host bridges inside one NUMA node
  sys,     ///< across NUMA nodes (SMP interconnect)
};

/// The legend text of a level: "X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS".
constexpr std::string_view to_string(p2p_level l) noexcept {
  switch (l) {
    case p2p_level::self:
      return "X";
    case p2p_level::nvlink:
      return "NV";
    case p2p_level::pix:
      return "PIX";
    case p2p_level::pxb:
      return "PXB";
    case p2p_level::phb:
      return "PHB";
    case p2p_level::node:
      return "NODE";
    case p2p_level::sys:
      return "SYS";
  }
  return "?";
}

/// Bandwidth figures (GB/s per direction per link) the builders use; hardware-facts 2.2.
namespace link_bandwidth {
inline constexpr double nvlink1 = 20.0;  ///< P100 (secondary source)
inline constexpr double nvlink2 = 25.0;  ///< V100
inline constexpr double nvlink3 = 25.0;  ///< A100
inline constexpr double nvlink4 = 25.0;  ///< H100/H200
inline constexpr double nvlink5 = 50.0;  ///< B200/GB200
/// PCIe 3.0 x16.
inline constexpr double pcie3_x16 = 16.0;
/// PCIe 4.0 x16.
inline constexpr double pcie4_x16 = 32.0;
/// PCIe 5.0 x16.
inline constexpr double pcie5_x16 = 64.0;
inline constexpr double upi = 20.0;  ///< inter-socket link (a parameter; typical UPI/QPI)
}  // namespace link_bandwidth

/// @brief One vertex. `parent` is the PCIe-tree parent (-1 only for the root).
struct topo_vertex {
  /// GPU, NVSwitch, PCIe switch, host bridge, CPU socket, NIC or the root.
  vertex_kind kind = vertex_kind::gpu;
  /// The vertex's name (`GPU0`, `NIC1`, `socket0`).
  std::string name;
  /// Its parent's position in `vertices()`.
  int parent = -1;
};

/// @brief One undirected link bundle: `count` links of `gbps` GB/s each, per direction.
struct topo_link {
  /// One end: a position in `vertices()`.
  int a = 0;
  /// The other end.
  int b = 0;
  /// NVLink, PCIe, or the inter-socket link (`smp`).
  link_kind kind = link_kind::pcie;
  /// Links in the bundle.
  int count = 1;
  /// Bandwidth of one link, GB/s per direction.
  double gbps = 0.0;
  /// The bundle's bandwidth per direction: count x per-link.
  [[nodiscard]] constexpr double bandwidth() const noexcept { return count * gbps; }
};

/// @brief The interconnect graph of one node type. Build it with the `add_*` members (or a
/// builder below), then call `validate()`. GPU `i` is the i-th GPU vertex added.
///
/// Queries: `nvlinks(i, j)` O(degree), `level(i, j)` O(tree depth).
class node_topology {
 public:
  node_topology() = default;
  /// An empty topology named `name`: only the root vertex.
  explicit node_topology(std::string name) : name_(std::move(name)) {
    vertices_.push_back({vertex_kind::root, "system", -1});
  }

  /// The node type's name.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// The system root vertex (parent of the CPU sockets).
  [[nodiscard]] static constexpr int root() noexcept { return 0; }

  /// Adds a vertex under `parent` joined by a link of `kind` (`count` x `gbps`). Returns its id.
  /// @throws invalid_value_error for an unknown parent or a non-positive count or bandwidth.
  int add_vertex(vertex_kind kind, std::string name, int parent, link_kind kind_up, double gbps_up,
                 int count_up = 1) {
    check_vertex(parent, "parent");
    const int id = static_cast<int>(vertices_.size());
    vertices_.push_back({kind, std::move(name), parent});
    if (kind == vertex_kind::gpu) gpus_.push_back(id);
    add_link(id, parent, kind_up, count_up, gbps_up);
    return id;
  }
  /// A CPU socket (NUMA node) under the root, joined by the SMP interconnect.
  int add_cpu(std::string name, double smp_gbps = link_bandwidth::upi) {
    return add_vertex(vertex_kind::cpu, std::move(name), root(), link_kind::smp, smp_gbps);
  }
  /// A vertex without a PCIe parent link of its own (an NVSwitch chip reached only by NVLink).
  int add_nvswitch(std::string name) {
    const int id = static_cast<int>(vertices_.size());
    vertices_.push_back({vertex_kind::nvswitch, std::move(name), root()});
    return id;
  }
  /// Adds a link bundle. @throws invalid_value_error for unknown vertices, a self loop, or a
  /// non-positive count or bandwidth.
  void add_link(int a, int b, link_kind kind, int count, double gbps) {
    check_vertex(a, "a");
    check_vertex(b, "b");
    const std::string where =
        "topology '" + name_ + "' link " + std::to_string(a) + "-" + std::to_string(b);
    if (a == b) throw invalid_value_error(error_id::invalid_value, where, "b", "", "self loop");
    if (count <= 0) {
      throw invalid_value_error(error_id::invalid_value, where, "count", std::to_string(count),
                                "must be positive");
    }
    if (!(gbps > 0.0)) {
      throw invalid_value_error(error_id::invalid_value, where, "gbps", std::to_string(gbps),
                                "must be positive");
    }
    links_.push_back({a, b, kind, count, gbps});
  }
  /// NVLink bundle of `count` links between GPUs `i` and `j` (GPU indices, not vertex ids).
  void add_gpu_nvlink(int i, int j, int count, double gbps) {
    add_link(gpu_vertex(i), gpu_vertex(j), link_kind::nvlink, count, gbps);
  }

  /// Number of GPUs.
  [[nodiscard]] int gpu_count() const noexcept { return static_cast<int>(gpus_.size()); }
  /// All vertices, the root first.
  [[nodiscard]] const std::vector<topo_vertex>& vertices() const noexcept { return vertices_; }
  /// All link bundles.
  [[nodiscard]] const std::vector<topo_link>& links() const noexcept { return links_; }
  /// The vertex id of GPU `i`. @throws invalid_value_error for an unknown GPU index.
  [[nodiscard]] int gpu_vertex(int i) const {
    if (i < 0 || i >= gpu_count()) {
      throw invalid_value_error(error_id::unknown_id, "topology '" + name_ + "'", "gpu",
                                std::to_string(i),
                                "no such GPU (the node has " + std::to_string(gpu_count()) + ")");
    }
    return gpus_[static_cast<std::size_t>(i)];
  }

  /// NVLinks between GPUs `i` and `j`: direct links plus, per NVSwitch both reach, the smaller
  /// of their link counts to it. 0 for `i == j`. O(links).
  [[nodiscard]] int nvlinks(int i, int j) const {
    if (i == j) return 0;
    const int a = gpu_vertex(i);
    const int b = gpu_vertex(j);
    int n = 0;
    for (const auto& l : links_) {
      if (l.kind != link_kind::nvlink) continue;
      if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) n += l.count;
    }
    for (std::size_t s = 0; s < vertices_.size(); ++s) {
      if (vertices_[s].kind != vertex_kind::nvswitch) continue;
      const int to_a = nvlinks_to(a, static_cast<int>(s));
      const int to_b = nvlinks_to(b, static_cast<int>(s));
      n += to_a < to_b ? to_a : to_b;
    }
    return n;
  }
  /// NVLink bandwidth (GB/s per direction) between GPUs `i` and `j`: direct bundles plus, per
  /// NVSwitch both reach, the smaller of their bundles to it. 0 without NVLink. O(links x
  /// switches).
  [[nodiscard]] double nvlink_bandwidth(int i, int j) const {
    if (i == j) return 0.0;
    const int a = gpu_vertex(i);
    const int b = gpu_vertex(j);
    double bw = 0.0;
    for (const auto& l : links_) {
      if (l.kind != link_kind::nvlink) continue;
      if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) bw += l.bandwidth();
    }
    for (std::size_t s = 0; s < vertices_.size(); ++s) {
      if (vertices_[s].kind != vertex_kind::nvswitch) continue;
      const double to_a = nvlink_bandwidth_to(a, static_cast<int>(s));
      const double to_b = nvlink_bandwidth_to(b, static_cast<int>(s));
      bw += to_a < to_b ? to_a : to_b;
    }
    return bw;
  }

  /// The PCIe relation of GPUs `i` and `j` through the tree (ignores NVLink). O(depth).
  [[nodiscard]] p2p_level pcie_level(int i, int j) const {
    if (i == j) return p2p_level::self;
    const int a = gpu_vertex(i);
    const int b = gpu_vertex(j);
    const int lca = common_ancestor(a, b);
    switch (vertices_[static_cast<std::size_t>(lca)].kind) {
      case vertex_kind::pcie_switch:
        return parent(a) == lca && parent(b) == lca ? p2p_level::pix : p2p_level::pxb;
      case vertex_kind::host_bridge:
        return p2p_level::phb;
      case vertex_kind::cpu:
        return p2p_level::node;
      default:
        return p2p_level::sys;
    }
  }
  /// The `topo -m` relation: NV# if any NVLink, else the PCIe level.
  [[nodiscard]] p2p_level level(int i, int j) const {
    if (i == j) return p2p_level::self;
    return nvlinks(i, j) > 0 ? p2p_level::nvlink : pcie_level(i, j);
  }
  /// The CPU socket (NUMA node index, in order of `add_cpu`) above vertex `v`, or -1.
  [[nodiscard]] int numa_of_vertex(int v) const {
    int cpu_index = -1;
    for (int x = v; x > 0; x = parent(x)) {
      if (vertices_[static_cast<std::size_t>(x)].kind == vertex_kind::cpu) {
        cpu_index = x;
        break;
      }
    }
    if (cpu_index < 0) return -1;
    int k = 0;
    for (int x = 0; x < cpu_index; ++x) {
      k += vertices_[static_cast<std::size_t>(x)].kind == vertex_kind::cpu ? 1 : 0;
    }
    return k;
  }
  /// The CPU socket (NUMA node) above GPU `i`, or -1 (see `numa_of_vertex`).
  [[nodiscard]] int numa_of_gpu(int i) const { return numa_of_vertex(gpu_vertex(i)); }
  /// The NIC closest to GPU `i` in the PCIe tree (deepest common ancestor), or -1 without NICs.
  /// Ties go to the NIC added first. Returns the NIC's ordinal among NIC vertices.
  [[nodiscard]] int nic_of_gpu(int i) const {
    const int a = gpu_vertex(i);
    int best = -1;
    int best_depth = -1;
    int ordinal = 0;
    for (std::size_t v = 0; v < vertices_.size(); ++v) {
      if (vertices_[v].kind != vertex_kind::nic) continue;
      const int d = depth(common_ancestor(a, static_cast<int>(v)));
      if (d > best_depth) {
        best_depth = d;
        best = ordinal;
      }
      ++ordinal;
    }
    return best;
  }

  /// Checks the graph: at least one GPU, every vertex reachable from every GPU (connected), an
  /// NVSwitch has NVLinks. @throws invalid_value_error naming the first offending vertex.
  void validate() const {
    const std::string where = "topology '" + name_ + "'";
    if (gpus_.empty()) {
      throw invalid_value_error(error_id::invalid_value, where, "gpus", "0", "has no GPU");
    }
    std::vector<char> seen(vertices_.size(), 0);
    std::vector<int> stack{gpus_.front()};
    seen[static_cast<std::size_t>(gpus_.front())] = 1;
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      for (const auto& l : links_) {
        const int w = l.a == v ? l.b : (l.b == v ? l.a : -1);
        if (w >= 0 && seen[static_cast<std::size_t>(w)] == 0) {
          seen[static_cast<std::size_t>(w)] = 1;
          stack.push_back(w);
        }
      }
    }
    for (std::size_t v = 0; v < vertices_.size(); ++v) {
      if (seen[v] != 0) continue;
      // A root without any CPU (a pure NVLink graph) is allowed to be unreachable.
      if (v == 0) continue;
      throw invalid_value_error(error_id::inconsistent, where, "vertex",
                                vertices_[v].name.empty() ? std::to_string(v) : vertices_[v].name,
                                "is not connected to GPU0 (disconnected graph)");
    }
  }

  /// Parent in the PCIe tree (-1 for the root).
  [[nodiscard]] int parent(int v) const noexcept {
    return vertices_[static_cast<std::size_t>(v)].parent;
  }

 private:
  void check_vertex(int v, const char* field) const {
    if (v < 0 || static_cast<std::size_t>(v) >= vertices_.size()) {
      throw invalid_value_error(error_id::unknown_id, "topology '" + name_ + "'", field,
                                std::to_string(v), "no such vertex");
    }
  }
  [[nodiscard]] int nvlinks_to(int v, int sw) const noexcept {
    int n = 0;
    for (const auto& l : links_) {
      if (l.kind == link_kind::nvlink && ((l.a == v && l.b == sw) || (l.a == sw && l.b == v))) {
        n += l.count;
      }
    }
    return n;
  }
  [[nodiscard]] double nvlink_bandwidth_to(int v, int sw) const noexcept {
    double n = 0.0;
    for (const auto& l : links_) {
      if (l.kind == link_kind::nvlink && ((l.a == v && l.b == sw) || (l.a == sw && l.b == v))) {
        n += l.bandwidth();
      }
    }
    return n;
  }
  [[nodiscard]] int depth(int v) const noexcept {
    int d = 0;
    for (int x = v; x > 0; x = parent(x)) ++d;
    return d;
  }
  [[nodiscard]] int common_ancestor(int a, int b) const noexcept {
    int da = depth(a);
    int db = depth(b);
    while (da > db) {
      a = parent(a);
      --da;
    }
    while (db > da) {
      b = parent(b);
      --db;
    }
    while (a != b) {
      a = parent(a);
      b = parent(b);
    }
    return a;
  }

  std::string name_;
  std::vector<topo_vertex> vertices_;
  std::vector<topo_link> links_;
  std::vector<int> gpus_;
};

// ---- builders --------------------------------------------------------------------------------

namespace detail {
/// Two sockets, `per_socket` PCIe switches under one host bridge each, `gpus_per_switch` GPUs
/// under every switch; optionally one NIC per switch. GPUs are numbered switch by switch.
inline node_topology two_socket_pcie_tree(std::string name, int switches_per_socket,
                                          int gpus_per_switch, double pcie_gbps, bool nics) {
  node_topology t(std::move(name));
  int sw_no = 0;
  for (int s = 0; s < 2; ++s) {
    const int cpu = t.add_cpu("CPU" + std::to_string(s));
    const int hb = t.add_vertex(vertex_kind::host_bridge, "HB" + std::to_string(s), cpu,
                                link_kind::pcie, pcie_gbps);
    for (int w = 0; w < switches_per_socket; ++w, ++sw_no) {
      const int sw = t.add_vertex(vertex_kind::pcie_switch, "PLX" + std::to_string(sw_no), hb,
                                  link_kind::pcie, pcie_gbps);
      for (int g = 0; g < gpus_per_switch; ++g) {
        t.add_vertex(vertex_kind::gpu, "GPU" + std::to_string(t.gpu_count()), sw, link_kind::pcie,
                     pcie_gbps);
      }
      if (nics) {
        t.add_vertex(vertex_kind::nic, "mlx5_" + std::to_string(sw_no), sw, link_kind::pcie,
                     pcie_gbps);
      }
    }
  }
  return t;
}
/// Adds `switches` NVSwitch chips and joins every GPU to each with `links_per_switch` links.
inline void add_nvswitch_plane(node_topology& t, int switches, int links_per_switch, double gbps) {
  std::vector<int> sw;
  for (int s = 0; s < switches; ++s) sw.push_back(t.add_nvswitch("NVSwitch" + std::to_string(s)));
  for (int g = 0; g < t.gpu_count(); ++g) {
    for (int s : sw) t.add_link(t.gpu_vertex(g), s, link_kind::nvlink, links_per_switch, gbps);
  }
}
}  // namespace detail

/// DGX-1 with V100 (hybrid cube-mesh; hardware-facts 2.3): 8 GPUs, 16 NVLink edges / 24 links
/// (NV2: 0-3 0-4 1-2 1-5 2-3 4-7 5-6 6-7; NV1: 0-1 0-2 1-3 2-6 3-7 4-5 4-6 5-7); PCIe switches
/// {0,1} {2,3} {4,5} {6,7}, one NIC per switch, sockets {0..3} and {4..7}; PCIe Gen3.
inline node_topology dgx1_v100() {
  auto t = detail::two_socket_pcie_tree("DGX-1 V100", 2, 2, link_bandwidth::pcie3_x16, true);
  constexpr int nv2[8][2] = {{0, 3}, {0, 4}, {1, 2}, {1, 5}, {2, 3}, {4, 7}, {5, 6}, {6, 7}};
  constexpr int nv1[8][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 6}, {3, 7}, {4, 5}, {4, 6}, {5, 7}};
  for (const auto& e : nv2) t.add_gpu_nvlink(e[0], e[1], 2, link_bandwidth::nvlink2);
  for (const auto& e : nv1) t.add_gpu_nvlink(e[0], e[1], 1, link_bandwidth::nvlink2);
  t.validate();
  return t;
}

/// DGX A100 / HGX A100 (hardware-facts 2.4): 8 GPUs, 6 NVSwitch chips, 2 links from every GPU
/// to every switch (NV12), GPUs 0-3 on socket 0 and 4-7 on socket 1, a PCIe Gen4 switch and a
/// compute NIC per GPU pair.
inline node_topology dgx_a100() {
  auto t = detail::two_socket_pcie_tree("DGX A100", 2, 2, link_bandwidth::pcie4_x16, true);
  detail::add_nvswitch_plane(t, 6, 2, link_bandwidth::nvlink3);
  t.validate();
  return t;
}

/// DGX H100 / DGX H200 / HGX H100/H200 (hardware-facts 2.4): 8 GPUs, 4 NVSwitch chips, 18
/// NVLinks per GPU (NV18; modelled as 5+4+4+5 links per switch), GPUs 0-3 on NUMA 0 and 4-7 on
/// NUMA 1, one PCIe Gen5 switch with one ConnectX-7 NIC per GPU (rail i = GPU i).
inline node_topology dgx_h100(std::string name = "DGX H100") {
  auto t = detail::two_socket_pcie_tree(std::move(name), 4, 1, link_bandwidth::pcie5_x16, true);
  constexpr int per_switch[4] = {5, 4, 4, 5};
  std::vector<int> sw;
  for (int s = 0; s < 4; ++s) sw.push_back(t.add_nvswitch("NVSwitch" + std::to_string(s)));
  for (int g = 0; g < 8; ++g) {
    for (int s = 0; s < 4; ++s) {
      t.add_link(t.gpu_vertex(g), sw[static_cast<std::size_t>(s)], link_kind::nvlink, per_switch[s],
                 link_bandwidth::nvlink4);
    }
  }
  t.validate();
  return t;
}

/// A generic HGX baseboard: `gpus` GPUs (even, 2..16) on `switches` NVSwitch chips with
/// `links_per_switch` links each, split over two sockets, one PCIe switch + NIC per GPU pair
/// (per GPU when a socket holds an odd number).
inline node_topology hgx(int gpus, int switches, int links_per_switch, double nvlink_gbps,
                         double pcie_gbps = link_bandwidth::pcie5_x16) {
  if (gpus < 2 || gpus > 16 || gpus % 2 != 0) {
    throw invalid_value_error(error_id::invalid_value, "hgx builder", "gpus", std::to_string(gpus),
                              "must be even, 2..16");
  }
  const int per_socket = gpus / 2;
  const bool pairs = per_socket % 2 == 0;
  auto t = detail::two_socket_pcie_tree("HGX " + std::to_string(gpus) + "-GPU",
                                        pairs ? per_socket / 2 : per_socket, pairs ? 2 : 1,
                                        pcie_gbps, true);
  detail::add_nvswitch_plane(t, switches, links_per_switch, nvlink_gbps);
  t.validate();
  return t;
}

/// An 8-GPU PCIe-only dual-socket host (hardware-facts 2.5, the vLLM #11122 machine): per
/// socket one host bridge, a PCIe switch above two leaf switches with two GPUs each, so
/// {0,1} {2,3} are PIX, {0,2} PXB, and across sockets SYS. No NVLink. PCIe Gen4.
inline node_topology pcie_dual_socket_8gpu() {
  node_topology t("PCIe 8-GPU dual socket");
  const double bw = link_bandwidth::pcie4_x16;
  int leaf = 0;
  for (int s = 0; s < 2; ++s) {
    const int cpu = t.add_cpu("CPU" + std::to_string(s));
    const int hb =
        t.add_vertex(vertex_kind::host_bridge, "HB" + std::to_string(s), cpu, link_kind::pcie, bw);
    const int top = t.add_vertex(vertex_kind::pcie_switch, "PLX-top" + std::to_string(s), hb,
                                 link_kind::pcie, bw);
    for (int w = 0; w < 2; ++w, ++leaf) {
      const int sw = t.add_vertex(vertex_kind::pcie_switch, "PLX" + std::to_string(leaf), top,
                                  link_kind::pcie, bw);
      for (int g = 0; g < 2; ++g) {
        t.add_vertex(vertex_kind::gpu, "GPU" + std::to_string(t.gpu_count()), sw, link_kind::pcie,
                     bw);
      }
    }
  }
  t.validate();
  return t;
}

/// One GB200 NVL72 compute tray (hardware-facts 2.4): 4 GPUs, 2 Grace CPUs (2 GPUs each),
/// NV18 between the tray's GPUs through the rack's NVLink switch trays (modelled as 9 switch
/// vertices with 2 links from each GPU, NVLink 5). The rack-level NVLink domain (18 trays) is a
/// fabric level (see `topology/fabric.hpp`, `fabric::nvl72_racks`).
inline node_topology gb200_tray() {
  auto t = detail::two_socket_pcie_tree("GB200 NVL72 tray", 1, 2, link_bandwidth::pcie5_x16, true);
  detail::add_nvswitch_plane(t, 9, 2, link_bandwidth::nvlink5);
  t.validate();
  return t;
}

GPUSCHED_END_NAMESPACE
