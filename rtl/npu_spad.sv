// Input scratchpad: Words x Vec bytes, one write port (the load DMA) and one synchronous read
// port (the compute stage). Two halves serve as ping-pong buffers; the units keep their
// accesses in different halves, so a read never meets a write to the same word.
module npu_spad
  import npu_core_pkg::*;
#(
  parameter int unsigned Words = 8192
) (
  input  logic                     clk_i,
  input  logic                     we_i,
  input  logic [$clog2(Words)-1:0] waddr_i,
  input  logic [VecBits-1:0]       wdata_i,
  input  logic [$clog2(Words)-1:0] raddr_i,
  output logic [VecBits-1:0]       rdata_o
);

  logic [VecBits-1:0] mem_q [Words];

  always_ff @(posedge clk_i) begin
    if (we_i) begin
      mem_q[waddr_i] <= wdata_i;
    end
    rdata_o <= mem_q[raddr_i];
  end

endmodule
