// tsim: the Verilated VTA core with a memory model, driven through its registers.
//
// The harness is an AXI4 slave memory model on the core's m_axi_* ports and an
// AXI4-Lite port on its s_axil_* ports through which the host (sim/launch.py, the
// same code a board driver runs) reads and writes the control registers. Polling a
// register for a bit runs the clock in C++, so long runs never cross into Python per
// cycle; the DRAM is the caller's buffer, read and written in place.
// The memory model has a configurable read latency, a maximum number of outstanding
// read bursts, seeded random stalls on every channel and optional out-of-order
// completion of read bursts (a burst's beats stay in order).
//
// Builds: HWGEN_TRACE adds event monitors on the core's trace ports; HWGEN_WAVES_FST
// or HWGEN_WAVES_VCD (on a model Verilated with --trace-fst or --trace, and always
// with HWGEN_TRACE, whose retire pulses delimit instruction windows) add a waveform
// dump of a window of cycles and/or instructions. One cycle is 10 time units.
// HWGEN_COVERAGE (on a model Verilated with coverage) adds tsim_write_coverage.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "verilated.h"
#include "Vvta.h"
#include "vta_config.h"
#if defined(HWGEN_WAVES_FST)
#include "verilated_fst_c.h"
using WaveWriter = VerilatedFstC;
#elif defined(HWGEN_WAVES_VCD)
#include "verilated_vcd_c.h"
using WaveWriter = VerilatedVcdC;
#endif
#if defined(HWGEN_WAVES_FST) || defined(HWGEN_WAVES_VCD)
#define HWGEN_WAVES 1
#endif
#ifdef HWGEN_COVERAGE
#include "verilated_cov.h"
#endif

namespace {

constexpr unsigned BUS = HWGEN_AXI_DATA_BYTES;

template <typename T>
void put(T& port, const uint8_t* src) {
    T v = 0;
    std::memcpy(&v, src, sizeof(T) < BUS ? sizeof(T) : BUS);
    port = v;
}
template <std::size_t W>
void put(VlWide<W>& port, const uint8_t* src) {
    for (std::size_t i = 0; i < W; i++) {
        uint32_t w;
        std::memcpy(&w, src + 4 * i, 4);
        port[i] = w;
    }
}
template <typename T>
void get(const T& port, uint8_t* dst) {
    T v = port;
    std::memcpy(dst, &v, sizeof(T) < BUS ? sizeof(T) : BUS);
}
template <std::size_t W>
void get(const VlWide<W>& port, uint8_t* dst) {
    for (std::size_t i = 0; i < W; i++) {
        uint32_t w = port[i];
        std::memcpy(dst + 4 * i, &w, 4);
    }
}

// Any port's bits as little-endian bytes (dst holds at least n bytes, rounded up to 4).
template <typename T>
void get_bytes(const T& port, uint8_t* dst, std::size_t n) {
    T v = port;
    std::memcpy(dst, &v, sizeof(T) < n ? sizeof(T) : n);
}
template <std::size_t W>
void get_bytes(const VlWide<W>& port, uint8_t* dst, std::size_t) {
    for (std::size_t i = 0; i < W; i++) {
        uint32_t w = port[i];
        std::memcpy(dst + 4 * i, &w, 4);
    }
}

#ifdef HWGEN_TRACE
// Trace monitor: shadow copies of the scratchpads, updated from the write ports; when a
// module retires an instruction, the final value of every entry it wrote is emitted
// (and, for a STORE, the bytes it wrote to DRAM). Lines: "R m r", "W buf m r k hex",
// "T queue m r", "D m r addr hex", where r counts the instructions module m retired.
// A write port's `age` is the writing instruction's place among its module's issued,
// unretired instructions (compute overlap; 0 otherwise): the write belongs to the
// instruction the module retires `age` retirements from now. An entry's value is kept
// per instruction as it writes it, since a later instruction may write the entry
// before an earlier one retires.
struct Shadow {
    const char* name;
    int module;
    unsigned entry, lanes, en_bits;
    std::vector<uint8_t> mem;
    std::map<uint32_t, std::map<uint32_t, std::vector<uint8_t>>> written;  // instruction -> entry -> value
};

class Tracer {
  public:
    explicit Tracer(FILE* f) : f_(f) {
        add("UOP", 1, HWGEN_TRACE_UOP_ENTRY_BYTES, HWGEN_TRACE_UOP_LANES, HWGEN_TRACE_UOP_EN_BITS, HWGEN_TRACE_UOP_DEPTH);
        add("INP", 0, HWGEN_TRACE_INP_ENTRY_BYTES, HWGEN_TRACE_INP_LANES, HWGEN_TRACE_INP_EN_BITS, HWGEN_TRACE_INP_DEPTH);
        add("WGT", 0, HWGEN_TRACE_WGT_ENTRY_BYTES, HWGEN_TRACE_WGT_LANES, HWGEN_TRACE_WGT_EN_BITS, HWGEN_TRACE_WGT_DEPTH);
        add("ACC", 1, HWGEN_TRACE_ACC_ENTRY_BYTES, HWGEN_TRACE_ACC_LANES, HWGEN_TRACE_ACC_EN_BITS, HWGEN_TRACE_ACC_DEPTH);
        add("OUT", 1, HWGEN_TRACE_OUT_ENTRY_BYTES, HWGEN_TRACE_OUT_LANES, HWGEN_TRACE_OUT_EN_BITS, HWGEN_TRACE_OUT_DEPTH);
    }
    // A write port's state this cycle (the write happens at the coming clock edge).
    template <typename E, typename A, typename D>
    void write(int b, const E& en_port, const A& addr_port, const D& data_port, unsigned age = 0) {
        Shadow& s = bufs_[b];
        auto& mine = s.written[retired_[s.module] + age];
        auto keep = [&](uint32_t k) {
            mine[k].assign(s.mem.begin() + std::size_t(k) * s.entry, s.mem.begin() + std::size_t(k + 1) * s.entry);
        };
        uint8_t en[64] = {0};
        get_bytes(en_port, en, sizeof en);
        bool any = false;
        for (unsigned k = 0; k < s.en_bits; k++) any |= en[k / 8] >> (k % 8) & 1;
        if (!any) return;
        std::vector<uint8_t> data(s.entry * s.lanes + 64);
        get_bytes(data_port, data.data(), data.size());
        const uint32_t addr = addr_port;
        if (s.lanes > 1) {
            for (unsigned l = 0; l < s.lanes; l++) {
                if (!(en[l / 8] >> (l % 8) & 1)) continue;
                const uint32_t k = (addr + l) % (s.mem.size() / s.entry);
                std::memcpy(&s.mem[k * s.entry], &data[l * s.entry], s.entry);
                keep(k);
            }
            return;
        }
        const unsigned granule = s.entry / s.en_bits;
        for (unsigned g = 0; g < s.en_bits; g++)
            if (en[g / 8] >> (g % 8) & 1) std::memcpy(&s.mem[addr * s.entry + g * granule], &data[g * granule], granule);
        keep(addr);
    }
    void dram_write(uint64_t addr) { dram_dirty_.insert(addr); }
    void push(int queue_index, int module) {
        static const char* names[] = {"L2C", "C2L", "C2S", "S2C"};
        std::fprintf(f_, "T %s %d %u\n", names[queue_index], module, retired_[module]);
    }
    void retire(int module, const uint8_t* dram) {
        const uint32_t r = retired_[module]++;
        std::fprintf(f_, "R %d %u\n", module, r);
        for (Shadow& s : bufs_) {
            if (s.module != module) continue;
            auto it = s.written.find(r);
            if (it == s.written.end()) continue;
            for (const auto& [k, value] : it->second) {
                std::fprintf(f_, "W %s %d %u %u ", s.name, module, r, k);
                hex(value.data(), s.entry);
            }
            s.written.erase(it);
        }
        if (module == 2) {
            const uint64_t e = HWGEN_OUT_ELEM_BYTES;
            std::set<uint64_t> elems;
            for (uint64_t a : dram_dirty_) elems.insert(a / e * e);
            for (uint64_t a : elems) {
                std::fprintf(f_, "D %d %u %llu ", module, r, (unsigned long long)a);
                hex(dram + a, e);
            }
            dram_dirty_.clear();
        }
    }

  private:
    void add(const char* name, int module, unsigned entry, unsigned lanes, unsigned en_bits, unsigned depth) {
        bufs_.push_back(Shadow{name, module, entry, lanes, en_bits, std::vector<uint8_t>(std::size_t(entry) * depth), {}});
    }
    void hex(const uint8_t* p, std::size_t n) {
        for (std::size_t i = 0; i < n; i++) std::fprintf(f_, "%02x", p[i]);
        std::fputc('\n', f_);
    }
    FILE* f_;
    std::vector<Shadow> bufs_;
    std::set<uint64_t> dram_dirty_;
    uint32_t retired_[3] = {0, 0, 0};
};
#endif

struct Burst {
    uint32_t id;
    uint64_t addr;
    uint32_t beats;
    uint32_t done = 0;
    uint64_t due = 0;  // first cycle a read beat may be returned
};

// What to dump: cycles in [first_cycle, last_cycle] in which the instruction window
// is open. Per module, lo/hi are the module-local numbers of the window's first and
// last instructions (-1: none in the window). The window opens when a module's first
// window instruction becomes its current one and closes after the cycle in which the
// last of them retires. Without instructions, only the cycle range applies. The
// harness returns the dumped cycles in dumped_first/dumped_last (dumped_last <
// dumped_first when nothing was dumped).
struct Waves {
    const char* path;
    uint64_t first_cycle;
    uint64_t last_cycle;
    int64_t lo[3];
    int64_t hi[3];
    uint64_t dumped_first;
    uint64_t dumped_last;
};

struct Params {
    uint32_t latency;
    uint32_t max_outstanding;
    double stall;
    int out_of_order;
    uint64_t seed;
    uint64_t max_cycles;
};

class Harness {
  public:
    Harness(uint8_t* dram, uint64_t base, uint64_t size, const Params& p, FILE* trace, Waves* waves)
        : dram_(dram), base_(base), size_(size), p_(p), rng_(p.seed), ctx_(new VerilatedContext) {
#ifdef HWGEN_WAVES
        // tracing must be enabled before the model is constructed
        if (waves) ctx_->traceEverOn(true);
#endif
        top_.reset(new Vvta(ctx_.get()));
#ifdef HWGEN_TRACE
        if (trace) tracer_.reset(new Tracer(trace));
#else
        (void)trace;
#endif
#ifdef HWGEN_WAVES
        if (waves) {
            waves_ = waves;
            waves_->dumped_first = 1;
            waves_->dumped_last = 0;
            by_insn_ = false;
            for (int m = 0; m < 3; m++) by_insn_ |= waves->lo[m] >= 0;
            writer_.reset(new WaveWriter);
            top_->trace(writer_.get(), 99);
            writer_->open(waves->path);
        }
#else
        (void)waves;
#endif
    }
#ifdef HWGEN_WAVES
    ~Harness() {
        if (writer_) writer_->close();
    }
#endif

    // Four cycles of reset with idle inputs.
    void reset() {
        top_->clk = 0;
        top_->rst = 1;
        idle_inputs();
        top_->eval();
        for (int i = 0; i < 4; i++) tick();
        top_->rst = 0;
    }

    // Reads register `addr` every 64 cycles until a bit of `mask` is set (0), the
    // run's cycle limit is reached (2) or a memory access fails (3); returns 1 once
    // the cycle count reaches `until`, so that the caller can handle signals and
    // poll again (the polling cadence is the same as one uninterrupted call).
    int poll(uint32_t addr, uint32_t mask, uint64_t until) {
        while (!error_) {
            if (activity_period_ && cycle_ >= next_sample_) sample();
            if (read_reg(addr) & mask) {
                if (activity_period_) sample();     // the final counts
                return 0;
            }
            if (cycle_ >= p_.max_cycles) return 2;
            for (int i = 0; i < 64 && !error_; i++) tick();
            if (cycle_ >= until) return error_ ? 3 : 1;
        }
        return 3;
    }
    uint64_t cycles() const { return cycle_; }

    // Activity sampling: from now on, every `period` cycles of polling (a multiple of
    // the 64-cycle polling step), read the registers `addrs` and keep the cycle and
    // their values; a last sample is taken when the polled bit is seen.
    void set_activity(uint64_t period, const uint32_t* addrs, int n) {
        activity_period_ = period;
        activity_addrs_.assign(addrs, addrs + n);
        samples_.clear();
        next_sample_ = cycle_;
    }
    const std::vector<uint64_t>& samples() const { return samples_; }
    bool error() const { return error_; }
    const std::string& error_message() const { return error_msg_; }
#ifdef HWGEN_COVERAGE
    // The model's coverage counters since it was made, in Verilator's coverage.dat format.
    void write_coverage(const char* path) { ctx_->coveragep()->write(path); }
#endif

  private:
    bool chance() { return p_.stall > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < p_.stall; }

    void idle_inputs() {
        top_->m_axi_awready = 0;
        top_->m_axi_wready = 0;
        top_->m_axi_bvalid = 0;
        top_->m_axi_arready = 0;
        top_->m_axi_rvalid = 0;
        top_->s_axil_awvalid = 0;
        top_->s_axil_wvalid = 0;
        top_->s_axil_bready = 0;
        top_->s_axil_arvalid = 0;
        top_->s_axil_rready = 0;
    }

    // Stop the run with the first protocol or memory error (later ones are consequences).
    void fail(const char* message) {
        if (error_) return;
        error_ = true;
        error_msg_ = message;
    }

    // The memory holds bus addresses [base_, base_ + size_); `offset` is addr's place in it.
    bool in_range(uint64_t addr, uint64_t n, uint64_t& offset) {
        offset = addr - base_;
        if (addr >= base_ && offset + n <= size_) return true;
        char buf[200];
        std::snprintf(buf, sizeof buf, "access of %llu bytes at 0x%llx is outside the %llu-byte memory at 0x%llx",
                      (unsigned long long)n, (unsigned long long)addr, (unsigned long long)size_,
                      (unsigned long long)base_);
        fail(buf);
        return false;
    }

    // A burst the AXI port would refuse: longer than the configuration's maximum
    // (AXI3 ports take 16 beats), or crossing a 4 KiB boundary.
    void check_burst(const char* kind, const Burst& burst) {
        char buf[160];
        const uint64_t last = burst.addr + uint64_t(burst.beats) * BUS - 1;
        if (burst.beats > HWGEN_AXI_MAX_BURST)
            std::snprintf(buf, sizeof buf, "%s burst of %u beats at 0x%llx is longer than AXI_MAX_BURST (%d)", kind,
                          burst.beats, (unsigned long long)burst.addr, HWGEN_AXI_MAX_BURST);
        else if ((burst.addr >> 12) != (last >> 12))
            std::snprintf(buf, sizeof buf, "%s burst of %u beats at 0x%llx crosses a 4 KiB boundary", kind,
                          burst.beats, (unsigned long long)burst.addr);
        else
            return;
        fail(buf);
    }

    // One clock cycle: sample the handshakes, clock, update the memory model, drive
    // the next cycle's inputs and let the core's combinational logic settle.
    void tick() {
        const bool ar = top_->m_axi_arvalid && top_->m_axi_arready;
        const bool r = top_->m_axi_rvalid && top_->m_axi_rready;
        const bool aw = top_->m_axi_awvalid && top_->m_axi_awready;
        const bool w = top_->m_axi_wvalid && top_->m_axi_wready;
        const bool b = top_->m_axi_bvalid && top_->m_axi_bready;
        Burst new_read{top_->m_axi_arid, top_->m_axi_araddr, top_->m_axi_arlen + 1u};
        Burst new_write{top_->m_axi_awid, top_->m_axi_awaddr, top_->m_axi_awlen + 1u};
        uint8_t wdata[BUS];
        get(top_->m_axi_wdata, wdata);
        const uint64_t wstrb = top_->m_axi_wstrb;
#ifdef HWGEN_TRACE
        if (tracer_) sample_trace();
#endif
#ifdef HWGEN_WAVES
        if (writer_) update_window();
#endif

        top_->clk = 1;
        top_->eval();
        cycle_++;
#ifdef HWGEN_WAVES
        dump(0);
#endif

        if (ar) {
            check_burst("read", new_read);
            new_read.due = cycle_ + p_.latency;
            reads_.push_back(new_read);
        }
        if (r) {
            Burst& cur = reads_[current_];
            if (++cur.done == cur.beats) {
                reads_.erase(reads_.begin() + current_);
                current_ = -1;
            }
        }
        if (aw) {
            check_burst("write", new_write);
            writes_.push_back(new_write);
        }
        if (w) {
            Burst& cur = writes_.front();
            uint64_t at;
            if (in_range(cur.addr + uint64_t(cur.done) * BUS, BUS, at))
                for (unsigned k = 0; k < BUS; k++)
                    if (wstrb >> k & 1) {
                        dram_[at + k] = wdata[k];
#ifdef HWGEN_TRACE
                        if (tracer_) tracer_->dram_write(at + k);
#endif
                    }
            if (++cur.done == cur.beats) {
                acks_.push_back(Burst{cur.id, cur.addr, cur.beats, 0, cycle_ + p_.latency});
                writes_.pop_front();
            }
        }
        if (b) acks_.pop_front();

        // next cycle's inputs
        top_->m_axi_arready = reads_.size() < p_.max_outstanding && !chance();
        top_->m_axi_rvalid = 0;
        if (current_ < 0) pick_read();
        if (current_ >= 0 && !chance()) {
            Burst& cur = reads_[current_];
            uint8_t beat[BUS] = {0};
            uint64_t at;
            if (in_range(cur.addr + uint64_t(cur.done) * BUS, BUS, at)) std::memcpy(beat, dram_ + at, BUS);
            put(top_->m_axi_rdata, beat);
            top_->m_axi_rid = cur.id;
            top_->m_axi_rlast = cur.done + 1 == cur.beats;
            top_->m_axi_rresp = 0;
            top_->m_axi_rvalid = 1;
        }
        top_->m_axi_awready = writes_.size() < 4 && !chance();
        top_->m_axi_wready = !writes_.empty() && !chance();
        top_->m_axi_bvalid = !acks_.empty() && acks_.front().due <= cycle_ && !chance();
        if (top_->m_axi_bvalid) top_->m_axi_bid = acks_.front().id;
        top_->m_axi_bresp = 0;

        top_->clk = 0;
        top_->eval();
#ifdef HWGEN_WAVES
        dump(5);
#endif
    }

#ifdef HWGEN_WAVES
    // Called before the clock edge that ends cycle_; retire pulses now take effect at
    // the edge. The window is open in the cycles after an edge at which a window
    // instruction is current, up to and including the one after the last retires.
    void update_window() {
        if (!by_insn_) {
            window_open_ = true;
            return;
        }
        bool done = true;
        for (int m = 0; m < 3; m++) {
            if (waves_->lo[m] < 0) continue;
            if (top_->trace_retire >> m & 1) retired_[m]++;
            opened_ |= int64_t(retired_[m]) >= waves_->lo[m];
            done &= int64_t(retired_[m]) > waves_->hi[m];
        }
        window_open_ = opened_ && !closed_;
        closed_ |= opened_ && done;
    }

    // Dump the settled state at an offset within the cycle just clocked.
    void dump(int offset) {
        if (!writer_ || !window_open_ || cycle_ < waves_->first_cycle || cycle_ > waves_->last_cycle) return;
        if (waves_->dumped_last < waves_->dumped_first) waves_->dumped_first = cycle_;
        waves_->dumped_last = cycle_;
        writer_->dump(10 * cycle_ + offset);
    }
#endif

#ifdef HWGEN_TRACE
    // Writes happen at the coming edge; a module retires after its writes are done and
    // pushes its tokens in the same cycle.
    void sample_trace() {
        Tracer& t = *tracer_;
#if HWGEN_TRACE_AGES
#define HWGEN_PORT(b, p) t.write(b, top_->p##_en, top_->p##_addr, top_->p##_data, top_->p##_age)
#else
#define HWGEN_PORT(b, p) t.write(b, top_->p##_en, top_->p##_addr, top_->p##_data)
#endif
        HWGEN_PORT(0, trace_uop);
        t.write(1, top_->trace_inp_en, top_->trace_inp_addr, top_->trace_inp_data);
        t.write(2, top_->trace_wgt_en, top_->trace_wgt_addr, top_->trace_wgt_data);
        HWGEN_PORT(3, trace_acc);
#if HWGEN_TRACE_ACC_PORTS > 1
        HWGEN_PORT(3, trace_acc1);
#endif
#if HWGEN_TRACE_ACC_PORTS > 2
        HWGEN_PORT(3, trace_acc2);
#endif
        HWGEN_PORT(4, trace_out);
#if HWGEN_TRACE_OUT_PORTS > 1
        HWGEN_PORT(4, trace_out1);
#endif
#undef HWGEN_PORT
        static const int pusher[4] = {0, 1, 1, 2};  // L2C, C2L, C2S, S2C
        for (int q = 0; q < 4; q++)
            if (top_->trace_push >> q & 1) t.push(q, pusher[q]);
        for (int mod = 0; mod < 3; mod++)
            if (top_->trace_retire >> mod & 1) t.retire(mod, dram_);
    }
#endif

    // The next read burst to return: the oldest due one, or a random due one.
    void pick_read() {
        std::vector<int> due;
        for (int k = 0; k < int(reads_.size()); k++)
            if (reads_[k].due <= cycle_) due.push_back(k);
        if (due.empty()) return;
        if (!p_.out_of_order) {
            current_ = due.front();
            return;
        }
        // a burst may overtake others only if none of them has the same ID
        std::vector<int> eligible;
        for (int k : due) {
            bool older_same_id = false;
            for (int j = 0; j < k; j++) older_same_id |= reads_[j].id == reads_[k].id;
            if (!older_same_id) eligible.push_back(k);
        }
        current_ = eligible[std::uniform_int_distribution<size_t>(0, eligible.size() - 1)(rng_)];
    }

  public:
    void write_reg(uint32_t addr, uint32_t data) {
        top_->s_axil_awaddr = addr;
        top_->s_axil_wdata = data;
        top_->s_axil_wstrb = 0xF;
        top_->s_axil_awvalid = 1;
        top_->s_axil_wvalid = 1;
        top_->eval();
        while (!(top_->s_axil_awready && top_->s_axil_wready)) tick();
        tick();
        top_->s_axil_awvalid = 0;
        top_->s_axil_wvalid = 0;
        top_->s_axil_bready = 1;
        top_->eval();
        while (!top_->s_axil_bvalid) tick();
        tick();
        top_->s_axil_bready = 0;
        top_->eval();
    }

    void sample() {
        samples_.push_back(cycle_);
        for (uint32_t a : activity_addrs_) samples_.push_back(read_reg(a));
        next_sample_ += activity_period_;
        if (next_sample_ <= cycle_) next_sample_ = cycle_ + activity_period_;
    }

    uint32_t read_reg(uint32_t addr) {
        top_->s_axil_araddr = addr;
        top_->s_axil_arvalid = 1;
        top_->eval();
        while (!top_->s_axil_arready) tick();
        tick();
        top_->s_axil_arvalid = 0;
        top_->s_axil_rready = 1;
        top_->eval();
        while (!top_->s_axil_rvalid) tick();
        const uint32_t data = top_->s_axil_rdata;
        tick();
        top_->s_axil_rready = 0;
        top_->eval();
        return data;
    }

  private:
    uint8_t* dram_;
    uint64_t base_;
    uint64_t size_;
    Params p_;
    std::mt19937_64 rng_;
    std::unique_ptr<VerilatedContext> ctx_;
    std::unique_ptr<Vvta> top_;
    std::deque<Burst> reads_;
    std::deque<Burst> writes_;
    std::deque<Burst> acks_;
    int current_ = -1;
    uint64_t cycle_ = 0;
    uint64_t activity_period_ = 0, next_sample_ = 0;
    std::vector<uint32_t> activity_addrs_;
    std::vector<uint64_t> samples_;
    bool error_ = false;
    std::string error_msg_;
#ifdef HWGEN_TRACE
    std::unique_ptr<Tracer> tracer_;
#endif
#ifdef HWGEN_WAVES
    Waves* waves_ = nullptr;
    std::unique_ptr<WaveWriter> writer_;
    bool by_insn_ = false, opened_ = false, closed_ = false, window_open_ = false;
    uint32_t retired_[3] = {0, 0, 0};
#endif
};

}  // namespace

extern "C" {

const char* tsim_build_hash() { return HWGEN_BUILD_HASH; }
#ifdef HWGEN_TRACE
int tsim_traced() { return 1; }
#else
int tsim_traced() { return 0; }
#endif
#ifdef HWGEN_WAVES
int tsim_waves() { return 1; }
#else
int tsim_waves() { return 0; }
#endif

// A simulation: the core, its memory model on the caller's `dram` buffer (used in
// place until tsim_close) holding bus addresses [dram_base, dram_base + dram_bytes),
// an optional event trace file (DRAM addresses relative to dram_base) and waveform window.
struct Sim {
    std::unique_ptr<Harness> harness;
    FILE* trace = nullptr;
};

void* tsim_open(uint8_t* dram, uint64_t dram_base, uint64_t dram_bytes, uint32_t latency, uint32_t max_outstanding, double stall,
                int out_of_order, uint64_t seed, uint64_t max_cycles, const char* trace_path, Waves* waves) {
    Params p{latency, max_outstanding ? max_outstanding : 1, stall, out_of_order, seed, max_cycles};
    Sim* s = new Sim;
    s->trace = trace_path ? std::fopen(trace_path, "w") : nullptr;
    s->harness.reset(new Harness(dram, dram_base, dram_bytes, p, s->trace, waves));
    s->harness->reset();
    return s;
}
void tsim_write_reg(void* s, uint32_t addr, uint32_t data) { static_cast<Sim*>(s)->harness->write_reg(addr, data); }
uint32_t tsim_read_reg(void* s, uint32_t addr) { return static_cast<Sim*>(s)->harness->read_reg(addr); }
int tsim_poll(void* s, uint32_t addr, uint32_t mask, uint64_t until) {
    return static_cast<Sim*>(s)->harness->poll(addr, mask, until);
}
uint64_t tsim_cycles(void* s) { return static_cast<Sim*>(s)->harness->cycles(); }
void tsim_set_activity(void* s, uint64_t period, const uint32_t* addrs, int n) {
    static_cast<Sim*>(s)->harness->set_activity(period, addrs, n);
}
// The activity samples so far (each the cycle, then one value per register); copies
// at most `max` numbers into `out` and returns how many there are.
uint64_t tsim_activity(void* s, uint64_t* out, uint64_t max) {
    const std::vector<uint64_t>& v = static_cast<Sim*>(s)->harness->samples();
    if (out) std::memcpy(out, v.data(), sizeof(uint64_t) * std::min<uint64_t>(max, v.size()));
    return v.size();
}
#ifdef HWGEN_COVERAGE
// Writes the run's coverage counters to `path` (replacing the file); before tsim_close.
void tsim_write_coverage(void* s, const char* path) { static_cast<Sim*>(s)->harness->write_coverage(path); }
#endif
// 1 and the message (truncated to msg_len - 1 bytes) when a memory access failed.
int tsim_error(void* s, char* msg, int msg_len) {
    const Harness& h = *static_cast<Sim*>(s)->harness;
    if (msg_len > 0) {
        std::strncpy(msg, h.error_message().c_str(), msg_len - 1);
        msg[msg_len - 1] = 0;
    }
    return h.error() ? 1 : 0;
}
// Ends the simulation: closes the waveform and trace files.
void tsim_close(void* s) {
    Sim* sim = static_cast<Sim*>(s);
    sim->harness.reset();
    if (sim->trace) std::fclose(sim->trace);
    delete sim;
}
}
