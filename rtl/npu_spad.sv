// Input scratchpad: Words x Vec bytes, two write ports (the load DMA, and the compute stage's
// CHAIN_OUT results, which always go to the other half) and ReadPorts synchronous read ports
// with enables (the compute stage; ports beyond the first serve the depthwise TAPS mode, which
// reads one word per kernel row and stride phase each cycle, so the memory is replicated
// ReadPorts ways; the other ports idle otherwise). The first DwTapPorts ports can read a line
// of LineWords consecutive words (a float vector: the memory is banked by word address). Two
// halves serve as ping-pong buffers; the units keep their accesses in different halves, so a
// read never meets a write to the same word.
module npu_spad
  import npu_pkg::*;
  import npu_core_pkg::*;
#(
  parameter int unsigned Words     = 8192,
  parameter int unsigned ReadPorts = 1
) (
  input  logic                     clk_i,
  input  logic                     we_i     [2],
  input  logic [$clog2(Words)-1:0] waddr_i  [2],
  input  logic [VecBits-1:0]       wdata_i  [2],
  input  logic                     re_i    [ReadPorts],
  input  logic [$clog2(Words)-1:0] raddr_i [ReadPorts],
  output logic [VecBits-1:0]       rdata_o [ReadPorts],
  input  spad_line_re_t            line_i,   // with re_i: port p reads a line
  output spad_line_t               rline_o   // its words after the first
);

  logic [VecBits-1:0] mem_q [Words];

  always_ff @(posedge clk_i) begin
    for (int unsigned w = 0; w < 2; w++) begin
      if (we_i[w]) begin
        mem_q[waddr_i[w]] <= wdata_i[w];
      end
    end
    for (int unsigned p = 0; p < ReadPorts; p++) begin
      if (re_i[p]) begin
        rdata_o[p] <= mem_q[raddr_i[p]];
      end
    end
    for (int unsigned p = 0; p < DwTapPorts; p++) begin
      if (re_i[p] && line_i[p]) begin
        for (int unsigned w = 1; w < LineWords; w++) begin
          rline_o[p][w-1] <= mem_q[raddr_i[p] + $clog2(Words)'(w)];
        end
      end
    end
  end

endmodule
