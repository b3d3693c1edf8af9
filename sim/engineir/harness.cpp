// The Verilator harness of an EngineIR machine (hwgen/engineir/rtl/machine.py): it
// models the DRAM port (two element arrays, reads answered the next cycle), drives the
// host port and runs the program. C entry points for ctypes.
#include <cstdint>
#include <vector>

#include "Vengineir.h"
#include "verilated.h"

double sc_time_stamp() { return 0; }

namespace {

struct Sim {
    VerilatedContext ctx;
    Vengineir* top;
    std::vector<int32_t> dram[2];
    Sim(int n8, int n32) {
        top = new Vengineir(&ctx);
        dram[0].assign(n8, 0);
        dram[1].assign(n32, 0);
    }
    ~Sim() { top->final(); delete top; }

    // One clock cycle. The DRAM samples its request at the rising edge and answers
    // after it, so the machine sees read data in the next cycle.
    bool tick() {
        top->clk = 0;
        top->eval();
        bool re = top->dram_re, we = top->dram_we;
        int space = top->dram_space;
        int64_t addr = static_cast<int64_t>(top->dram_addr);
        int32_t wdata = static_cast<int32_t>(top->dram_wdata);
        top->clk = 1;
        top->eval();
        std::vector<int32_t>& mem = dram[space];
        if ((re || we) && (addr < 0 || addr >= static_cast<int64_t>(mem.size()))) return false;
        if (we) mem[addr] = space ? wdata : static_cast<int8_t>(wdata);
        if (re) top->dram_rdata = mem[addr];
        return true;
    }
};

}  // namespace

extern "C" {

void* eir_new(int n8, int n32) {
    Sim* s = new Sim(n8, n32);
    s->top->rst = 1;
    s->tick();
    s->top->rst = 0;
    return s;
}

void eir_free(void* p) { delete static_cast<Sim*>(p); }

int32_t* eir_dram(void* p, int space) { return static_cast<Sim*>(p)->dram[space].data(); }

// Write n elements of an on-chip buffer through the host port (the machine idle).
void eir_host_write(void* p, int space, int addr, const int32_t* values, int n) {
    Sim* s = static_cast<Sim*>(p);
    for (int i = 0; i < n; i++) {
        s->top->host_we = 1;
        s->top->host_space = space;
        s->top->host_addr = addr + i;
        s->top->host_wdata = values[i];
        s->tick();
    }
    s->top->host_we = 0;
}

void eir_host_read(void* p, int space, int addr, int32_t* out, int n) {
    Sim* s = static_cast<Sim*>(p);
    for (int i = 0; i < n; i++) {
        s->top->host_re = 1;
        s->top->host_space = space;
        s->top->host_addr = addr + i;
        s->tick();
        s->top->eval();
        out[i] = static_cast<int32_t>(s->top->host_rdata);
    }
    s->top->host_re = 0;
}

// Start the program and run until it is done: its cycles, -1 past max_cycles, -2 on
// a DRAM access outside the arrays. counters: cycles, fires, elements moved.
int64_t eir_run(void* p, int64_t max_cycles, uint32_t* counters) {
    Sim* s = static_cast<Sim*>(p);
    s->top->start = 1;
    if (!s->tick()) return -2;
    s->top->start = 0;
    for (int64_t n = 0; n < max_cycles; n++) {
        if (!s->tick()) return -2;
        if (s->top->done) {
            counters[0] = s->top->cycles;
            counters[1] = s->top->fires;
            counters[2] = s->top->moved;
            return counters[0];
        }
    }
    return -1;
}
}
