// DMA master port: round-robin arbitration of the NPU's memory clients onto up to MemLanes
// valid/ready request lanes, the job's DMA window enforced on every beat, and read responses
// returned per client.
//
// Requests are beat-sized and beat-aligned (Vec bytes); writes carry byte strobes and get no
// response. Each client has its own request fields at the port (mem_req_write_o[c],
// mem_req_addr_o[c], mem_req_wdata_o[c], mem_req_wstrb_o[c]); a lane grants one client's request
// to the memory (mem_req_valid_o[l] with mem_req_id_o[l] = c), different clients on different
// lanes. The memory answers a read on that client's response port, in order per client, and
// applies a cycle's beats in lane order. How many lanes the memory system has is a strap
// (lanes_i, 1 to MemLanes: its bandwidth in beats per cycle); with one lane the port is a single
// channel. A request outside [window_base_i, window_limit_i) is never issued: it raises fault_o
// and stays pending until the command processor flushes the clients. A request the memory does
// not take at once stays on its lane until it does (valid/ready): the lane keeps its client, and
// the other lanes wait, while the memory stalls.
module npu_mem_arb
  import npu_pkg::*;
  import npu_core_pkg::*;
#(
  parameter int unsigned MaxReads = 256
) (
  input  logic                               clk_i,
  input  logic                               rst_ni,
  input  logic                               flush_i,
  input  logic [LaneCountW-1:0]              lanes_i,

  input  logic [NumClients-1:0]              req_valid_i,
  output logic [NumClients-1:0]              req_ready_o,
  input  logic [NumClients-1:0]              req_write_i,
  input  logic [NumClients-1:0][31:0]        req_addr_i,
  input  logic [NumClients-1:0][VecBits-1:0] req_wdata_i,
  input  logic [NumClients-1:0][Vec-1:0]     req_wstrb_i,

  output logic [NumClients-1:0]              rsp_valid_o,
  output logic [NumClients-1:0][VecBits-1:0] rsp_data_o,

  input  logic [31:0]                        window_base_i,
  input  logic [31:0]                        window_limit_i,
  output logic                               fault_o,
  output logic [ClientW-1:0]                 fault_client_o,
  output logic [31:0]                        fault_addr_o,

  output logic [MemLanes-1:0]                mem_req_valid_o,
  input  logic [MemLanes-1:0]                mem_req_ready_i,
  output logic [MemLanes-1:0][ClientW-1:0]   mem_req_id_o,
  output logic [NumClients-1:0]              mem_req_write_o,
  output logic [NumClients-1:0][31:0]        mem_req_addr_o,
  output logic [NumClients-1:0][VecBits-1:0] mem_req_wdata_o,
  output logic [NumClients-1:0][Vec-1:0]     mem_req_wstrb_o,
  input  logic [NumClients-1:0]              mem_rsp_valid_i,
  input  logic [NumClients-1:0][VecBits-1:0] mem_rsp_data_i,

  output logic                               reads_pending_o,
  output logic [LaneCountW-1:0]              rd_beats_o,
  output logic [LaneCountW-1:0]              wr_beats_o
);

  localparam int unsigned ReadsW = $clog2(MaxReads + 1);

  // The strap, registered: arbitration then depends on state alone, not on the port's inputs.
  logic [LaneCountW-1:0] lanes_q;

  // Reads outstanding; a cycle may issue one per lane, so reads go only while all lanes fit.
  logic [ReadsW-1:0] reads_q;
  logic              reads_fit;
  assign reads_fit = 32'(reads_q) + 32'(lanes_q) <= MaxReads;

  // Clients that may go: writes always, reads while the read budget has room.
  logic [NumClients-1:0] eligible;
  assign eligible = req_valid_i & (req_write_i | {NumClients{reads_fit}});

  // Lane assignment: the eligible clients in round-robin order from rr_q take the lanes, lowest
  // first, one lane per client. While the memory stalls a lane, that lane keeps its client and
  // the others wait (a stalling memory is one of a single lane: below a beat per cycle).
  logic [ClientW-1:0]                rr_q, rr_d;
  logic [MemLanes-1:0]               lock_q, lane_any;
  logic [MemLanes-1:0][ClientW-1:0]  lock_client_q, lane_client;

  // Field l of entry v: how far past rr_q the (l+1)-th eligible client is, for the eligible
  // clients v rotated to start at rr_q. A table, so that arbitration simulates as a lookup.
  typedef logic [MemLanes-1:0][ClientW-1:0] offsets_t;
  function automatic offsets_t nth_set(logic [NumClients-1:0] v);
    offsets_t              offsets;
    logic [LaneCountW-1:0] n;
    offsets = '0;
    n       = '0;
    for (int unsigned k = 0; k < NumClients; k++) begin
      if (v[k] && 32'(n) < MemLanes) begin
        offsets[n[LaneW-1:0]] = ClientW'(k);
        n                     = n + 1'b1;
      end
    end
    return offsets;
  endfunction
  offsets_t nth_set_table [2**NumClients];
  for (genvar v = 0; v < 2**NumClients; v++) begin : gen_nth_set
    assign nth_set_table[v] = nth_set(NumClients'(v));
  end

  logic [NumClients-1:0]   rotated;
  logic [LaneCountW:0]     eligible_count;
  offsets_t                offsets;
  assign rotated        = NumClients'({eligible, eligible} >> rr_q);
  assign eligible_count = ($bits(eligible_count))'($countones(rotated));
  assign offsets        = nth_set_table[rotated];

  always_comb begin
    for (int unsigned l = 0; l < MemLanes; l++) begin
      if (lock_q != '0) begin
        lane_client[l] = lock_client_q[l];
        lane_any[l]    = lock_q[l] && eligible[lock_client_q[l]];
      end else begin
        lane_client[l] = rr_q + offsets[l];
        lane_any[l]    = l < 32'(eligible_count) && l < 32'(lanes_q);
      end
    end
  end

  // Each client's beat, checked against the window (16-byte granularity registers, beat-aligned
  // addresses).
  logic [NumClients-1:0] in_window;
  for (genvar c = 0; c < NumClients; c++) begin : gen_client
    logic [32:0] addr_end;
    assign mem_req_addr_o[c] = {req_addr_i[c][31:VecIdxW], {VecIdxW{1'b0}}};
    assign addr_end          = {1'b0, mem_req_addr_o[c]} + 33'(Vec);
    assign in_window[c]      = (mem_req_addr_o[c] >= window_base_i) &&
                               (addr_end <= {1'b0, window_limit_i});
  end
  assign mem_req_write_o = req_write_i;
  assign mem_req_wdata_o = req_wdata_i;
  assign mem_req_wstrb_o = req_wstrb_i;

  logic [MemLanes-1:0] accepted;
  for (genvar l = 0; l < MemLanes; l++) begin : gen_lane
    assign mem_req_valid_o[l] = lane_any[l] && in_window[lane_client[l]] && !flush_i;
    assign mem_req_id_o[l]    = lane_client[l];
    assign accepted[l]        = mem_req_valid_o[l] && mem_req_ready_i[l];
  end

  // The fault (lowest faulting lane), the clients' ready, beat counts and the next round-robin
  // start: after the client of the highest lane taken.
  always_comb begin
    fault_o        = 1'b0;
    fault_client_o = '0;
    req_ready_o    = '0;
    rd_beats_o     = '0;
    wr_beats_o     = '0;
    rr_d           = rr_q;
    for (int l = MemLanes - 1; l >= 0; l--) begin
      if (lane_any[l] && !in_window[lane_client[l]]) begin
        fault_o        = 1'b1;
        fault_client_o = lane_client[l];
      end
    end
    for (int unsigned l = 0; l < MemLanes; l++) begin
      if (accepted[l]) begin
        req_ready_o[lane_client[l]] = 1'b1;
        rd_beats_o += LaneCountW'(!req_write_i[lane_client[l]]);
        wr_beats_o += LaneCountW'(req_write_i[lane_client[l]]);
        rr_d = lane_client[l] + 1'b1;
      end
    end
  end
  assign fault_addr_o = mem_req_addr_o[fault_client_o];

  logic [LaneCountW-1:0] responses;
  always_comb begin
    responses = '0;
    for (int unsigned c = 0; c < NumClients; c++) responses += LaneCountW'(mem_rsp_valid_i[c]);
  end

  // Outstanding reads are never flushed: responses of aborted reads still arrive and are dropped
  // by the flushed clients.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rr_q          <= '0;
      lock_q        <= '0;
      lock_client_q <= '0;
      reads_q       <= '0;
      lanes_q       <= LaneCountW'(1);
    end else begin
      rr_q          <= rr_d;
      lock_q        <= mem_req_valid_o & ~mem_req_ready_i;
      lock_client_q <= lane_client;
      reads_q       <= reads_q + ReadsW'(rd_beats_o) - ReadsW'(responses);
      lanes_q       <= lanes_i;
    end
  end

  assign rsp_valid_o     = flush_i ? '0 : mem_rsp_valid_i;
  assign rsp_data_o      = mem_rsp_data_i;
  assign reads_pending_o = reads_q != '0;

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

  // Each lane: a request stays valid, for the same client, until the memory takes it (unless the
  // clients are flushed); the client holds its fields (a_client_req_stable).
  for (genvar l = 0; l < MemLanes; l++) begin : gen_lane_asserts
    a_mem_req_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
        mem_req_valid_o[l] && !mem_req_ready_i[l] |=> flush_i ||
        (mem_req_valid_o[l] && $stable(mem_req_id_o[l])))
      else $error("memory request on lane %0d dropped or changed before the memory took it", l);
  end
  a_lanes_strap: assert property (@(posedge clk_i) disable iff (!rst_ni)
      lanes_i >= 1 && 32'(lanes_i) <= MemLanes)
    else $error("mem_lanes_i must be 1 to %0d", MemLanes);
  // Every read response belongs to an outstanding read.
  a_rsp_has_read: assert property (@(posedge clk_i) disable iff (!rst_ni)
      ReadsW'(responses) <= reads_q)
    else $error("read response without an outstanding read");
`endif

endmodule
