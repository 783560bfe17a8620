// Compute stage: executes one loaded descriptor at a time out of its scratchpad buffer.
//
// This module takes the descriptors from the command processor, hands each to the unit that runs
// it, and wires the units:
//   - npu_feeder: window operations (CONV, DWCONV, MAXPOOL, AVGPOOL) loop over output-channel
//     blocks (nb), K steps (kt) and the tile's output pixels (p); one scratchpad word per cycle
//     (implicit im2col, zero points, the TAPS depthwise mapping) into the array, or, for pooling,
//     straight to the accumulators;
//   - npu_weight_loader: per nb the quantization words, then one Vec x Vec block per kt into the
//     array's idle weight buffer while the other buffer is in use;
//   - npu_array: the weight-stationary array;
//   - npu_accum: AccBanks banks of AccDepth x Vec int32 that sum the K steps of one nb each;
//   - npu_drain: a full bank through npu_requant (or the pooling finish, npu_pool) to the store
//     DMA while the other banks fill (RESIDUAL banks through npu_residual, which adds B's
//     words read from the scratchpad); CHAIN_OUT banks drain into the scratchpad buffer of the
//     next descriptor instead, whose CHAIN_IN feeder issues each input word only once the drain
//     has written it, so a depthwise layer and the pointwise layer after it overlap without DRAM
//     traffic;
//   - npu_eltwise: element-wise operations (ADD, MUL, LUT) stream the buffer word by word
//     through the lane arithmetic and npu_requant (ADD, MUL) or the table (LUT) to the store.
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
  input  logic                       job_valid_i,    // job_i is the next descriptor (loading)
  output logic                       retire_o,
  output logic                       idle_o,
  output logic [31:0]                weight_index_o,
  output logic [31:0]                store_index_o,
  output logic [1:0]                 res_busy_o,     // a RESIDUAL descriptor reads B in buffer b

  output spad_re_t                   spad_re_o,
  output spad_addr_t                 spad_raddr_o,
  input  spad_data_t                 spad_rdata_i,
  output spad_line_re_t              spad_line_o,
  input  spad_line_t                 spad_rline_i,
  output logic                       chain_we_o,
  output logic [SpadAw-1:0]          chain_waddr_o,
  output logic [VecBits-1:0]         chain_wdata_o,

  output logic                       ws_start_o,
  output logic [31:0]                ws_addr_o,
  output logic [31:0]                ws_words_o,
  input  logic                       ws_busy_i,      // the stream has reads left to issue
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

  // ------------------------------------------------------------------------------------------
  // Descriptor sequencing: the descriptor taken last and the unit that runs it.
  typedef enum logic [1:0] {
    SqIdle,    // ready for the next descriptor (once the weight loader is idle too)
    SqWindow,  // the feeder runs it
    SqElem,    // the element-wise unit runs it
    SqNop      // NOP: retires once the drain is idle
  } seq_state_e;

  seq_state_e seq_state_q, seq_state_d;
  job_t       job_q;
  desc_t      dq;
  assign dq = job_q.desc;

  logic       take, fd_done, el_done, drain_idle;
  logic [7:0] take_op;
  assign take    = seq_state_q == SqIdle && start_i;
  assign take_op = job_i.desc.opcode;

  always_comb begin
    seq_state_d = seq_state_q;
    unique case (seq_state_q)
      SqIdle: begin
        if (start_i) begin
          if (take_op == OpNop) begin
            seq_state_d = SqNop;
          end else if (op_is_window(take_op)) begin
            seq_state_d = SqWindow;
          end else begin
            seq_state_d = SqElem;
          end
        end
      end
      SqWindow: if (fd_done)    seq_state_d = SqIdle;
      SqElem:   if (el_done)    seq_state_d = SqIdle;
      SqNop:    if (drain_idle) seq_state_d = SqIdle;
      default:  seq_state_d = SqIdle;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      seq_state_q <= SqIdle;
      job_q       <= '0;
    end else if (flush_i) begin
      seq_state_q <= SqIdle;
    end else begin
      seq_state_q <= seq_state_d;
      if (take) begin
        job_q <= job_i;
      end
    end
  end

  // The units start with the descriptor.
  logic fd_start, ld_start, el_start, chain_clear;
  assign fd_start    = take && op_is_window(take_op);
  assign ld_start    = take && op_uses_array(take_op);
  assign el_start    = take && take_op != OpNop && !op_is_window(take_op);
  assign chain_clear = take && job_i.desc.flags[FlagChainOutBit];  // its target: !buf_sel

  // Weight / table streams are prefetched: the next descriptor's starts as soon as the stream
  // before it has issued its last read (its loads have passed their fence, and the consumers
  // take exactly a descriptor's words from the FIFO), else when the descriptor is taken.
  logic        ws_prefetched_q, ws_prefetch;
  logic [31:0] ws_index_q;  // the descriptor whose words the stream reads, for faults
  assign ws_prefetch = job_valid_i && op_uses_w(take_op) && !ws_prefetched_q && !ws_busy_i &&
                       !take;
  assign ws_start_o  = ws_prefetch || (take && op_uses_w(take_op) && !ws_prefetched_q);
  assign ws_addr_o   = job_i.desc.w_addr;
  assign ws_words_o  = job_i.w_words;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ws_prefetched_q <= 1'b0;
      ws_index_q      <= '0;
    end else if (flush_i) begin
      ws_prefetched_q <= 1'b0;
    end else begin
      if (ws_start_o) begin
        ws_index_q <= job_i.index;
      end
      ws_prefetched_q <= ws_prefetch || (ws_prefetched_q && !take);
    end
  end

  // ------------------------------------------------------------------------------------------
  // Feeder.
  logic [AccBanks-1:0]        bank_busy;
  logic                       claim;
  logic [BankW-1:0]           claim_bank, fd_bank;
  bank_job_t                  claim_job;
  logic [15:0]                fd_seq, fd_block, ld_block;
  logic                       fd_block_end;
  logic [1:0][31:0]           chain_written;  // per scratchpad buffer
  spad_re_t                   fd_spad_re;
  spad_addr_t                 fd_spad_raddr;
  act_vec_t                   act;
  vec_meta_t                  fd_meta;
  act_lanes_t                 pool_act;
  logic                       dw_mode, fp_mode, fp_diag;
  act_grid_t                  dw_act;
  row_bits_t                  dw_tag, dw_row_on;
  word_grid_t                 fp_dw_act;
  spad_line_re_t              fd_spad_line;
  word_lanes_t                fp_act;
  logic                       acc_from_array;
  logic                       issue;

  npu_feeder u_feeder (
    .clk_i,
    .rst_ni,
    .flush_i,
    .start_i            (fd_start),
    .job_i              (job_q),
    .done_o             (fd_done),
    .bank_busy_i        (bank_busy),
    .claim_o            (claim),
    .claim_bank_o       (claim_bank),
    .claim_job_o        (claim_job),
    .seq_o              (fd_seq),
    .bank_o             (fd_bank),
    .block_o            (fd_block),
    .ld_block_i         (ld_block),
    .block_end_o        (fd_block_end),
    .chain_written_i    (chain_written[job_q.buf_sel]),
    .spad_re_o          (fd_spad_re),
    .spad_raddr_o       (fd_spad_raddr),
    .spad_rdata_i,
    .spad_line_o        (fd_spad_line),
    .spad_rline_i,
    .act_o              (act),
    .meta_o             (fd_meta),
    .pool_act_o         (pool_act),
    .dw_mode_o          (dw_mode),
    .dw_act_o           (dw_act),
    .dw_tag_o           (dw_tag),
    .dw_row_on_o        (dw_row_on),
    .fp_dw_act_o        (fp_dw_act),
    .fp_mode_o          (fp_mode),
    .fp_diag_o          (fp_diag),
    .fp_act_o           (fp_act),
    .array_out_i        (acc_from_array),
    .issue_o            (issue),
    .perf_macs_o,
    .perf_array_active_o,
    .perf_stall_weight_o,
    .perf_stall_output_o
  );

  // ------------------------------------------------------------------------------------------
  // Weight loader and the array.
  logic                      ld_idle, ld_ws_ready;
  logic [15:0]               rel_seq;
  logic                      wload_valid, wload_buf, wload_fp;
  logic [VecIdxW-1:0]        wload_row;
  wload_row_t                wload_data;
  word_lanes_t               fp_wload_data;
  logic [BankW-1:0]          dr_bank;
  word_lanes_t               q_bias, q_mult;
  shift_lanes_t              q_shift;

  npu_weight_loader u_weight_loader (
    .clk_i,
    .rst_ni,
    .flush_i,
    .start_i       (ld_start),
    .job_i         (job_q),
    .idle_o        (ld_idle),
    .fd_seq_i      (fd_seq),
    .fd_bank_i     (fd_bank),
    .fd_block_i    (fd_block),
    .fd_block_end_i(fd_block_end),
    .rel_seq_i     (rel_seq),
    .block_o       (ld_block),
    .ws_valid_i,
    .ws_ready_o    (ld_ws_ready),
    .ws_data_i,
    .ws_count_i,
    .wload_valid_o (wload_valid),
    .wload_buf_o   (wload_buf),
    .wload_row_o   (wload_row),
    .wload_data_o  (wload_data),
    .wload_fp_o    (wload_fp),
    .fp_wload_data_o(fp_wload_data),
    .q_bank_i      (dr_bank),
    .q_bias_o      (q_bias),
    .q_mult_o      (q_mult),
    .q_shift_o     (q_shift)
  );

  logic [ArrayCols-1:0][31:0] psum;

  npu_array #(
    .Rows(ArrayRows),
    .Cols(ArrayCols)
  ) u_array (
    .clk_i,
    .rst_ni,
    .act_i        (act),
    .tag_i        (fd_meta.tag),
    .valid_i      (fd_meta.valid && !fd_meta.pool),
    .wload_valid_i(wload_valid),
    .wload_fp_i   (wload_fp),
    .wload_buf_i  (wload_buf),
    .wload_row_i  (wload_row),
    .wload_data_i (wload_data),
    .dw_mode_i    (dw_mode),
    .dw_act_i     (dw_act),
    .dw_tag_i     (dw_tag),
    .dw_row_on_i  (dw_row_on),
    .fp_dw_act_i  (fp_dw_act),
    .fp_mode_i    (fp_mode),
    .fp_diag_i    (fp_diag),
    .fp_act_i     (fp_act),
    .fp_wload_data_i(fp_wload_data),
    .psum_o       (psum)
  );

  // ------------------------------------------------------------------------------------------
  // Accumulators and the drain.
  logic              bank_full, acc_rd, dr_release;
  bank_job_t         bank_job, dj;
  logic [AccAw-1:0]  acc_rd_addr;
  word_lanes_t       acc_rdata;
  logic [15:0]       acc_rcount;

  npu_accum u_accum (
    .clk_i,
    .rst_ni,
    .flush_i,
    .claim_i     (claim),
    .claim_bank_i(claim_bank),
    .claim_job_i (claim_job),
    .bank_busy_o (bank_busy),
    .meta_i      (fd_meta),
    .pool_act_i  (pool_act),
    .dw_mode_i   (dw_mode),
    .psum_i      (psum),
    .array_out_o (acc_from_array),
    .rd_bank_i   (dr_bank),
    .bank_full_o (bank_full),
    .bank_job_o  (bank_job),
    .rd_i        (acc_rd),
    .rd_addr_i   (acc_rd_addr),
    .rd_data_o   (acc_rdata),
    .rd_count_o  (acc_rcount),
    .release_i   (dr_release)
  );

  logic               dr_idle, dr_retire, dr_rq_valid, dr_st_start, chain_drain;
  logic               pool_valid, pool_ready;
  logic [VecBits-1:0] pool_data;
  tensor_t            dr_st_tensor;
  logic               el_active;
  logic               rq_in_valid, rq_in_ready, rq_out_valid, rq_out_ready, rq_busy;
  logic [VecBits-1:0] rq_word;
  logic               res_on, res_in_ready, res_re, res_out_valid, res_busy;  // npu_residual
  logic [SpadAw-1:0]  res_raddr;
  logic [VecBits-1:0] res_word;

  npu_drain u_drain (
    .clk_i,
    .rst_ni,
    .flush_i,
    .bank_o         (dr_bank),
    .bank_full_i    (bank_full),
    .bank_job_i     (bank_job),
    .acc_rd_o       (acc_rd),
    .acc_rd_addr_o  (acc_rd_addr),
    .acc_rdata_i    (acc_rdata),
    .acc_rcount_i   (acc_rcount),
    .bias_i         (q_bias),
    .release_o      (dr_release),
    .rel_seq_o      (rel_seq),
    .job_o          (dj),
    .idle_o         (dr_idle),
    .retire_o       (dr_retire),
    .elem_active_i  (el_active),
    .rq_valid_o     (dr_rq_valid),
    .rq_ready_i     (rq_in_ready),
    .rq_busy_i      (rq_busy || res_busy),
    .rq_out_valid_i (rq_out_valid),
    .pool_valid_o   (pool_valid),
    .pool_ready_i   (pool_ready),
    .pool_data_o    (pool_data),
    .st_start_o     (dr_st_start),
    .st_tensor_o    (dr_st_tensor),
    .st_busy_i,
    .chain_o        (chain_drain),
    .chain_we_o,
    .chain_waddr_o,
    .chain_clear_i  (chain_clear),
    .chain_clear_buf_i(!job_i.buf_sel),
    .chain_written_o(chain_written)
  );

  assign drain_idle = dr_idle && bank_busy == '0 && !st_busy_i;

  // ------------------------------------------------------------------------------------------
  // Element-wise unit.
  logic                 el_st_start, el_ws_ready, el_reading, el_res_valid;
  logic [SpadAw-1:0]    el_spad_raddr;
  logic [Vec*32-1:0]    el_res_data;
  logic                 el_direct;
  logic [VecBits-1:0]   el_word;

  npu_eltwise u_eltwise (
    .clk_i,
    .rst_ni,
    .flush_i,
    .start_i     (el_start),
    .job_i       (job_q),
    .active_o    (el_active),
    .done_o      (el_done),
    .drain_idle_i(drain_idle),
    .st_start_o  (el_st_start),
    .st_busy_i,
    .ws_valid_i,
    .ws_ready_o  (el_ws_ready),
    .ws_data_i,
    .reading_o   (el_reading),
    .spad_raddr_o(el_spad_raddr),
    .spad_rdata_i(spad_rdata_i[0]),
    .res_valid_o (el_res_valid),
    .res_data_o  (el_res_data),
    .direct_o    (el_direct),
    .word_o      (el_word),
    .rq_ready_i  (rq_in_ready),
    .rq_busy_i   (rq_busy),
    .st_ready_i
  );

  // ------------------------------------------------------------------------------------------
  // Requantization: the drain's accumulators (the bank's per-lane bias and scale) or ADD/MUL
  // results.
  logic [Vec-1:0][31:0] rq_acc, rq_bias, rq_mult;
  logic [Vec-1:0][5:0]  rq_shift;
  logic [8:0]           rq_zp, rq_min, rq_max;
  logic [Vec-1:0][7:0]  rq_data;

  assign rq_in_valid = el_active ? el_res_valid && !el_direct : dr_rq_valid;

  always_comb begin
    for (int unsigned l = 0; l < Vec; l++) begin
      if (el_active) begin
        rq_acc[l]   = el_res_data[l*32 +: 32];
        rq_bias[l]  = '0;
        rq_mult[l]  = dq.out_multiplier;
        rq_shift[l] = dq.out_shift;
      end else begin
        rq_acc[l]   = acc_rdata[l];
        rq_bias[l]  = q_bias[l];
        rq_mult[l]  = q_mult[l];
        rq_shift[l] = q_shift[l];
      end
    end
    rq_zp  = el_active ? dq.out_zero_point : dj.zero_point;
    rq_min = el_active ? dq.act_min : dj.act_min;
    rq_max = el_active ? dq.act_max : dj.act_max;
  end

  // The requantizer is busy while words are inside; the drain and the element-wise unit wait for
  // it before they retire.
  npu_requant #(
    .Lanes(Vec)
  ) u_requant (
    .clk_i,
    .rst_ni,
    .flush_i,
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
    .data_o      (rq_data),
    .busy_o      (rq_busy)
  );

  // Injected datapath faults (stuck bits) act on every requantized word.
  assign rq_word = (rq_data & ~fault_rq_mask_i) | (fault_rq_value_i & fault_rq_mask_i);
  assign chain_wdata_o = pool_valid ? pool_data : rq_word;  // a float DWCONV's, or requantized

  // ------------------------------------------------------------------------------------------
  // RESIDUAL: the drained block's requantized words plus B's, on the scratchpad's last port.
  assign res_on = dj.res.on && !el_active;

  npu_residual u_residual (
    .clk_i,
    .rst_ni,
    .flush_i,
    .res_i       (dj.res),
    .start_i     (dr_st_start),
    .in_valid_i  (rq_out_valid && res_on),
    .in_ready_o  (res_in_ready),
    .in_data_i   (rq_word),
    .spad_re_o   (res_re),
    .spad_raddr_o(res_raddr),
    .spad_rdata_i(spad_rdata_i[ResPort]),
    .out_valid_o (res_out_valid),
    .out_ready_i (st_ready_i && res_on),
    .out_data_o  (res_word),
    .busy_o      (res_busy)
  );

  // A RESIDUAL descriptor's B stays in its buffer until it retires: the load stage does not
  // load into that buffer before.
  logic [1:0]  res_busy_q;
  logic [31:0] res_index_q [2];
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      res_busy_q <= '0;
    end else if (flush_i) begin
      res_busy_q <= '0;
    end else begin
      for (int unsigned b = 0; b < 2; b++) begin
        if (take && job_i.desc.flags[FlagResidualBit] && job_i.buf_sel == 1'(b)) begin
          res_busy_q[b] <= 1'b1;
        end else if (dr_retire && dj.index == res_index_q[b]) begin
          res_busy_q[b] <= 1'b0;
        end
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (take) begin
      res_index_q[job_i.buf_sel] <= job_i.index;
    end
  end
  assign res_busy_o = res_busy_q;

  // ------------------------------------------------------------------------------------------
  // Store stream: requantized words (RESIDUAL: with B added), pooled words or the element-wise
  // unit's direct words.
  always_comb begin
    st_valid_o   = res_on ? res_out_valid : rq_out_valid && !chain_drain;
    st_data_o    = res_on ? res_word : rq_word;
    rq_out_ready = res_on ? res_in_ready : st_ready_i || chain_drain;
    pool_ready   = 1'b0;
    if (el_active && el_direct) begin
      st_valid_o = el_res_valid;
      st_data_o  = el_word;
    end else if (!el_active && pool_valid) begin
      st_valid_o = !chain_drain;
      st_data_o  = pool_data;
      pool_ready = st_ready_i || chain_drain;
    end
  end

  // Store jobs: one per drained bank, one per element-wise descriptor.
  assign st_start_o  = dr_st_start || el_st_start;
  assign st_tensor_o = !dr_st_start && el_st_start ? dq.out : dr_st_tensor;

  // ------------------------------------------------------------------------------------------
  // Scratchpad reads: the feeder's, but port 0 reads element-wise words (B after A) while the
  // element-wise unit runs.
  always_comb begin
    spad_re_o    = fd_spad_re;
    spad_raddr_o = fd_spad_raddr;
    spad_line_o  = fd_spad_line;
    if (el_reading) begin
      spad_raddr_o[0] = el_spad_raddr;
      spad_line_o[0]  = 1'b0;
    end
    spad_re_o[ResPort]    = res_re;
    spad_raddr_o[ResPort] = res_raddr;
  end

  assign ws_ready_o = ld_ws_ready || el_ws_ready;

  assign ready_o  = seq_state_q == SqIdle && ld_idle;
  assign retire_o = dr_retire || el_done || (seq_state_q == SqNop && drain_idle);
  assign idle_o   = seq_state_q == SqIdle && drain_idle && ld_idle;

  assign weight_index_o = ws_index_q;
  assign store_index_o  = el_active ? job_q.index : dj.index;

  // Fields of the job other operations use.
  logic unused_signals;
  assign unused_signals = ^{job_q, dq, dj, issue};

`ifndef SYNTHESIS
  // A flush (an abort or a soft reset) leaves nothing of the job in the compute stage: no
  // descriptor, claimed bank or weight block, and no result word in the drain, the requantizer,
  // the pooling finish, the element-wise FIFO or on its way to the store or the CHAIN_OUT buffer.
  a_flush_empties: assert property (@(posedge clk_i) disable iff (!rst_ni)
      flush_i |=> idle_o && !rq_busy && !res_busy && !rq_in_valid && !pool_valid &&
                  !el_res_valid && !st_valid_o && !chain_we_o)
    else $error("compute stage holds work of a flushed job");

  // A stream starts only once the one before it has issued every read (words stay in order).
  a_ws_start_after_issue: assert property (@(posedge clk_i) disable iff (!rst_ni)
      ws_start_o |-> !ws_busy_i)
    else $error("weight stream of descriptor %0d started while one is issuing", job_i.index);
`endif

`ifdef NPU_COVERAGE
  // Functional coverage (the coverage build): a convolution block requantized per tensor (every
  // lane one scale) and per channel (lanes 0 and 1 differ), as the driver packs the stream.
  requant_per_tensor: cover property (@(posedge clk_i) rq_in_valid && rq_in_ready &&
                                      !el_active && q_mult[0] == q_mult[1] &&
                                      q_shift[0] == q_shift[1]);
  requant_per_channel: cover property (@(posedge clk_i) rq_in_valid && rq_in_ready &&
                                       !el_active && (q_mult[0] != q_mult[1] ||
                                                      q_shift[0] != q_shift[1]));
  // The next descriptor's weight stream starts while the current one computes.
  ws_prefetched: cover property (@(posedge clk_i) ws_prefetch && seq_state_q != SqIdle);
`endif

endmodule
