// Walks the rows of a 4-D strided tensor (npu_pkg::tensor_t): row_addr_o is the byte address of
// the current row; next_i moves to the following row (dimension 1 fastest). start_i loads a
// tensor and points at its first row.
module npu_tensor_walk
  import npu_pkg::*;
(
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        start_i,
  input  tensor_t     tensor_i,
  input  logic        next_i,
  output logic [31:0] row_addr_o,
  output logic        last_row_o
);

  tensor_t     t_q;
  logic [15:0] i1_q, i2_q, i3_q;
  logic [31:0] p1_q, p2_q, p3_q;  // row address, start of the dim-2 run, start of the dim-3 run

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      t_q  <= '0;
      i1_q <= '0;
      i2_q <= '0;
      i3_q <= '0;
      p1_q <= '0;
      p2_q <= '0;
      p3_q <= '0;
    end else if (start_i) begin
      t_q  <= tensor_i;
      i1_q <= '0;
      i2_q <= '0;
      i3_q <= '0;
      p1_q <= tensor_i.addr;
      p2_q <= tensor_i.addr;
      p3_q <= tensor_i.addr;
    end else if (next_i) begin
      if (i1_q + 16'd1 < t_q.count1) begin
        i1_q <= i1_q + 16'd1;
        p1_q <= p1_q + t_q.stride1;
      end else begin
        i1_q <= '0;
        if (i2_q + 16'd1 < t_q.count2) begin
          i2_q <= i2_q + 16'd1;
          p2_q <= p2_q + t_q.stride2;
          p1_q <= p2_q + t_q.stride2;
        end else begin
          i2_q <= '0;
          i3_q <= i3_q + 16'd1;
          p3_q <= p3_q + t_q.stride3;
          p2_q <= p3_q + t_q.stride3;
          p1_q <= p3_q + t_q.stride3;
        end
      end
    end
  end

  assign row_addr_o = p1_q;
  // ADDR and INNER are used when the walk starts.
  logic unused_fields;
  assign unused_fields = ^{t_q.addr, t_q.inner};

  assign last_row_o = (i1_q + 16'd1 >= t_q.count1) && (i2_q + 16'd1 >= t_q.count2) &&
                      (i3_q + 16'd1 >= t_q.count3);

endmodule
