// Feeder of the compute stage: runs a window descriptor's loops and feeds the array (or, for
// pooling, the accumulators) one vector per cycle.
//
// Loops: output-channel blocks (nb) x K steps (kt: kernel taps, and input-channel words for CONV)
// x the tile's output pixels (p). Each block first claims an accumulator bank (block s uses bank
// s % AccBanks); a block's vectors issue once the weight loader has written its weights (array
// operations) and, for CHAIN_IN, once the producer's drain has written the input word.
// Three stages: 1 computes the input position (implicit im2col with padding), 2 reads the
// scratchpad, 3 subtracts the zero point and zeroes padding and lanes past the channel count.
//
// DWCONV with the TAPS flag puts kernel tap t = ky*KW + kx on array row t and channel c on
// column c (the depthwise weights themselves are the stationary block). Each cycle the feeder
// steps one output pixel ox and reads, per kernel row ky and phase f < STRIDE_W, the word of
// input column ox*STRIDE_W + f (one scratchpad port each). Row t needs column
// ox*STRIDE_W + kx, which is phase kx % STRIDE_W of step ox + kx / STRIDE_W; the pixel reaches
// row t t cycles after row 0, so that word is delayed t - kx / STRIDE_W cycles: each port's words
// go down a delay line and row t reads entry t - kx / STRIDE_W of its port's line. Output rows
// are extended by (KW-1) / STRIDE_W steps so the last pixels get their right-hand taps.
//
// CONV with the PACK flag (few input channels C) packs P = job.pack_taps kernel taps into a K
// step: port j reads tap k*P + j's word of the output pixel, and array row j*C + c takes its
// element c (a byte, or a float element). The taps' offsets are set per K step and travel with
// each vector through stage 1; the rows' ports and elements are set per descriptor.
//
// Float CONV and DWCONV (FORMAT FP32 or FP16): a vector is Vec elements, vec_words scratchpad
// words (4 or 2) that port 0 reads as a line; stage 3 widens them to binary32 for the array's
// float mode, padding and lanes past the channel count +0. A float TAPS DWCONV reads a line on
// each of its ports, and its delay lines hold binary32 lanes (fp_dw_act_o).
module npu_feeder
  import npu_pkg::*;
  import npu_core_pkg::*;
  import npu_fp_pkg::*;
(
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      flush_i,

  // The descriptor: start_i when npu_compute takes a window descriptor; job_i is that
  // descriptor from the next cycle on.
  input  logic                      start_i,
  input  job_t                      job_i,
  output logic                      done_o,         // its last vector issues

  // Accumulator banks (npu_accum): the feeder claims them in order.
  input  logic [AccBanks-1:0]       bank_busy_i,
  output logic                      claim_o,
  output logic [BankW-1:0]          claim_bank_o,
  output bank_job_t                 claim_job_o,
  output logic [15:0]               seq_o,          // number of the current or next block
  output logic [BankW-1:0]          bank_o,         // and its accumulator bank

  // Weight loader: blocks are numbered in issue order; the array's weight buffer is bit 0.
  output logic [15:0]               block_o,
  input  logic [15:0]               ld_block_i,     // blocks whose weights are written
  output logic                      block_end_o,    // the current block's last vector issues

  // CHAIN_IN: input words the producer's drain has written into this descriptor's buffer.
  input  logic [31:0]               chain_written_i,

  output spad_re_t                  spad_re_o,
  output spad_addr_t                spad_raddr_o,
  input  spad_data_t                spad_rdata_i,
  output spad_line_re_t             spad_line_o,
  input  spad_line_t                spad_rline_i,

  // The array (weight-stationary and TAPS inputs) and the accumulators.
  output act_vec_t                  act_o,
  output vec_meta_t                 meta_o,
  output act_lanes_t                pool_act_o,
  output logic                      dw_mode_o,
  output act_grid_t                 dw_act_o,
  output row_bits_t                 dw_tag_o,
  output row_bits_t                 dw_row_on_o,    // TAPS: the row holds a kernel tap
  output word_grid_t                fp_dw_act_o,    // float TAPS: the PEs' binary32 operands
  output logic                      fp_mode_o,
  output logic                      fp_diag_o,      // float DWCONV: diagonal products only
  output word_lanes_t               fp_act_o,
  input  logic                      array_out_i,    // a vector leaves the array

  output logic                      issue_o,
  output logic [15:0]               perf_macs_o,
  output logic                      perf_array_active_o,
  output logic                      perf_stall_weight_o,
  output logic                      perf_stall_output_o
);

  typedef enum logic [1:0] {
    FdIdle,
    FdNbStart,
    FdStream
  } feed_state_e;

  desc_t dq;
  assign dq = job_i.desc;

  logic       is_array, is_pool, is_dw, is_taps, is_pack, is_chain_in, is_fp;
  logic [2:0] vw;   // words per vector: the bytes of an element for float array operations
  logic [1:0] esh;  // log2(vw): bytes to elements
  assign is_array    = op_uses_array(dq.opcode);
  assign is_fp       = is_array && dq.format != 2'(FmtInt8);
  assign vw          = vec_words(dq.opcode, dq.format);
  assign esh         = vw[2] ? 2'd2 : vw[1] ? 2'd1 : 2'd0;
  // Window operations off the array (pooling) take the feeder's values to the accumulators.
  assign is_pool     = op_is_window(dq.opcode) && !op_uses_array(dq.opcode);
  assign is_dw       = dq.opcode != OpConv;  // the input word follows nb (DWCONV, pooling)
  assign is_taps     = dq.opcode == OpDwconv && dq.flags[FlagTapsBit];
  assign is_pack     = dq.opcode == OpConv && dq.flags[FlagPackBit];
  assign is_chain_in = dq.flags[FlagChainInBit];

  // ------------------------------------------------------------------------------------------
  // Loop counters.
  feed_state_e state_q, state_d;
  logic [15:0] nb_q, kt_q, ky_q, kx_q, cb_q, oy_q, ox_q;
  logic [15:0] nb_d, kt_d, ky_d, kx_d, cb_d, oy_d, ox_d;
  logic [31:0] p_q, p_d;
  logic [15:0] block_q, block_d;  // global block numbers (the array buffer is bit 0)
  logic [15:0] seq_q, seq_d;      // global block numbers of the accumulator banks
  logic [BankW-1:0] bank_q, bank_d;  // the bank of block seq_q
  // Input word of the block (K step x pixels + pixel, as a CHAIN_OUT drain numbers its writes).
  logic [31:0] word_q, word_d;
  logic [7:0]  inflight_q, inflight_d;  // vectors in the feeder and the array

  logic last_p, last_kt, last_nb, block_ready, chain_ready, issue;
  logic taps_row_end, taps_last, step_valid, last_step;
  assign last_p       = p_q + 1 == job_i.p_count;
  // TAPS steps are the row's output pixels plus (KW - 1) / STRIDE_W for the last ones'
  // right-hand taps.
  assign taps_row_end = 32'(ox_q) + 1 ==
                        32'(dq.out.count1) + (32'(dq.kernel_w) - 1) / 32'(dq.stride_w);
  assign taps_last    = taps_row_end && oy_q + 1 == dq.out.count2;
  assign step_valid   = !is_taps || ox_q < dq.out.count1;
  assign last_step    = is_taps ? taps_last : last_p;
  assign last_kt      = kt_q + 1 == job_i.kt_count;
  assign last_nb      = nb_q + 1 == job_i.nb_count;
  assign block_ready  = !is_array || ld_block_i != block_q;
  // A CONV reads the producer's vectors (vw words each) in the order its drain writes them; a
  // DWCONV block reads one word of every pixel, which the producer writes as its block nb.
  assign chain_ready  = !is_chain_in ||
                        (is_dw ? (32'(nb_q) + 1) * 32'(dq.a.count1) * 32'(dq.a.count2) <=
                                     chain_written_i
                               : (word_q + 1) * 32'(vw) <= chain_written_i);
  assign issue        = state_q == FdStream && block_ready && chain_ready;

  // The array changes mode (weight-stationary / TAPS / float) and pooling starts only on an empty
  // array.
  // So does a TAPS shape (the ports' and rows' configuration) or the PACK rows' channel count
  // change.
  logic        nb_go, same_array_mode;
  logic        array_dw_q, array_dw_d, array_fp_q, array_fp_d, array_diag_q, array_diag_d;
  logic        array_pack_q, array_pack_d;
  logic [23:0] taps_shape_q, taps_shape_d;  // KERNEL_H, KERNEL_W, STRIDE_W of the TAPS setup
  logic [15:0] pack_c_q;                    // channels (elements of A.INNER) of the PACK setup
  assign same_array_mode = is_array && is_taps == array_dw_q && is_fp == array_fp_q &&
                           (is_fp && is_dw && !is_taps) == array_diag_q &&
                           (!is_taps || taps_shape_q == {dq.kernel_h, dq.kernel_w, dq.stride_w}) &&
                           is_pack == array_pack_q &&
                           (!is_pack || pack_c_q == (dq.a.inner >> esh));
  assign nb_go           = state_q == FdNbStart && !bank_busy_i[bank_q] &&
                           (same_array_mode || inflight_q == '0);

  always_comb begin
    state_d = state_q;
    nb_d    = nb_q;
    kt_d    = kt_q;
    ky_d    = ky_q;
    kx_d    = kx_q;
    cb_d    = cb_q;
    oy_d    = oy_q;
    ox_d    = ox_q;
    p_d     = p_q;
    block_d = block_q;
    seq_d   = seq_q;
    bank_d  = bank_q;
    word_d  = word_q;
    unique case (state_q)
      FdIdle: begin
        if (start_i) begin
          nb_d    = '0;
          state_d = FdNbStart;
        end
      end
      FdNbStart: begin
        if (nb_go) begin
          kt_d    = '0;
          ky_d    = '0;
          kx_d    = '0;
          cb_d    = '0;
          oy_d    = '0;
          ox_d    = '0;
          p_d     = '0;
          word_d  = '0;
          state_d = FdStream;
        end
      end
      FdStream: begin
        if (issue) begin
          word_d = word_q + 1;
          if (!last_step) begin
            if (step_valid) begin
              p_d = p_q + 1;
            end
            if (is_taps ? taps_row_end : ox_q + 1 == dq.out.count1) begin
              ox_d = '0;
              oy_d = oy_q + 1;
            end else begin
              ox_d = ox_q + 1;
            end
          end else begin
            p_d  = '0;
            ox_d = '0;
            oy_d = '0;
            if (is_array) begin
              block_d = block_q + 1;
            end
            if (!last_kt) begin
              kt_d = kt_q + 1;
              if (!is_dw && cb_q + 1 != job_i.a_vecs) begin
                cb_d = cb_q + 1;
              end else if (!is_pack) begin
                cb_d = '0;
                if (kx_q + 1 == 16'(dq.kernel_w)) begin
                  kx_d = '0;
                  ky_d = ky_q + 1;
                end else begin
                  kx_d = kx_q + 1;
                end
              end
            end else begin
              seq_d   = seq_q + 1;
              bank_d  = next_bank(bank_q);
              nb_d    = nb_q + 1;
              state_d = last_nb ? FdIdle : FdNbStart;
            end
          end
        end
      end
      default: state_d = FdIdle;
    endcase
  end

  assign done_o      = issue && last_step && last_kt && last_nb;
  assign block_end_o = issue && is_array && last_step;

  // Vectors between the feeder's first stage and the array's output: the array changes mode only
  // when there are none.
  assign inflight_d = inflight_q + 8'(issue && is_array && step_valid) - 8'(array_out_i);

  // Lanes of the current input vector and of the current output block that hold real channels
  // (elements: bytes for int8).
  logic [15:0] in_lanes, out_lanes;
  always_comb begin
    logic [15:0] in_base, out_base, in_elems, out_elems;
    in_base   = (is_dw ? nb_q : cb_q) << VecIdxW;
    out_base  = nb_q << VecIdxW;
    in_elems  = dq.a.inner >> esh;
    out_elems = dq.out.inner >> esh;
    in_lanes  = in_elems - in_base > 16'(Vec) ? 16'(Vec) : in_elems - in_base;
    out_lanes = out_elems - out_base > 16'(Vec) ? 16'(Vec) : out_elems - out_base;
  end

  // The block's bank job, for the drain.
  assign claim_o      = nb_go;
  assign claim_bank_o = bank_q;
  always_comb begin
    claim_job_o.out        = '{addr:    dq.out.addr + ((32'(nb_q) << VecIdxW) << esh),
                               inner:   out_lanes << esh,
                               count1:  dq.out.count1,
                               stride1: dq.out.stride1,
                               count2:  dq.out.count2,
                               count3:  16'd1,
                               stride2: dq.out.stride2,
                               stride3: '0};
    claim_job_o.p_count    = job_i.p_count;
    claim_job_o.index      = job_i.index;
    claim_job_o.opcode     = dq.opcode;
    claim_job_o.zero_point = dq.out_zero_point;
    claim_job_o.act_min    = dq.act_min;
    claim_job_o.act_max    = dq.act_max;
    claim_job_o.truncate   = dq.truncate[0];
    claim_job_o.res        = '0;
    // RESIDUAL: the convolution's words go to the ADD as A, clamped to the type's range only.
    if (dq.opcode == OpConv && dq.flags[FlagResidualBit]) begin
      claim_job_o.zero_point = dq.mid_zero_point;
      claim_job_o.act_min    = dq.out_signed ? 9'h180 : 9'h000;  // -128 or 0
      claim_job_o.act_max    = dq.out_signed ? 9'h07f : 9'h0ff;  // 127 or 255
      claim_job_o.res        = '{on: 1'b1,
                                 addr: (job_i.buf_sel ? SpadAw'(SpadWords) : '0) +
                                       SpadAw'(job_i.a_words) + SpadAw'(nb_q),
                                 wpr: job_i.nb_count,
                                 mid_zero_point: dq.mid_zero_point,
                                 zero_point: dq.res_zero_point,
                                 is_signed: dq.out_signed,
                                 left_shift: dq.left_shift,
                                 a_multiplier: dq.a_multiplier,
                                 b_multiplier: dq.b_multiplier,
                                 out_multiplier: dq.out_multiplier,
                                 a_shift: dq.a_shift,
                                 b_shift: dq.b_shift,
                                 out_shift: dq.out_shift,
                                 out_zero_point: dq.out_zero_point,
                                 act_min: dq.act_min,
                                 act_max: dq.act_max};
    end
    claim_job_o.format     = dq.format;
    claim_job_o.fp_min     = dq.fp_min;
    claim_job_o.fp_max     = dq.fp_max;
    claim_job_o.last       = last_nb;
    claim_job_o.chain      = dq.flags[FlagChainOutBit];
    claim_job_o.chain_addr = (job_i.buf_sel ? '0 : SpadAw'(SpadWords)) +
                             SpadAw'(nb_q) * SpadAw'(vw);
    claim_job_o.chain_wpr  = job_i.nb_count * 16'(vw);
  end

  assign seq_o   = seq_q;
  assign bank_o  = bank_q;
  assign block_o = block_q;

  // ------------------------------------------------------------------------------------------
  // Array mode and the TAPS configuration of read ports and array rows, set when a block starts.
  localparam int unsigned PortW  = DwTapPorts > 1 ? $clog2(DwTapPorts) : 1;
  localparam int unsigned DelayW = $clog2(ArrayRows);

  typedef struct packed {
    logic       on;     // the port serves a kernel row
    logic [7:0] ky;
    logic [7:0] phase;
  } port_cfg_t;

  typedef struct packed {
    logic              on;     // the row holds a tap
    logic [PortW-1:0]  port;   // the port feeding it
    logic [DelayW-1:0] delay;  // its delay in cycles: the entry of the delay line it reads
  } row_cfg_t;

  logic                            taps_load;
  port_cfg_t [DwTapPorts-1:0]      port_cfg_q, port_cfg_d;
  row_cfg_t  [ArrayRows-1:0]       row_cfg_q, row_cfg_d;

  assign array_dw_d = nb_go && is_array ? is_taps : array_dw_q;
  assign array_pack_d = nb_go && is_array ? is_pack : array_pack_q;
  assign array_fp_d = nb_go && is_array ? is_fp : array_fp_q;
  assign array_diag_d = nb_go && is_array ? is_fp && is_dw && !is_taps : array_diag_q;
  assign taps_load  = nb_go && is_taps;

  // Computed only while loading: the divisions would cost simulation time every cycle.
  always_comb begin
    logic [31:0] ky, kx;
    ky           = '0;
    kx           = '0;
    taps_shape_d = '0;
    port_cfg_d   = '0;
    row_cfg_d    = '0;
    if (taps_load) begin
      taps_shape_d = {dq.kernel_h, dq.kernel_w, dq.stride_w};
      for (int unsigned k = 0; k < DwTapPorts; k++) begin
        port_cfg_d[k].on    = k / 32'(dq.stride_w) < 32'(dq.kernel_h);
        port_cfg_d[k].ky    = 8'(k / 32'(dq.stride_w));
        port_cfg_d[k].phase = 8'(k % 32'(dq.stride_w));
      end
      for (int unsigned r = 0; r < ArrayRows; r++) begin
        ky                 = r / 32'(dq.kernel_w);
        kx                 = r % 32'(dq.kernel_w);
        row_cfg_d[r].on    = ky < 32'(dq.kernel_h);
        row_cfg_d[r].port  = PortW'(ky * 32'(dq.stride_w) + kx % 32'(dq.stride_w));
        row_cfg_d[r].delay = DelayW'(r - kx / 32'(dq.stride_w));
      end
    end
  end

  // PACK: the taps of ports 0 .. P-1 in the current K step (offsets from the window's corner; off
  // past the last tap), set when a block starts and when a K step ends, and per descriptor each
  // array row's port and byte.
  typedef struct packed {
    logic        on;
    logic [15:0] dy;  // ky * DILATION_H
    logic [15:0] dx;  // kx * DILATION_W
  } pack_port_t;

  typedef struct packed {
    logic              on;
    logic [PortW-1:0]  port;
    logic [VecIdxW-1:0] lane;  // the channel: an element of the port's word
  } pack_row_t;

  logic                        pack_step_load, pack_rows_load;
  pack_port_t [DwTapPorts-1:0] pack_port_q, pack_port_d, s1_pack_port_q;
  pack_row_t  [Vec-1:0]        pack_row_q, pack_row_d;
  logic [7:0]                  pack_ky_q, pack_kx_q, pack_ky_d, pack_kx_d;  // the next step's tap
  logic [15:0]                 pack_rows_q, pack_rows_d;  // rows holding taps in this K step
  assign pack_step_load = is_pack && (nb_go || (issue && last_step && !last_kt));
  assign pack_rows_load = is_pack && nb_go;

  always_comb begin
    logic [7:0] ky, kx;
    ky          = nb_go ? '0 : pack_ky_q;
    kx          = nb_go ? '0 : pack_kx_q;
    pack_port_d = pack_port_q;
    pack_rows_d = pack_rows_q;
    if (pack_step_load) begin
      pack_rows_d = '0;
      for (int unsigned k = 0; k < DwTapPorts; k++) begin
        pack_port_d[k] = '0;
        if (k < 32'(job_i.pack_taps) && ky < dq.kernel_h) begin
          pack_port_d[k] = '{on: 1'b1, dy: 16'(ky) * 16'(dq.dilation_h),
                             dx: 16'(kx) * 16'(dq.dilation_w)};
          pack_rows_d    = pack_rows_d + (dq.a.inner >> esh);
          if (kx + 1 == dq.kernel_w) begin
            kx = '0;
            ky = ky + 1;
          end else begin
            kx = kx + 1;
          end
        end
      end
    end
    pack_ky_d = ky;
    pack_kx_d = kx;
  end

  // Computed only while loading: the divisions would cost simulation time every cycle.
  always_comb begin
    logic [31:0] c;
    c          = 32'(dq.a.inner) >> esh;
    pack_row_d = pack_row_q;
    if (pack_rows_load) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        pack_row_d[l].on   = l < 32'(job_i.pack_taps) * c;
        pack_row_d[l].port = PortW'(l / c);
        pack_row_d[l].lane = VecIdxW'(l % c);
      end
    end
  end

  // ------------------------------------------------------------------------------------------
  // Stage 1: the input position; stage 2: the scratchpad read; stage 3: the vector.
  vec_meta_t          s1_q, s2_q, s3_q, s1_d, s2_d, s3_d;
  logic signed [17:0] s1_iy_q, s1_ix_q, s1_iy_d, s1_ix_d;
  logic [15:0]        s1_word_q, s1_word_d, s1_lanes_q, s2_lanes_q, s2_lanes_d;
  // A's type and zero point travel with the vectors: the next descriptor may start while this
  // one's last vectors are still in stages 2 and 3.
  logic               s1_a_signed_q, s2_a_signed_q;
  logic signed [8:0]  s1_a_zero_q, s2_a_zero_q;
  logic [1:0]         s1_fmt_q, s2_fmt_q;  // float array vectors: the element format
  logic               s1_pack_q, s2_pack_q;  // a PACK vector is in the stage
  act_lanes_t         s3_act_q, s3_act_d;
  word_lanes_t        s3_fp_q, s3_fp_d;
  logic               in_bounds;
  logic [31:0]        win_addr;

  always_comb begin
    s1_d           = '0;
    s1_d.valid     = issue && step_valid;
    s1_d.p         = AccAw'(p_q);
    s1_d.bank      = bank_q;
    s1_d.tag       = block_q[0];
    s1_d.first     = kt_q == '0;
    s1_d.bank_done = is_taps ? oy_q + 1 == dq.out.count2 && ox_q + 1 == dq.out.count1
                             : last_p && last_kt;
    s1_d.pool      = is_pool;
    s1_d.maxpool   = dq.opcode == OpMaxpool;
    s2_d           = s1_q;
    s2_d.pad       = !in_bounds;
    s3_d           = s2_q;
  end

  assign s1_iy_d = 18'(signed'({1'b0, oy_q}) * signed'({1'b0, dq.stride_h}) +
                       signed'({1'b0, ky_q}) * signed'({1'b0, dq.dilation_h}) -
                       18'(signed'({1'b0, dq.pad_top})));
  assign s1_ix_d = 18'(signed'({1'b0, ox_q}) * signed'({1'b0, dq.stride_w}) +
                       signed'({1'b0, kx_q}) * signed'({1'b0, dq.dilation_w}) -
                       18'(signed'({1'b0, dq.pad_left})));

  assign s1_word_d = (is_dw ? nb_q : cb_q) * 16'(vw);

  assign in_bounds  = !s1_iy_q[17] && !s1_ix_q[17] && s1_iy_q < 18'(dq.a.count2) &&
                      s1_ix_q < 18'(dq.a.count1);
  assign win_addr   = (32'(s1_iy_q) * 32'(dq.a.count1) + 32'(s1_ix_q)) * 32'(job_i.a_wpr) +
                      32'(s1_word_q);
  assign s2_lanes_d = in_bounds ? s1_lanes_q : '0;

  always_comb begin
    for (int unsigned l = 0; l < Vec; l++) begin
      s3_act_d[l] = '0;
      if (s2_q.valid) begin
        if (s2_q.pool) begin
          s3_act_d[l] = widen(spad_rdata_i[0][l*8 +: 8], s2_a_signed_q);
        end else if (s2_pack_q) begin
          if (pack_row_q[l].on && s2_inb_q[pack_row_q[l].port]) begin
            s3_act_d[l] = widen(spad_rdata_i[int'(pack_row_q[l].port)]
                                            [pack_row_q[l].lane*8 +: 8],
                                s2_a_signed_q) - s2_a_zero_q;
          end
        end else if (32'(l) < 32'(s2_lanes_q)) begin
          s3_act_d[l] = widen(spad_rdata_i[0][l*8 +: 8], s2_a_signed_q) - s2_a_zero_q;
        end
      end
    end
  end

  // Element l of the float vector that port k read as a line: binary32, or binary16 widened.
  function automatic fp32_t line_element(logic [PortW-1:0] k, int unsigned l, logic half);
    int unsigned        w;
    logic [VecBits-1:0] word;
    w    = half ? l / (Vec / 2) : l / (Vec / 4);
    word = w == 0 ? spad_rdata_i[$clog2(SpadReadPorts)'(k)] : spad_rline_i[k][w == 0 ? 0 : w - 1];
    return half ? fp16_to_fp32(word[(l % (Vec / 2)) * 16 +: 16]) : word[(l % (Vec / 4)) * 32 +: 32];
  endfunction

  // Float vectors: lane l is element l of port 0's line, or a PACK row's element of its port's
  // word (+0 outside the input).
  logic s2_fp;
  assign s2_fp = s2_q.valid && !s2_q.pool && s2_fmt_q != 2'(FmtInt8) && !array_dw_q;
  // Between vectors the array's float operands are +0 (the array computes only on valid vectors).
  always_comb begin
    for (int unsigned l = 0; l < Vec; l++) begin
      s3_fp_d[l] = '0;
    end
    if (s2_fp && s2_pack_q) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        if (pack_row_q[l].on && s2_inb_q[pack_row_q[l].port]) begin
          s3_fp_d[l] = line_element(pack_row_q[l].port, int'(pack_row_q[l].lane),
                                    s2_fmt_q == 2'(FmtFp16));
        end
      end
    end else if (s2_fp) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        if (32'(l) < 32'(s2_lanes_q)) begin
          s3_fp_d[l] = line_element('0, l, s2_fmt_q == 2'(FmtFp16));
        end
      end
    end
  end

  // ------------------------------------------------------------------------------------------
  // TAPS words: one per kernel row and phase (port k = ky * STRIDE_W + f), through a delay line
  // per port; array row r takes the word of its port delayed by its delay. Float TAPS: a line
  // per port, its binary32 lanes through delay lines of their own. PACK words: one per tap of
  // the K step, straight into stage 3.
  logic               s1_step_q, s1_tag_q, s2_tag_q, tw_tag_q, s1_float_q;
  logic [15:0]        s2_word_lanes_q;
  logic [31:0]        tap_addr [DwTapPorts];
  logic               tap_inb  [DwTapPorts];
  logic               s2_inb_q [DwTapPorts];
  act_t               tw_q     [DwTapPorts][Vec];
  act_t               tw_d     [DwTapPorts][Vec];
  act_t               tdel_q   [DwTapPorts][ArrayRows][Vec];
  logic               tdel_tag_q [DwTapPorts][ArrayRows];
  fp32_t              fp_tw_q    [DwTapPorts][Vec];
  fp32_t              fp_tdel_q  [DwTapPorts][ArrayRows][Vec];
  word_grid_t         fp_dw_act_q;

  always_comb begin
    for (int unsigned k = 0; k < DwTapPorts; k++) begin
      logic signed [17:0] iy, ix;
      iy          = '0;
      ix          = '0;
      tap_addr[k] = '0;
      tap_inb[k]  = 1'b0;
      if (array_dw_q || s1_pack_q) begin
        iy          = s1_iy_q + (s1_pack_q ? 18'(s1_pack_port_q[k].dy)
                                           : 18'(32'(port_cfg_q[k].ky) * 32'(dq.dilation_h)));
        ix          = s1_ix_q + (s1_pack_q ? 18'(s1_pack_port_q[k].dx)
                                           : 18'(port_cfg_q[k].phase));
        tap_inb[k]  = !iy[17] && !ix[17] && iy < 18'(dq.a.count2) &&
                      ix < 18'(dq.a.count1) &&
                      (s1_pack_q ? s1_pack_port_q[k].on : port_cfg_q[k].on);
        tap_addr[k] = (32'(iy) * 32'(dq.a.count1) + 32'(ix)) * 32'(job_i.a_wpr) +
                      32'(s1_word_q);
      end
    end
  end

  // The ports' words (zero point subtracted, padding zeroed) and the rows' operands, only in TAPS
  // mode: the delay lines hold still otherwise, and the array ignores its TAPS inputs. (Float
  // TAPS words and operands are registers, below: nothing of them is computed in other modes.)
  always_comb begin
    for (int unsigned k = 0; k < DwTapPorts; k++) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        tw_d[k][l] = '0;
      end
    end
    for (int unsigned r = 0; r < ArrayRows; r++) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        dw_act_o[r][l] = '0;
      end
      dw_tag_o[r]    = 1'b0;
      dw_row_on_o[r] = row_cfg_q[r].on;
    end
    if (array_dw_q) begin
      for (int unsigned r = 0; r < ArrayRows; r++) begin
        if (row_cfg_q[r].on) begin
          dw_tag_o[r] = tdel_tag_q[row_cfg_q[r].port][row_cfg_q[r].delay];
        end
      end
    end
    if (array_dw_q && !array_fp_q) begin
      for (int unsigned k = 0; k < DwTapPorts; k++) begin
        for (int unsigned l = 0; l < Vec; l++) begin
          tw_d[k][l] = s2_inb_q[k] && 32'(l) < 32'(s2_word_lanes_q)
                           ? widen(spad_rdata_i[k][l*8 +: 8], s2_a_signed_q) - s2_a_zero_q
                           : '0;
        end
      end
      for (int unsigned r = 0; r < ArrayRows; r++) begin
        if (row_cfg_q[r].on) begin
          dw_act_o[r] = tdel_q[row_cfg_q[r].port][row_cfg_q[r].delay];
        end
      end
    end
  end
  assign fp_dw_act_o = fp_dw_act_q;

  // The TAPS delay lines (8-bit and float) move only in the TapsLive cycles after an issue: a
  // word is read at most ArrayRows cycles after it enters, which is a few cycles after its
  // issue, and every word a valid row reads entered after that row's vector issued. Held
  // still otherwise, they read as moving ones would for every valid row, and the idle cycles
  // of a depthwise layer waiting for DRAM cost the simulation no copying of 2,048 words.
  localparam int unsigned TapsLive = 2 * ArrayRows;
  logic [$clog2(TapsLive+1)-1:0] taps_live_q;
  logic                          taps_live;
  assign taps_live = array_dw_q && (issue || taps_live_q != '0);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      taps_live_q <= '0;
    end else if (issue) begin
      taps_live_q <= $bits(taps_live_q)'(TapsLive);
    end else if (taps_live_q != '0) begin
      taps_live_q <= taps_live_q - 1'b1;
    end
  end

  // ------------------------------------------------------------------------------------------
  // Registers. A flush (an abort or a soft reset) clears the control state like a reset; the loop
  // counters keep their values (every block starts by clearing them).
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q    <= FdIdle;
      nb_q       <= '0;
      kt_q       <= '0;
      ky_q       <= '0;
      kx_q       <= '0;
      cb_q       <= '0;
      oy_q       <= '0;
      ox_q       <= '0;
      p_q        <= '0;
      block_q    <= '0;
      seq_q      <= '0;
      bank_q     <= '0;
      word_q     <= '0;
      inflight_q <= '0;
      s1_q       <= '0;
      s2_q       <= '0;
      s3_q       <= '0;
      s1_pack_q  <= 1'b0;
      s2_pack_q  <= 1'b0;
    end else if (flush_i) begin
      state_q    <= FdIdle;
      block_q    <= '0;
      seq_q      <= '0;
      bank_q     <= '0;
      inflight_q <= '0;
      s1_q       <= '0;
      s2_q       <= '0;
      s3_q       <= '0;
      s1_pack_q  <= 1'b0;
      s2_pack_q  <= 1'b0;
    end else begin
      state_q    <= state_d;
      nb_q       <= nb_d;
      kt_q       <= kt_d;
      ky_q       <= ky_d;
      kx_q       <= kx_d;
      cb_q       <= cb_d;
      oy_q       <= oy_d;
      ox_q       <= ox_d;
      p_q        <= p_d;
      block_q    <= block_d;
      seq_q      <= seq_d;
      bank_q     <= bank_d;
      word_q     <= word_d;
      inflight_q <= inflight_d;
      s1_q       <= s1_d;
      s2_q       <= s2_d;
      s3_q       <= s3_d;
      s1_pack_q  <= issue && is_pack;
      s2_pack_q  <= s1_pack_q;
    end
  end

  // The array mode is kept through a flush, which empties the count of vectors in flight: the
  // next block may set the mode at once.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      array_dw_q   <= 1'b0;
      array_fp_q   <= 1'b0;
      array_diag_q <= 1'b0;
      array_pack_q <= 1'b0;
    end else begin
      array_dw_q   <= array_dw_d;
      array_fp_q   <= array_fp_d;
      array_diag_q <= array_diag_d;
      array_pack_q <= array_pack_d;
    end
  end

  // Datapath registers: no reset (the valid bits above say what they hold).
  always_ff @(posedge clk_i) begin
    if (issue) begin
      s1_iy_q       <= s1_iy_d;
      s1_ix_q       <= s1_ix_d;
      s1_word_q     <= s1_word_d;
      s1_lanes_q    <= in_lanes;
      s1_a_signed_q <= dq.a_signed;
      s1_a_zero_q   <= dq.a_zero_point;
      s1_fmt_q      <= is_fp ? dq.format : 2'(FmtInt8);
      s1_pack_port_q <= pack_port_q;
    end
    s2_a_signed_q <= s1_a_signed_q;
    s2_a_zero_q   <= s1_a_zero_q;
    s2_fmt_q      <= s1_fmt_q;
    if (s1_q.valid) begin
      s2_lanes_q <= s2_lanes_d;
    end
    s3_act_q <= s3_act_d;
    if (s2_fp) begin
      s3_fp_q <= s3_fp_d;
    end

    s1_step_q  <= issue;
    s1_float_q <= issue && is_fp;
    s1_tag_q   <= block_q[0];
    s2_tag_q   <= s1_tag_q;
    if (s1_step_q) begin
      s2_word_lanes_q <= s1_lanes_q;
      s2_inb_q        <= tap_inb;
    end
    if (taps_load) begin
      taps_shape_q <= taps_shape_d;
      port_cfg_q   <= port_cfg_d;
      row_cfg_q    <= row_cfg_d;
    end
    if (pack_step_load) begin
      pack_port_q <= pack_port_d;
      pack_ky_q   <= pack_ky_d;
      pack_kx_q   <= pack_kx_d;
      pack_rows_q <= pack_rows_d;
    end
    if (pack_rows_load) begin
      pack_c_q   <= dq.a.inner >> esh;
      pack_row_q <= pack_row_d;
    end
    // Delay lines: plain shift registers, moving while a word of the last issue may still be
    // read (taps_live).
    if (taps_live) begin
      tw_tag_q <= s2_tag_q;
      for (int unsigned k = 0; k < DwTapPorts; k++) begin
        tdel_tag_q[k][0] <= tw_tag_q;
        for (int unsigned d = 1; d < ArrayRows; d++) begin
          tdel_tag_q[k][d] <= tdel_tag_q[k][d-1];
        end
      end
    end
    if (taps_live && !array_fp_q) begin
      tw_q <= tw_d;
      for (int unsigned k = 0; k < DwTapPorts; k++) begin
        tdel_q[k][0] <= tw_q[k];
        for (int unsigned d = 1; d < ArrayRows; d++) begin
          tdel_q[k][d] <= tdel_q[k][d-1];
        end
      end
    end
    if (taps_live && array_fp_q) begin
      // The ports' lanes and the rows' operands are computed first and registered after
      // (Verilator unrolls a loop of nonblocking array writes only when its body is small). Row
      // r's operand is entry `delay` of its port's line: entry delay - 1 (or the port's lanes)
      // a cycle earlier.
      fp32_t      fp_tw [DwTapPorts][Vec];
      word_grid_t fp_dw_act;
      for (int unsigned k = 0; k < DwTapPorts; k++) begin
        for (int unsigned l = 0; l < Vec; l++) begin
          fp_tw[k][l] = s2_inb_q[k] && 32'(l) < 32'(s2_word_lanes_q)
                            ? line_element(PortW'(k), l, s2_fmt_q == 2'(FmtFp16)) : '0;
        end
      end
      for (int unsigned r = 0; r < ArrayRows; r++) begin
        for (int unsigned c = 0; c < ArrayCols; c++) begin
          fp_dw_act[r][c] = !row_cfg_q[r].on ? '0
                          : row_cfg_q[r].delay == '0 ? fp_tw_q[row_cfg_q[r].port][c]
                          : fp_tdel_q[row_cfg_q[r].port][row_cfg_q[r].delay - 1'b1][c];
        end
      end
      fp_tw_q     <= fp_tw;
      fp_dw_act_q <= fp_dw_act;
      for (int unsigned k = 0; k < DwTapPorts; k++) begin
        fp_tdel_q[k][0] <= fp_tw_q[k];
        for (int unsigned d = 1; d < ArrayRows; d++) begin
          fp_tdel_q[k][d] <= fp_tdel_q[k][d-1];
        end
      end
    end
  end

  // ------------------------------------------------------------------------------------------
  // Outputs.
  always_comb begin
    for (int unsigned l = 0; l < Vec; l++) begin
      act_o[l] = s3_q.valid && !s3_q.pool ? s3_act_q[l] : '0;
    end
  end
  assign meta_o     = s3_q;
  assign pool_act_o = s3_act_q;
  assign dw_mode_o  = array_dw_q;
  assign fp_mode_o  = array_fp_q;
  assign fp_diag_o  = array_diag_q;
  assign fp_act_o   = s3_fp_q;

  // Port 0 reads the window word, or a PACK vector's first tap (npu_compute lends it to
  // element-wise operations); the others the TAPS or PACK words. Float vectors read lines.
  always_comb begin
    spad_re_o[0]    = 1'b1;
    spad_raddr_o[0] = (job_i.buf_sel ? SpadAw'(SpadWords) : '0) +
                      SpadAw'(s1_pack_q ? tap_addr[0] : win_addr);
    for (int unsigned k = 1; k < DwTapPorts; k++) begin
      spad_re_o[k]    = (array_dw_q || s1_pack_q) && tap_inb[k];
      spad_raddr_o[k] = (job_i.buf_sel ? SpadAw'(SpadWords) : '0) + SpadAw'(tap_addr[k]);
    end
    for (int unsigned k = 0; k < DwTapPorts; k++) begin
      spad_line_o[k] = s1_float_q;
    end
    spad_re_o[ResPort]    = 1'b0;  // npu_compute's RESIDUAL epilogue reads it
    spad_raddr_o[ResPort] = '0;
  end

  assign issue_o = issue;

  // Performance events.
  always_comb begin
    perf_macs_o = '0;
    if (issue && is_array) begin
      if (is_taps) begin
        perf_macs_o = step_valid ? 16'(dq.kernel_h * dq.kernel_w) * out_lanes : '0;
      end else begin
        perf_macs_o = dq.opcode == OpDwconv ? out_lanes
                    : is_pack ? 16'(pack_rows_q * out_lanes) : 16'(in_lanes * out_lanes);
      end
    end
  end
  assign perf_array_active_o = issue && is_array;
  assign perf_stall_weight_o = state_q == FdStream && !block_ready;
  assign perf_stall_output_o = state_q == FdNbStart && !nb_go;

  // Fields of the job other units use; the scratchpad index width drops the high bits.
  logic unused_signals;
  assign unused_signals = ^{job_i, dq, win_addr[31:SpadAw], spad_rdata_i[ResPort]};

`ifndef SYNTHESIS
  // A CHAIN_IN consumer reads exactly the words its CHAIN_OUT producer's drain wrote: when it
  // issues the last input word of an output-channel block, every word has been written and no
  // more (the feeder only issues written words; a shape mismatch would leave some unread).
  a_chain_in_reads_all: assert property (@(posedge clk_i) disable iff (!rst_ni)
      issue && is_chain_in && !is_dw && last_step && last_kt && !flush_i |->
      chain_written_i == (word_q + 1) * 32'(vw))
    else $error("CHAIN_IN descriptor %0d read %0d words, its producer wrote %0d", job_i.index,
                (word_q + 1) * 32'(vw), chain_written_i);
  // A DWCONV consumer's last block has every pixel's words of every block, and no more.
  a_chain_in_window_reads_all: assert property (@(posedge clk_i) disable iff (!rst_ni)
      issue && is_chain_in && is_dw && last_step && last_kt && last_nb && !flush_i |->
      chain_written_i == 32'(job_i.nb_count) * 32'(dq.a.count1) * 32'(dq.a.count2))
    else $error("CHAIN_IN DWCONV descriptor %0d: its producer wrote %0d words", job_i.index,
                chain_written_i);
`endif

endmodule
