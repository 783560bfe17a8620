// Pooling and float finish of the drain: turns one accumulator entry into output words.
//
// MAXPOOL clamps the maxima to the activation range. AVGPOOL divides each sum by the count of
// valid taps, rounding half away from zero (TRUNCATE: toward zero), one quotient bit per cycle
// (quotients stay below 2^PoolQBits), then clamps. Float formats finish in one cycle: binary32
// lanes divided by the count (fp32_div_count, AVGPOOL) or, for CONV and DWCONV (add_bias_i),
// plus the bias, then clamped to [FP_MIN, FP_MAX], packed as binary32 or rounded to binary16.
// A float CONV entry holds Vec channels, up to 4 words (words_i); the others make one. One
// entry at a time: in_ready_o is low until its last word is taken.
module npu_pool
  import npu_pkg::*;
  import npu_core_pkg::*;
  import npu_fp_pkg::*;
(
  input  logic               clk_i,
  input  logic               rst_ni,
  input  logic               flush_i,

  input  logic               in_valid_i,
  output logic               in_ready_o,
  input  word_lanes_t        acc_i,
  input  logic [15:0]        count_i,
  input  logic               max_i,       // MAXPOOL (else AVGPOOL)
  input  logic               truncate_i,  // AVGPOOL: quotients toward zero (else rounded)
  input  logic [8:0]         act_min_i,   // signed; held until the word is taken
  input  logic [8:0]         act_max_i,
  input  logic [1:0]         format_i,    // held like the clamp
  input  logic [31:0]        fp_min_i,
  input  logic [31:0]        fp_max_i,
  input  logic               add_bias_i,  // float CONV / DWCONV: add bias_i (else pooling)
  input  word_lanes_t        bias_i,
  input  logic [2:0]         words_i,     // output words of the entry

  output logic               busy_o,
  output logic               out_valid_o,
  output logic               out_last_o,  // the word is its entry's last
  input  logic               out_ready_i,
  output logic [VecBits-1:0] data_o
);

  localparam int unsigned PoolQBits = 10;

  // A float lane: the bias, or the average's division by the count, then the clamp.
  function automatic fp32_t float_finish(fp32_t acc, fp32_t bias);
    fp32_t v;
    v = add_bias_i ? fp32_add(acc, bias) : max_i ? acc : fp32_div_count(acc, count_i);
    return fp32_clamp(v, fp_min_i, fp_max_i);
  endfunction

  logic       out_valid_q, out_valid_d;
  logic [2:0] part_q, part_d, words_q;  // the word of the entry going out, of words_q
  logic       div_q, div_d;        // dividing
  logic [3:0] bit_q, bit_d;        // the quotient bit of this cycle
  logic       take;

  assign in_ready_o = !div_q && !out_valid_q;
  assign take       = in_valid_i && in_ready_o;
  assign busy_o     = div_q || out_valid_q;

  always_comb begin
    out_valid_d = out_valid_q;
    div_d       = div_q;
    bit_d       = bit_q;
    part_d      = part_q;
    if (out_valid_q && out_ready_i) begin
      part_d = part_q + 1;
      if (part_q + 1 == words_q) begin
        out_valid_d = 1'b0;
      end
    end
    if (take) begin
      part_d = '0;
    end
    if (take) begin
      if (max_i || format_i != 2'(FmtInt8)) begin
        out_valid_d = 1'b1;
      end else begin
        div_d = 1'b1;
        bit_d = 4'(PoolQBits - 1);
      end
    end else if (div_q) begin
      bit_d = bit_q - 1;
      if (bit_q == '0) begin
        div_d       = 1'b0;
        out_valid_d = 1'b1;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      out_valid_q <= 1'b0;
      div_q       <= 1'b0;
      bit_q       <= '0;
      part_q      <= '0;
    end else if (flush_i) begin
      out_valid_q <= 1'b0;
      div_q       <= 1'b0;
    end else begin
      out_valid_q <= out_valid_d;
      div_q       <= div_d;
      bit_q       <= bit_d;
      part_q      <= part_d;
    end
  end

  always_ff @(posedge clk_i) begin
    if (take) begin
      words_q <= format_i == 2'(FmtInt8) ? 3'd1 : words_i;
    end
  end

  // ------------------------------------------------------------------------------------------
  // Datapath: magnitudes (plus half the divisor, unless truncating), signs, quotients, the word.
  logic [31:0]          num_q [Vec];
  logic [31:0]          num_d [Vec];
  logic [PoolQBits-1:0] quo_q [Vec];
  logic [PoolQBits-1:0] quo_d [Vec];
  logic [Vec-1:0]       neg_q, neg_d;
  logic [15:0]          den_q, den_d;
  logic [Vec*32-1:0]    word_q, word_d;  // the entry's words (int8: the first)
  logic                 data_en;

  assign data_en = take || div_q;

  // Only computed when the registers load.
  always_comb begin
    logic [31:0] magnitude;
    logic [47:0] step;
    magnitude = '0;
    step      = '0;
    den_d  = den_q;
    neg_d  = neg_q;
    word_d = word_q;
    for (int unsigned l = 0; l < Vec; l++) begin
      num_d[l] = '0;
      quo_d[l] = '0;
    end
    if (take && format_i != 2'(FmtInt8)) begin
      // Lanes in use: Vec channels, or a pooled word's elements.
      word_d = '0;
      for (int unsigned l = 0; l < Vec; l++) begin
        if (format_i == 2'(FmtFp16) && (add_bias_i || l < Vec / 2)) begin
          word_d[l*16 +: 16] = fp32_to_fp16(float_finish(acc_i[l], bias_i[l]));
        end else if (add_bias_i || l < Vec / 4) begin
          word_d[l*32 +: 32] = float_finish(acc_i[l], bias_i[l]);
        end
      end
    end else if (take) begin
      den_d = count_i;
      for (int unsigned l = 0; l < Vec; l++) begin
        magnitude            = acc_i[l][31] ? 32'(-acc_i[l]) : acc_i[l];
        num_d[l]             = magnitude + (truncate_i ? '0 : 32'(count_i[15:1]));
        neg_d[l]             = acc_i[l][31];
        word_d[l*8 +: 8]     = clamp_byte(acc_i[l], act_min_i, act_max_i);
      end
    end else if (div_q) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        step     = 48'(den_q) << bit_q;
        num_d[l] = num_q[l];
        quo_d[l] = quo_q[l];
        if (48'(num_q[l]) >= step) begin
          num_d[l]         = 32'(48'(num_q[l]) - step);
          quo_d[l][bit_q]  = 1'b1;
        end
        if (bit_q == '0) begin
          word_d[l*8 +: 8] = clamp_byte(neg_q[l] ? 32'(-32'(quo_d[l])) : 32'(quo_d[l]),
                                        act_min_i, act_max_i);
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (data_en) begin
      num_q  <= num_d;
      quo_q  <= quo_d;
      neg_q  <= neg_d;
      den_q  <= den_d;
      word_q <= word_d;
    end
  end

  assign out_valid_o = out_valid_q;
  assign out_last_o  = part_q + 1 == words_q;
  assign data_o      = word_q[32'(part_q) * VecBits +: VecBits];

endmodule
