#!/usr/bin/env python3
"""Tests of sim/mutation/npu_mutate.py (ctest mutation_generator, mutation_schemata_semantics).

    test_npu_mutate.py generator VERILATOR RTL_SOURCES...   the real RTL: every unit has mutants
        of the kinds it should, the schemata lint, every waiver names a mutant
    test_npu_mutate.py semantics VERILATOR                  a small design simulated under every
        mutant next to the original: mutant 0 is the original, a mutant the probe does not
        activate behaves as the original (what lets the campaign skip checks), most do not
"""

import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GENERATOR = os.path.join(HERE, "npu_mutate.py")
WAIVERS = os.path.join(HERE, "waivers.json")

# Every unit of rtl/ the issue names, by file: each must have mutants.
UNITS = ["npu_cmd.sv", "npu_dma_load.sv", "npu_dma_store.sv", "npu_feeder.sv",
         "npu_weight_loader.sv", "npu_array.sv", "npu_accum.sv", "npu_drain.sv",
         "npu_requant.sv", "npu_pool.sv", "npu_eltwise.sv", "npu_residual.sv", "npu_csr.sv",
         "npu_mem_arb.sv", "npu_fifo.sv", "npu_compute.sv", "npu_tensor_walk.sv",
         "npu_weight_stream.sv", "npu_spad.sv", "npu_dma_planes.sv", "npu_fp_pkg.sv",
         "npu_core_pkg.sv"]
KINDS = ["relational", "equality", "arithmetic", "logical", "bitwise", "constant", "if-true",
         "if-false", "cond-true", "cond-false", "nba-drop", "case-item", "stuck-at-0",
         "stuck-at-1", "reset-value"]

failures = []


def check(cond, message):
    if not cond:
        failures.append(message)
        print("FAIL:", message)


def generate(verilator, out, sources, lint=True, top="npu_top"):
    cmd = [sys.executable, GENERATOR, "--verilator", verilator, "--out", out, "--top", top] + \
          (["--lint"] if lint else []) + sources
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
    check(r.returncode == 0, "the generator (with --lint) succeeds")
    if r.returncode != 0:
        sys.exit(1)
    with open(os.path.join(out, "mutants.json")) as f:
        return json.load(f)


def test_generator(verilator, sources):
    with tempfile.TemporaryDirectory() as out:
        manifest = generate(verilator, out, sources)
        mutants = manifest["mutants"]
        print(f"{len(mutants)} mutants")
        check(len(mutants) > 2000, f"thousands of mutants ({len(mutants)})")
        check([m["id"] for m in mutants] == list(range(1, len(mutants) + 1)), "ids run 1..N")
        keys = [m["key"] for m in mutants]
        check(len(set(keys)) == len(keys), "keys are unique")
        per_file = {}
        for m in mutants:
            per_file.setdefault(os.path.basename(m["file"]), set()).add(m["kind"])
        for unit in UNITS:
            check(unit in per_file, f"{unit} has mutants")
        kinds = set(k for ks in per_file.values() for k in ks)
        for kind in KINDS:
            check(kind in kinds, f"some mutant is of kind {kind}")
        # The schemata are copies: rtl/ itself is never written.
        for src in sources:
            check(os.path.abspath(os.path.join(out, "rtl", os.path.basename(src))) !=
                  os.path.abspath(src), "schemata outside rtl/")
        # Positions point at the source text of the mutation.
        texts = {}
        for src in sources:
            with open(src) as f:
                texts[os.path.basename(src)] = f.read().splitlines()
        bad = 0
        for m in mutants:
            line = texts[os.path.basename(m["file"])][m["line"] - 1]
            at = line[m["column"] - 1:]
            if m["kind"] in ("relational", "equality", "arithmetic", "logical", "bitwise"):
                bad += not at.startswith(m["original"])
            elif m["kind"] == "constant":
                bad += not at.replace(" ", "").startswith(m["original"])
            elif m["kind"] in ("if-true", "if-false"):
                bad += not at.startswith("if")
            elif m["kind"] in ("cond-true", "cond-false"):
                bad += not at.startswith("?")
        check(bad == 0, f"every operator, constant and condition is at its position ({bad} not)")
        # Every waiver names a mutant of this RTL.
        with open(WAIVERS) as f:
            waivers = json.load(f)["waivers"]
        keyset = set(keys)
        for w in waivers:
            check(w["key"] in keyset, f"waiver {w['key']!r} names a mutant (stale otherwise)")
            check(len(w.get("reason", "")) > 10, f"waiver {w['key']!r} has a reason")


# A small design with a mutation point of every kind, and a testbench that runs it beside an
# unmutated copy on random inputs.
DESIGN = """
module mut_t (
  input  logic       clk_i,
  input  logic       rst_ni,
  input  logic [7:0] a_i,
  input  logic [7:0] b_i,
  input  logic [1:0] op_i,
  output logic [7:0] y_o,
  output logic       lt_o,
  output logic [1:0] st_o
);
  typedef enum logic [1:0] {Idle, Run, Done} state_e;
  state_e     state_q, state_d;
  logic [7:0] acc_q, acc_d;
  logic [3:0] count_q;

  assign lt_o = a_i < b_i;
  assign st_o = state_q;
  assign y_o  = acc_q ^ {4'd0, count_q};

  always_comb begin
    state_d = state_q;
    acc_d   = acc_q;
    unique case (state_q)
      Idle: if (op_i == 2'd1) state_d = Run;
      Run: begin
        acc_d   = acc_q + (a_i & b_i) - (op_i != 2'd0 ? 8'd1 : 8'd0);
        state_d = a_i > 8'd200 || b_i >= 8'd250 ? Done : Run;
      end
      Done: state_d = (op_i == 2'd3 && a_i[0]) ? Idle : Done;
      default: state_d = Idle;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= Idle;
      acc_q   <= '0;
      count_q <= 4'd3;
    end else begin
      state_q <= state_d;
      acc_q   <= acc_d;
      if (state_q == Done | op_i[1]) count_q <= count_q + 4'd1;
    end
  end
endmodule
"""

TESTBENCH = """
module tb;
  logic clk = 0, rst_n = 0;
  logic [7:0] a, b;
  logic [1:0] op;
  logic [7:0] y, y_ref;
  logic lt, lt_ref;
  logic [1:0] st, st_ref;
  int mismatches = 0;
  logic [31:0] lfsr = 32'h1234_5678;
  mut_t     dut (.clk_i(clk), .rst_ni(rst_n), .a_i(a), .b_i(b), .op_i(op), .y_o(y), .lt_o(lt),
                 .st_o(st));
  mut_t_ref ref_ (.clk_i(clk), .rst_ni(rst_n), .a_i(a), .b_i(b), .op_i(op), .y_o(y_ref),
                  .lt_o(lt_ref), .st_o(st_ref));
  initial begin
    a = 0; b = 0; op = 0;
    for (int cycle = 0; cycle < 600; cycle++) begin
      if (cycle == 2) rst_n = 1;
      lfsr = {lfsr[30:0], lfsr[31] ^ lfsr[21] ^ lfsr[1] ^ lfsr[0]};
      a = lfsr[7:0]; b = lfsr[15:8] | 8'h80; op = lfsr[17:16];
      #1 clk = 1;
      #1 clk = 0;
      if (y !== y_ref || lt !== lt_ref || st !== st_ref) mismatches++;
    end
    $display("MISMATCHES %0d", mismatches);
    $finish;
  end
endmodule
"""

DPI = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
static std::set<unsigned> activated;
static bool probe() { const char* v = std::getenv("NNCOSIM_MUTANT"); return v && !std::strcmp(v, "probe"); }
extern "C" unsigned npu_mut_selected() {
  const char* v = std::getenv("NNCOSIM_MUTANT");
  if (!v || !*v) return 0;
  if (!std::strcmp(v, "probe")) return 0xffffffffu;
  return (unsigned)std::strtoul(v, nullptr, 10);
}
extern "C" void npu_mut_activated(unsigned id) { activated.insert(id); }
struct Report { ~Report() { if (probe()) for (unsigned id : activated) std::printf("ACTIVATED %u\n", id); } } report;
"""


def test_semantics(verilator):
    with tempfile.TemporaryDirectory() as work:
        design = os.path.join(work, "mut_t.sv")
        with open(design, "w") as f:
            f.write(DESIGN)
        out = os.path.join(work, "gen")
        manifest = generate(verilator, out, [design], top="mut_t")
        mutants = manifest["mutants"]
        kinds = {m["kind"] for m in mutants}
        for kind in KINDS:
            check(kind in kinds, f"the small design has a mutant of kind {kind}")
        ref = os.path.join(work, "mut_t_ref.sv")
        with open(ref, "w") as f:
            f.write(DESIGN.replace("module mut_t (", "module mut_t_ref ("))
        tb = os.path.join(work, "tb.sv")
        with open(tb, "w") as f:
            f.write(TESTBENCH)
        dpi = os.path.join(work, "dpi.cpp")
        with open(dpi, "w") as f:
            f.write(DPI)
        obj = os.path.join(work, "obj")
        cmd = [verilator, "--binary", "-O1", "-Wno-fatal", "-Wno-WIDTH", "-Wno-lint",
               "--top-module", "tb", "--Mdir", obj, "-o", "sim",
               os.path.join(out, "rtl", "npu_mut_pkg.sv"), os.path.join(out, "rtl", "mut_t.sv"),
               ref, tb, dpi, "-CFLAGS", "-O1"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout[-3000:] + r.stderr[-3000:])
        check(r.returncode == 0, "the schemata and the testbench build with Verilator")
        if r.returncode != 0:
            return
        binary = os.path.join(obj, "sim")

        def run(select):
            env = dict(os.environ, NNCOSIM_MUTANT=select)
            p = subprocess.run([binary], capture_output=True, text=True, env=env)
            m = re.search(r"MISMATCHES (\d+)", p.stdout)
            act = {int(x) for x in re.findall(r"ACTIVATED (\d+)", p.stdout)}
            return (int(m.group(1)) if m else None), act, p.stdout + p.stderr

        clean, _, text = run("0")
        check(clean == 0, f"mutant 0 behaves as the original ({clean} mismatching cycles)")
        probed, activated, _ = run("probe")
        check(probed == 0, "the probe run behaves as the original")
        detected = 0
        unsound = []
        for m in mutants:
            mism, _, text = run(str(m["id"]))
            differs = mism is None or mism > 0  # no count: it stopped (an assertion)
            detected += differs
            if differs and m["id"] not in activated:
                unsound.append(m["key"])
        print(f"{len(mutants)} mutants: {len(activated)} activated, {detected} change the "
              f"outputs")
        check(not unsound, f"every mutant that changes the outputs is activated: {unsound}")
        check(detected >= 0.6 * len(mutants), "most mutants change the outputs")
        check(detected <= len(activated), "activation bounds detection")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    what, verilator = sys.argv[1], sys.argv[2]
    if what == "generator":
        test_generator(verilator, sys.argv[3:])
    elif what == "semantics":
        test_semantics(verilator)
    else:
        print(__doc__)
        return 2
    print("FAILED" if failures else "PASSED", f"({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
