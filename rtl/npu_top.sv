// The NPU: register file, command processor, DMA (memory arbiter, load, weight stream, store),
// input scratchpad and compute stage (array, accumulators, requantization, element-wise
// and pooling units).
//
// Ports: a register bus (npu_csr), a valid/ready memory master of one to MemLanes lanes carrying
// Vec-byte beats, read responses in order per client (npu_mem_arb), and the interrupt line.
module npu_top
  import npu_pkg::*;
  import npu_core_pkg::*;
(
  input  logic                   clk_i,
  input  logic                   rst_ni,

  input  logic                   csr_req_i,
  input  logic                   csr_we_i,
  input  logic [CsrAddrBits-1:0] csr_addr_i,
  input  logic [31:0]            csr_wdata_i,
  output logic [31:0]            csr_rdata_o,

  // Memory: MemLanes request lanes, of which the memory system has mem_lanes_i (a strap); lane l
  // grants the request of client mem_req_id_o[l], whose fields are on that client's request port
  // (mem_req_write_o .. mem_req_wstrb_o); read responses come back on the client's response port,
  // in order per client.
  input  logic [LaneCountW-1:0]              mem_lanes_i,
  output logic [MemLanes-1:0]                mem_req_valid_o,
  input  logic [MemLanes-1:0]                mem_req_ready_i,
  output logic [MemLanes-1:0][ClientW-1:0]   mem_req_id_o,
  output logic [NumClients-1:0]              mem_req_write_o,
  output logic [NumClients-1:0][31:0]        mem_req_addr_o,
  output logic [NumClients-1:0][VecBits-1:0] mem_req_wdata_o,
  output logic [NumClients-1:0][Vec-1:0]     mem_req_wstrb_o,
  input  logic [NumClients-1:0]              mem_rsp_valid_i,
  input  logic [NumClients-1:0][VecBits-1:0] mem_rsp_data_i,

  output logic                   irq_o,
  output logic                   error_o,  // STATUS.ERROR, for waveform triggers

  // Fault injection, for proving that co-verification catches datapath faults (tie to zero):
  // output bits of the requantization unit where fault_rq_mask_i is set read fault_rq_value_i.
  input  logic [VecBits-1:0]     fault_rq_mask_i,
  input  logic [VecBits-1:0]     fault_rq_value_i
);

  // The microarchitecture needs one scratchpad word = one input vector = one DRAM beat, and
  // shifts by VecIdxW for multiples of Vec. Checked at elaboration, by synthesis tools too.
  localparam bit GeometryOk = ArrayRows == ArrayCols && ArrayRows == DramBusBytes &&
                              (1 << VecIdxW) == Vec;
  if (!GeometryOk) begin : gen_bad_geometry
    $error("npu_top: needs ArrayRows = ArrayCols = DramBusBytes = a power of two (%0d, %0d, %0d)",
           ArrayRows, ArrayCols, DramBusBytes);
  end

  // ------------------------------------------------------------------------------------------
  // Registers.
  logic [31:0] queue_base, completion_addr, window_base, window_limit, watchdog_limit;
  logic        doorbell, soft_reset;
  logic [31:0] doorbell_tag;
  logic        busy, error, resetting, reset_done, irq_done, irq_error;
  logic [31:0] job_tag, desc_done, error_desc, error_addr;
  logic [7:0]  error_code;
  logic [15:0] perf_macs;
  logic [LaneCountW-1:0] perf_rd_beats, perf_wr_beats;
  logic        perf_stall_input, perf_stall_weight;
  logic        perf_stall_output, perf_stall_fetch, perf_array_active;

  npu_csr u_csr (
    .clk_i,
    .rst_ni,
    .csr_req_i,
    .csr_we_i,
    .csr_addr_i,
    .csr_wdata_i,
    .csr_rdata_o,
    .queue_base_o       (queue_base),
    .completion_addr_o  (completion_addr),
    .window_base_o      (window_base),
    .window_limit_o     (window_limit),
    .watchdog_limit_o   (watchdog_limit),
    .doorbell_o         (doorbell),
    .doorbell_tag_o     (doorbell_tag),
    .soft_reset_o       (soft_reset),
    .busy_i             (busy),
    .error_i            (error),
    .resetting_i        (resetting),
    .reset_done_i       (reset_done),
    .job_tag_i          (job_tag),
    .desc_done_i        (desc_done),
    .error_code_i       (error_code),
    .error_desc_i       (error_desc),
    .error_addr_i       (error_addr),
    .irq_done_i         (irq_done),
    .irq_error_i        (irq_error),
    .perf_macs_i        (perf_macs),
    .perf_rd_beats_i    (perf_rd_beats),
    .perf_wr_beats_i    (perf_wr_beats),
    .perf_stall_input_i (perf_stall_input),
    .perf_stall_weight_i(perf_stall_weight),
    .perf_stall_output_i(perf_stall_output),
    .perf_stall_fetch_i (perf_stall_fetch),
    .perf_array_active_i(perf_array_active),
    .irq_o
  );

  assign error_o = error;

  // ------------------------------------------------------------------------------------------
  // Memory clients and the arbiter.
  logic [NumClients-1:0]              req_valid, req_ready, req_write, rsp_valid;
  logic [NumClients-1:0][31:0]        req_addr;
  logic [NumClients-1:0][VecBits-1:0] req_wdata;
  logic [NumClients-1:0][Vec-1:0]     req_wstrb;
  logic [NumClients-1:0][VecBits-1:0] rsp_data;
  logic                               flush, reads_pending, fault;
  logic [ClientW-1:0]                 fault_client;
  logic [31:0]                        fault_addr;

  npu_mem_arb #(
    .MaxReads(MaxOutstandingReads)
  ) u_mem_arb (
    .clk_i,
    .rst_ni,
    .flush_i        (flush),
    .lanes_i        (mem_lanes_i),
    .req_valid_i    (req_valid),
    .req_ready_o    (req_ready),
    .req_write_i    (req_write),
    .req_addr_i     (req_addr),
    .req_wdata_i    (req_wdata),
    .req_wstrb_i    (req_wstrb),
    .rsp_valid_o    (rsp_valid),
    .rsp_data_o     (rsp_data),
    .window_base_i  (window_base),
    .window_limit_i (window_limit),
    .fault_o        (fault),
    .fault_client_o (fault_client),
    .fault_addr_o   (fault_addr),
    .mem_req_valid_o,
    .mem_req_ready_i,
    .mem_req_id_o,
    .mem_req_write_o,
    .mem_req_addr_o,
    .mem_req_wdata_o,
    .mem_req_wstrb_o,
    .mem_rsp_valid_i,
    .mem_rsp_data_i,
    .reads_pending_o(reads_pending),
    .rd_beats_o     (perf_rd_beats),
    .wr_beats_o     (perf_wr_beats)
  );

  // ------------------------------------------------------------------------------------------
  // Command processor.
  logic              load_start, load_two, load_busy;
  logic [2:0]        load_planes;
  logic [1:0]        load_elem_log2;
  tensor_t           load_a, load_b;
  logic [SpadAw-1:0] load_base;
  logic              compute_ready, compute_start, compute_job_valid, compute_retire, compute_idle;
  logic [1:0]        res_busy;  // buffers a RESIDUAL descriptor reads B from
  job_t              compute_job;
  logic [31:0]       weight_index, store_index;

  npu_cmd u_cmd (
    .clk_i,
    .rst_ni,
    .queue_base_i     (queue_base),
    .completion_addr_i(completion_addr),
    .watchdog_limit_i (watchdog_limit),
    .doorbell_i       (doorbell),
    .doorbell_tag_i   (doorbell_tag),
    .soft_reset_i     (soft_reset),
    .busy_o           (busy),
    .error_o          (error),
    .resetting_o      (resetting),
    .reset_done_o     (reset_done),
    .job_tag_o        (job_tag),
    .desc_done_o      (desc_done),
    .error_code_o     (error_code),
    .error_desc_o     (error_desc),
    .error_addr_o     (error_addr),
    .irq_done_o       (irq_done),
    .irq_error_o      (irq_error),
    .stall_fetch_o    (perf_stall_fetch),
    .stall_input_o    (perf_stall_input),
    .flush_o          (flush),
    .reads_pending_i  (reads_pending),
    .fault_i          (fault),
    .fault_client_i   (fault_client),
    .fault_addr_i     (fault_addr),
    .load_start_o     (load_start),
    .load_a_o         (load_a),
    .load_b_o         (load_b),
    .load_two_o       (load_two),
    .load_planes_o    (load_planes),
    .load_elem_log2_o (load_elem_log2),
    .load_base_o      (load_base),
    .load_busy_i      (load_busy),
    .compute_ready_i  (compute_ready),
    .res_busy_i       (res_busy),
    .compute_start_o  (compute_start),
    .compute_job_o    (compute_job),
    .compute_job_valid_o(compute_job_valid),
    .compute_retire_i (compute_retire),
    .compute_idle_i   (compute_idle),
    .weight_index_i   (weight_index),
    .store_index_i    (store_index),
    .req_valid_o      (req_valid[ClientCmd]),
    .req_ready_i      (req_ready[ClientCmd]),
    .req_write_o      (req_write[ClientCmd]),
    .req_addr_o       (req_addr[ClientCmd]),
    .req_wdata_o      (req_wdata[ClientCmd]),
    .req_wstrb_o      (req_wstrb[ClientCmd]),
    .rsp_valid_i      (rsp_valid[ClientCmd]),
    .rsp_data_i       (rsp_data[ClientCmd])
  );

  // ------------------------------------------------------------------------------------------
  // Load DMA into the scratchpad.
  // Write port 0: the load DMA; port 1: CHAIN_OUT results of the compute stage.
  logic               spad_we    [2];
  logic [SpadAw-1:0]  spad_waddr [2];
  logic [VecBits-1:0] spad_wdata [2];
  spad_re_t           spad_re;
  spad_addr_t         spad_raddr;
  spad_data_t         spad_rdata;
  spad_line_re_t      spad_line;
  spad_line_t         spad_rline;

  npu_dma_load u_dma_load (
    .clk_i,
    .rst_ni,
    .flush_i     (flush),
    .start_i     (load_start),
    .a_i         (load_a),
    .b_i         (load_b),
    .two_i       (load_two),
    .planes_i    (load_planes),
    .elem_log2_i (load_elem_log2),
    .spad_base_i (load_base),
    .busy_o      (load_busy),
    .req_valid_o (req_valid[ClientLoad]),
    .req_ready_i (req_ready[ClientLoad]),
    .req_addr_o  (req_addr[ClientLoad]),
    .rsp_valid_i (rsp_valid[ClientLoad]),
    .rsp_data_i  (rsp_data[ClientLoad]),
    .spad_we_o   (spad_we[0]),
    .spad_waddr_o(spad_waddr[0]),
    .spad_wdata_o(spad_wdata[0])
  );
  assign req_write[ClientLoad] = 1'b0;
  assign req_wdata[ClientLoad] = '0;
  assign req_wstrb[ClientLoad] = '0;

  npu_spad #(
    .Words    (2 * SpadWords),
    .ReadPorts(SpadReadPorts)
  ) u_spad (
    .clk_i,
    .we_i   (spad_we),
    .waddr_i(spad_waddr),
    .wdata_i(spad_wdata),
    .re_i   (spad_re),
    .raddr_i(spad_raddr),
    .rdata_o(spad_rdata),
    .line_i (spad_line),
    .rline_o(spad_rline)
  );

  // ------------------------------------------------------------------------------------------
  // Weight stream.
  logic                                 ws_start, ws_valid, ws_ready, ws_busy;
  logic [31:0]                          ws_addr, ws_words;
  logic [VecBits-1:0]                   ws_data;
  logic [$clog2(WeightFifoWords+1)-1:0] ws_count;

  npu_weight_stream #(
    .Depth(WeightFifoWords)
  ) u_weight_stream (
    .clk_i,
    .rst_ni,
    .flush_i    (flush),
    .start_i    (ws_start),
    .addr_i     (ws_addr),
    .words_i    (ws_words),
    .busy_o     (ws_busy),
    .req_valid_o(req_valid[ClientWeight]),
    .req_ready_i(req_ready[ClientWeight]),
    .req_addr_o (req_addr[ClientWeight]),
    .rsp_valid_i(rsp_valid[ClientWeight]),
    .rsp_data_i (rsp_data[ClientWeight]),
    .out_valid_o(ws_valid),
    .out_ready_i(ws_ready),
    .out_data_o (ws_data),
    .count_o    (ws_count)
  );
  assign req_write[ClientWeight] = 1'b0;
  assign req_wdata[ClientWeight] = '0;
  assign req_wstrb[ClientWeight] = '0;

  // ------------------------------------------------------------------------------------------
  // Fault injection, registered: nothing combinational hangs off the ports (the simulator then
  // need not re-evaluate logic whenever it sets inputs).
  logic [VecBits-1:0] fault_rq_mask_q, fault_rq_value_q;
  always_ff @(posedge clk_i) begin
    fault_rq_mask_q  <= fault_rq_mask_i;
    fault_rq_value_q <= fault_rq_value_i;
  end

  // ------------------------------------------------------------------------------------------
  // Compute and store.
  logic               st_start, st_busy, st_valid, st_ready;
  tensor_t            st_tensor;
  logic [VecBits-1:0] st_data;

  npu_compute u_compute (
    .clk_i,
    .rst_ni,
    .flush_i            (flush),
    .ready_o            (compute_ready),
    .start_i            (compute_start),
    .job_i              (compute_job),
    .job_valid_i        (compute_job_valid),
    .retire_o           (compute_retire),
    .idle_o             (compute_idle),
    .weight_index_o     (weight_index),
    .store_index_o      (store_index),
    .res_busy_o         (res_busy),
    .spad_re_o          (spad_re),
    .spad_raddr_o       (spad_raddr),
    .spad_rdata_i       (spad_rdata),
    .spad_line_o        (spad_line),
    .spad_rline_i       (spad_rline),
    .chain_we_o         (spad_we[1]),
    .chain_waddr_o      (spad_waddr[1]),
    .chain_wdata_o      (spad_wdata[1]),
    .ws_start_o         (ws_start),
    .ws_addr_o          (ws_addr),
    .ws_words_o         (ws_words),
    .ws_busy_i          (ws_busy),
    .ws_valid_i         (ws_valid),
    .ws_ready_o         (ws_ready),
    .ws_data_i          (ws_data),
    .ws_count_i         (ws_count),
    .st_start_o         (st_start),
    .st_tensor_o        (st_tensor),
    .st_busy_i          (st_busy),
    .st_valid_o         (st_valid),
    .st_ready_i         (st_ready),
    .st_data_o          (st_data),
    .fault_rq_mask_i    (fault_rq_mask_q),
    .fault_rq_value_i   (fault_rq_value_q),
    .perf_macs_o        (perf_macs),
    .perf_array_active_o(perf_array_active),
    .perf_stall_weight_o(perf_stall_weight),
    .perf_stall_output_o(perf_stall_output)
  );

  npu_dma_store u_dma_store (
    .clk_i,
    .rst_ni,
    .flush_i    (flush),
    .start_i    (st_start),
    .tensor_i   (st_tensor),
    .busy_o     (st_busy),
    .in_valid_i (st_valid),
    .in_ready_o (st_ready),
    .in_data_i  (st_data),
    .req_valid_o(req_valid[ClientStore]),
    .req_ready_i(req_ready[ClientStore]),
    .req_addr_o (req_addr[ClientStore]),
    .req_wdata_o(req_wdata[ClientStore]),
    .req_wstrb_o(req_wstrb[ClientStore])
  );
  assign req_write[ClientStore] = 1'b1;

  // The store only writes; the weight stream's busy flag is for debug views.
  logic unused_signals;
  assign unused_signals = ^{rsp_valid[ClientStore], rsp_data[ClientStore]};

`ifndef SYNTHESIS
  // Outputs are never unknown after reset. (Verilator simulates two states, where $isunknown is
  // always false; four-state simulators check these.)
  a_outputs_known: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !$isunknown({mem_req_valid_o, irq_o, error_o, csr_rdata_o}))
    else $error("npu_top output unknown");
  for (genvar l = 0; l < MemLanes; l++) begin : gen_lane_asserts
    a_mem_req_known: assert property (@(posedge clk_i) disable iff (!rst_ni)
        mem_req_valid_o[l] |-> !$isunknown(mem_req_id_o[l]) &&
            !$isunknown({mem_req_write_o[mem_req_id_o[l]], mem_req_addr_o[mem_req_id_o[l]],
                         mem_req_wstrb_o[mem_req_id_o[l]],
                         mem_req_write_o[mem_req_id_o[l]] ? mem_req_wdata_o[mem_req_id_o[l]]
                                                          : '0}))
      else $error("npu_top memory request on lane %0d with unknown fields", l);
  end

  // The scratchpad's two write ports (load DMA, CHAIN_OUT drain) never write the same word in
  // one cycle: the load fills the next descriptor's buffer while a producer writes its
  // consumer's, or a RESIDUAL consumer's B beside the words its producer writes.
  // (Verilator 5.006 fails on unpacked array selects inside assertions: copy them out first.)
  logic              load_we, chain_we;
  logic [SpadAw-1:0] load_waddr, chain_waddr;
  assign load_we     = spad_we[0];
  assign chain_we    = spad_we[1];
  assign load_waddr  = spad_waddr[0];
  assign chain_waddr = spad_waddr[1];
  a_spad_ports_apart: assert property (@(posedge clk_i) disable iff (!rst_ni)
      load_we && chain_we |-> load_waddr != chain_waddr)
    else $error("load DMA and CHAIN_OUT drain write the same scratchpad word");
`endif

endmodule
