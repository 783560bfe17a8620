// Weight stream: reads a run of whole words from DRAM into a FIFO for the array's weight loader
// (or the LUT unit). A read is issued only when its word has a FIFO slot, so responses are
// always accepted and the stream keeps up to Depth words in flight to hide DRAM latency.
module npu_weight_stream
  import npu_core_pkg::*;
#(
  parameter int unsigned Depth = 256
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  input  logic               flush_i,

  input  logic               start_i,
  input  logic [31:0]        addr_i,
  input  logic [31:0]        words_i,
  output logic               busy_o,      // words left to request

  output logic               req_valid_o,
  input  logic               req_ready_i,
  output logic [31:0]        req_addr_o,
  input  logic               rsp_valid_i,
  input  logic [VecBits-1:0] rsp_data_i,

  output logic               out_valid_o,
  input  logic               out_ready_i,
  output logic [VecBits-1:0] out_data_o,
  output logic [$clog2(Depth+1)-1:0] count_o
);

  localparam int unsigned CountW = $clog2(Depth + 1);

  logic [31:0]       addr_q, left_q;
  logic [CountW-1:0] inflight_q, count;
  logic              fire, pop, fifo_in_ready;

  // Slots not yet promised to a word in flight.
  assign req_valid_o = left_q != '0 && !flush_i && (32'(count) + 32'(inflight_q) < Depth);
  assign req_addr_o  = addr_q;
  assign fire        = req_valid_o && req_ready_i;
  assign pop         = out_valid_o && out_ready_i;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      addr_q     <= '0;
      left_q     <= '0;
      inflight_q <= '0;
    end else if (flush_i) begin
      left_q     <= '0;
      inflight_q <= '0;
    end else begin
      if (start_i) begin
        addr_q <= addr_i;
        left_q <= words_i;
      end else if (fire) begin
        addr_q <= addr_q + Vec;
        left_q <= left_q - 1;
      end
      inflight_q <= inflight_q + CountW'(fire) - CountW'(rsp_valid_i);
    end
  end

  npu_fifo #(
    .Width(VecBits),
    .Depth(Depth)
  ) u_fifo (
    .clk_i,
    .rst_ni,
    .flush_i,
    .in_valid_i (rsp_valid_i),
    .in_ready_o (fifo_in_ready),
    .in_data_i  (rsp_data_i),
    .out_valid_o,
    .out_ready_i,
    .out_data_o,
    .count_o    (count)
  );

  assign count_o = count;
  assign busy_o  = left_q != '0;

  // Credits keep the FIFO from overflowing.
  logic unused_signals;
  assign unused_signals = ^{pop, fifo_in_ready};

endmodule
