// Compute stage: executes one loaded descriptor at a time out of its scratchpad buffer.
//
// Window operations (CONV, DWCONV, MAXPOOL, AVGPOOL) loop over output-channel blocks (nb),
// K steps (kt: kernel taps, and input-channel words for CONV) and the tile's output pixels (p):
//   - the weight loader takes the weight stream (per nb: quantization words, then one
//     Vec x Vec block per kt) and writes each block into the array's idle weight buffer while
//     the other buffer is in use;
//   - the feeder reads one scratchpad word per cycle (implicit im2col with padding and
//     zero-point subtraction) into the array, or, for pooling, straight to the accumulators;
//   - the accumulators (two banks of AccDepth x Vec int32) sum the K steps of one nb; a full
//     bank is drained through requantization (or the pooling finish) to the store DMA while
//     the other bank fills.
// DWCONV with the TAPS flag puts kernel tap t = ky*KW + kx on array row t and channel c on
// column c (the depthwise weights themselves are the stationary block). Each cycle the feeder
// steps one output pixel ox and reads, per kernel row ky and phase f < STRIDE_W, the word of
// input column ox*STRIDE_W + f (one scratchpad port each). Row t needs column
// ox*STRIDE_W + kx, which is phase kx % STRIDE_W of step ox + kx / STRIDE_W; the pixel reaches
// row t t cycles after row 0, so that word is delayed t - kx / STRIDE_W cycles. Output rows are
// extended by (KW-1) / STRIDE_W steps so the last pixels get their right-hand taps.
// CHAIN_OUT banks drain into the scratchpad buffer of the next descriptor instead of the store
// DMA; that CHAIN_IN descriptor (a 1x1 convolution) issues each input word only once the drain has
// written it, so a depthwise layer and the pointwise layer after it overlap without DRAM traffic.
// Element-wise operations (ADD, MUL, LUT) stream the buffer word by word through the lane
// arithmetic and requantization (ADD, MUL) or the table (LUT) to the store DMA.
// Descriptors retire in order once their last result word is stored.
module npu_compute
  import npu_pkg::*;
  import npu_core_pkg::*;
(
  input  logic                       clk_i,
  input  logic                       rst_ni,
  input  logic                       flush_i,

  output logic                       ready_o,
  input  logic                       start_i,
  input  job_t                       job_i,
  output logic                       retire_o,
  output logic                       idle_o,
  output logic [31:0]                weight_index_o,
  output logic [31:0]                store_index_o,

  output logic                       spad_re_o    [DwTapPorts],
  output logic [SpadAw-1:0]          spad_raddr_o [DwTapPorts],
  input  logic [VecBits-1:0]         spad_rdata_i [DwTapPorts],
  output logic                       chain_we_o,
  output logic [SpadAw-1:0]          chain_waddr_o,
  output logic [VecBits-1:0]         chain_wdata_o,

  output logic                       ws_start_o,
  output logic [31:0]                ws_addr_o,
  output logic [31:0]                ws_words_o,
  input  logic                       ws_valid_i,
  output logic                       ws_ready_o,
  input  logic [VecBits-1:0]         ws_data_i,
  input  logic [$clog2(WeightFifoWords+1)-1:0] ws_count_i,

  output logic                       st_start_o,
  output tensor_t                    st_tensor_o,
  input  logic                       st_busy_i,
  output logic                       st_valid_o,
  input  logic                       st_ready_i,
  output logic [VecBits-1:0]         st_data_o,

  input  logic [VecBits-1:0]         fault_rq_mask_i,
  input  logic [VecBits-1:0]         fault_rq_value_i,

  output logic [15:0]                perf_macs_o,
  output logic                       perf_array_active_o,
  output logic                       perf_stall_weight_o,
  output logic                       perf_stall_output_o
);

  localparam int unsigned ArrayLatency = ArrayRows + ArrayCols;  // npu_array input to output
  localparam int unsigned FeedDepth    = 3;                      // feeder issue to array input
  // Cycles after a block's last vector is issued before its weight buffer may be rewritten.
  localparam int unsigned TagHold      = FeedDepth + ArrayCols + 2;
  localparam int unsigned TableWords   = 256 / Vec;

  // ------------------------------------------------------------------------------------------
  // The job being fed.
  typedef enum logic [2:0] {
    FdIdle,
    FdNbStart,
    FdStream,
    FdElemWait,
    FdElemTable,
    FdElemRun,
    FdElemDone,
    FdNop
  } feed_state_e;

  feed_state_e fd_state_q;
  job_t        job_q;
  desc_t       dq;
  assign dq = job_q.desc;

  logic is_array, is_pool, is_dw;
  assign is_array = op_uses_array(dq.opcode);
  // Window operations off the array (pooling) take the feeder's values to the accumulators.
  assign is_pool  = op_is_window(dq.opcode) && !op_uses_array(dq.opcode);
  assign is_dw    = dq.opcode != OpConv;  // the input word follows nb (DWCONV, pooling)

  logic is_taps, is_chain_in;
  assign is_taps     = dq.opcode == OpDwconv && dq.flags[FlagTapsBit];
  assign is_chain_in = dq.flags[FlagChainInBit];

  // ------------------------------------------------------------------------------------------
  // Accumulator banks and the jobs that drain them.
  typedef struct packed {
    tensor_t     out;        // this block's channels of the output
    logic [31:0] p_count;
    logic [31:0] index;
    logic [7:0]  opcode;
    logic [8:0]  zero_point;
    logic [8:0]  act_min;
    logic [8:0]  act_max;
    logic        last;       // the descriptor retires after this block
    logic        chain;      // CHAIN_OUT: drain into the next descriptor's buffer
    logic [SpadAw-1:0] chain_addr;  // there: the word of pixel 0 of this block
    logic [15:0] chain_wpr;  // words per pixel there
  } bank_job_t;

  bank_job_t bank_job_q [2];
  logic [1:0] bank_busy_q;      // being filled or waiting to drain
  logic [1:0] bank_full_q;      // every K step accumulated
  // Output-channel blocks are numbered in feeding order across descriptors; block s uses bank
  // s % 2. The feeder claims, the weight loader fills the quantization of, and the drain
  // empties blocks in that order.
  logic [15:0] fd_seq_q, ld_seq_q, dr_seq_q, rel_seq_q;
  logic        fd_bank_q, ld_bank_q, dr_bank_q;
  assign fd_bank_q = fd_seq_q[0];
  assign ld_bank_q = ld_seq_q[0];
  assign dr_bank_q = dr_seq_q[0];

  // Per-bank quantization of the block: bias, multiplier, shift per lane.
  logic [31:0] q_bias_q  [2][Vec];
  logic [31:0] q_mult_q  [2][Vec];
  logic [5:0]  q_shift_q [2][Vec];

  // ------------------------------------------------------------------------------------------
  // Feeder counters (stage 0).
  logic [15:0] nb_q, kt_q, ky_q, kx_q, cb_q;
  logic [15:0] oy_q, ox_q;
  logic [31:0] p_q;
  logic [15:0] fd_block_q, ld_block_q;  // global block numbers (the array buffer is bit 0)
  logic [7:0]  tag_hold_q [2];
  logic [7:0]  array_inflight_q;         // vectors in the feeder and the array

  logic last_p, last_kt, last_nb, block_ready, issue;
  logic taps_row_end, taps_last, step_valid, last_step;
  assign last_p  = p_q + 1 == job_q.p_count;
  // TAPS steps are the row's output pixels plus (KW - 1) / STRIDE_W for the last ones'
  // right-hand taps.
  assign taps_row_end = 32'(ox_q) + 1 ==
                        32'(dq.out.count1) + (32'(dq.kernel_w) - 1) / 32'(dq.stride_w);
  assign taps_last    = taps_row_end && oy_q + 1 == dq.out.count2;
  assign step_valid   = !is_taps || ox_q < dq.out.count1;
  assign last_step    = is_taps ? taps_last : last_p;
  assign last_kt = kt_q + 1 == job_q.kt_count;
  assign last_nb = nb_q + 1 == job_q.nb_count;
  assign block_ready = !is_array || ld_block_q != fd_block_q;
  // CHAIN_IN: input word fd_word_q (K step x pixels + pixel, as the drain numbers its writes)
  // must have been written by the previous descriptor's drain.
  logic [31:0] fd_word_q, chain_written_q;
  logic        chain_ready;
  assign chain_ready = !is_chain_in || fd_word_q < chain_written_q;
  assign issue = fd_state_q == FdStream && block_ready && chain_ready;

  // The array changes mode (weight-stationary / TAPS) and pooling starts only on an empty array.
  // So does a TAPS shape (the ports' and rows' configuration) change.
  logic        nb_go, array_dw_q, same_array_mode;
  logic [23:0] taps_shape_q;  // KERNEL_H, KERNEL_W, STRIDE_W of the TAPS configuration
  assign same_array_mode = is_array && is_taps == array_dw_q &&
                           (!is_taps || taps_shape_q == {dq.kernel_h, dq.kernel_w, dq.stride_w});
  assign nb_go = fd_state_q == FdNbStart && !bank_busy_q[fd_bank_q] &&
                 (same_array_mode || array_inflight_q == '0);

  // Lanes of the current input word and of the current output block that hold real channels.
  logic [15:0] in_lanes, out_lanes;
  always_comb begin
    logic [15:0] in_base, out_base;
    in_base  = (is_dw ? nb_q : cb_q) << VecIdxW;
    out_base = nb_q << VecIdxW;
    in_lanes  = dq.a.inner - in_base > 16'(Vec) ? 16'(Vec) : dq.a.inner - in_base;
    out_lanes = dq.out.inner - out_base > 16'(Vec) ? 16'(Vec) : dq.out.inner - out_base;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      fd_state_q <= FdIdle;
      job_q      <= '0;
      nb_q       <= '0;
      kt_q       <= '0;
      ky_q       <= '0;
      kx_q       <= '0;
      cb_q       <= '0;
      oy_q       <= '0;
      ox_q       <= '0;
      p_q        <= '0;
      fd_block_q <= '0;
      fd_seq_q   <= '0;
    end else if (flush_i) begin
      fd_state_q <= FdIdle;
      fd_block_q <= '0;
      fd_seq_q   <= '0;
    end else begin
      unique case (fd_state_q)
        FdIdle: begin
          if (start_i) begin
            job_q <= job_i;
            nb_q  <= '0;
            if (job_i.desc.opcode == OpNop) begin
              fd_state_q <= FdNop;
            end else if (op_is_window(job_i.desc.opcode)) begin
              fd_state_q <= FdNbStart;
            end else begin
              fd_state_q <= FdElemWait;
            end
          end
        end
        FdNbStart: begin
          if (nb_go) begin
            kt_q <= '0;
            ky_q <= '0;
            kx_q <= '0;
            cb_q <= '0;
            oy_q <= '0;
            ox_q <= '0;
            p_q  <= '0;
            fd_word_q <= '0;
            fd_state_q <= FdStream;
          end
        end
        FdStream: begin
          if (issue) begin
            fd_word_q <= fd_word_q + 1;
            if (!last_step) begin
              if (step_valid) begin
                p_q <= p_q + 1;
              end
              if (is_taps ? taps_row_end : ox_q + 1 == dq.out.count1) begin
                ox_q <= '0;
                oy_q <= oy_q + 1;
              end else begin
                ox_q <= ox_q + 1;
              end
            end else begin
              p_q  <= '0;
              ox_q <= '0;
              oy_q <= '0;
              if (is_array) begin
                fd_block_q <= fd_block_q + 1;
              end
              if (!last_kt) begin
                kt_q <= kt_q + 1;
                if (!is_dw && cb_q + 1 != job_q.a_wpr) begin
                  cb_q <= cb_q + 1;
                end else begin
                  cb_q <= '0;
                  if (kx_q + 1 == 16'(dq.kernel_w)) begin
                    kx_q <= '0;
                    ky_q <= ky_q + 1;
                  end else begin
                    kx_q <= kx_q + 1;
                  end
                end
              end else begin
                fd_seq_q  <= fd_seq_q + 1;
                nb_q      <= nb_q + 1;
                fd_state_q <= last_nb ? FdIdle : FdNbStart;
              end
            end
          end
        end
        FdElemWait:  if (elem_can_start) fd_state_q <= dq.opcode == OpLut ? FdElemTable : FdElemRun;
        FdElemTable: if (table_done) fd_state_q <= FdElemRun;
        FdElemRun:   if (elem_all_issued) fd_state_q <= FdElemDone;
        FdElemDone:  if (elem_finished) fd_state_q <= FdIdle;
        FdNop:       if (drain_idle) fd_state_q <= FdIdle;
        default:     fd_state_q <= FdIdle;
      endcase
    end
  end

  // Bank bookkeeping: the feeder claims a bank at nb start; the accumulators mark it full; the
  // drain releases it.
  logic       acc_bank_done;
  logic       acc_bank_done_bank;
  logic       drain_release;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      bank_busy_q <= '0;
      bank_full_q <= '0;
      rel_seq_q   <= '0;
    end else if (flush_i) begin
      bank_busy_q <= '0;
      bank_full_q <= '0;
      rel_seq_q   <= '0;
    end else begin
      rel_seq_q <= rel_seq_q + 16'(drain_release);
      if (nb_go) begin
        bank_busy_q[fd_bank_q] <= 1'b1;
      end
      if (acc_bank_done) begin
        bank_full_q[acc_bank_done_bank] <= 1'b1;
      end
      if (drain_release) begin
        bank_busy_q[dr_bank_q] <= 1'b0;
        bank_full_q[dr_bank_q] <= 1'b0;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (nb_go) begin
      bank_job_q[fd_bank_q].out         <= '{addr:    dq.out.addr + (32'(nb_q) << VecIdxW),
                                             inner:   out_lanes,
                                             count1:  dq.out.count1,
                                             stride1: dq.out.stride1,
                                             count2:  dq.out.count2,
                                             count3:  16'd1,
                                             stride2: dq.out.stride2,
                                             stride3: '0};
      bank_job_q[fd_bank_q].p_count     <= job_q.p_count;
      bank_job_q[fd_bank_q].index       <= job_q.index;
      bank_job_q[fd_bank_q].opcode      <= dq.opcode;
      bank_job_q[fd_bank_q].zero_point  <= dq.out_zero_point;
      bank_job_q[fd_bank_q].act_min     <= dq.act_min;
      bank_job_q[fd_bank_q].act_max     <= dq.act_max;
      bank_job_q[fd_bank_q].last        <= last_nb;
      bank_job_q[fd_bank_q].chain       <= dq.flags[FlagChainOutBit];
      bank_job_q[fd_bank_q].chain_addr  <= (job_q.buf_sel ? '0 : SpadAw'(SpadWords)) +
                                           SpadAw'(nb_q);
      bank_job_q[fd_bank_q].chain_wpr   <= job_q.nb_count;
    end
  end

  // ------------------------------------------------------------------------------------------
  // Weight loader: quantization words of each nb, then one block per kt, a row per cycle.
  typedef enum logic [1:0] {
    LdIdle,
    LdQuant,
    LdWait,
    LdRows
  } load_state_e;

  load_state_e         ld_state_q;
  logic [15:0]         ld_nb_q, ld_kt_q;
  logic [3:0]          ld_word_q;
  logic [VecIdxW-1:0]  ld_row_q;
  logic                ld_block_go;

  assign ld_block_go = ld_state_q == LdWait && 32'(ws_count_i) >= Vec &&
                       ld_block_q - fd_block_q != 16'd2 && tag_hold_q[ld_block_q[0]] == '0;

  logic ld_quant_take;
  // A block's quantization may be written once the block two before it has drained.
  assign ld_quant_take = ld_state_q == LdQuant && ws_valid_i && ld_seq_q - rel_seq_q < 16'd2;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ld_state_q <= LdIdle;
      ld_nb_q    <= '0;
      ld_kt_q    <= '0;
      ld_word_q  <= '0;
      ld_row_q   <= '0;
      ld_seq_q   <= '0;
      ld_block_q <= '0;
    end else if (flush_i) begin
      ld_state_q <= LdIdle;
      ld_block_q <= '0;
    end else begin
      unique case (ld_state_q)
        LdIdle: begin
          if (fd_state_q == FdIdle && start_i && op_uses_array(job_i.desc.opcode)) begin
            ld_state_q <= LdQuant;
            ld_nb_q    <= '0;
            ld_kt_q    <= '0;
            ld_word_q  <= '0;
            ld_seq_q   <= fd_seq_q;
          end
        end
        LdQuant: begin
          if (ld_quant_take) begin
            ld_word_q <= ld_word_q + 1;
            if (32'(ld_word_q) == WeightQuantWords - 1) begin
              ld_word_q  <= '0;
              ld_state_q <= LdWait;
            end
          end
        end
        LdWait: begin
          if (ld_block_go) begin
            ld_block_q <= ld_block_q + 1;
            ld_row_q   <= VecIdxW'(1);
            ld_state_q <= LdRows;
          end
        end
        LdRows: begin
          ld_row_q <= ld_row_q + 1;
          if (32'(ld_row_q) == Vec - 1) begin
            if (ld_kt_q + 1 != job_q.kt_count) begin
              ld_kt_q    <= ld_kt_q + 1;
              ld_state_q <= LdWait;
            end else if (ld_nb_q + 1 != job_q.nb_count) begin
              ld_kt_q    <= '0;
              ld_nb_q    <= ld_nb_q + 1;
              ld_seq_q   <= ld_seq_q + 1;
              ld_state_q <= LdQuant;
            end else begin
              ld_state_q <= LdIdle;
            end
          end
        end
        default: ld_state_q <= LdIdle;
      endcase
    end
  end

  // Quantization words: Vec/4 biases per word (words 0-3), multipliers (4-7), shifts (8).
  always_ff @(posedge clk_i) begin
    if (ld_quant_take) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        if (32'(ld_word_q) == l / (Vec / 4)) begin
          q_bias_q[ld_bank_q][l] <= ws_data_i[(l % (Vec / 4)) * 32 +: 32];
        end
        if (32'(ld_word_q) == 4 + l / (Vec / 4)) begin
          q_mult_q[ld_bank_q][l] <= ws_data_i[(l % (Vec / 4)) * 32 +: 32];
        end
        if (32'(ld_word_q) == 8) begin
          q_shift_q[ld_bank_q][l] <= ws_data_i[l * 8 +: 6];
        end
      end
    end
  end

  // Weight rows into the array: the stream's bytes minus the weight zero point.
  logic                    wload_valid;
  logic [ArrayCols-1:0][8:0] wload_data;
  assign wload_valid = ld_block_go || ld_state_q == LdRows;
  always_comb begin
    for (int unsigned c = 0; c < ArrayCols; c++) begin
      wload_data[c] = widen(ws_data_i[c*8 +: 8], dq.b_signed) - dq.b_zero_point;
    end
  end

  // Hold timers of the two weight buffers, restarted by each block's last vector.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      tag_hold_q[0] <= '0;
      tag_hold_q[1] <= '0;
    end else begin
      for (int unsigned t = 0; t < 2; t++) begin
        if (issue && is_array && last_step && fd_block_q[0] == t[0]) begin
          tag_hold_q[t] <= 8'(TagHold);
        end else if (tag_hold_q[t] != '0) begin
          tag_hold_q[t] <= tag_hold_q[t] - 1;
        end
      end
    end
  end

  // ------------------------------------------------------------------------------------------
  // Feeder pipeline: stage 1 computes the input position, stage 2 reads the scratchpad, stage 3
  // forms the vector.
  typedef struct packed {
    logic              valid;
    logic [AccAw-1:0]  p;
    logic              bank;
    logic              tag;
    logic              first;      // first K step: overwrite the accumulator
    logic              bank_done;  // last vector of the bank
    logic              pool;       // to the accumulators directly
    logic              maxpool;    // MAXPOOL (else AVGPOOL), for the accumulators
    logic              pad;        // position outside the input (pooling skips it)
  } meta_t;

  meta_t             s1_q, s2_q, s3_q;
  logic signed [17:0] s1_iy_q, s1_ix_q;
  logic [15:0]       s1_word_q, s1_lanes_q;
  logic [15:0]       s2_lanes_q;
  // A's type and zero point travel with the vectors: the next descriptor may start while this
  // one's last vectors are still in stages 2 and 3.
  logic              s1_a_signed_q, s2_a_signed_q;
  logic signed [8:0] s1_a_zero_q, s2_a_zero_q;
  logic signed [8:0] s3_act_q [Vec];

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      s1_q <= '0;
      s2_q <= '0;
      s3_q <= '0;
    end else if (flush_i) begin
      s1_q <= '0;
      s2_q <= '0;
      s3_q <= '0;
    end else begin
      s1_q.valid     <= issue && step_valid;
      s1_q.p         <= AccAw'(p_q);
      s1_q.bank      <= fd_bank_q;
      s1_q.tag       <= fd_block_q[0];
      s1_q.first     <= kt_q == '0;
      s1_q.bank_done <= is_taps ? oy_q + 1 == dq.out.count2 && ox_q + 1 == dq.out.count1
                                : last_p && last_kt;
      s1_q.pool      <= is_pool;
      s1_q.maxpool   <= dq.opcode == OpMaxpool;
      s1_q.pad       <= 1'b0;
      s2_q           <= s1_q;
      s2_q.pad       <= !in_bounds;
      s3_q           <= s2_q;
    end
  end

  always_ff @(posedge clk_i) begin
    if (issue) begin
      s1_iy_q    <= 18'(signed'({1'b0, oy_q}) * signed'({1'b0, dq.stride_h}) +
                        signed'({1'b0, ky_q}) * signed'({1'b0, dq.dilation_h}) -
                        18'(signed'({1'b0, dq.pad_top})));
      s1_ix_q    <= 18'(signed'({1'b0, ox_q}) * signed'({1'b0, dq.stride_w}) +
                        signed'({1'b0, kx_q}) * signed'({1'b0, dq.dilation_w}) -
                        18'(signed'({1'b0, dq.pad_left})));
      s1_word_q  <= is_dw ? nb_q : cb_q;
      s1_lanes_q <= in_lanes;
      s1_a_signed_q <= dq.a_signed;
      s1_a_zero_q   <= dq.a_zero_point;
    end
    s2_a_signed_q <= s1_a_signed_q;
    s2_a_zero_q   <= s1_a_zero_q;
    if (s1_q.valid) begin
      s2_lanes_q <= in_bounds ? s1_lanes_q : '0;
    end
  end

  logic        in_bounds;
  logic [31:0] win_addr;
  assign in_bounds = !s1_iy_q[17] && !s1_ix_q[17] && s1_iy_q < 18'(dq.a.count2) &&
                     s1_ix_q < 18'(dq.a.count1);
  assign win_addr  = (32'(s1_iy_q) * 32'(dq.a.count1) + 32'(s1_ix_q)) * 32'(job_q.a_wpr) +
                     32'(s1_word_q);

  // ------------------------------------------------------------------------------------------
  // TAPS words: one per kernel row and phase (port k = ky * STRIDE_W + f), delayed and fanned
  // out to the array rows of its taps.
  localparam int unsigned PortW  = DwTapPorts > 1 ? $clog2(DwTapPorts) : 1;
  localparam int unsigned DelayW = $clog2(ArrayRows);

  logic               s1_step_q, s1_tag_q, s2_tag_q, tw_tag_q;
  logic [15:0]        s2_word_lanes_q;
  logic [31:0]        tap_addr [DwTapPorts];
  logic               tap_inb  [DwTapPorts];
  logic               s2_inb_q [DwTapPorts];
  logic signed [8:0]  tw_q     [DwTapPorts][Vec];
  logic signed [8:0]  tdel_q   [DwTapPorts][ArrayRows][Vec];
  logic               tdel_tag_q [DwTapPorts][ArrayRows];
  logic signed [8:0]  dw_rows_q [ArrayRows][Vec];
  logic               dw_rows_tag_q [ArrayRows];
  logic               port_on_q    [DwTapPorts];  // the port serves a kernel row
  logic [7:0]         port_ky_q    [DwTapPorts];
  logic [7:0]         port_phase_q [DwTapPorts];
  logic               row_on_q    [ArrayRows];  // the row holds a tap
  logic [PortW-1:0]   row_port_q  [ArrayRows];  // the port feeding it
  logic [DelayW-1:0]  row_delay_q [ArrayRows];  // its delay in cycles

  always_comb begin
    for (int unsigned k = 0; k < DwTapPorts; k++) begin
      logic signed [17:0] iy, ix;
      iy          = '0;
      ix          = '0;
      tap_addr[k] = '0;
      tap_inb[k]  = 1'b0;
      if (array_dw_q) begin
        iy          = s1_iy_q + 18'(32'(port_ky_q[k]) * 32'(dq.dilation_h));
        ix          = s1_ix_q + 18'(port_phase_q[k]);
        tap_inb[k]  = !iy[17] && !ix[17] && iy < 18'(dq.a.count2) &&
                      ix < 18'(dq.a.count1) && port_on_q[k];
        tap_addr[k] = (32'(iy) * 32'(dq.a.count1) + 32'(ix)) * 32'(job_q.a_wpr) +
                      32'(s1_word_q);
      end
    end
  end

  always_ff @(posedge clk_i) begin
    s1_step_q <= issue;
    s1_tag_q  <= fd_block_q[0];
    s2_tag_q  <= s1_tag_q;
    if (s1_step_q) begin
      s2_word_lanes_q <= s1_lanes_q;
      for (int unsigned k = 0; k < DwTapPorts; k++) begin
        s2_inb_q[k] <= tap_inb[k];
      end
    end
    if (nb_go && is_taps) begin
      taps_shape_q <= {dq.kernel_h, dq.kernel_w, dq.stride_w};
      for (int unsigned k = 0; k < DwTapPorts; k++) begin
        port_on_q[k]    <= k / 32'(dq.stride_w) < 32'(dq.kernel_h);
        port_ky_q[k]    <= 8'(k / 32'(dq.stride_w));
        port_phase_q[k] <= 8'(k % 32'(dq.stride_w));
      end
      for (int unsigned r = 0; r < ArrayRows; r++) begin
        logic [31:0] ky, kx;
        ky             = r / 32'(dq.kernel_w);
        kx             = r % 32'(dq.kernel_w);
        row_on_q[r]    <= ky < 32'(dq.kernel_h);
        row_port_q[r]  <= PortW'(ky * 32'(dq.stride_w) + kx % 32'(dq.stride_w));
        row_delay_q[r] <= DelayW'(r - kx / 32'(dq.stride_w));
      end
    end
    if (array_dw_q) begin
      tw_tag_q <= s2_tag_q;
      for (int unsigned k = 0; k < DwTapPorts; k++) begin
        for (int unsigned l = 0; l < Vec; l++) begin
          tw_q[k][l] <= s2_inb_q[k] && 32'(l) < 32'(s2_word_lanes_q)
                            ? widen(spad_rdata_i[k][l*8 +: 8], s2_a_signed_q) - s2_a_zero_q
                            : '0;
        end
        tdel_q[k][0]     <= tw_q[k];
        tdel_tag_q[k][0] <= tw_tag_q;
        for (int unsigned d = 1; d < ArrayRows; d++) begin
          tdel_q[k][d]     <= tdel_q[k][d-1];
          tdel_tag_q[k][d] <= tdel_tag_q[k][d-1];
        end
      end
      for (int unsigned r = 0; r < ArrayRows; r++) begin
        if (!row_on_q[r]) begin
          for (int unsigned l = 0; l < Vec; l++) begin
            dw_rows_q[r][l] <= '0;
          end
          dw_rows_tag_q[r] <= 1'b0;
        end else if (row_delay_q[r] == '0) begin
          dw_rows_q[r]     <= tw_q[row_port_q[r]];
          dw_rows_tag_q[r] <= tw_tag_q;
        end else begin
          dw_rows_q[r]     <= tdel_q[row_port_q[r]][row_delay_q[r] - 1];
          dw_rows_tag_q[r] <= tdel_tag_q[row_port_q[r]][row_delay_q[r] - 1];
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      array_dw_q <= 1'b0;
    end else if (nb_go && is_array) begin
      array_dw_q <= is_taps;
    end
  end

  always_ff @(posedge clk_i) begin
    if (s2_q.valid) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        if (s2_q.pool) begin
          s3_act_q[l] <= widen(spad_rdata_i[0][l*8 +: 8], s2_a_signed_q);
        end else if (32'(l) < 32'(s2_lanes_q)) begin
          s3_act_q[l] <= widen(spad_rdata_i[0][l*8 +: 8], s2_a_signed_q) - s2_a_zero_q;
        end else begin
          s3_act_q[l] <= '0;
        end
      end
    end else begin
      for (int unsigned l = 0; l < Vec; l++) begin
        s3_act_q[l] <= '0;
      end
    end
  end

  // ------------------------------------------------------------------------------------------
  // The array and the metadata that travels beside it.
  logic [ArrayRows-1:0][8:0]  act;
  logic [ArrayCols-1:0][31:0] psum;
  always_comb begin
    for (int unsigned l = 0; l < Vec; l++) begin
      act[l] = s3_q.valid && !s3_q.pool ? s3_act_q[l] : '0;
    end
  end

  npu_array #(
    .Rows(ArrayRows),
    .Cols(ArrayCols)
  ) u_array (
    .clk_i,
    .rst_ni,
    .act_i        (act),
    .tag_i        (s3_q.tag),
    .wload_valid_i(wload_valid),
    .wload_buf_i  (ld_block_go ? ld_block_q[0] : ~ld_block_q[0]),
    .wload_row_i  (ld_block_go ? '0 : ld_row_q),
    .wload_data_i (wload_data),
    .dw_mode_i    (array_dw_q),
    .dw_act_i     (dw_rows_q),
    .dw_tag_i     (dw_rows_tag_q),
    .psum_o       (psum)
  );

  meta_t meta_q [ArrayLatency];
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int unsigned d = 0; d < ArrayLatency; d++) begin
        meta_q[d] <= '0;
      end
    end else if (flush_i) begin
      for (int unsigned d = 0; d < ArrayLatency; d++) begin
        meta_q[d] <= '0;
      end
    end else begin
      // TAPS vectors leave the array after Rows + 1 cycles, not Rows + Cols: they join the
      // line Cols - 1 places further on.
      // Pooling vectors bypass the array in either mode.
      meta_q[0] <= s3_q.pool || array_dw_q ? '0 : s3_q;
      for (int unsigned d = 1; d < ArrayLatency; d++) begin
        if (d == ArrayCols - 1 && array_dw_q) begin
          meta_q[d] <= s3_q.pool ? '0 : s3_q;
        end else begin
          meta_q[d] <= meta_q[d-1];
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      array_inflight_q <= '0;
    end else if (flush_i) begin
      array_inflight_q <= '0;
    end else begin
      array_inflight_q <= array_inflight_q + 8'(issue && is_array && step_valid) -
                          8'(meta_q[ArrayLatency-1].valid);
    end
  end

  // ------------------------------------------------------------------------------------------
  // Accumulators: the array's sums, or pooling straight from the feeder.
  logic [31:0] acc_q   [2][AccDepth][Vec];
  logic [15:0] count_q [2][AccDepth];
  meta_t       am;
  logic        acc_from_array;
  assign acc_from_array = meta_q[ArrayLatency-1].valid;
  assign am             = acc_from_array ? meta_q[ArrayLatency-1] : (s3_q.pool ? s3_q : '0);

  assign acc_bank_done      = am.valid && am.bank_done;
  assign acc_bank_done_bank = am.bank;

  always_ff @(posedge clk_i) begin
    if (am.valid) begin
      if (acc_from_array) begin
        for (int unsigned l = 0; l < Vec; l++) begin
          acc_q[am.bank][am.p][l] <= (am.first ? 32'd0 : acc_q[am.bank][am.p][l]) + psum[l];
        end
      end else if (am.maxpool) begin
        for (int unsigned l = 0; l < Vec; l++) begin
          if (am.first && am.pad) begin
            acc_q[am.bank][am.p][l] <= 32'h8000_0000;
          end else if (am.first || (!am.pad && signed'(32'(s3_act_q[l])) >
                                                signed'(acc_q[am.bank][am.p][l]))) begin
            acc_q[am.bank][am.p][l] <= 32'(s3_act_q[l]);
          end
        end
      end else begin
        for (int unsigned l = 0; l < Vec; l++) begin
          acc_q[am.bank][am.p][l] <= (am.first ? 32'd0 : acc_q[am.bank][am.p][l]) +
                                     (am.pad ? 32'd0 : 32'(s3_act_q[l]));
        end
        count_q[am.bank][am.p] <= (am.first ? 16'd0 : count_q[am.bank][am.p]) + 16'(!am.pad);
      end
    end
  end

  // ------------------------------------------------------------------------------------------
  // Drain: a full bank through requantization (array ops) or the pooling finish, to the store.
  typedef enum logic [2:0] {
    DrIdle,
    DrStore,
    DrRead,
    DrRelease,
    DrFlush,
    DrRetire
  } drain_state_e;

  drain_state_e dr_state_q;
  bank_job_t    dj;
  logic [31:0]  dr_p_q;
  logic         dr_entry_valid_q;   // the entry register holds a value for the next stage
  logic [31:0]  dr_entry_q [Vec];
  logic [15:0]  dr_count_q;
  // The drain keeps its own copy: the feeder reuses the bank (and its job) once it is released,
  // before the store has finished.
  bank_job_t    dr_job_q;
  assign dj = dr_job_q;

  always_ff @(posedge clk_i) begin
    if (dr_state_q == DrIdle && bank_full_q[dr_bank_q]) begin
      dr_job_q <= bank_job_q[dr_bank_q];
    end
  end

  logic dr_is_pool, dr_entry_take, dr_read;
  assign dr_is_pool = op_is_window(dj.opcode) && !op_uses_array(dj.opcode);
  // The entry register advances when its value is taken (or it is empty).
  assign dr_read = dr_state_q == DrRead && (!dr_entry_valid_q || dr_entry_take);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      dr_state_q       <= DrIdle;
      dr_seq_q         <= '0;
      dr_p_q           <= '0;
      dr_entry_valid_q <= 1'b0;
    end else if (flush_i) begin
      dr_state_q       <= DrIdle;
      dr_seq_q         <= '0;
      dr_entry_valid_q <= 1'b0;
    end else begin
      if (dr_read) begin
        dr_entry_valid_q <= 1'b1;
      end else if (dr_entry_take) begin
        dr_entry_valid_q <= 1'b0;
      end
      unique case (dr_state_q)
        DrIdle: begin
          if (bank_full_q[dr_bank_q]) begin
            dr_state_q <= DrStore;
          end
        end
        DrStore: begin
          if (dj.chain || !st_busy_i) begin
            dr_p_q     <= '0;
            dr_state_q <= DrRead;
          end
        end
        DrRead: begin
          if (dr_read) begin
            dr_p_q <= dr_p_q + 1;
            if (dr_p_q + 1 == dj.p_count) begin
              dr_state_q <= DrRelease;
            end
          end
        end
        DrRelease: begin
          // The last entry has left for requantization: the bank and its quantization are free.
          if (!dr_entry_valid_q) begin
            dr_state_q <= DrFlush;
          end
        end
        DrFlush: begin
          // Wait for the last word to reach the store, then for the store to finish.
          if (!dr_entry_valid_q && !rq_busy && !pool_busy && !st_busy_i) begin
            dr_state_q <= DrRetire;
          end
        end
        DrRetire: begin
          dr_seq_q   <= dr_seq_q + 1;
          dr_state_q <= DrIdle;
        end
        default: dr_state_q <= DrIdle;
      endcase
    end
  end

  assign drain_release = dr_state_q == DrRelease && !dr_entry_valid_q;

  // CHAIN_OUT words go to the next descriptor's buffer, pixel by pixel in the drain's order; the
  // count of words written so far is what the CHAIN_IN feeder may read.
  logic              chain_drain;
  logic [SpadAw-1:0] cw_addr_q;
  assign chain_drain   = !rq_from_elem && dj.chain;
  assign chain_we_o    = rq_out_valid && chain_drain;
  assign chain_waddr_o = cw_addr_q;
  assign chain_wdata_o = rq_word;

  always_ff @(posedge clk_i) begin
    if (dr_state_q == DrStore) begin
      cw_addr_q <= dj.chain_addr;
    end else if (chain_we_o) begin
      cw_addr_q <= cw_addr_q + SpadAw'(dj.chain_wpr);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      chain_written_q <= '0;
    end else if (flush_i || (fd_state_q == FdIdle && start_i &&
                             job_i.desc.flags[FlagChainOutBit])) begin
      chain_written_q <= '0;  // the previous chain's reader has issued every word
    end else if (chain_we_o) begin
      chain_written_q <= chain_written_q + 1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (dr_read) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        dr_entry_q[l] <= acc_q[dr_bank_q][AccAw'(dr_p_q)][l];
      end
      dr_count_q <= count_q[dr_bank_q][AccAw'(dr_p_q)];
    end
  end

  // ------------------------------------------------------------------------------------------
  // Pooling finish: max clamps; average divides by the count of valid taps, rounding half away
  // from zero, one quotient bit per cycle (quotients stay below 2^PoolQBits).
  localparam int unsigned PoolQBits = 10;
  logic                    pool_busy, pool_out_valid_q, pool_div_q;
  logic [3:0]              pool_bit_q;
  logic [31:0]             pool_num_q [Vec];
  logic [PoolQBits-1:0]    pool_quo_q [Vec];
  logic [Vec-1:0]          pool_neg_q;
  logic [15:0]             pool_den_q;
  logic [VecBits-1:0]      pool_word_q;
  logic                    pool_take, pool_out_take;

  assign pool_take     = dr_entry_valid_q && dr_is_pool && !pool_div_q && !pool_out_valid_q;
  assign pool_busy     = pool_div_q || pool_out_valid_q;

  function automatic logic [7:0] clamp_byte(logic [31:0] value, logic [8:0] lo, logic [8:0] hi);
    logic signed [31:0] v;
    v = signed'(value);
    if (v < 32'(signed'(lo))) begin
      v = 32'(signed'(lo));
    end else if (v > 32'(signed'(hi))) begin
      v = 32'(signed'(hi));
    end
    return v[7:0];
  endfunction

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pool_out_valid_q <= 1'b0;
      pool_div_q       <= 1'b0;
      pool_bit_q       <= '0;
    end else if (flush_i) begin
      pool_out_valid_q <= 1'b0;
      pool_div_q       <= 1'b0;
    end else begin
      if (pool_out_take) begin
        pool_out_valid_q <= 1'b0;
      end
      if (pool_take) begin
        if (dj.opcode == OpMaxpool) begin
          pool_out_valid_q <= 1'b1;
        end else begin
          pool_div_q <= 1'b1;
          pool_bit_q <= 4'(PoolQBits - 1);
        end
      end else if (pool_div_q) begin
        pool_bit_q <= pool_bit_q - 1;
        if (pool_bit_q == '0) begin
          pool_div_q       <= 1'b0;
          pool_out_valid_q <= 1'b1;
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (pool_take) begin
      pool_den_q <= dr_count_q;
      for (int unsigned l = 0; l < Vec; l++) begin
        logic [31:0] magnitude;
        magnitude = dr_entry_q[l][31] ? 32'(-dr_entry_q[l]) : dr_entry_q[l];
        pool_num_q[l]  <= magnitude + 32'(dr_count_q[15:1]);
        pool_neg_q[l]  <= dr_entry_q[l][31];
        pool_quo_q[l]  <= '0;
        pool_word_q[l*8 +: 8] <= clamp_byte(dr_entry_q[l], dj.act_min, dj.act_max);
      end
    end else if (pool_div_q) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        logic [47:0] step;
        logic [PoolQBits-1:0] quo;
        step = 48'(pool_den_q) << pool_bit_q;
        quo  = pool_quo_q[l];
        if (48'(pool_num_q[l]) >= step) begin
          pool_num_q[l] <= 32'(48'(pool_num_q[l]) - step);
          quo[pool_bit_q] = 1'b1;
        end
        pool_quo_q[l] <= quo;
        if (pool_bit_q == '0) begin
          pool_word_q[l*8 +: 8] <= clamp_byte(pool_neg_q[l] ? 32'(-32'(quo)) : 32'(quo),
                                              dj.act_min, dj.act_max);
        end
      end
    end
  end

  // ------------------------------------------------------------------------------------------
  // Element-wise operations: words of A (and B) in order, two reads per word for ADD and MUL.
  logic        elem_can_start, table_done, elem_all_issued, elem_finished, drain_idle;
  logic [31:0] el_word_q;       // next word to read
  logic        el_second_q;     // reading B of the word
  logic [2:0]  el_inflight_q;   // words read but not yet in the result FIFO
  logic [7:0]  lut_q [256];
  logic [7:0]  table_word_q;
  logic        el_issue;
  logic [2:0]  el_fifo_count;
  logic        el_two;

  assign el_two = op_uses_b(dq.opcode);
  assign drain_idle = dr_state_q == DrIdle && bank_busy_q == '0 && !st_busy_i;
  assign elem_can_start = fd_state_q == FdElemWait && drain_idle;
  assign table_done = fd_state_q == FdElemTable && 32'(table_word_q) == TableWords;
  assign el_issue = fd_state_q == FdElemRun && el_word_q != job_q.a_words &&
                    (el_second_q || 32'(el_fifo_count) + 32'(el_inflight_q) < 4);
  assign elem_all_issued = fd_state_q == FdElemRun && el_word_q == job_q.a_words;

  logic table_take;
  assign table_take = fd_state_q == FdElemTable && ws_valid_i && 32'(table_word_q) < TableWords;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      el_word_q    <= '0;
      el_second_q  <= 1'b0;
      table_word_q <= '0;
    end else if (flush_i || fd_state_q == FdIdle) begin
      el_word_q    <= '0;
      el_second_q  <= 1'b0;
      table_word_q <= '0;
    end else begin
      if (table_take) begin
        table_word_q <= table_word_q + 1;
      end
      if (el_issue) begin
        if (el_two && !el_second_q) begin
          el_second_q <= 1'b1;
        end else begin
          el_second_q <= 1'b0;
          el_word_q   <= el_word_q + 1;
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (table_take) begin
      for (int unsigned b = 0; b < Vec; b++) begin
        lut_q[32'(table_word_q) * Vec + b] <= ws_data_i[b*8 +: 8];
      end
    end
  end

  // Element pipeline: e1 = data of the read issued last cycle (A is held until its B), e2 = the
  // word's result.
  logic               e1_valid_q, e1_b_q;
  logic [VecBits-1:0] e1_a_q;
  logic               e2_valid_q;
  logic [31:0]        e2_value_q [Vec];
  logic               e1_last;

  assign e1_last = e1_valid_q && (e1_b_q || !el_two);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      e1_valid_q    <= 1'b0;
      e1_b_q        <= 1'b0;
      e2_valid_q    <= 1'b0;
      el_inflight_q <= '0;
    end else if (flush_i) begin
      e1_valid_q    <= 1'b0;
      e2_valid_q    <= 1'b0;
      el_inflight_q <= '0;
    end else begin
      e1_valid_q    <= el_issue;
      e1_b_q        <= el_second_q;
      e2_valid_q    <= e1_last;
      el_inflight_q <= el_inflight_q + 3'(el_issue && (el_second_q || !el_two)) -
                       3'(e2_valid_q);
    end
  end

  always_ff @(posedge clk_i) begin
    if (e1_valid_q && !e1_b_q) begin
      e1_a_q <= spad_rdata_i[0];
    end
    if (e1_last) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        logic [7:0]         a_byte, b_byte;
        logic signed [31:0] a_c, b_c;
        a_byte = el_two ? e1_a_q[l*8 +: 8] : spad_rdata_i[0][l*8 +: 8];
        b_byte = spad_rdata_i[0][l*8 +: 8];
        a_c = 32'(widen(a_byte, dq.a_signed)) - 32'(signed'(dq.a_zero_point));
        b_c = 32'(widen(b_byte, dq.b_signed)) - 32'(signed'(dq.b_zero_point));
        unique case (dq.opcode)
          OpAdd: e2_value_q[l] <=
              mul_by_quantized_multiplier(32'(a_c) << dq.left_shift, dq.a_multiplier, dq.a_shift) +
              mul_by_quantized_multiplier(32'(b_c) << dq.left_shift, dq.b_multiplier, dq.b_shift);
          OpMul:   e2_value_q[l] <= 32'(a_c * b_c);
          default: e2_value_q[l] <= {24'd0, lut_q[a_byte]};
        endcase
      end
    end
  end

  // Results wait in a small FIFO; the credit check above keeps it from overflowing.
  logic [Vec*32-1:0] e3_packed, ef_data;
  logic              ef_valid, ef_take, ef_in_ready;
  always_comb begin
    for (int unsigned l = 0; l < Vec; l++) begin
      e3_packed[l*32 +: 32] = e2_value_q[l];
    end
  end

  npu_fifo #(
    .Width(Vec * 32),
    .Depth(4)
  ) u_elem_fifo (
    .clk_i,
    .rst_ni,
    .flush_i,
    .in_valid_i (e2_valid_q),
    .in_ready_o (ef_in_ready),
    .in_data_i  (e3_packed),
    .out_valid_o(ef_valid),
    .out_ready_i(ef_take),
    .out_data_o (ef_data),
    .count_o    (el_fifo_count)
  );

  assign elem_finished = fd_state_q == FdElemDone && el_inflight_q == '0 && !ef_valid &&
                         !rq_busy && !st_busy_i;

  // ------------------------------------------------------------------------------------------
  // Requantization: the drain's accumulators (per-lane bias and scale) or ADD/MUL results.
  logic                      rq_in_valid, rq_in_ready, rq_out_valid, rq_out_ready, rq_busy;
  logic [Vec-1:0][31:0]      rq_acc, rq_bias, rq_mult;
  logic [Vec-1:0][5:0]       rq_shift;
  logic [8:0]                rq_zp, rq_min, rq_max;
  logic [Vec-1:0][7:0]       rq_data, rq_word;
  logic [2:0]                rq_inflight_q;
  logic                      rq_from_elem;

  assign rq_from_elem = fd_state_q == FdElemRun || fd_state_q == FdElemDone;
  assign rq_in_valid  = rq_from_elem ? ef_valid && dq.opcode != OpLut
                                     : dr_entry_valid_q && !dr_is_pool;

  always_comb begin
    for (int unsigned l = 0; l < Vec; l++) begin
      if (rq_from_elem) begin
        rq_acc[l]   = ef_data[l*32 +: 32];
        rq_bias[l]  = '0;
        rq_mult[l]  = dq.out_multiplier;
        rq_shift[l] = dq.out_shift;
      end else begin
        rq_acc[l]   = dr_entry_q[l];
        rq_bias[l]  = q_bias_q[dr_bank_q][l];
        rq_mult[l]  = q_mult_q[dr_bank_q][l];
        rq_shift[l] = q_shift_q[dr_bank_q][l];
      end
    end
    rq_zp  = rq_from_elem ? dq.out_zero_point : dj.zero_point;
    rq_min = rq_from_elem ? dq.act_min : dj.act_min;
    rq_max = rq_from_elem ? dq.act_max : dj.act_max;
  end

  npu_requant #(
    .Lanes(Vec)
  ) u_requant (
    .clk_i,
    .rst_ni,
    .in_valid_i  (rq_in_valid),
    .in_ready_o  (rq_in_ready),
    .acc_i       (rq_acc),
    .bias_i      (rq_bias),
    .multiplier_i(rq_mult),
    .shift_i     (rq_shift),
    .zero_point_i(rq_zp),
    .act_min_i   (rq_min),
    .act_max_i   (rq_max),
    .out_valid_o (rq_out_valid),
    .out_ready_i (rq_out_ready),
    .data_o      (rq_data)
  );

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rq_inflight_q <= '0;
    end else if (flush_i) begin
      rq_inflight_q <= '0;
    end else begin
      rq_inflight_q <= rq_inflight_q + 3'(rq_in_valid && rq_in_ready) -
                       3'(rq_out_valid && rq_out_ready);
    end
  end
  assign rq_busy = rq_inflight_q != '0;
  // Injected datapath faults (stuck bits) act on every requantized word.
  assign rq_word = (rq_data & ~fault_rq_mask_i) | (fault_rq_value_i & fault_rq_mask_i);

  assign dr_entry_take = dr_entry_valid_q && (dr_is_pool ? pool_take : rq_in_ready) &&
                         !rq_from_elem;
  assign ef_take       = ef_valid && (dq.opcode == OpLut ? st_ready_i : rq_in_ready) &&
                         rq_from_elem;

  // ------------------------------------------------------------------------------------------
  // Store stream: requantized words, pooled words or LUT words.
  logic [VecBits-1:0] lut_word;
  always_comb begin
    for (int unsigned l = 0; l < Vec; l++) begin
      lut_word[l*8 +: 8] = ef_data[l*32 +: 8];
    end
  end

  always_comb begin
    st_valid_o    = rq_out_valid && !chain_drain;
    st_data_o     = rq_word;
    rq_out_ready  = st_ready_i || chain_drain;
    pool_out_take = 1'b0;
    if (rq_from_elem && dq.opcode == OpLut) begin
      st_valid_o = ef_valid;
      st_data_o  = lut_word;
    end else if (!rq_from_elem && pool_out_valid_q) begin
      st_valid_o    = 1'b1;
      st_data_o     = pool_word_q;
      pool_out_take = st_ready_i;
    end
  end

  // Store jobs: one per drained bank, one per element-wise descriptor.
  always_comb begin
    st_start_o  = 1'b0;
    st_tensor_o = dj.out;
    if (dr_state_q == DrStore && !dj.chain && !st_busy_i) begin
      st_start_o = 1'b1;
    end else if (elem_can_start) begin
      st_start_o  = 1'b1;
      st_tensor_o = dq.out;
    end
  end

  // ------------------------------------------------------------------------------------------
  // Weight / table stream jobs start with the descriptor.
  assign ws_start_o = fd_state_q == FdIdle && start_i && op_uses_w(job_i.desc.opcode);
  assign ws_addr_o  = job_i.desc.w_addr;
  assign ws_words_o = job_i.w_words;
  assign ws_ready_o = ld_quant_take || wload_valid || table_take;

  assign ready_o  = fd_state_q == FdIdle && ld_state_q == LdIdle;
  assign retire_o = (dr_state_q == DrRetire && dj.last) ||
                    (fd_state_q == FdElemDone && elem_finished) ||
                    (fd_state_q == FdNop && drain_idle);
  assign idle_o   = fd_state_q == FdIdle && dr_state_q == DrIdle && bank_busy_q == '0 &&
                    ld_state_q == LdIdle && !st_busy_i;

  // Fields of the job other operations use; the scratchpad index width drops the high bits.
  logic unused_signals;
  assign unused_signals = ^{job_q, dq, win_addr, am, ef_in_ready};

  assign weight_index_o = job_q.index;
  assign store_index_o  = rq_from_elem ? job_q.index : dj.index;

  // Scratchpad reads: the window address, or element-wise words (B after A).
  always_comb begin
    spad_raddr_o[0] = (job_q.buf_sel ? SpadAw'(SpadWords) : '0) +
                      (fd_state_q == FdElemRun
                           ? SpadAw'(el_word_q + (el_second_q ? job_q.a_words : 32'd0))
                           : SpadAw'(win_addr));
    spad_re_o[0] = 1'b1;
    for (int unsigned k = 1; k < DwTapPorts; k++) begin
      spad_re_o[k]    = tap_inb[k];
      spad_raddr_o[k] = (job_q.buf_sel ? SpadAw'(SpadWords) : '0) + SpadAw'(tap_addr[k]);
    end
  end

  // Performance events.
  always_comb begin
    perf_macs_o = '0;
    if (issue && is_array) begin
      if (is_taps) begin
        perf_macs_o = step_valid ? 16'(dq.kernel_h * dq.kernel_w) * out_lanes : '0;
      end else begin
        perf_macs_o = dq.opcode == OpDwconv ? out_lanes : 16'(in_lanes * out_lanes);
      end
    end
  end
  assign perf_array_active_o = issue && is_array;
  assign perf_stall_weight_o = fd_state_q == FdStream && !block_ready;
  assign perf_stall_output_o = fd_state_q == FdNbStart && !nb_go;

`ifndef SYNTHESIS
  // A CHAIN_IN consumer reads exactly the words its CHAIN_OUT producer's drain wrote: when it
  // issues the last input word of an output-channel block, every word has been written and no
  // more (the feeder only issues written words; a shape mismatch would leave some unread).
  a_chain_in_reads_all: assert property (@(posedge clk_i) disable iff (!rst_ni)
      issue && is_chain_in && last_step && last_kt && !flush_i |->
      chain_written_q == fd_word_q + 1)
    else $error("CHAIN_IN descriptor %0d read %0d words, its producer wrote %0d", job_q.index,
                fd_word_q + 1, chain_written_q);
  // Banks are claimed free, filled once and drained in order.
  a_bank_free_at_claim: assert property (@(posedge clk_i) disable iff (!rst_ni)
      nb_go |-> !bank_busy_q[fd_bank_q])
    else $error("accumulator bank claimed while busy");
  a_bank_full_once: assert property (@(posedge clk_i) disable iff (!rst_ni)
      acc_bank_done && !flush_i |-> bank_busy_q[acc_bank_done_bank] &&
                                    !bank_full_q[acc_bank_done_bank])
    else $error("accumulator bank completed twice or without being claimed");
`endif

endmodule
