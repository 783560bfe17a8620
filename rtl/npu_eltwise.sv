// Element-wise unit of the compute stage: ADD, MUL, LUT, FUNC and NORM descriptors.
//
// Once the drain is idle it starts the store job, loads the table (LUT: the descriptor's
// 256-byte stream) and reads the buffer word by word (ADD and MUL: A, then B, of each word), a
// word's lanes computed in two stages into a small result FIFO: quantized ADD and MUL results go
// through npu_compute's requantizer, LUT bytes and float words straight to the store. Float
// formats compute a word's Vec / 4 binary32 or Vec / 2 binary16 elements in binary32
// (rtl/npu_fp_pkg.sv: add, multiply, divide or FUNC's function, then the FP_MIN/FP_MAX clamp;
// binary16 is widened first and rounded to nearest even last), INT32 its Vec / 4 int32 elements
// (wrapping add, subtract, multiply); COMPARE replaces a float or INT32 sum by the 0 or 1 of a
// comparison, an element of the format's size. The descriptor is done once its last word is
// stored.
//
// NORM rows (a row of A is one vector) are read once per phase: SOFTMAX takes the row's maximum,
// then sums its exponentials (the table, indexed by max - x), then writes each element from the
// exponential and the row's 1 / sum; L2 sums the squares, then writes each element times the
// row's 1 / sqrt(sum). A read's data arrives the next cycle, so a phase's last accumulation is
// done when the next phase's first data arrives: the phases follow without a bubble.
module npu_eltwise
  import npu_pkg::*;
  import npu_core_pkg::*;
  import npu_fp_pkg::*;
(
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  flush_i,

  // The descriptor: start_i when npu_compute takes an element-wise descriptor; job_i is that
  // descriptor from the next cycle on.
  input  logic                  start_i,
  input  job_t                  job_i,
  output logic                  active_o,     // its results own the requantizer and the store
  output logic                  done_o,       // its last word is stored

  input  logic                  drain_idle_i,
  output logic                  st_start_o,
  input  logic                  st_busy_i,

  // The table stream.
  input  logic                  ws_valid_i,
  output logic                  ws_ready_o,
  input  logic [VecBits-1:0]    ws_data_i,

  // Scratchpad port 0, lent by the feeder while reading_o.
  output logic                  reading_o,
  output logic [SpadAw-1:0]     spad_raddr_o,
  input  logic [VecBits-1:0]    spad_rdata_i,

  // Results: quantized ADD and MUL values to requantize (res_valid_o, rq_ready_i), LUT and
  // float words to store as they are (res_valid_o, direct_o, st_ready_i).
  output logic                  res_valid_o,
  output logic [Vec*32-1:0]     res_data_o,
  output logic                  direct_o,
  output logic [VecBits-1:0]    word_o,
  input  logic                  rq_ready_i,
  input  logic                  rq_busy_i,
  input  logic                  st_ready_i
);

  localparam int unsigned TableWords = 256 / Vec;
  localparam int unsigned ExpWords   = 256 * 4 / Vec;  // NORM softmax: 256 int32

  typedef enum logic [1:0] {
    PhMax,
    PhSum,
    PhOut
  } phase_e;

  typedef enum logic [2:0] {
    ElIdle,
    ElWait,
    ElTable,
    ElRun,
    ElDone
  } elem_state_e;

  desc_t dq;
  assign dq = job_i.desc;

  logic two, is_lut, is_norm, softmax, wide, direct, byte_lanes;
  assign two        = op_uses_b(dq.opcode);  // two reads per word (ADD, MUL)
  assign is_lut     = dq.opcode == OpLut;
  assign is_norm    = dq.opcode == OpNorm;
  assign softmax    = is_norm && !dq.norm_l2[0];
  assign wide       = dq.format != 2'(FmtInt8);  // float and INT32: results stored as they are
  assign direct     = is_lut || wide || is_norm;
  assign byte_lanes = is_lut || is_norm;  // a result byte per 32-bit lane

  logic [7:0] table_words;
  assign table_words = is_lut ? 8'(TableWords) : softmax ? 8'(ExpWords) : 8'd0;

  elem_state_e state_q, state_d;
  logic [31:0] word_q, word_d;          // next word to read
  logic        second_q, second_d;      // reading B of the word
  logic [2:0]  inflight_q, inflight_d;  // words read but not yet in the result FIFO
  logic [7:0]  table_word_q, table_word_d;
  // NORM: the phase, the word within the row, the row's first word.
  phase_e      phase_q, phase_d;
  logic [31:0] wir_q, wir_d, row_q, row_d;

  logic can_start, table_take, table_done, issue, all_issued, finished;
  logic fifo_valid, fifo_take;
  logic [2:0] fifo_count;

  logic counted;  // the read completes a result word
  assign counted    = is_norm ? phase_q == PhOut : second_q || !two;
  assign can_start  = state_q == ElWait && drain_idle_i;
  assign table_take = state_q == ElTable && ws_valid_i && table_word_q < table_words;
  assign table_done = state_q == ElTable && table_word_q == table_words;
  assign all_issued = state_q == ElRun && (is_norm ? row_q == job_i.a_words
                                                   : word_q == job_i.a_words);
  // A read that starts a result word needs a FIFO slot (B and NORM's first phases need none).
  assign issue      = state_q == ElRun && !all_issued &&
                      ((is_norm ? phase_q != PhOut : second_q) ||
                       32'(fifo_count) + 32'(inflight_q) < 4);
  assign finished   = state_q == ElDone && inflight_q == '0 && !fifo_valid && !rq_busy_i &&
                      !st_busy_i;

  always_comb begin
    state_d = state_q;
    unique case (state_q)
      ElIdle:  if (start_i)    state_d = ElWait;
      ElWait:  if (can_start)  state_d = byte_lanes ? ElTable : ElRun;
      ElTable: if (table_done) state_d = ElRun;
      ElRun:   if (all_issued) state_d = ElDone;
      ElDone:  if (finished)   state_d = ElIdle;
      default: state_d = ElIdle;
    endcase
  end

  always_comb begin
    word_d       = word_q;
    second_d     = second_q;
    table_word_d = table_word_q;
    phase_d      = phase_q;
    wir_d        = wir_q;
    row_d        = row_q;
    if (state_q == ElIdle || state_q == ElWait) begin  // job_i is the descriptor from ElWait on
      word_d       = '0;
      second_d     = 1'b0;
      table_word_d = '0;
      phase_d      = softmax ? PhMax : PhSum;
      wir_d        = '0;
      row_d        = '0;
    end else begin
      if (table_take) begin
        table_word_d = table_word_q + 1;
      end
      if (issue && is_norm) begin
        wir_d = wir_q + 1;
        if (wir_d == 32'(job_i.a_wpr)) begin
          wir_d = '0;
          unique case (phase_q)
            PhMax:   phase_d = PhSum;
            PhSum:   phase_d = PhOut;
            default: begin
              phase_d = softmax ? PhMax : PhSum;
              row_d   = row_q + 32'(job_i.a_wpr);
            end
          endcase
        end
      end else if (issue) begin
        if (two && !second_q) begin
          second_d = 1'b1;
        end else begin
          second_d = 1'b0;
          word_d   = word_q + 1;
        end
      end
    end
  end

  // ------------------------------------------------------------------------------------------
  // Pipeline: e1 = data of the read issued last cycle (A is held until its B), e2 = the word's
  // result.
  logic               e1_valid_q, e1_valid_d, e1_b_q, e1_b_d, e2_valid_q, e2_valid_d;
  logic               e1_last;
  phase_e             e1_phase_q;
  logic [31:0]        e1_wir_q;
  logic [VecBits-1:0] e1_a_q;
  logic [Vec*32-1:0]  e2_value_q, e2_value_d;  // a 32-bit value per lane
  logic [7:0]         lut_q [256];

  assign e1_last = e1_valid_q && (is_norm ? e1_phase_q == PhOut : e1_b_q || !two);

  assign e1_valid_d = issue;
  assign e1_b_d     = second_q;
  assign e2_valid_d = e1_last;
  assign inflight_d = inflight_q + 3'(issue && counted) - 3'(e2_valid_q);

  // One float element of the descriptor: the operation, then the clamp.
  function automatic fp32_t float_lane(fp32_t a, fp32_t b);
    fp32_t v;
    unique case (dq.opcode)
      OpMul:  v = dq.divide[0] ? fp32_div(a, b) : fp32_mul(a, b);
      OpFunc: begin
        unique case (dq.float_fn)
          2'(FnExp): v = fp32_exp(a);
          2'(FnLog): v = fp32_log(a);
          2'(FnSqrt): v = fp32_sqrt(a);
          default:   v = fp32_trunc(a);
        endcase
      end
      default: v = fp32_add(a, {b[31] ^ dq.negate_b[0], b[30:0]});
    endcase
    return fp32_clamp(v, dq.fp_min, dq.fp_max);
  endfunction

  // Whether the comparison COMPARE holds for a against b: signed integers, or IEEE floats
  // (binary16 widened, which keeps their order).
  function automatic logic compare_holds(logic [31:0] a, logic [31:0] b);
    logic is_fp, unordered, eq, lt;
    is_fp     = dq.format != 2'(FmtInt32);
    unordered = is_fp && (fp32_is_nan(a) || fp32_is_nan(b));
    if (is_fp) begin
      eq = fp32_order(a) == fp32_order(b) || (fp32_is_zero(a) && fp32_is_zero(b));
      lt = !eq && fp32_order(a) < fp32_order(b);
    end else begin
      eq = a == b;
      lt = $signed(a) < $signed(b);
    end
    unique case (dq.compare)
      3'(CmpEq): return !unordered && eq;
      3'(CmpNe): return unordered || !eq;
      3'(CmpLt): return !unordered && lt;
      3'(CmpLe): return !unordered && (lt || eq);
      3'(CmpGt): return !unordered && !(lt || eq);
      default:   return !unordered && !lt;  // GE
    endcase
  endfunction

  // One element of a 32-bit format (FP32, INT32): the comparison, the integer operation or the
  // float one.
  function automatic logic [31:0] wide_lane(logic [31:0] a, logic [31:0] b);
    if (dq.compare != '0) return {31'd0, compare_holds(a, b)};
    if (dq.format == 2'(FmtInt32)) begin
      return dq.opcode == OpMul ? a * b : dq.negate_b[0] ? a - b : a + b;
    end
    return float_lane(a, b);
  endfunction

  // NORM rows: the lanes of a word that hold elements of the row, each lane's value, its
  // exponential (softmax) and the row's maximum, sum and scale.
  logic [31:0]        exp_q [256];
  logic signed [8:0]  row_max_q, row_max_d;
  logic [31:0]        row_sum_q, row_sum_d;
  logic [Vec-1:0]     lane_valid;
  logic signed [31:0] norm_multiplier;  // softmax: 1 / sum in Q0.31; L2: 1 / sqrt(sum)
  logic [5:0]         norm_shift;       // the output's shift (negative: right)

  always_comb begin
    for (int unsigned l = 0; l < Vec; l++) begin
      lane_valid[l] = e1_wir_q * Vec + l < 32'(dq.a.inner);
    end
  end

  function automatic logic signed [31:0] lane_value(int unsigned l);
    return 32'(widen(spad_rdata_i[l*8 +: 8], dq.a_signed));
  endfunction

  function automatic logic signed [31:0] lane_centred(int unsigned l);  // L2: x - zero point
    return lane_value(l) - 32'(signed'(dq.a_zero_point));
  endfunction

  function automatic logic [31:0] lane_exp(int unsigned l);
    return exp_q[8'(32'(row_max_q) - lane_value(l))];
  endfunction

  always_comb begin
    row_max_d = row_max_q;
    row_sum_d = row_sum_q;
    if (e1_valid_q && is_norm && e1_phase_q != PhOut) begin
      if (e1_wir_q == '0 && e1_phase_q == PhMax) row_max_d = -9'sd256;
      if (e1_wir_q == '0 && e1_phase_q == PhSum) row_sum_d = '0;
      for (int unsigned l = 0; l < Vec; l++) begin
        if (lane_valid[l]) begin
          if (e1_phase_q == PhMax) begin
            if (9'(lane_value(l)) > row_max_d) row_max_d = 9'(lane_value(l));
          end else if (softmax) begin
            row_sum_d = row_sum_d + rounding_shift(lane_exp(l), 5'd12);
          end else begin
            row_sum_d = row_sum_d + 32'(lane_centred(l) * lane_centred(l));
          end
        end
      end
    end
  end

  // The row's scale, from its sum: softmax's 1 / sum as gemmlowp takes it (a Q0.31 reciprocal of
  // the normalized sum and the bits over one), L2's inverse square root.
  logic [5:0]  sum_headroom;
  logic [37:0] inv_sqrt;
  assign sum_headroom = clz32(row_sum_q);
  assign inv_sqrt     = inv_sqrt_multiplier(row_sum_q);
  always_comb begin
    if (softmax) begin
      norm_multiplier = one_over_one_plus_x((row_sum_q << sum_headroom) - 32'h8000_0000);
      norm_shift      = 6'(int'(sum_headroom) - 35);  // -(bits over one + 31 - 8)
    end else begin
      norm_multiplier = inv_sqrt[31:0];
      norm_shift      = inv_sqrt[37:32] + dq.out_shift;
    end
  end

  function automatic logic [7:0] norm_lane(int unsigned l);
    logic signed [31:0] v;
    if (softmax) begin
      v = mul_by_quantized_multiplier(lane_exp(l), norm_multiplier, norm_shift);
    end else begin
      v = mul_by_quantized_multiplier(lane_centred(l) << dq.left_shift, norm_multiplier,
                                      norm_shift);
    end
    return clamp_byte(v + 32'(signed'(dq.out_zero_point)), dq.act_min, dq.act_max);
  endfunction

  // A word's lanes; only computed for a word's last read. A one-read word (FUNC, LUT) is the
  // read data itself.
  logic [VecBits-1:0] a_word;
  assign a_word = two ? e1_a_q : spad_rdata_i;

  always_comb begin
    e2_value_d = '0;
    if (e1_last && wide) begin
      if (dq.format == 2'(FmtFp16)) begin
        for (int unsigned l = 0; l < Vec / 2; l++) begin
          fp32_t a, b;
          a = fp16_to_fp32(a_word[l*16 +: 16]);
          b = fp16_to_fp32(spad_rdata_i[l*16 +: 16]);
          e2_value_d[l*16 +: 16] = dq.compare != '0 ? {15'd0, compare_holds(a, b)}
                                                    : fp32_to_fp16(float_lane(a, b));
        end
      end else begin
        for (int unsigned l = 0; l < Vec / 4; l++) begin
          e2_value_d[l*32 +: 32] = wide_lane(a_word[l*32 +: 32], spad_rdata_i[l*32 +: 32]);
        end
      end
    end else if (e1_last && is_norm) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        e2_value_d[l*32 +: 32] = {24'd0, norm_lane(l)};
      end
    end else if (e1_last) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        logic [7:0]         a_byte, b_byte;
        logic signed [31:0] a_c, b_c;
        a_byte = a_word[l*8 +: 8];
        b_byte = spad_rdata_i[l*8 +: 8];
        a_c = 32'(widen(a_byte, dq.a_signed)) - 32'(signed'(dq.a_zero_point));
        b_c = 32'(widen(b_byte, dq.b_signed)) - 32'(signed'(dq.b_zero_point));
        unique case (dq.opcode)
          OpAdd: e2_value_d[l*32 +: 32] =
              mul_by_quantized_multiplier(32'(a_c) << dq.left_shift, dq.a_multiplier, dq.a_shift) +
              mul_by_quantized_multiplier(32'(b_c) << dq.left_shift, dq.b_multiplier, dq.b_shift);
          OpMul:   e2_value_d[l*32 +: 32] = 32'(a_c * b_c);
          default: e2_value_d[l*32 +: 32] = {24'd0, lut_q[a_byte]};
        endcase
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q      <= ElIdle;
      word_q       <= '0;
      second_q     <= 1'b0;
      table_word_q <= '0;
      inflight_q   <= '0;
      e1_valid_q   <= 1'b0;
      e1_b_q       <= 1'b0;
      e2_valid_q   <= 1'b0;
      phase_q      <= PhSum;
      wir_q        <= '0;
      row_q        <= '0;
    end else if (flush_i) begin
      state_q      <= ElIdle;
      word_q       <= '0;
      second_q     <= 1'b0;
      table_word_q <= '0;
      inflight_q   <= '0;
      e1_valid_q   <= 1'b0;
      e2_valid_q   <= 1'b0;
    end else begin
      state_q      <= state_d;
      word_q       <= word_d;
      second_q     <= second_d;
      table_word_q <= table_word_d;
      phase_q      <= phase_d;
      wir_q        <= wir_d;
      row_q        <= row_d;
      inflight_q   <= inflight_d;
      e1_valid_q   <= e1_valid_d;
      e1_b_q       <= e1_b_d;
      e2_valid_q   <= e2_valid_d;
    end
  end

  // Datapath registers and the table (written a stream word at a time).
  logic [7:0] lut_wbase;
  assign lut_wbase = 8'(32'(table_word_q) * Vec);

  always_ff @(posedge clk_i) begin
    if (e1_valid_q && !e1_b_q) begin
      e1_a_q <= spad_rdata_i;
    end
    if (issue) begin
      e1_phase_q <= phase_q;
      e1_wir_q   <= wir_q;
    end
    row_max_q <= row_max_d;
    row_sum_q <= row_sum_d;
    if (e1_last) begin
      e2_value_q <= e2_value_d;
    end
    if (table_take && is_lut) begin
      for (int unsigned b = 0; b < Vec; b++) begin
        lut_q[lut_wbase + 8'(b)] <= ws_data_i[b*8 +: 8];
      end
    end
    if (table_take && is_norm) begin
      for (int unsigned e = 0; e < Vec / 4; e++) begin
        exp_q[8'(32'(table_word_q) * (Vec / 4) + e)] <= ws_data_i[e*32 +: 32];
      end
    end
  end

  // ------------------------------------------------------------------------------------------
  // Results wait in a small FIFO; the credit check above keeps it from overflowing.
  logic fifo_in_ready;

  npu_fifo #(
    .Width(Vec * 32),
    .Depth(4)
  ) u_fifo (
    .clk_i,
    .rst_ni,
    .flush_i,
    .in_valid_i (e2_valid_q),
    .in_ready_o (fifo_in_ready),
    .in_data_i  (e2_value_q),
    .out_valid_o(fifo_valid),
    .out_ready_i(fifo_take),
    .out_data_o (res_data_o),
    .count_o    (fifo_count)
  );

  assign fifo_take = fifo_valid && (direct ? st_ready_i : rq_ready_i) && active_o;

  // A LUT result has a byte per 32-bit lane; a float word is packed at the bottom.
  always_comb begin
    word_o = res_data_o[VecBits-1:0];
    if (byte_lanes) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        word_o[l*8 +: 8] = res_data_o[l*32 +: 8];
      end
    end
  end

  // ------------------------------------------------------------------------------------------
  // Outputs.
  assign active_o     = state_q == ElRun || state_q == ElDone;
  assign done_o       = finished;
  assign st_start_o   = can_start;
  assign ws_ready_o   = table_take;
  assign res_valid_o  = fifo_valid;
  assign direct_o     = direct;
  assign reading_o    = state_q == ElRun;
  assign spad_raddr_o = (job_i.buf_sel ? SpadAw'(SpadWords) : '0) +
                        SpadAw'(is_norm ? row_q + wir_q
                                        : word_q + (second_q ? job_i.a_words : 32'd0));

  // The unit reads few fields of its job; results carry their credit in the count.
  logic unused_signals;
  assign unused_signals = ^{job_i, dq, fifo_in_ready};

endmodule
