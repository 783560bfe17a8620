// Weight-stationary systolic array: Rows x Cols processing elements with int32 accumulation.
//
// Each cycle one input vector (Rows signed 9-bit values, zero points already subtracted) enters
// and one output vector (Cols int32 sums) leaves Rows + Cols cycles later:
//   psum_o[j] = sum_i act_i[i] * w[buffer][i][j]
// where buffer is the tag_i that entered with the vector. The input skew and output deskew
// registers are inside, so the ports see whole vectors.
//
// Every PE holds two weights (a double buffer) and the activation's tag picks one, so the next
// block of weights loads while the current one is used and the switch costs no cycle. Row r of
// buffer b is written by wload_*: a write lands in all Cols PEs of the row at once. Writing row r
// of buffer b is safe once the last vector tagged b has entered row r at least Cols cycles
// earlier (it has left the row), and the write must come before the first vector tagged b that
// needs the new weights reaches row r; npu_compute schedules loads by that rule.
//
// Depthwise mode (dw_mode_i): every PE takes its own operand, dw_act_i[r][c], with the tag of
// its row, dw_tag_i[r]; there is no column skew, so row r works on the vector that row 0 worked
// on r cycles earlier and the columns' sums leave the bottom row together, Rows + 1 cycles
// after row 0 saw the vector (psum_o is then not deskewed). The mode changes only while the
// array is empty.
//
// Float mode (fp_mode_i): the same dataflow on binary32 values (rtl/npu_fp_pkg.sv) in registers
// of their own, fed by fp_act_i and fp_wload_data_i instead of act_i and wload_data_i. Each PE
// computes psum_out = fp32_add(psum_in, fp32_mul(act, w)), two roundings, no fused multiply-add.
// Row 0's psum_in is -0, so row 0 passes its product unchanged, and column j leaves as
//   (...((act_0 * w_0j) + act_1 * w_1j) + ...) + act_{Rows-1} * w_{Rows-1}j
// rounded after every operation, in row order. With fp_diag_i (a float DWCONV's diagonal blocks)
// PE (i, j) adds its product only on the diagonal, i == j; the others pass the sum on, so column
// j leaves as -0 + act_j * w_jj and an infinite input stays in its own channel (0 x inf would be
// NaN in the others). A PE computes only while a vector (valid_i) passes it: an idle float PE
// costs the simulation nothing, and its sum is not used. Weight writes with wload_fp_i go to the
// float weights (a float block may load while integer vectors are still in the array).
//
// Both modes (a float TAPS DWCONV): PE (r, c) takes fp_dw_act_i[r][c] and the float weight its
// row's tag picks, and adds the product to the sum from above, as in float mode; rows without a
// kernel tap (dw_row_on_i off) pass the sum on unchanged, so column c leaves as
//   (...((-0 + act_0c * w_0c) + act_1c * w_1c) + ...) + act_{T-1}c * w_{T-1}c
// over the T taps in row order. The modes change only while the array is empty.
//
// The TAPS operands are grids of the package's shape (npu_core_pkg), which Rows and Cols must
// match: Verilator shares a port's variable with the connected one only when both have the
// same declared type, and would otherwise copy the grids every cycle.
module npu_array
  import npu_pkg::*;
  import npu_core_pkg::*;
  import npu_fp_pkg::*;
#(
  parameter int unsigned Rows = 16,
  parameter int unsigned Cols = 16
) (
  input  logic                         clk_i,
  input  logic                         rst_ni,

  input  logic [Rows-1:0][8:0]         act_i,
  input  logic                         tag_i,
  input  logic                         valid_i,  // a vector enters (float mode: PEs compute)

  input  logic                         wload_valid_i,
  input  logic                         wload_fp_i,
  input  logic                         wload_buf_i,
  input  logic [$clog2(Rows)-1:0]      wload_row_i,
  input  logic [Cols-1:0][8:0]         wload_data_i,

  input  logic                         dw_mode_i,
  input  act_grid_t                    dw_act_i,
  input  row_bits_t                    dw_tag_i,
  input  row_bits_t                    dw_row_on_i,
  input  word_grid_t                   fp_dw_act_i,

  input  logic                         fp_mode_i,
  input  logic                         fp_diag_i,
  input  fp32_t                        fp_act_i [Rows],
  input  fp32_t                        fp_wload_data_i [Cols],

  output logic [Cols-1:0][31:0]        psum_o
);

  // Unpacked arrays throughout: Verilator then indexes plain integers instead of extracting
  // fields from one wide vector, which is what makes the array fast to simulate. Datapath
  // registers need no reset: the control logic tracks which vectors are valid.

  // Input skew: row i sees the vector i cycles late (skew_q[i][d] is row i delayed d + 1).
  logic signed [8:0] skew_act_q [Rows][Rows];
  logic              skew_tag_q [Rows][Rows];
  logic signed [8:0] act_row [Rows];
  logic              tag_row [Rows];

  always_ff @(posedge clk_i) begin
    for (int i = 1; i < Rows; i++) begin
      skew_act_q[i][0] <= act_i[i];
      skew_tag_q[i][0] <= tag_i;
      for (int d = 1; d < i; d++) begin
        skew_act_q[i][d] <= skew_act_q[i][d-1];
        skew_tag_q[i][d] <= skew_tag_q[i][d-1];
      end
    end
  end

  always_comb begin
    act_row[0] = act_i[0];
    tag_row[0] = tag_i;
    for (int i = 1; i < Rows; i++) begin
      act_row[i] = skew_act_q[i][i-1];
      tag_row[i] = skew_tag_q[i][i-1];
    end
  end

  // The float operands' skew, and their vectors' valid bits, moving in float mode only.
  fp32_t fp_skew_act_q [Rows][Rows];
  logic  fp_skew_valid_q [Rows][Rows];
  fp32_t fp_act_row [Rows];
  logic  fp_valid_row [Rows];

  always_ff @(posedge clk_i) begin
    if (fp_mode_i) begin
      for (int i = 1; i < Rows; i++) begin
        fp_skew_act_q[i][0]   <= fp_act_i[i];
        fp_skew_valid_q[i][0] <= valid_i;
        for (int d = 1; d < i; d++) begin
          fp_skew_act_q[i][d]   <= fp_skew_act_q[i][d-1];
          fp_skew_valid_q[i][d] <= fp_skew_valid_q[i][d-1];
        end
      end
    end
  end

  always_comb begin
    fp_act_row[0]   = fp_act_i[0];
    fp_valid_row[0] = valid_i;
    for (int i = 1; i < Rows; i++) begin
      fp_act_row[i]   = fp_skew_act_q[i][i-1];
      fp_valid_row[i] = fp_skew_valid_q[i][i-1];
    end
  end

  // The PE grid: activations and tags move right, partial sums move down.
  logic signed [8:0]  act_q  [Rows][Cols];
  logic               tag_q  [Rows][Cols];
  logic signed [31:0] psum_q [Rows][Cols];
  logic signed [8:0]  w0_q   [Rows][Cols];
  logic signed [8:0]  w1_q   [Rows][Cols];
  fp32_t              fp_act_q [Rows][Cols];
  logic               fp_valid_q [Rows][Cols];
  fp32_t              fp_w0_q  [Rows][Cols];
  fp32_t              fp_w1_q  [Rows][Cols];

  always_ff @(posedge clk_i) begin
    for (int i = 0; i < Rows; i++) begin
      act_q[i][0] <= act_row[i];
      tag_q[i][0] <= tag_row[i];
      for (int j = 1; j < Cols; j++) begin
        act_q[i][j] <= act_q[i][j-1];
        tag_q[i][j] <= tag_q[i][j-1];
      end
    end
    // One branch per mode, outside the PE loops. (Float TAPS, both modes, computes below; the
    // float valid bits still move here.)
    if (fp_mode_i) begin
      // The sums are computed first and registered after: Verilator unrolls a loop of
      // nonblocking array writes only when its body is small.
      fp32_t fp_psum [Rows][Cols];
      for (int j = 0; j < Cols; j++) begin
        for (int i = 0; i < Rows; i++) begin
          fp32_t w;
          w = tag_q[i][j] ? fp_w1_q[i][j] : fp_w0_q[i][j];
          fp_psum[i][j] = i == 0 ? Fp32NegZero : psum_q[i == 0 ? 0 : i-1][j];
          if (fp_valid_q[i][j] && !dw_mode_i && (!fp_diag_i || i == j)) begin
            fp_psum[i][j] = fp32_add(fp_psum[i][j], fp32_mul(fp_act_q[i][j], w));
          end
        end
      end
      for (int i = 0; i < Rows; i++) begin
        for (int j = 0; j < Cols; j++) begin
          psum_q[i][j] <= fp_psum[i][j];
        end
        fp_act_q[i][0]   <= fp_act_row[i];
        fp_valid_q[i][0] <= fp_valid_row[i];
        for (int j = 1; j < Cols; j++) begin
          fp_act_q[i][j]   <= fp_act_q[i][j-1];
          fp_valid_q[i][j] <= fp_valid_q[i][j-1];
        end
      end
    end else if (dw_mode_i) begin
      for (int j = 0; j < Cols; j++) begin
        for (int i = 0; i < Rows; i++) begin
          logic signed [8:0] w;
          w = dw_tag_i[i] ? w1_q[i][j] : w0_q[i][j];
          psum_q[i][j] <= (i == 0 ? 32'sd0 : psum_q[i == 0 ? 0 : i-1][j]) +
                          32'(dw_act_i[i][j]) * 32'(w);
        end
      end
    end else begin
      for (int j = 0; j < Cols; j++) begin
        for (int i = 0; i < Rows; i++) begin
          logic signed [8:0] w;
          w = tag_q[i][j] ? w1_q[i][j] : w0_q[i][j];
          psum_q[i][j] <= (i == 0 ? 32'sd0 : psum_q[i == 0 ? 0 : i-1][j]) +
                          32'(act_q[i][j]) * 32'(w);
        end
      end
    end
  end

  // Float TAPS (both modes): sums of their own, so the block above stays as it is for the other
  // modes. Row i holds the vector row 0 held i cycles earlier, valid if fp_valid_q[i][0] is.
  fp32_t fp_dw_psum_q [Rows][Cols];

  always_ff @(posedge clk_i) begin
    if (fp_mode_i && dw_mode_i) begin
      fp32_t fp_dw_psum [Rows][Cols];
      for (int j = 0; j < Cols; j++) begin
        for (int i = 0; i < Rows; i++) begin
          fp_dw_psum[i][j] = i == 0 ? Fp32NegZero : fp_dw_psum_q[i == 0 ? 0 : i-1][j];
          if (fp_valid_q[i][0] && dw_row_on_i[i]) begin
            fp_dw_psum[i][j] = fp32_add(fp_dw_psum[i][j],
                                        fp32_mul(fp_dw_act_i[i][j],
                                                 dw_tag_i[i] ? fp_w1_q[i][j] : fp_w0_q[i][j]));
          end
        end
      end
      fp_dw_psum_q <= fp_dw_psum;
    end
  end

  // Weights: software always loads a block before using it.
  always_ff @(posedge clk_i) begin
    if (wload_valid_i && wload_fp_i) begin
      for (int j = 0; j < Cols; j++) begin
        if (wload_buf_i) begin
          fp_w1_q[wload_row_i][j] <= fp_wload_data_i[j];
        end else begin
          fp_w0_q[wload_row_i][j] <= fp_wload_data_i[j];
        end
      end
    end else if (wload_valid_i) begin
      for (int j = 0; j < Cols; j++) begin
        if (wload_buf_i) begin
          w1_q[wload_row_i][j] <= wload_data_i[j];
        end else begin
          w0_q[wload_row_i][j] <= wload_data_i[j];
        end
      end
    end
  end

  // Output deskew: column j leaves the grid Cols - 1 - j cycles before column Cols - 1.
  logic [31:0] deskew_q [Cols][Cols];

  always_ff @(posedge clk_i) begin
    for (int j = 0; j < Cols - 1; j++) begin
      deskew_q[j][0] <= psum_q[Rows-1][j];
      for (int d = 1; d < Cols - 1 - j; d++) begin
        deskew_q[j][d] <= deskew_q[j][d-1];
      end
    end
  end

  always_comb begin
    for (int j = 0; j < Cols - 1; j++) begin
      psum_o[j] = !dw_mode_i ? deskew_q[j][Cols-2-j]
                : fp_mode_i ? fp_dw_psum_q[Rows-1][j] : psum_q[Rows-1][j];
    end
    psum_o[Cols-1] = dw_mode_i && fp_mode_i ? fp_dw_psum_q[Rows-1][Cols-1]
                                            : psum_q[Rows-1][Cols-1];
  end

  logic unused_rst;
  assign unused_rst = rst_ni;

endmodule
