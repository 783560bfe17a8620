// RESIDUAL epilogue of the drain: adds B to a convolution block's requantized words as ADD does
// (DescFlag RESIDUAL), so a residual connection costs no pass of its own.
//
// Word k of the block (output pixel k) reads B's word at res.addr + k * res.wpr on the
// scratchpad's own port, then each lane is (a - MID_ZERO_POINT) and (b - RES_ZERO_POINT) shifted
// left by LEFT_SHIFT and scaled by A's and B's multipliers, summed, and requantized by the
// output's multiplier with OUT_ZERO_POINT and the clamp: npu_eltwise's ADD and npu_requant,
// bit for bit. Three stages: E1 holds the word while B's read is in flight (the read port keeps
// its data until the next read, which only a moving E1 issues), E2 the lane sums, E3 the
// output word. Each stage computes only when a word moves into it.
module npu_residual
  import npu_pkg::*;
  import npu_core_pkg::*;
(
  input  logic               clk_i,
  input  logic               rst_ni,
  input  logic               flush_i,

  input  residual_t          res_i,        // the draining block's (stable while it drains)
  input  logic               start_i,      // a block starts draining: its word 0 comes next

  input  logic               in_valid_i,
  output logic               in_ready_o,
  input  logic [VecBits-1:0] in_data_i,

  output logic               spad_re_o,
  output logic [SpadAw-1:0]  spad_raddr_o,
  input  logic [VecBits-1:0] spad_rdata_i,

  output logic               out_valid_o,
  input  logic               out_ready_i,
  output logic [VecBits-1:0] out_data_o,
  output logic               busy_o
);

  logic                 e1_valid_q, e2_valid_q, e3_valid_q, e1_move, e2_move, e3_move, take;
  logic [VecBits-1:0]   e1_a_q, e3_word_q;
  logic [Vec-1:0][31:0] e2_sum_q;
  logic [15:0]          k_q;  // the next word's pixel

  assign e3_move    = e3_valid_q && out_ready_i;
  assign e2_move    = e2_valid_q && (!e3_valid_q || e3_move);
  assign e1_move    = e1_valid_q && (!e2_valid_q || e2_move);
  assign in_ready_o = !e1_valid_q || e1_move;
  assign take       = in_valid_i && in_ready_o;

  assign spad_re_o    = take;
  assign spad_raddr_o = res_i.addr + SpadAw'(32'(k_q) * 32'(res_i.wpr));

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      e1_valid_q <= 1'b0;
      e2_valid_q <= 1'b0;
      e3_valid_q <= 1'b0;
      k_q        <= '0;
    end else if (flush_i) begin
      e1_valid_q <= 1'b0;
      e2_valid_q <= 1'b0;
      e3_valid_q <= 1'b0;
      k_q        <= '0;
    end else begin
      if (take) begin
        e1_valid_q <= 1'b1;
      end else if (e1_move) begin
        e1_valid_q <= 1'b0;
      end
      if (e1_move) begin
        e2_valid_q <= 1'b1;
      end else if (e2_move) begin
        e2_valid_q <= 1'b0;
      end
      if (e2_move) begin
        e3_valid_q <= 1'b1;
      end else if (e3_move) begin
        e3_valid_q <= 1'b0;
      end
      if (start_i) begin
        k_q <= '0;
      end else if (take) begin
        k_q <= k_q + 16'd1;
      end
    end
  end

  // Datapath: ADD's lane sums (npu_eltwise; both inputs have OUT's type), then the output
  // stage (npu_requant: bias 0).
  always_ff @(posedge clk_i) begin
    if (take) begin
      e1_a_q <= in_data_i;
    end
    if (e1_move) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        logic signed [31:0] a, b;
        a           = 32'(widen(e1_a_q[l*8 +: 8], res_i.is_signed)) -
                      32'(signed'(res_i.mid_zero_point));
        b           = 32'(widen(spad_rdata_i[l*8 +: 8], res_i.is_signed)) -
                      32'(signed'(res_i.zero_point));
        e2_sum_q[l] <= mul_by_quantized_multiplier(32'(a) << res_i.left_shift,
                                                   res_i.a_multiplier, res_i.a_shift) +
                       mul_by_quantized_multiplier(32'(b) << res_i.left_shift,
                                                   res_i.b_multiplier, res_i.b_shift);
      end
    end
    if (e2_move) begin
      for (int unsigned l = 0; l < Vec; l++) begin
        e3_word_q[l*8 +: 8] <= clamp_byte(
            mul_by_quantized_multiplier(e2_sum_q[l], res_i.out_multiplier, res_i.out_shift) +
                32'(signed'(res_i.out_zero_point)),
            res_i.act_min, res_i.act_max);
      end
    end
  end

  assign out_valid_o = e3_valid_q;
  assign out_data_o  = e3_word_q;
  assign busy_o      = e1_valid_q || e2_valid_q || e3_valid_q;

  // The drain routes the block here by res_i.on.
  logic unused_signals;
  assign unused_signals = res_i.on;

endmodule
