// Weight-stationary array: Rows x Cols processing elements with int32 accumulation.
//
// Each cycle one input vector (Rows signed 9-bit values, zero points already subtracted) enters
// and one output vector (Cols int32 sums) leaves Rows + Cols cycles later:
//   psum_o[j] = sum_i act_i[i] * w[buffer][i][j]
// where buffer is the tag_i that entered with the vector.
//
// The rows form a pipeline: row r works on a vector r cycles after row 0 did, all Cols PEs of
// the row at once (the row's activation is broadcast to its columns), and adds its products to
// the sums that row r - 1 passed down; the finished sums then wait Cols - 1 cycles before they
// leave, all columns together. That is the port timing of a systolic array with skewed inputs
// and deskewed outputs, which the rest of the NPU was built around. A vector's operands wait in
// a slot of their own (a ring of Slots >= Rows + Cols, used in turn) instead of shifting
// through the rows: a row finds its vector's slot by the row's distance from row 0.
//
// Every PE holds two weights (a double buffer) and the vector's tag picks one, so the next block
// of weights loads while the current one is used and the switch costs no cycle. Row r of buffer
// b is written by wload_*: a write lands in all Cols PEs of the row at once. Writing row r of
// buffer b is safe once the last vector tagged b has been in row r at least Cols cycles earlier,
// and the write must come before the first vector tagged b that needs the new weights reaches
// row r; npu_compute schedules loads by that rule (a systolic array's column Cols - 1 would
// still read the row's weights Cols - 1 cycles after column 0).
//
// A PE computes only while a vector (valid_i) passes it: an idle PE costs the simulation
// nothing, and the sums of a slot without a vector are not used.
//
// Depthwise mode (dw_mode_i): every PE takes its own operand, dw_act_i[r][c], with the tag of
// its row, dw_tag_i[r]. A vector's valid_i enters as in the other modes, and row r takes its
// operands r + 1 cycles later (row 0 works on a vector the cycle after it enters); the sums
// leave with row Rows - 1's operands' edge (no deskew wait). The mode changes only while the
// array is empty.
//
// Float mode (fp_mode_i): the same dataflow on binary32 values (rtl/npu_fp_pkg.sv), fed by
// fp_act_i and fp_wload_data_i instead of act_i and wload_data_i. Each PE computes
// psum_out = fp32_add(psum_in, fp32_mul(act, w)), two roundings, no fused multiply-add. Row 0's
// psum_in is -0, so row 0 passes its product unchanged, and column j leaves as
//   (...((act_0 * w_0j) + act_1 * w_1j) + ...) + act_{Rows-1} * w_{Rows-1}j
// rounded after every operation, in row order. With fp_diag_i (a float DWCONV's diagonal blocks)
// PE (i, j) adds its product only on the diagonal, i == j; the others pass the sum on, so column
// j leaves as -0 + act_j * w_jj and an infinite input stays in its own channel (0 x inf would be
// NaN in the others). Weight writes with wload_fp_i go to the float weights (a float block may
// load while integer vectors are still in the array).
//
// Both modes (a float TAPS DWCONV): PE (r, c) takes fp_dw_act_i[r][c] and the float weight its
// row's tag picks, and adds the product to the sum from above, as in float mode; rows without a
// kernel tap (dw_row_on_i off) pass the sum on unchanged, so column c leaves as
//   (...((-0 + act_0c * w_0c) + act_1c * w_1c) + ...) + act_{T-1}c * w_{T-1}c
// over the T taps in row order.
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
  input  logic                         valid_i,  // a vector enters

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

  // A ring of Slots entries carries each vector's inputs from the edge it enters to the edges
  // the rows work on it, and each vector's sums from the edge row Rows - 1 finishes them to the
  // edge they leave.
  localparam int unsigned Slots = 2 ** $clog2(Rows + Cols);
  typedef logic [$clog2(Slots)-1:0] slot_t;

  // The slot of the vector row 0 works on at the next edge; a vector entering now takes the one
  // after it. Datapath registers need no reset: the valid bits say which slots hold a vector.
  slot_t row0_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      row0_q <= '0;
    end else begin
      row0_q <= row0_q + slot_t'(1);
    end
  end

  logic [Rows-1:0][8:0] act_q    [Slots];
  fp32_t                fp_act_q [Slots][Rows];
  logic                 tag_q    [Slots];
  logic                 valid_q  [Slots];

  always_ff @(posedge clk_i) begin
    act_q[row0_q + slot_t'(1)]    <= act_i;
    fp_act_q[row0_q + slot_t'(1)] <= fp_act_i;
    tag_q[row0_q + slot_t'(1)]    <= tag_i;
    valid_q[row0_q + slot_t'(1)]  <= valid_i;
  end

  logic signed [8:0] w0_q    [Rows][Cols];
  logic signed [8:0] w1_q    [Rows][Cols];
  fp32_t             fp_w0_q [Rows][Cols];
  fp32_t             fp_w1_q [Rows][Cols];

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

  // psum_q[r]: the sums of the vector row r worked on at the last edge (int32 or binary32 bits),
  // which row r + 1 adds to at the next; done_q: finished sums waiting to leave. The rows' new
  // sums are computed first and registered together after: Verilator unrolls a loop of
  // nonblocking array writes only when its body is small. One branch per mode, outside the PE
  // loops.
  logic [31:0] psum_q [Rows][Cols];
  logic [31:0] done_q [Slots][Cols];

  always_ff @(posedge clk_i) begin
    logic [31:0] sums [Rows][Cols];
    logic        any_row;  // a row worked on a vector: otherwise nothing is registered
    any_row = 1'b0;
    for (int r = 0; r < Rows; r++) begin
      slot_t s;
      s = row0_q - slot_t'(r);
      any_row |= valid_q[s];
      if (valid_q[s]) begin
        if (fp_mode_i && dw_mode_i) begin
          for (int c = 0; c < Cols; c++) begin
            fp32_t sum;
            sum = r == 0 ? Fp32NegZero : psum_q[r == 0 ? 0 : r-1][c];
            if (dw_row_on_i[r]) begin
              sum = fp32_add(sum, fp32_mul(fp_dw_act_i[r][c],
                                           dw_tag_i[r] ? fp_w1_q[r][c] : fp_w0_q[r][c]));
            end
            sums[r][c] = sum;
          end
        end else if (fp_mode_i) begin
          fp32_t a;
          logic  t;
          a = fp_act_q[s][r];
          t = tag_q[s];
          for (int c = 0; c < Cols; c++) begin
            fp32_t sum;
            sum = r == 0 ? Fp32NegZero : psum_q[r == 0 ? 0 : r-1][c];
            if (!fp_diag_i || r == c) begin
              sum = fp32_add(sum, fp32_mul(a, t ? fp_w1_q[r][c] : fp_w0_q[r][c]));
            end
            sums[r][c] = sum;
          end
        end else if (dw_mode_i) begin
          for (int c = 0; c < Cols; c++) begin
            sums[r][c] = (r == 0 ? 32'd0 : psum_q[r == 0 ? 0 : r-1][c]) +
                         32'(32'(dw_act_i[r][c]) *
                             (dw_tag_i[r] ? 32'(w1_q[r][c]) : 32'(w0_q[r][c])));
          end
        end else begin
          logic signed [31:0] a;
          logic               t;
          a = 32'(signed'(act_q[s][r]));
          t = tag_q[s];
          for (int c = 0; c < Cols; c++) begin
            sums[r][c] = (r == 0 ? 32'd0 : psum_q[r == 0 ? 0 : r-1][c]) +
                         32'(a * (t ? 32'(w1_q[r][c]) : 32'(w0_q[r][c])));
          end
        end
      end
    end
    // Sums of rows without a vector are never read: an idle array copies nothing.
    if (any_row) begin
      psum_q <= sums;
      done_q[row0_q] <= sums[Rows-1];
    end
  end

  // Sums leave Rows + Cols - 1 edges after row 0 worked on their vector: Cols - 1 edges after
  // row Rows - 1 finished them. In depthwise mode they leave at once, Rows - 1 edges after.
  always_comb begin
    for (int j = 0; j < Cols; j++) begin
      psum_o[j] = dw_mode_i ? psum_q[Rows-1][j] : done_q[row0_q - slot_t'(Cols)][j];
    end
  end

endmodule
