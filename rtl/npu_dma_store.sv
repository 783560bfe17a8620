// Store DMA: writes a stream of scratchpad-format words to a 4-D strided DRAM tensor.
//
// Each tensor row takes ceil(INNER / Vec) words (the row's first byte in lane 0 of its first
// word; lanes past INNER are ignored) and is written at its row address with byte strobes, one
// beat per cycle; a row starting off a beat boundary takes one beat more than it has words.
module npu_dma_store
  import npu_pkg::*;
  import npu_core_pkg::*;
(
  input  logic               clk_i,
  input  logic               rst_ni,
  input  logic               flush_i,

  input  logic               start_i,
  input  tensor_t            tensor_i,
  output logic               busy_o,

  input  logic               in_valid_i,
  output logic               in_ready_o,
  input  logic [VecBits-1:0] in_data_i,

  output logic               req_valid_o,
  input  logic               req_ready_i,
  output logic [31:0]        req_addr_o,
  output logic [VecBits-1:0] req_wdata_o,
  output logic [Vec-1:0]     req_wstrb_o
);

  logic               active_q;
  logic [15:0]        inner_q;
  logic [16:0]        beat_q;
  logic [VecBits-1:0] prev_q;
  logic [31:0]        row;
  logic               last_row, walk_next;

  npu_tensor_walk u_walk (
    .clk_i,
    .rst_ni,
    .start_i   (start_i),
    .tensor_i  (tensor_i),
    .next_i    (walk_next),
    .row_addr_o(row),
    .last_row_o(last_row)
  );

  logic [VecIdxW-1:0] off;
  logic [16:0]        beats, wpr;
  logic               needs_word, fire, row_done;

  assign off        = row[VecIdxW-1:0];
  assign beats      = 17'((32'(off) + 32'(inner_q) + Vec - 1) >> VecIdxW);
  assign wpr        = 17'((32'(inner_q) + Vec - 1) >> VecIdxW);
  assign needs_word = beat_q < wpr;

  assign req_valid_o = active_q && !flush_i && (!needs_word || in_valid_i);
  assign in_ready_o  = active_q && !flush_i && needs_word && req_ready_i;
  assign fire        = req_valid_o && req_ready_i;
  assign row_done    = fire && (beat_q + 17'd1 >= beats);
  assign walk_next   = row_done && !last_row;

  // Beat b holds stream bytes [b * Vec - off, (b + 1) * Vec - off) of the row.
  logic [2*VecBits-1:0] both;
  logic [31:0]          first_byte;
  assign both        = {needs_word ? in_data_i : '0, beat_q == '0 ? '0 : prev_q} >>
                       (32'(Vec - 32'(off)) * 8);
  assign req_wdata_o = both[VecBits-1:0];
  logic unused_both;
  assign unused_both = ^both[2*VecBits-1:VecBits];
  assign req_addr_o  = {row[31:VecIdxW], {VecIdxW{1'b0}}} + (32'(beat_q) << VecIdxW);
  assign first_byte  = (32'(beat_q) << VecIdxW) - 32'(off);

  always_comb begin
    for (int unsigned l = 0; l < Vec; l++) begin
      logic [31:0] s;
      s = first_byte + l;
      // s wraps below zero for the lanes before the row's first byte.
      req_wstrb_o[l] = !s[31] && s < 32'(inner_q);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      active_q <= 1'b0;
      inner_q  <= '0;
      beat_q   <= '0;
    end else if (flush_i) begin
      active_q <= 1'b0;
      beat_q   <= '0;
    end else if (start_i) begin
      active_q <= 1'b1;
      inner_q  <= tensor_i.inner;
      beat_q   <= '0;
    end else if (fire) begin
      if (!row_done) begin
        beat_q <= beat_q + 17'd1;
      end else begin
        beat_q <= '0;
        if (last_row) begin
          active_q <= 1'b0;
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (fire && needs_word) begin
      prev_q <= in_data_i;
    end
  end

  assign busy_o = active_q;

`ifndef SYNTHESIS
  // The result stream holds a word until the store takes it (valid/ready).
  a_in_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
      in_valid_i && !in_ready_o && !flush_i |=> flush_i || (in_valid_i && $stable(in_data_i)))
    else $error("result word changed or dropped before the store took it");
`endif

endmodule
