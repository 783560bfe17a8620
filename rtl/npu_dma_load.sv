// Load DMA: copies tensor A, then optionally tensor B, from DRAM into the scratchpad.
//
// Every tensor row (INNER bytes at any alignment) becomes ceil(INNER / Vec) consecutive
// scratchpad words with the row's first byte in lane 0 of its first word and a zero-filled tail,
// starting at spad_base_i (B follows A). The request side issues one beat read per cycle; the
// response side walks the same rows to realign the beats as they return in order.
//
// A row whose first beat is the beat the walk read last (rows of few bytes side by side, such as
// an image's 3-channel pixels) reuses that beat instead of reading it again: both sides make the
// same decision, so the response side takes the reused beat from its last data. A reused first
// beat of a row of at most one word that goes on into the next beat yields no word alone, so it
// shares its step with that next beat: a pixel across two beats costs one cycle, not two (and a
// step still writes at most one word, as the buffer below expects). Responses
// wait in a FIFO (a reused beat may take the response side's cycle), and reads are issued only
// while the FIFO has room for them.
//
// Planar rows (A_PLANAR: an NCHW tensor's channel planes): element p of a row (one to MaxPlanes
// elements of 1, 2 or 4 bytes) is at the row address + p x A.STRIDE3, and the row becomes one
// word of its elements side by side. Each plane keeps the beat it read last, so consecutive
// pixels reuse it, and only beats a plane has not read yet go to DRAM. Both sides step a row a
// cycle: the request side queues a row's new beats (plane order) and issues them from the
// queue, one a cycle; the response side keeps up to MaxPlanes returned beats at hand, so a row
// that needs several takes them at once. 16 one-byte pixels of three planes take 16 cycles.
module npu_dma_load
  import npu_pkg::*;
  import npu_core_pkg::*;
#(
  parameter int unsigned RspDepth = 128
)
(
  input  logic               clk_i,
  input  logic               rst_ni,
  input  logic               flush_i,

  input  logic               start_i,
  input  tensor_t            a_i,
  input  tensor_t            b_i,
  input  logic               two_i,
  input  logic [2:0]         planes_i,     // 0: contiguous rows; else A's elements per row
  input  logic [1:0]         elem_log2_i,  // planar: log2 of the element's bytes
  input  logic [SpadAw-1:0]  spad_base_i,
  output logic               busy_o,

  output logic               req_valid_o,
  input  logic               req_ready_i,
  output logic [31:0]        req_addr_o,
  input  logic               rsp_valid_i,
  input  logic [VecBits-1:0] rsp_data_i,

  output logic               spad_we_o,
  output logic [SpadAw-1:0]  spad_waddr_o,
  output logic [VecBits-1:0] spad_wdata_o
);

  localparam int unsigned MaxPlanes = 4;

  tensor_t    a_q, b_q;
  logic       two_q;
  logic [2:0] planes_q;
  logic [1:0] elem_log2_q;
  logic       planar;
  assign planar = planes_q != '0;

  localparam int unsigned BeatW  = 32 - VecIdxW;
  localparam int unsigned CountW = $clog2(RspDepth + 1);

  /* verilator lint_off UNUSEDSIGNAL */
  function automatic logic [16:0] beats_of(logic [31:0] row_addr, logic [15:0] inner);
    return 17'((32'(row_addr[VecIdxW-1:0]) + 32'(inner) + Vec - 1) >> VecIdxW);
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // ------------------------------------------------------------------------------------------
  // Request side.
  logic              req_active_q, req_second_q;
  logic [16:0]       req_beat_q;
  logic [31:0]       req_row;
  logic              req_last_row, req_walk_start, req_walk_next;
  logic [15:0]       req_inner;
  logic [16:0]       req_beats;
  tensor_t           req_walk_tensor;
  logic [BeatW-1:0]  req_beat_addr, req_last_beat_q;  // the beat of this step, of the last one
  logic              req_last_valid_q, req_reuse, req_skip, req_step;
  logic [16:0]       req_cur;  // the beat this step reads (or reuses)
  logic [CountW-1:0] reads_q;  // reads issued whose responses the response side has not taken
  // Planar: the beat each plane read last; the queue of beats to read (head first).
  localparam int unsigned PendDepth = 2 * MaxPlanes;
  logic [MaxPlanes-1:0][BeatW-1:0] req_row_beat;
  logic [MaxPlanes-1:0]            req_need;
  logic [PendDepth-1:0][BeatW-1:0] pend_q, pend_d;
  logic [3:0]                      pend_count_q, pend_count_d;

  assign req_inner     = req_second_q ? b_q.inner : a_q.inner;
  assign req_beats     = beats_of(req_row, req_inner);
  assign req_reuse     = req_beat_q == '0 && req_last_valid_q &&
                         req_row[31:VecIdxW] == req_last_beat_q;
  assign req_skip      = req_reuse && req_beats == 17'd2 && 32'(req_inner) <= Vec;
  assign req_cur       = req_beat_q + 17'(req_skip);
  assign req_beat_addr = req_row[31:VecIdxW] + BeatW'(req_cur);

  npu_tensor_walk u_req_walk (
    .clk_i,
    .rst_ni,
    .start_i   (req_walk_start),
    .tensor_i  (req_walk_tensor),
    .next_i    (req_walk_next),
    .row_addr_o(req_row),
    .last_row_o(req_last_row)
  );

  /* verilator lint_off PINCONNECTEMPTY */
  npu_dma_planes #(
    .Planes(MaxPlanes)
  ) u_req_planes (
    .clk_i,
    .rst_ni,
    .clear_i (flush_i || start_i),
    .planes_i(planes_q),
    .stride_i(a_q.stride3),
    .row_i   (req_row),
    .step_i  (planar && req_step),
    .need_o  (req_need),
    .beat_o  (req_row_beat),
    .offset_o()
  );
  /* verilator lint_on PINCONNECTEMPTY */

  logic req_fire, req_row_done;
  assign req_valid_o  = !flush_i && 32'(reads_q) < RspDepth &&
                        (planar ? pend_count_q != '0
                                : req_active_q && (!req_reuse || req_skip));
  assign req_addr_o   = {planar ? pend_q[0] : req_beat_addr, {VecIdxW{1'b0}}};
  assign req_fire     = req_valid_o && req_ready_i;
  // A planar row steps while the queue has room for all its planes' beats.
  assign req_step     = planar ? req_active_q && !flush_i && 32'(pend_count_q) <= PendDepth - MaxPlanes
                               : req_fire || (req_active_q && !flush_i && req_reuse && !req_skip);
  assign req_row_done = req_step && (planar || req_cur + 17'd1 >= req_beats);

  always_comb begin
    pend_d       = pend_q;
    pend_count_d = pend_count_q;
    if (planar && req_fire) begin
      for (int unsigned i = 0; i + 1 < PendDepth; i++) pend_d[i] = pend_d[i + 1];
      pend_count_d = pend_count_d - 4'd1;
    end
    if (planar && req_step) begin
      for (int unsigned p = 0; p < MaxPlanes; p++) begin
        if (req_need[p]) begin
          pend_d[pend_count_d[2:0]] = req_row_beat[p];
          pend_count_d              = pend_count_d + 4'd1;
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pend_count_q <= '0;
    end else if (flush_i || start_i) begin
      pend_count_q <= '0;
    end else begin
      pend_count_q <= pend_count_d;
    end
  end

  always_ff @(posedge clk_i) begin
    pend_q <= pend_d;
  end

  assign req_walk_start  = start_i || (req_row_done && req_last_row && !req_second_q && two_q);
  assign req_walk_tensor = start_i ? a_i : b_q;
  assign req_walk_next   = req_row_done && !req_last_row;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      req_active_q <= 1'b0;
      req_second_q <= 1'b0;
      req_beat_q   <= '0;
    end else if (flush_i) begin
      req_active_q <= 1'b0;
      req_second_q <= 1'b0;
      req_beat_q   <= '0;
    end else if (start_i) begin
      req_active_q <= 1'b1;
      req_second_q <= 1'b0;
      req_beat_q   <= '0;
    end else if (req_step) begin
      if (!req_row_done) begin
        req_beat_q <= req_cur + 17'd1;
      end else begin
        req_beat_q <= '0;
        if (req_last_row) begin
          if (!req_second_q && two_q) begin
            req_second_q <= 1'b1;
          end else begin
            req_active_q <= 1'b0;
          end
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      req_last_valid_q <= 1'b0;
    end else if (flush_i || start_i) begin
      req_last_valid_q <= 1'b0;
    end else if (req_step) begin
      req_last_valid_q <= 1'b1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (req_step) begin
      req_last_beat_q <= req_beat_addr;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      a_q         <= '0;
      b_q         <= '0;
      two_q       <= 1'b0;
      planes_q    <= '0;
      elem_log2_q <= '0;
    end else if (start_i) begin
      a_q         <= a_i;
      b_q         <= b_i;
      two_q       <= two_i;
      planes_q    <= planes_i;
      elem_log2_q <= elem_log2_i;
    end
  end

  // ------------------------------------------------------------------------------------------
  // Response side: the same walk, one row per beat group, realigning into words.
  logic               rsp_active_q, rsp_second_q;
  logic [16:0]        rsp_beat_q;
  logic [VecBits-1:0] prev_q;  // the last beat's data
  logic [31:0]        rsp_row;
  logic               rsp_last_row, rsp_walk_start, rsp_walk_next;
  logic [15:0]        rsp_inner;
  logic [16:0]        rsp_beats, rsp_wpr;
  logic [VecIdxW-1:0] rsp_off;
  tensor_t            rsp_walk_tensor;
  logic [BeatW-1:0]   rsp_beat_addr, rsp_last_beat_q;
  logic               rsp_last_valid_q, rsp_reuse, rsp_skip, rsp_from_last;
  logic [16:0]        rsp_cur;  // the beat this step takes
  logic               fifo_valid, fifo_in_ready;
  logic [VecBits-1:0] fifo_data, beat_data;
  logic [CountW-1:0]  fifo_count;  // reads_q bounds it
  logic               rsp_take, rsp_row_done, fifo_pop;
  // Planar: each plane's last beat and its data; returned beats at hand (oldest first), and
  // per plane, the one a row that needs it takes (by its rank among the row's needs).
  logic [MaxPlanes-1:0][VecBits-1:0] rsp_plane_data_q, rsp_row_data;
  logic [MaxPlanes-1:0][VecIdxW-1:0] rsp_row_offset;
  logic [MaxPlanes-1:0]              rsp_need;
  logic [MaxPlanes-1:0][VecBits-1:0] held_q, held_d;
  logic [2:0]                        held_count_q, held_count_d, rsp_needs;

  assign rsp_inner     = rsp_second_q ? b_q.inner : a_q.inner;
  assign rsp_off       = rsp_row[VecIdxW-1:0];
  assign rsp_beats     = beats_of(rsp_row, rsp_inner);
  assign rsp_wpr       = 17'((32'(rsp_inner) + Vec - 1) >> VecIdxW);
  assign rsp_reuse     = rsp_beat_q == '0 && rsp_last_valid_q &&
                         rsp_row[31:VecIdxW] == rsp_last_beat_q;
  assign rsp_skip      = rsp_reuse && rsp_beats == 17'd2 && rsp_wpr == 17'd1;  // as req_skip
  assign rsp_from_last = rsp_reuse && !rsp_skip;  // this step's beat is prev_q
  assign rsp_cur       = rsp_beat_q + 17'(rsp_skip);
  assign rsp_beat_addr = rsp_row[31:VecIdxW] + BeatW'(rsp_cur);
  assign beat_data     = rsp_from_last ? prev_q : fifo_data;

  /* verilator lint_off PINCONNECTEMPTY */
  npu_dma_planes #(
    .Planes(MaxPlanes)
  ) u_rsp_planes (
    .clk_i,
    .rst_ni,
    .clear_i (flush_i || start_i),
    .planes_i(planes_q),
    .stride_i(a_q.stride3),
    .row_i   (rsp_row),
    .step_i  (planar && rsp_take),
    .need_o  (rsp_need),
    .beat_o  (),
    .offset_o(rsp_row_offset)
  );
  /* verilator lint_on PINCONNECTEMPTY */

  always_comb begin
    logic [2:0] rank;
    rank = '0;
    for (int unsigned p = 0; p < MaxPlanes; p++) begin
      rsp_row_data[p] = rsp_need[p] ? held_q[rank[1:0]] : rsp_plane_data_q[p];
      rank            = rank + 3'(rsp_need[p]);
    end
    rsp_needs = rank;
  end

  // Responses of this load (those of an aborted one arrive after the flush and are dropped).
  npu_fifo #(
    .Width(VecBits),
    .Depth(RspDepth)
  ) u_rsp_fifo (
    .clk_i,
    .rst_ni,
    .flush_i,
    .in_valid_i (rsp_valid_i && rsp_active_q),
    .in_ready_o (fifo_in_ready),
    .in_data_i  (rsp_data_i),
    .out_valid_o(fifo_valid),
    .out_ready_i(fifo_pop),
    .out_data_o (fifo_data),
    .count_o    (fifo_count)
  );

  npu_tensor_walk u_rsp_walk (
    .clk_i,
    .rst_ni,
    .start_i   (rsp_walk_start),
    .tensor_i  (rsp_walk_tensor),
    .next_i    (rsp_walk_next),
    .row_addr_o(rsp_row),
    .last_row_o(rsp_last_row)
  );

  // A planar row steps once the beats it needs are at hand; beats move there from the FIFO,
  // one a cycle, while there is room.
  assign rsp_take     = rsp_active_q && !flush_i &&
                        (planar ? held_count_q >= rsp_needs : rsp_from_last || fifo_valid);
  assign fifo_pop     = planar ? fifo_valid && !flush_i && 32'(held_count_q) < MaxPlanes
                               : rsp_take && !rsp_from_last;
  assign rsp_row_done = rsp_take && (planar || rsp_cur + 17'd1 >= rsp_beats);

  always_comb begin
    held_d       = held_q;
    held_count_d = held_count_q;
    if (planar && rsp_take) begin
      for (int unsigned i = 0; i < MaxPlanes; i++) begin
        held_d[i] = 32'(i) + 32'(rsp_needs) < MaxPlanes ? held_q[2'(32'(i) + 32'(rsp_needs))] : '0;
      end
      held_count_d = held_count_d - rsp_needs;
    end
    if (fifo_pop && planar) begin
      held_d[held_count_d[1:0]] = fifo_data;
      held_count_d              = held_count_d + 3'd1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      held_count_q <= '0;
    end else if (flush_i || start_i) begin
      held_count_q <= '0;
    end else begin
      held_count_q <= held_count_d;
    end
  end

  always_ff @(posedge clk_i) begin
    held_q <= held_d;
  end

  assign rsp_walk_start  = start_i || (rsp_row_done && rsp_last_row && !rsp_second_q && two_q);
  assign rsp_walk_tensor = start_i ? a_i : b_q;
  assign rsp_walk_next   = rsp_row_done && !rsp_last_row;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rsp_active_q <= 1'b0;
      rsp_second_q <= 1'b0;
      rsp_beat_q   <= '0;
    end else if (flush_i) begin
      rsp_active_q <= 1'b0;
      rsp_second_q <= 1'b0;
      rsp_beat_q   <= '0;
    end else if (start_i) begin
      rsp_active_q <= 1'b1;
      rsp_second_q <= 1'b0;
      rsp_beat_q   <= '0;
    end else if (rsp_take) begin
      if (!rsp_row_done) begin
        rsp_beat_q <= rsp_cur + 17'd1;
      end else begin
        rsp_beat_q <= '0;
        if (rsp_last_row) begin
          if (!rsp_second_q && two_q) begin
            rsp_second_q <= 1'b1;
          end else begin
            rsp_active_q <= 1'b0;
          end
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rsp_last_valid_q <= 1'b0;
      reads_q          <= '0;
    end else if (flush_i) begin
      rsp_last_valid_q <= 1'b0;
      reads_q          <= '0;
    end else begin
      if (start_i) begin
        rsp_last_valid_q <= 1'b0;
      end else if (rsp_take) begin
        rsp_last_valid_q <= 1'b1;
      end
      reads_q <= reads_q + CountW'(req_fire) - CountW'(fifo_pop);
    end
  end

  always_ff @(posedge clk_i) begin
    if (rsp_take) begin
      prev_q          <= beat_data;
      rsp_last_beat_q <= rsp_beat_addr;
    end
  end

  always_ff @(posedge clk_i) begin
    for (int unsigned p = 0; p < MaxPlanes; p++) begin
      if (planar && rsp_take && rsp_need[p]) begin
        rsp_plane_data_q[p] <= rsp_row_data[p];
      end
    end
  end

  // A planar row's word: element p from its plane's beat, the rest of the word zero.
  logic [VecBits-1:0] planar_word;
  always_comb begin
    planar_word = '0;
    for (int unsigned p = 0; p < MaxPlanes; p++) begin
      for (int unsigned b = 0; b < 4; b++) begin
        if (32'(p) < 32'(planes_q) && b < (32'd1 << elem_log2_q)) begin
          planar_word[((p << elem_log2_q) + b) * 8 +: 8] =
              rsp_row_data[p][(32'(rsp_row_offset[p]) + b) * 8 +: 8];
        end
      end
    end
  end

  // Word k of a row takes bytes [k * Vec + off, (k + 1) * Vec + off) of the row's beats; bytes
  // past INNER read as zero.
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic logic [VecBits-1:0] realign(logic [VecBits-1:0] hi, logic [VecBits-1:0] lo,
                                                 logic [VecIdxW-1:0] off, logic [16:0] word,
                                                 logic [15:0] inner);
    logic [2*VecBits-1:0] both;
    logic [VecBits-1:0]   data;
    logic [31:0]          valid;
    both  = {hi, lo} >> (32'(off) * 8);
    data  = both[VecBits-1:0];
    valid = 32'(inner) - (32'(word) << VecIdxW);
    for (int unsigned b = 0; b < Vec; b++) begin
      if (b >= valid) begin
        data[b*8 +: 8] = 8'd0;
      end
    end
    return data;
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // Up to two words per beat: with off != 0 a beat completes the previous word and, on a row's
  // last beat, may also hold a whole tail word.
  logic               emit_a, emit_b;
  logic [VecBits-1:0] word_a, word_b;

  always_comb begin
    emit_a = 1'b0;
    emit_b = 1'b0;
    word_a = '0;
    word_b = '0;
    if (rsp_take && planar) begin
      emit_a = 1'b1;  // a planar row is one word
      word_a = planar_word;
    end else if (rsp_take) begin
      if (rsp_off == '0) begin
        emit_a = 1'b1;
        word_a = realign('0, beat_data, '0, rsp_cur, rsp_inner);
      end else begin
        if (rsp_cur != '0) begin
          emit_a = 1'b1;
          word_a = realign(beat_data, prev_q, rsp_off, rsp_cur - 17'd1, rsp_inner);
        end
        if (rsp_row_done && rsp_wpr == rsp_beats) begin
          emit_b = 1'b1;
          word_b = realign('0, beat_data, rsp_off, rsp_cur, rsp_inner);
        end
      end
    end
  end

  // Four-entry buffer in front of the scratchpad's one write port (two in, one out per cycle;
  // words never outnumber beats, so two entries would do).
  logic [VecBits-1:0] buf_q [4];
  logic [1:0]         head_q, tail_q;
  logic [2:0]         fill_q;
  logic [SpadAw-1:0]  waddr_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      head_q  <= '0;
      tail_q  <= '0;
      fill_q  <= '0;
      waddr_q <= '0;
    end else if (flush_i) begin
      head_q <= '0;
      tail_q <= '0;
      fill_q <= '0;
    end else begin
      if (start_i) begin
        waddr_q <= spad_base_i;
      end else if (fill_q != '0) begin
        waddr_q <= waddr_q + 1'b1;
      end
      head_q <= head_q + 2'(fill_q != '0);
      tail_q <= tail_q + 2'(emit_a) + 2'(emit_b);
      fill_q <= fill_q + 3'(emit_a) + 3'(emit_b) - 3'(fill_q != '0);
    end
  end

  always_ff @(posedge clk_i) begin
    if (emit_a) begin
      buf_q[tail_q] <= word_a;
    end
    if (emit_b) begin
      buf_q[emit_a ? tail_q + 2'd1 : tail_q] <= word_b;
    end
  end

  assign spad_we_o    = fill_q != '0 && !flush_i;
  assign spad_waddr_o = waddr_q;
  assign spad_wdata_o = buf_q[head_q];

  // Only the rows' byte counts are kept; addresses live in the walkers. The high half of the
  // shifted pair is never selected.
  logic unused_signals;
  assign unused_signals = ^{a_q.addr, a_q.count1, a_q.stride1, a_q.count2, a_q.count3,
                            a_q.stride2, fifo_in_ready, fifo_count};

  assign busy_o = req_active_q || rsp_active_q || fill_q != '0 || pend_count_q != '0;

endmodule
