// Store DMA: writes a stream of scratchpad-format words to a 4-D strided DRAM tensor.
//
// Each tensor row takes ceil(INNER / Vec) words (the row's first byte in lane 0 of its first
// word; lanes past INNER are ignored) and is written at its row address with byte strobes, one
// beat per cycle; a row starting off a beat boundary takes one beat more than it has words.
// Write combining: a row's last beat that ends inside the beat is held back (except on the last
// row) and merged into the next row's first beat when that is the same beat, so rows that follow
// each other in DRAM share their beats (a transpose's 12-byte pixels: 3 beats per 4 pixels, not
// 5). A held beat the next row does not touch is written first.
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

  // The beat of the row this cycle (beat_*), before write combining.
  logic               beat_valid, beat_ready, beat_held_back;
  logic [31:0]        beat_addr;
  logic [VecBits-1:0] beat_data;
  logic [Vec-1:0]     beat_strb;

  assign off        = row[VecIdxW-1:0];
  assign beats      = 17'((32'(off) + 32'(inner_q) + Vec - 1) >> VecIdxW);
  assign wpr        = 17'((32'(inner_q) + Vec - 1) >> VecIdxW);
  assign needs_word = beat_q < wpr;

  assign beat_valid = active_q && !flush_i && (!needs_word || in_valid_i);
  assign in_ready_o = active_q && !flush_i && needs_word && beat_ready;
  assign fire       = beat_valid && beat_ready;
  assign row_done   = fire && (beat_q + 17'd1 >= beats);
  assign walk_next  = row_done && !last_row;
  // The row's last beat, ending inside the beat, with a row after it.
  assign beat_held_back = beat_q + 17'd1 >= beats && !last_row &&
                          (VecIdxW'(32'(off) + 32'(inner_q)) != '0);

  // Beat b holds stream bytes [b * Vec - off, (b + 1) * Vec - off) of the row.
  logic [2*VecBits-1:0] both;
  logic [31:0]          first_byte;
  assign both      = {needs_word ? in_data_i : '0, beat_q == '0 ? '0 : prev_q} >>
                     (32'(Vec - 32'(off)) * 8);
  assign beat_data = both[VecBits-1:0];
  logic unused_both;
  assign unused_both = ^both[2*VecBits-1:VecBits];
  assign beat_addr   = {row[31:VecIdxW], {VecIdxW{1'b0}}} + (32'(beat_q) << VecIdxW);
  assign first_byte  = (32'(beat_q) << VecIdxW) - 32'(off);

  always_comb begin
    for (int unsigned l = 0; l < Vec; l++) begin
      logic [31:0] s;
      s = first_byte + l;
      // s wraps below zero for the lanes before the row's first byte.
      beat_strb[l] = !s[31] && s < 32'(inner_q);
    end
  end

  // Write combining: the held beat, and the beat merged with it (this beat's bytes over it).
  logic               held_q, merge, held_alone;
  logic [31:0]        held_addr_q;
  logic [VecBits-1:0] held_data_q, merged_data;
  logic [Vec-1:0]     held_strb_q, merged_strb;

  assign merge       = held_q && beat_addr == held_addr_q;
  assign merged_strb = beat_strb | (merge ? held_strb_q : '0);
  always_comb begin
    for (int unsigned l = 0; l < Vec; l++) begin
      merged_data[l*8 +: 8] = beat_strb[l] ? beat_data[l*8 +: 8] : held_data_q[l*8 +: 8];
    end
  end

  // A held beat the row's beat does not merge with goes out first, alone; a beat held back
  // goes nowhere yet.
  assign held_alone  = held_q && !merge;
  assign req_valid_o = !flush_i && (held_alone || (beat_valid && !beat_held_back));
  assign req_addr_o  = held_alone ? held_addr_q : beat_addr;
  assign req_wdata_o = held_alone ? held_data_q : merge ? merged_data : beat_data;
  assign req_wstrb_o = held_alone ? held_strb_q : merged_strb;
  assign beat_ready  = !held_alone && (beat_held_back || req_ready_i);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      held_q <= 1'b0;
    end else if (flush_i) begin
      held_q <= 1'b0;
    end else if (fire) begin
      held_q <= beat_held_back;
    end else if (held_alone && req_ready_i) begin
      held_q <= 1'b0;
    end
  end

  always_ff @(posedge clk_i) begin
    if (fire && beat_held_back) begin
      held_addr_q <= beat_addr;
      held_data_q <= merge ? merged_data : beat_data;
      held_strb_q <= merged_strb;
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

  assign busy_o = active_q || held_q;

`ifndef SYNTHESIS
  // The result stream holds a word until the store takes it (valid/ready).
  a_in_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
      in_valid_i && !in_ready_o && !flush_i |=> flush_i || (in_valid_i && $stable(in_data_i)))
    else $error("result word changed or dropped before the store took it");
`endif

endmodule
