// Synchronous FIFO with valid/ready on both sides and a fill count. flush_i empties it.
//
// Every user in the NPU pushes only when the FIFO has room (read credits, result credits) and
// pops only when it holds a word; the assertions check both, since a push into a full FIFO would
// lose a word and a pop of an empty one would take a word that never arrived (for the DMA's
// routing FIFO: a read response without an outstanding read).
module npu_fifo #(
  parameter int unsigned Width = 8,
  parameter int unsigned Depth = 4,
  localparam int unsigned CountW = $clog2(Depth + 1)
) (
  input  logic              clk_i,
  input  logic              rst_ni,
  input  logic              flush_i,

  input  logic              in_valid_i,
  output logic              in_ready_o,
  input  logic [Width-1:0]  in_data_i,

  output logic              out_valid_o,
  input  logic              out_ready_i,
  output logic [Width-1:0]  out_data_o,

  output logic [CountW-1:0] count_o
);

  localparam int unsigned PtrW = Depth > 1 ? $clog2(Depth) : 1;

  logic [Width-1:0]  mem_q [Depth];
  logic [PtrW-1:0]   rd_ptr_q, wr_ptr_q;
  logic [CountW-1:0] count_q;

  logic push, pop;
  assign in_ready_o  = count_q != CountW'(Depth);
  assign out_valid_o = count_q != '0;
  assign out_data_o  = mem_q[rd_ptr_q];
  assign push        = in_valid_i & in_ready_o;
  assign pop         = out_valid_o & out_ready_i;
  assign count_o     = count_q;

  function automatic logic [PtrW-1:0] next_ptr(logic [PtrW-1:0] ptr);
    return ptr == PtrW'(Depth - 1) ? '0 : ptr + 1'b1;
  endfunction

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_ptr_q <= '0;
      wr_ptr_q <= '0;
      count_q  <= '0;
    end else if (flush_i) begin
      rd_ptr_q <= '0;
      wr_ptr_q <= '0;
      count_q  <= '0;
    end else begin
      if (push) begin
        wr_ptr_q <= next_ptr(wr_ptr_q);
      end
      if (pop) begin
        rd_ptr_q <= next_ptr(rd_ptr_q);
      end
      count_q <= count_q + CountW'(push) - CountW'(pop);
    end
  end

  always_ff @(posedge clk_i) begin
    if (push) begin
      mem_q[wr_ptr_q] <= in_data_i;
    end
  end

`ifndef SYNTHESIS
  a_no_overflow: assert property (@(posedge clk_i) disable iff (!rst_ni)
      in_valid_i && !flush_i |-> in_ready_o)
    else $error("push into a full FIFO (overflow): the word is lost");
  a_no_underflow: assert property (@(posedge clk_i) disable iff (!rst_ni)
      out_ready_i && !flush_i |-> out_valid_o)
    else $error("pop from an empty FIFO (underflow)");
  a_count_in_range: assert property (@(posedge clk_i) disable iff (!rst_ni)
      count_q <= CountW'(Depth))
    else $error("FIFO fill count above its depth");
`endif

endmodule
