// Block-test harness of npu_fp_pkg: Lanes independent operand sets, every unit applied to each,
// all combinational, so one eval() checks Lanes operand sets.
module npu_fp_harness #(
  parameter int unsigned Lanes = 64
) (
  input  logic [31:0] a_i       [Lanes],
  input  logic [31:0] b_i       [Lanes],
  input  logic [31:0] c_i       [Lanes],
  output logic [31:0] mul_o     [Lanes],  // a * b
  output logic [31:0] add_o     [Lanes],  // a + b
  output logic [31:0] max_o     [Lanes],  // max(a, b)
  output logic [31:0] min_o     [Lanes],  // min(a, b)
  output logic [31:0] clamp_o   [Lanes],  // a clamped to [b, c]
  output logic [15:0] to_fp16_o [Lanes],  // a as binary16
  output logic [31:0] to_fp32_o [Lanes],  // a[15:0] (binary16) as binary32
  output logic [31:0] div_o     [Lanes],  // a / b[15:0] (an integer count)
  output logic [31:0] quot_o    [Lanes],  // a / b
  output logic [31:0] sqrt_o    [Lanes],  // sqrt(a)
  output logic [31:0] exp_o     [Lanes],  // e^a
  output logic [31:0] log_o     [Lanes],  // ln(a)
  output logic [31:0] trunc_o   [Lanes]   // trunc(a)
);
  import npu_fp_pkg::*;

  always_comb begin
    for (int i = 0; i < Lanes; i++) begin
      mul_o[i]     = fp32_mul(a_i[i], b_i[i]);
      add_o[i]     = fp32_add(a_i[i], b_i[i]);
      max_o[i]     = fp32_max(a_i[i], b_i[i]);
      min_o[i]     = fp32_min(a_i[i], b_i[i]);
      clamp_o[i]   = fp32_clamp(a_i[i], b_i[i], c_i[i]);
      to_fp16_o[i] = fp32_to_fp16(a_i[i]);
      to_fp32_o[i] = fp16_to_fp32(a_i[i][15:0]);
      div_o[i]     = fp32_div_count(a_i[i], b_i[i][15:0]);
      quot_o[i]    = fp32_div(a_i[i], b_i[i]);
      sqrt_o[i]    = fp32_sqrt(a_i[i]);
      exp_o[i]     = fp32_exp(a_i[i]);
      log_o[i]     = fp32_log(a_i[i]);
      trunc_o[i]   = fp32_trunc(a_i[i]);
    end
  end

endmodule
