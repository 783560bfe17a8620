// One side of the load DMA's planar rows (npu_dma_load, A_PLANAR): element p of the row at
// row_i lies at row_i + p x stride_i. Each plane keeps the beat it took last; need_o marks the
// planes (below planes_i) whose element lies in another beat, and step_i keeps the row's beats.
// The request and response sides each have one, so both make the same decisions.
module npu_dma_planes
  import npu_pkg::*;
  import npu_core_pkg::*;
#(
  parameter int unsigned Planes = 4
) (
  input  logic                                clk_i,
  input  logic                                rst_ni,
  input  logic                                clear_i,   // a new load (or a flush)
  input  logic [2:0]                          planes_i,
  input  logic [31:0]                         stride_i,
  input  logic [31:0]                         row_i,
  input  logic                                step_i,    // the row is done: keep its beats
  output logic [Planes-1:0]                   need_o,
  output logic [Planes-1:0][31-VecIdxW:0]     beat_o,    // per plane, the beat of its element
  output logic [Planes-1:0][VecIdxW-1:0]      offset_o   // and the element's byte in it
);

  logic [Planes-1:0][31-VecIdxW:0] kept_q;
  logic [Planes-1:0]               kept_valid_q;

  always_comb begin
    logic [31:0] addr;
    for (int unsigned p = 0; p < Planes; p++) begin
      addr        = row_i + 32'(p) * stride_i;
      beat_o[p]   = addr[31:VecIdxW];
      offset_o[p] = addr[VecIdxW-1:0];
      need_o[p]   = 32'(p) < 32'(planes_i) && !(kept_valid_q[p] && beat_o[p] == kept_q[p]);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      kept_valid_q <= '0;
    end else if (clear_i) begin
      kept_valid_q <= '0;
    end else if (step_i) begin
      kept_valid_q <= kept_valid_q | need_o;
    end
  end

  always_ff @(posedge clk_i) begin
    for (int unsigned p = 0; p < Planes; p++) begin
      if (step_i && need_o[p]) begin
        kept_q[p] <= beat_o[p];
      end
    end
  end

endmodule
