// DMA master port: round-robin arbitration of the NPU's memory clients onto one valid/ready
// request channel, the job's DMA window enforced on every beat, and in-order read responses
// routed back to the client that asked.
//
// Requests are beat-sized and beat-aligned (Vec bytes); writes carry byte strobes and get no
// response (the memory applies them in order with reads). A request outside
// [window_base_i, window_limit_i) is never issued: it raises fault_o and stays pending until the
// command processor flushes the clients. A request the memory does not take at once stays on the
// port, unchanged, until it does (valid/ready): the grant holds while the memory stalls.
module npu_mem_arb
  import npu_core_pkg::*;
#(
  parameter int unsigned MaxReads = 256
) (
  input  logic                               clk_i,
  input  logic                               rst_ni,
  input  logic                               flush_i,

  input  logic [NumClients-1:0]              req_valid_i,
  output logic [NumClients-1:0]              req_ready_o,
  input  logic [NumClients-1:0]              req_write_i,
  input  logic [NumClients-1:0][31:0]        req_addr_i,
  input  logic [NumClients-1:0][VecBits-1:0] req_wdata_i,
  input  logic [NumClients-1:0][Vec-1:0]     req_wstrb_i,

  output logic [NumClients-1:0]              rsp_valid_o,
  output logic [VecBits-1:0]                 rsp_data_o,

  input  logic [31:0]                        window_base_i,
  input  logic [31:0]                        window_limit_i,
  output logic                               fault_o,
  output logic [$clog2(NumClients)-1:0]      fault_client_o,
  output logic [31:0]                        fault_addr_o,

  output logic                               mem_req_valid_o,
  input  logic                               mem_req_ready_i,
  output logic                               mem_req_write_o,
  output logic [31:0]                        mem_req_addr_o,
  output logic [VecBits-1:0]                 mem_req_wdata_o,
  output logic [Vec-1:0]                     mem_req_wstrb_o,
  input  logic                               mem_rsp_valid_i,
  input  logic [VecBits-1:0]                 mem_rsp_data_i,

  output logic                               reads_pending_o,
  output logic                               rd_beat_o,
  output logic                               wr_beat_o
);

  localparam int unsigned ClientW = $clog2(NumClients);

  // Clients that may go: writes always, reads while a routing slot is free.
  logic                  route_ready;
  logic [NumClients-1:0] eligible;
  assign eligible = req_valid_i & (req_write_i | {NumClients{route_ready}});

  // Round robin starting at rr_q; while the memory stalls a request, its client keeps the grant.
  logic [ClientW-1:0] rr_q, rr_d, rr_grant, grant;
  logic               rr_any, any;
  logic               lock_q, lock_d;
  logic [ClientW-1:0] lock_client_q;

  always_comb begin
    rr_grant = rr_q;
    rr_any   = 1'b0;
    for (int unsigned k = 0; k < NumClients; k++) begin
      logic [ClientW-1:0] c;
      c = ClientW'((32'(rr_q) + k) % NumClients);
      if (!rr_any && eligible[c]) begin
        rr_grant = c;
        rr_any   = 1'b1;
      end
    end
  end

  assign grant = lock_q ? lock_client_q : rr_grant;
  assign any   = lock_q ? eligible[lock_client_q] : rr_any;

  // Window check on the chosen beat (16-byte granularity registers, beat-aligned addresses).
  logic [31:0] addr;
  logic [32:0] addr_end;
  logic        in_window;
  assign addr      = {req_addr_i[grant][31:VecIdxW], {VecIdxW{1'b0}}};
  assign addr_end  = {1'b0, addr} + 33'(Vec);
  assign in_window = (addr >= window_base_i) && (addr_end <= {1'b0, window_limit_i});

  assign mem_req_valid_o = any && in_window && !flush_i;
  assign mem_req_write_o = req_write_i[grant];
  assign mem_req_addr_o  = addr;
  assign mem_req_wdata_o = req_wdata_i[grant];
  assign mem_req_wstrb_o = req_wstrb_i[grant];

  logic accepted;
  assign accepted = mem_req_valid_o && mem_req_ready_i;

  always_comb begin
    req_ready_o = '0;
    req_ready_o[grant] = accepted;
  end

  assign fault_o        = any && !in_window;
  assign fault_client_o = grant;
  assign fault_addr_o   = addr;

  assign rr_d   = accepted ? ClientW'((32'(grant) + 1) % NumClients) : rr_q;
  assign lock_d = mem_req_valid_o && !mem_req_ready_i;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rr_q          <= '0;
      lock_q        <= 1'b0;
      lock_client_q <= '0;
    end else begin
      rr_q          <= rr_d;
      lock_q        <= lock_d;
      lock_client_q <= grant;
    end
  end

  // Which client each outstanding read belongs to, oldest first. Never flushed: responses of
  // aborted reads still arrive and are dropped by the flushed clients.
  logic [ClientW-1:0]           route_client;
  logic                         route_valid;
  logic [$clog2(MaxReads+1)-1:0] route_count;

  npu_fifo #(
    .Width(ClientW),
    .Depth(MaxReads)
  ) u_route (
    .clk_i,
    .rst_ni,
    .flush_i    (1'b0),
    .in_valid_i (accepted && !req_write_i[grant]),
    .in_ready_o (route_ready),
    .in_data_i  (grant),
    .out_valid_o(route_valid),
    .out_ready_i(mem_rsp_valid_i),
    .out_data_o (route_client),
    .count_o    (route_count)
  );

  always_comb begin
    rsp_valid_o = '0;
    rsp_valid_o[route_client] = mem_rsp_valid_i && route_valid && !flush_i;
  end
  assign rsp_data_o = mem_rsp_data_i;

  assign reads_pending_o = route_count != '0;
  assign rd_beat_o       = accepted && !req_write_i[grant];
  assign wr_beat_o       = accepted && req_write_i[grant];

`ifndef SYNTHESIS
  // Every client holds a request, unchanged, until the arbiter takes it; only a flush or a window
  // fault (the command processor's completion record outside the window) withdraws one. The
  // arbiter relies on it: it grants whatever is pending in that cycle.
  for (genvar c = 0; c < NumClients; c++) begin : gen_client_asserts
    a_client_req_stable: assert property (@(posedge clk_i) disable iff (!rst_ni)
        req_valid_i[c] && !req_ready_o[c] && !flush_i && !fault_o |=>
        flush_i || (req_valid_i[c] && $stable(req_write_i[c]) && $stable(req_addr_i[c]) &&
                    (!req_write_i[c] || ($stable(req_wdata_i[c]) && $stable(req_wstrb_i[c])))))
      else $error("memory client %0d changed or dropped a request before it was taken", c);
  end

  // The memory port: a request stays valid, unchanged, until the memory takes it (unless the
  // clients are flushed).
  a_mem_req_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
      mem_req_valid_o && !mem_req_ready_i |=> flush_i ||
      (mem_req_valid_o && $stable(mem_req_write_o) && $stable(mem_req_addr_o) &&
       (!mem_req_write_o || ($stable(mem_req_wdata_o) && $stable(mem_req_wstrb_o)))))
    else $error("memory request dropped or changed before the memory took it");
  // Read responses come in order, one per read the memory took.
  a_rsp_has_read: assert property (@(posedge clk_i) disable iff (!rst_ni)
      mem_rsp_valid_i |-> route_valid)
    else $error("read response without an outstanding read");
`endif

endmodule
