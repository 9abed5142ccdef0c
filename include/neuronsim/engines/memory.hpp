// The NeuronCore's memories: DRAM tensors, SBUF (partitions x bytes), PSUM (partitions x banks x 2 KiB), and
// the one access-pattern walker every instruction reads and writes through.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "neuronsim/engines/arch.hpp"
#include "neuronsim/error.hpp"
#include "neuronsim/isa/program.hpp"

namespace neuronsim::engines {

struct HostEnv;  // neuronsim/engines/host.hpp

// The [step, num] pairs of a resolved access pattern, stored inline: a schedule holds one per operand of every
// dynamic instruction, and a heap allocation each was a large part of scheduling time. BIR access patterns have a
// partition dimension and up to four free ones; eight is the limit here.
class Dims {
public:
  static constexpr size_t kMax = 8;
  Dims() = default;
  Dims(std::initializer_list<isa::ApDim> l) { assign(l.begin(), l.end()); }
  Dims(const std::vector<isa::ApDim> &v) { assign(v.begin(), v.end()); }  // NOLINT: implicit on purpose
  Dims &operator=(const std::vector<isa::ApDim> &v) {
    assign(v.begin(), v.end());
    return *this;
  }
  Dims &operator=(std::initializer_list<isa::ApDim> l) {
    assign(l.begin(), l.end());
    return *this;
  }
  operator std::vector<isa::ApDim>() const { return std::vector<isa::ApDim>(begin(), end()); }  // NOLINT

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  isa::ApDim &operator[](size_t i) { return d_[i]; }
  const isa::ApDim &operator[](size_t i) const { return d_[i]; }
  isa::ApDim &front() { return d_[0]; }
  const isa::ApDim &front() const { return d_[0]; }
  isa::ApDim &back() { return d_[n_ - 1]; }
  const isa::ApDim &back() const { return d_[n_ - 1]; }
  isa::ApDim *begin() { return d_.data(); }
  isa::ApDim *end() { return d_.data() + n_; }
  const isa::ApDim *begin() const { return d_.data(); }
  const isa::ApDim *end() const { return d_.data() + n_; }
  const isa::ApDim *data() const { return d_.data(); }
  void clear() { n_ = 0; }
  void push_back(const isa::ApDim &x) {
    if (n_ == kMax) too_many();
    d_[n_++] = x;
  }

private:
  template <typename It> void assign(It b, It e) {
    n_ = 0;
    for (; b != e; ++b) push_back(*b);
  }
  [[noreturn]] static void too_many() {
    throw SemanticError({}, "an access pattern with more than 8 [step, num] pairs is not supported");
  }
  std::array<isa::ApDim, kMax> d_{};
  uint8_t n_ = 0;
};

// An access pattern resolved for one dynamic instruction: the start is a number (loop variables evaluated).
struct Access {
  int tensor = -1;              // Program::tensors index; -1 for a non-AP argument
  isa::Dtype dtype = isa::Dtype::float32;
  int64_t start = 0;            // element offset in the tensor's logical row-major layout
  Dims ap;                      // [partition, free dims outer..inner]

  int64_t partitions() const { return ap.empty() ? 1 : ap[0].num; }
  int64_t free_elements() const {
    int64_t n = 1;
    for (size_t i = 1; i < ap.size(); ++i) n *= ap[i].num;
    return n;
  }
};

// The bytes an access touches, as a box: memory space, partition range and byte range within a partition
// (for DRAM: partition range [0,1) and the byte range in the tensor). Used to infer dependencies.
struct Footprint {
  enum class Space { Dram, Sbuf, Psum } space = Space::Dram;
  int dram_tensor = -1;
  int64_t p0 = 0, p1 = 0;   // [p0, p1)
  int64_t b0 = 0, b1 = 0;   // [b0, b1)
  bool overlaps(const Footprint &o) const {
    if (space != o.space || (space == Space::Dram && dram_tensor != o.dram_tensor)) return false;
    return p0 < o.p1 && o.p0 < p1 && b0 < o.b1 && o.b0 < b1;
  }
};

class Memory {
public:
  // Places every tensor: DRAM tensors get their own buffers; SB/PSUM tensors use their allocated address, or are
  // placed by a first-fit allocator when the BIR is pre-allocation. Throws SemanticError (naming the tensor) when
  // SBUF or PSUM capacity is exceeded.
  Memory(const isa::Program &program, const ArchParams &arch);

  const isa::Program &program() const { return program_; }
  const ArchParams &arch() const { return arch_; }

  // Reads an access into a dense row-major fp32 tile of partitions() x free_elements() (converting from the
  // access dtype), and writes such a tile back (converting to the access dtype). Bounds are checked: an access
  // outside its tensor throws SimulationError naming the tensor and the offending index.
  void read_f32(const Access &a, float *out) const;
  void write_f32(const Access &a, const float *in);
  void read_i32(const Access &a, int32_t *out) const;
  void write_i32(const Access &a, const int32_t *in);
  // Raw bytes, one element per slot in walk order (for copies that must not convert, e.g. DMA).
  void read_raw(const Access &a, uint8_t *out) const;
  void write_raw(const Access &a, const uint8_t *in);

  // Contiguous pieces of an access, in walk order: `count` runs of `n` elements, run i at data + i * stride
  // bytes, its written-shadow bytes at shadow + i * stride (shadow nullptr for DRAM). An access of P partition
  // rows of one run each is one Chunk. For kernels that stream their operands instead of copying them into
  // dense tiles.
  struct Chunk {
    uint8_t *data;
    uint8_t *shadow;
    int64_t n;
    int64_t count;
    int64_t stride;
  };
  // An output DRAM tensor (ExternalOutput, ...) has a written shadow too, one byte per byte, made on its
  // first access: every write through the walker marks it, so that after a run the elements no instruction
  // wrote are known exactly (unwritten_elements), whatever their bits (an int32 -1 is the 0xFF poison too).
  // The chunks of an access, bounds-checked like read_f32. False (and nothing checked) when the caller must
  // go through read_f32/read_i32 instead: uninitialised-read tracking is on. A writer marks what it wrote
  // with mark_written.
  bool chunks(const Access &a, std::vector<Chunk> &out);
  // Records `bytes` bytes from `shadow` (a Chunk's shadow pointer, advanced by the element offset times the
  // element size) as written. No-op for nullptr (DRAM).
  void mark_written(uint8_t *shadow, int64_t bytes);
  // A rectangle of SBUF or PSUM (consecutive partitions, the same bytes of each) written whole is remembered,
  // a few at a time: writing inside it again (every iteration of a loop writes the same tile) may skip
  // mark_written. For one Chunk of `esz`-byte elements: whether all its bytes are known written, and, once a
  // writer has marked them all, note_written to remember it. Small chunks and other shapes are not remembered.
  bool chunk_written(const Chunk &c, int64_t esz) const;
  void note_written(const Chunk &c, int64_t esz);

  Footprint footprint(const Access &a) const;
  // The elements an access touches, exactly (a footprint is a box around them): runs (first element, count) of the
  // tensor's logical row-major layout counted in the access's dtype, in walk order, adjacent runs joined, each
  // inside one partition row on chip. Bounds are checked as read_f32 checks them. The sanitizer's view of an
  // access (sim/sanitizer.cpp): it needs the bytes, in timing-only runs too.
  void element_runs(const Access &a, std::vector<std::pair<int64_t, int64_t>> &out) const;
  // Validates an access against its tensor without touching memory (throws like read_f32).
  void check(const Access &a) const;

  // The elements of output DRAM tensor `tensor` that no write marked (all of them when none touched it); -1
  // for a tensor that is not an output in DRAM.
  int64_t unwritten_elements(int tensor) const;

  // Whether DRAM tensor `tensor`'s bytes were made (by loading data into it, or by any access): before a run,
  // whether it was given data.
  bool dram_loaded(int tensor) const {
    const Memory &d = dram_owner_ ? *dram_owner_ : *this;
    return tensor >= 0 && tensor < static_cast<int>(d.dram_.size()) &&
           d.dram_[static_cast<size_t>(tensor)].size() == d.dram_bytes_[static_cast<size_t>(tensor)] &&
           d.dram_bytes_[static_cast<size_t>(tensor)] > 0;
  }
  // Whole DRAM tensor bytes (inputs are loaded and outputs saved through these).
  std::vector<uint8_t> &dram(int tensor);
  const std::vector<uint8_t> &dram(int tensor) const;

  // Where an SB/PSUM tensor was placed.
  int64_t placed_addr(int tensor) const;
  int64_t placed_partition(int tensor) const;

  // birsim poisons memory with 0xFF and keeps a written shadow (reference neuronx-cc/bir/sim-dispatch-state.md);
  // counts reads of never-written bytes when tracking is on.
  void set_track_uninit(bool on) { track_uninit_ = on; }
  int64_t uninit_reads() const { return uninit_reads_; }

  // Instruction context for error messages, set by the engine before executing an instruction.
  void set_context(const ErrorContext &ctx) { ctx_ = ctx; }
  // The same for the next instruction of the same file (no copy of the file name per instruction).
  void set_context_instruction(long index, const std::string &name) {
    ctx_.inst_index = index;
    ctx_.inst_name = name;
    ctx_.field.clear();
  }
  const ErrorContext &context() const { return ctx_; }

  // Services outside the simulated core (engines/host.hpp: the external kernel program, the DevicePrint sink),
  // owned by the caller (sim::Simulator); null when none are given. Copies of the memory share them.
  // On a device of several cores (sim/device.hpp): this core's shard id (ShardIDKind) and rank (GetGlobalRankId),
  // and the memory whose DRAM tensors this one shares (the device's one HBM; nullptr: its own).
  void set_core(int64_t shard, int64_t rank) { shard_ = shard, rank_ = rank; }
  int64_t shard() const { return shard_; }
  int64_t rank() const { return rank_; }
  void share_dram(Memory *owner) { dram_owner_ = owner; }

  void set_host(const HostEnv *host) { host_ = host; }
  const HostEnv *host() const { return host_; }

  // Implementation detail shared with the walker.
  struct Placement {
    int64_t addr = 0;
    int64_t partition = 0;
  };

private:
  const isa::Program &program_;
  ArchParams arch_;
  // DRAM buffers are reserved when the memory is made (so that a tensor too large for the host fails there) but
  // filled with the 0xFF poison on first use: a timing-only run never touches them (a 320 MiB matmul's buffers
  // were a third of its run time in page faults, and all of its RSS).
  mutable std::vector<std::vector<uint8_t>> dram_;
  int64_t shard_ = 0, rank_ = 0;
  Memory *dram_owner_ = nullptr;
  std::vector<size_t> dram_bytes_;
  void materialize(size_t tensor) const {
    if (dram_[tensor].size() != dram_bytes_[tensor]) dram_[tensor].assign(dram_bytes_[tensor], 0xFF);
  }
  // An output DRAM tensor's written shadow (made zero on first use), nullptr for any other DRAM tensor.
  mutable std::vector<std::vector<uint8_t>> dram_written_;
  uint8_t *dram_shadow(size_t tensor) const {
    if (!program_.tensors[tensor].is_output())
      return nullptr;
    if (dram_written_[tensor].size() != dram_bytes_[tensor])
      dram_written_[tensor].assign(dram_bytes_[tensor], 0);
    return dram_written_[tensor].data();
  }
  // Whether `shadow` points into one of the output DRAM shadows of this memory's DRAM (its owner's when
  // shared).
  bool in_dram_shadow(const uint8_t *shadow) const;
  // SBUF and PSUM (and their shadows) start on a cache line, and so does every row (the row stride is a multiple
  // of 64): the kernels' loads of an aligned tensor row do not straddle lines. A buffer of 2 MiB or more is
  // whole 2 MiB pages, and Linux is asked to back it with transparent huge pages (memory.cpp, alloc_buffer).
  static void *alloc_buffer(size_t bytes);
  static void free_buffer(void *p, size_t bytes);
  template <class T> struct BufferAlloc {
    using value_type = T;
    BufferAlloc() = default;
    template <class U> BufferAlloc(const BufferAlloc<U> &) {}
    T *allocate(size_t n) { return static_cast<T *>(alloc_buffer(n * sizeof(T))); }
    void deallocate(T *p, size_t n) { free_buffer(p, n * sizeof(T)); }
    bool operator==(const BufferAlloc &) const { return true; }
    bool operator!=(const BufferAlloc &) const { return false; }
  };
  using Bytes = std::vector<uint8_t, BufferAlloc<uint8_t>>;
  Bytes sbuf_, psum_;
  Bytes sbuf_written_, psum_written_;
  // One byte per 64-byte line of each shadow: 1 when every byte of the line is already marked written. A byte is
  // never unmarked, so a line once full stays full: writing a region again (every instruction of a loop writes
  // the same tile) checks these instead of storing its shadow again, a 64th of the traffic.
  std::vector<uint8_t> sbuf_lines_, psum_lines_;
  // Rectangles known to be fully marked written (internal coordinates: row, byte within the row), replaced in
  // turn; a marked byte is never unmarked, so an entry never goes stale.
  struct Rect {
    bool psum;
    int64_t p0, p1, b0, b1;
  };
  bool rect_of(const Chunk &c, int64_t esz, Rect &r) const;
  std::vector<Rect> written_rects_;
  size_t next_rect_ = 0;
  std::vector<Placement> place_;
  // Bytes backed per SBUF/PSUM partition row (the placement high-water mark, rounded up to a line); the internal
  // row stride.
  int64_t sbuf_row_ = 0, psum_row_ = 0;
  bool track_uninit_ = false;
  mutable int64_t uninit_reads_ = 0;
  ErrorContext ctx_;
  const HostEnv *host_ = nullptr;

  friend struct MemoryWalker;
};

} // namespace neuronsim::engines
