// Accumulators of the compute stage: AccBanks banks of AccDepth x Vec int32 (plus, for average
// pooling, a count of valid taps per entry) and their bookkeeping.
//
// The feeder claims a free bank for each output-channel block (with the job the drain needs);
// the block's vectors add up its K steps, from the array's sums or, for pooling, straight from
// the feeder (max, or sum and count); float array sums add in binary32, K step after K step.
// The bank is full after the block's last vector and the drain reads it, one entry per cycle
// through a registered read port, and releases it.
// The metadata of each vector travels beside the array: Rows + Cols cycles, or Rows + 1 in the
// array's TAPS mode, whose sums leave the array without deskew.
module npu_accum
  import npu_pkg::*;
  import npu_core_pkg::*;
  import npu_fp_pkg::*;
(
  input  logic                       clk_i,
  input  logic                       rst_ni,
  input  logic                       flush_i,

  // Feeder: bank claims and vectors.
  input  logic                       claim_i,
  input  logic [BankW-1:0]           claim_bank_i,
  input  bank_job_t                  claim_job_i,
  output logic [AccBanks-1:0]        bank_busy_o,  // claimed, not yet released
  input  vec_meta_t                  meta_i,
  input  act_lanes_t                 pool_act_i,
  input  logic                       dw_mode_i,

  input  logic [ArrayCols-1:0][31:0] psum_i,
  output logic                       array_out_o,  // a vector's sums leave the array

  // Drain: bank rd_bank_i, its job, its entries.
  input  logic [BankW-1:0]           rd_bank_i,
  output logic                       bank_full_o,
  output bank_job_t                  bank_job_o,
  input  logic                       rd_i,
  input  logic [AccAw-1:0]           rd_addr_i,
  output word_lanes_t                rd_data_o,   // registered: the entry read last
  output logic [15:0]                rd_count_o,
  input  logic                       release_i
);

  localparam int unsigned ArrayLatency = ArrayRows + ArrayCols;  // npu_array input to output

  // ------------------------------------------------------------------------------------------
  // Bank bookkeeping.
  logic [AccBanks-1:0] busy_q, busy_d;  // being filled or waiting to drain
  logic [AccBanks-1:0] full_q, full_d;  // every K step accumulated
  bank_job_t           job_q [AccBanks];
  logic                bank_done;       // the current vector completes its bank
  logic [BankW-1:0]    done_bank;

  always_comb begin
    busy_d = busy_q;
    full_d = full_q;
    if (claim_i) begin
      busy_d[claim_bank_i] = 1'b1;
    end
    if (bank_done) begin
      full_d[done_bank] = 1'b1;
    end
    if (release_i) begin
      busy_d[rd_bank_i] = 1'b0;
      full_d[rd_bank_i] = 1'b0;
    end
  end

  assign bank_busy_o = busy_q;
  assign bank_full_o = full_q[rd_bank_i];
  assign bank_job_o  = job_q[rd_bank_i];

  // ------------------------------------------------------------------------------------------
  // Metadata beside the array. TAPS vectors leave the array after Rows + 1 cycles, not
  // Rows + Cols: they join the line Cols - 1 places further on. Pooling vectors bypass the
  // array in either mode.
  localparam int unsigned TapsJoin = ArrayCols - 1;

  vec_meta_t meta_q [ArrayLatency];
  vec_meta_t meta_head_d, meta_join_d;

  assign meta_head_d = meta_i.pool || dw_mode_i ? '0 : meta_i;
  assign meta_join_d = dw_mode_i ? (meta_i.pool ? '0 : meta_i) : meta_q[TapsJoin-1];

  // ------------------------------------------------------------------------------------------
  // Accumulation: the array's sums, or pooling values straight from the feeder.
  logic [31:0] acc_q   [AccBanks][AccDepth][Vec];
  logic [15:0] count_q [AccBanks][AccDepth];
  vec_meta_t   am;
  logic        from_array;
  word_lanes_t acc_wdata;
  logic        count_we;
  logic [15:0] count_wdata;

  assign from_array = meta_q[ArrayLatency-1].valid;
  assign am         = from_array ? meta_q[ArrayLatency-1] : (meta_i.pool ? meta_i : '0);
  assign bank_done  = am.valid && am.bank_done;
  assign done_bank  = am.bank;

  // A float pooling vector into entry `old`: the word (the feeder's lanes hold its bytes) has
  // Vec / 4 binary32 or Vec / 2 binary16 elements, element l going to lane l as binary32; max,
  // or sum in tap order. A padding tap keeps the entry (the first one sets -inf or -0).
  function automatic void float_pool(output word_lanes_t r, input word_lanes_t old,
                                     input act_lanes_t act, input logic first, input logic pad,
                                     input logic maxpool, input logic [1:0] format);
    logic [VecBits-1:0] w;
    fp32_t              v;
    for (int unsigned l = 0; l < Vec; l++) begin
      w[l*8 +: 8] = act[l][7:0];
      r[l]        = '0;
    end
    for (int unsigned l = 0; l < Vec / 2; l++) begin
      if (format == 2'(FmtFp16) || l < Vec / 4) begin
        v = format == 2'(FmtFp16) ? fp16_to_fp32(w[l*16 +: 16]) : w[l*32 +: 32];
        if (pad) begin
          r[l] = !first ? old[l] : maxpool ? Fp32NegInf : Fp32NegZero;
        end else if (first) begin
          r[l] = v;
        end else begin
          r[l] = maxpool ? fp32_max(old[l], v) : fp32_add(old[l], v);
        end
      end
    end
  endfunction

  // The entry's new value (read-modify-write); only computed for a valid vector.
  logic fp_bank;  // the vector's bank holds a float block
  assign fp_bank = job_q[am.bank].format != 2'(FmtInt8);

  always_comb begin
    logic [31:0] old;
    old = '0;
    for (int unsigned l = 0; l < Vec; l++) begin
      acc_wdata[l] = '0;
    end
    count_we    = 1'b0;
    count_wdata = '0;
    if (am.valid && !from_array && fp_bank) begin
      float_pool(acc_wdata, acc_q[am.bank][am.p], pool_act_i, am.first, am.pad, am.maxpool,
                 job_q[am.bank].format);
    end else if (am.valid && from_array && fp_bank) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        acc_wdata[l] = am.first ? psum_i[l] : fp32_add(acc_q[am.bank][am.p][l], psum_i[l]);
      end
    end else if (am.valid) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        old = acc_q[am.bank][am.p][l];
        if (from_array) begin
          acc_wdata[l] = (am.first ? 32'd0 : old) + psum_i[l];
        end else if (am.maxpool) begin
          if (am.first && am.pad) begin
            acc_wdata[l] = 32'h8000_0000;
          end else if (am.first || (!am.pad && signed'(32'(pool_act_i[l])) > signed'(old))) begin
            acc_wdata[l] = 32'(pool_act_i[l]);
          end else begin
            acc_wdata[l] = old;
          end
        end else begin
          acc_wdata[l] = (am.first ? 32'd0 : old) + (am.pad ? 32'd0 : 32'(pool_act_i[l]));
        end
      end
    end
    if (am.valid) begin
      count_we    = !from_array && !am.maxpool;
      count_wdata = (am.first ? 16'd0 : count_q[am.bank][am.p]) + 16'(!am.pad);
    end
  end

  // ------------------------------------------------------------------------------------------
  // Registers. The metadata line is a shift register (joined by TAPS vectors Cols - 1 places on).
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= '0;
      full_q <= '0;
      meta_q <= '{default: '0};
    end else if (flush_i) begin
      busy_q <= '0;
      full_q <= '0;
      meta_q <= '{default: '0};
    end else begin
      busy_q    <= busy_d;
      full_q    <= full_d;
      meta_q[0] <= meta_head_d;
      for (int unsigned d = 1; d < ArrayLatency; d++) begin
        if (d == TapsJoin) begin
          meta_q[d] <= meta_join_d;
        end else begin
          meta_q[d] <= meta_q[d-1];
        end
      end
    end
  end

  // Memories: the banks' jobs, the accumulators and counts (a write port and a registered read
  // port each, like an SRAM's).
  always_ff @(posedge clk_i) begin
    if (claim_i) begin
      job_q[claim_bank_i] <= claim_job_i;
    end
    if (am.valid) begin
      acc_q[am.bank][am.p] <= acc_wdata;
    end
    if (count_we) begin
      count_q[am.bank][am.p] <= count_wdata;
    end
    if (rd_i) begin
      rd_data_o  <= acc_q[rd_bank_i][rd_addr_i];
      rd_count_o <= count_q[rd_bank_i][rd_addr_i];
    end
  end

  assign array_out_o = from_array;

  // The accumulators need neither the weight buffer tag nor where the vector came from.
  logic unused_signals;
  assign unused_signals = ^{am.tag, am.pool};

`ifndef SYNTHESIS
  // Banks are claimed free, filled once and drained in order.
  a_bank_free_at_claim: assert property (@(posedge clk_i) disable iff (!rst_ni)
      claim_i |-> !busy_q[claim_bank_i])
    else $error("accumulator bank claimed while busy");
  a_bank_full_once: assert property (@(posedge clk_i) disable iff (!rst_ni)
      bank_done && !flush_i |-> busy_q[done_bank] && !full_q[done_bank])
    else $error("accumulator bank completed twice or without being claimed");
`endif

`ifdef NPU_COVERAGE
  // Functional coverage (the coverage build): every bank in use, so that one output-channel
  // block accumulates while the others drain or wait to (docs/verification-plan.md).
  all_banks_busy: cover property (@(posedge clk_i) busy_q == '1);
`endif

endmodule
