// Several NeuronCores in one run (docs/multicore.md): N physical cores, each with its own engines, SBUF,
// PSUM, semaphores and DMA engines (its own Simulator), all in the same SystemC simulation so their timing
// interacts. DRAM per rank: the shards of one logical core share its DRAM tensors (shard s > 0's memory reads
// and writes its shard 0's), while each rank (logical core) has its own copy of the kernel's tensors, as the
// Neuron runtime loads each rank's inputs; rank r's DRAM is the memory of core r * lnc (rank_memory).
//
// Cores, shards and ranks (reference neuronx-cc/bir/sim-bn-rng-collective-dma.md 4.1): on a logical core of
// `lnc` physical cores, physical core i has shard id i % lnc (ShardIDKind) and rank i / lnc (GetGlobalRankId,
// birsim's getRankIdforCore). A collective's replica groups name physical cores (birsim's single-LNC model
// walks the per-core buffers of cores 0..numReplicas-1); an empty list is every core. A core outside every
// group skips it.
//
// A collective is a rendezvous: each core's k-th collective with a group lines up with the other members'
// k-th (getCollectiveComputeInstIdx). It executes (engines/collective.hpp) when the last member reaches it,
// and completes on every member at that time plus the link model's time. CollectiveSend(peer p) on core a
// pairs with CollectiveRecv(peer a) on core p; CoreBarrier with the cores it lists (empty: all). A run that
// starves with a core waiting at one is a deadlock: SimulationError naming every blocked core, its
// instruction, and the cores the rendezvous waits for.
#pragma once

#include <exception>
#include <functional>
#include <map>
#include <ostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "neuronsim/engines/hbm.hpp"
#include "neuronsim/sim/simulator.hpp"

namespace neuronsim::sim {

inline constexpr int kMaxCores = 8;  // SystemC cores made on first use (modules cannot be made after sc_start)

// A program with data-dependent control flow on several cores (`lnc` per logical core): each core learns its
// path by executing its program alone before the timed run, which is exact only when nothing another core does
// reaches it. Empty when it runs; otherwise why not, with `where` the instruction that stands in the way
// (a collective, CollectiveSend/Recv or CoreBarrier: its data come from other cores) or the program (LNC > 1:
// the shards of a logical core share its DRAM).
std::string multicore_control_flow_refusal(const isa::Program &program, int lnc, ErrorContext *where);

// One collective's meeting point, shared by its members' Jobs (sim/core_issue.cpp waits on `done`).
struct Rendezvous {
  std::string what;                 // "CollectiveCompute AllReduce", for the deadlock report
  std::vector<int> members;         // cores, in rank order
  std::vector<const ScheduledInst *> arrived;  // per member, null until it arrives
  std::vector<int64_t> arrive_ps;
  int count = 0;
  bool done = false;
  int64_t finish_ps = 0;            // when it completes on every member
  double link_ns = 0;               // the link model's part (the ring's closed form)
  // Its ring traffic on each device's HBM (device, stream; docs/multicore.md): it completes at the last
  // arrival + the ring's latencies + the time its bytes take there (the closed form when nothing contends).
  std::vector<std::pair<int, int>> hbm;
  int64_t last_ps = 0;
  double latency_ns = 0;
  std::exception_ptr error;         // its numerics failed: every member's run ends with it
};

struct DeviceResult {
  std::vector<RunResult> cores;
  double total_ns = 0;              // the last core's end
  int64_t dynamic_instructions = 0; // over all cores
  int64_t collectives = 0;          // rendezvous completed
  double link_busy_ns = 0;          // the link model's time summed over collectives
  // The devices' HBM (docs/multicore.md): devices the cores fill (device_cores each), the bytes DMA
  // transfers and collectives moved through their HBM, and each device's bandwidth (hbm_device_bytes_per_ns).
  int devices = 1;
  double hbm_bytes = 0;
  double hbm_device_bytes_per_ns = 0;
  double dma_busy_ns = 0;           // the DMA engines' busy time summed over every core's engines
  int dma_engines = 0;              // over every core
};

class Device {
public:
  // `cores` physical cores, `lnc` of them per logical core (1..arch lnc_max). InputError for a count the arch
  // cannot hold (kMaxCores at most) or an LNC it does not support.
  Device(const isa::Program &program, const RunOptions &options, int cores, int lnc);
  // A program per core (core i runs *programs[i]): they must declare the same tensors (one DRAM).
  Device(const std::vector<const isa::Program *> &programs, const RunOptions &options, int lnc);
  ~Device();
  int cores() const { return static_cast<int>(sims_.size()); }
  int lnc() const { return lnc_; }
  int ranks() const { return cores() / lnc_; }
  // The memory holding rank r's DRAM tensors (its shard 0 core's): where its inputs are loaded and outputs read.
  engines::Memory &rank_memory(int r) { return core(r * lnc_).memory(); }
  Simulator &core(int i) { return i == 0 ? *primary_ : *sims_[static_cast<size_t>(i)]; }
  // Hands core 0's simulator (the owner of the shared DRAM) to the caller, who keeps it while the device runs.
  std::unique_ptr<Simulator> release_primary() { return std::move(sims_[0]); }
  // Core i's after_instruction hook (the device otherwise keeps core 0's hooks only): `validate` captures what
  // every core writes. Set before run().
  void set_after_instruction(int core, std::function<void(const ScheduledInst &, const engines::Memory &)> f);
  // Runs every core to completion. SimulationError on a deadlock (every blocked core) or the first core's error.
  DeviceResult run();

  // Called by a core (sim/core_issue.cpp) when its instruction `si` (a collective) is ready at `ps`: the rendezvous it
  // waits on (done when complete), or null when the core takes no part (not in any replica group).
  Rendezvous *arrive(int core, const ScheduledInst &si, int64_t ps);
  // How a core is woken when a rendezvous it waits on completes (set by the core at the start of the run).
  void on_wake(int core, std::function<void()> wake) { wake_[static_cast<size_t>(core)] = std::move(wake); }
  // When the collective completes on its members (a collective whose ring traffic is slowed on the HBM by
  // transfers that start later completes later: the members re-read it until it has passed).
  int64_t finish_ps(const Rendezvous &rv);

  // The HBM of core `core`'s device (engines/hbm.hpp; a Device of one core keeps the one-core run's share instead): a DMA transfer of `bytes` through it from `start_ps`, at
  // most `cap` B/ns (its engines' rate), entered at `now_ps`; its projected finish; releasing it once published.
  int hbm_add(int core, int64_t now_ps, int64_t start_ps, double bytes, double cap);
  int64_t hbm_finish_ps(int core, int handle);
  void hbm_release(int core, int handle);

private:
  std::vector<int> group_of(int core, const ScheduledInst &si) const;
  void complete(Rendezvous &rv);
  const isa::Program &program_;
  int lnc_ = 1;
  std::vector<std::unique_ptr<Simulator>> sims_;
  Simulator *primary_ = nullptr;
  std::vector<std::function<void()>> wake_;
  std::map<std::string, std::unique_ptr<Rendezvous>> open_;  // by key: kind, members, ordinal
  std::vector<std::map<std::string, int64_t>> ordinal_;      // per core: collectives met per group key
  int64_t completed_ = 0;
  double link_ns_ = 0;
  int device_cores_ = 1;
  std::vector<engines::HbmShare> hbm_;  // per device
};

// The devices' HBM utilization (bytes moved / (devices x hbm_device_bytes_per_ns x total_ns)) and the DMA
// engines' (busy time / (engines x total_ns)).
double device_hbm_utilization(const DeviceResult &r);
double device_dma_utilization(const DeviceResult &r);
// The CLI summary's device part: one line per core (its time, instructions, busy engines) and the device's.
void print_device_summary(std::ostream &out, Device &device, const DeviceResult &r);
// The --stats document of a multi-core run: core 0's document (as a single-core run writes it) plus "cores"
// (each core's document, with its shard and rank) and "device" (cores, LNC, total time, collectives, link
// time, the devices' HBM bytes and utilization, the DMA engines' busy time and utilization). Each core's
// document is of the program that core ran (a multi-core bundle folder's cores run their own).
nlohmann::json device_stats_json(Device &device, const DeviceResult &r,
                                 const std::vector<std::string> &command_line, bool with_profile = true);

} // namespace neuronsim::sim
