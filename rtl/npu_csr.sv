// Register file: the software-visible registers of rtl/data/npu.json, the interrupt line and the
// performance counters.
//
// Bus: a request (csr_req_i) reads csr_rdata_o in the same cycle and takes effect at the clock
// edge that ends it (writes, read side effects such as PERF_*_LO latching the high word).
module npu_csr
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

  output logic [31:0]            queue_base_o,
  output logic [31:0]            completion_addr_o,
  output logic [31:0]            window_base_o,
  output logic [31:0]            window_limit_o,
  output logic [31:0]            watchdog_limit_o,
  output logic                   doorbell_o,
  output logic [31:0]            doorbell_tag_o,
  output logic                   soft_reset_o,

  // From the command processor.
  input  logic                   busy_i,
  input  logic                   error_i,
  input  logic                   resetting_i,
  input  logic                   reset_done_i,  // a soft reset finished: clear IRQs and counters
  input  logic [31:0]            job_tag_i,
  input  logic [31:0]            desc_done_i,
  input  logic [NPU_ERROR_CODE_CODE_WIDTH-1:0] error_code_i,
  input  logic [31:0]            error_desc_i,
  input  logic [31:0]            error_addr_i,
  input  logic                   irq_done_i,
  input  logic                   irq_error_i,

  // Performance events of this cycle.
  input  logic [15:0]            perf_macs_i,
  input  logic [LaneCountW-1:0]  perf_rd_beats_i,
  input  logic [LaneCountW-1:0]  perf_wr_beats_i,
  input  logic                   perf_stall_input_i,
  input  logic                   perf_stall_weight_i,
  input  logic                   perf_stall_output_i,
  input  logic                   perf_stall_fetch_i,
  input  logic                   perf_array_active_i,

  output logic                   irq_o
);

  logic [31:0] queue_base_q, completion_addr_q, window_base_q, window_limit_q, watchdog_q;

  logic wr, rd;
  assign wr = csr_req_i && csr_we_i;
  assign rd = csr_req_i && !csr_we_i;

  // The interrupt line masks IRQ_STATUS with IRQ_ENABLE bit by bit: their fields must line up.
  if (NPU_IRQ_STATUS_DONE_LSB != NPU_IRQ_ENABLE_DONE_LSB ||
      NPU_IRQ_STATUS_ERROR_LSB != NPU_IRQ_ENABLE_ERROR_LSB) begin : gen_irq_fields_differ
    $error("npu.json: IRQ_STATUS and IRQ_ENABLE fields must have the same bit positions");
  end

  localparam logic [31:0] IrqStatusMask   = NPU_IRQ_STATUS_DONE_MASK | NPU_IRQ_STATUS_ERROR_MASK;
  localparam logic [31:0] IrqEnableMask   = NPU_IRQ_ENABLE_DONE_MASK | NPU_IRQ_ENABLE_ERROR_MASK;
  localparam logic [31:0] WindowBaseMask  = NPU_DMA_WINDOW_BASE_ADDR_MASK;
  localparam logic [31:0] WindowLimitMask = NPU_DMA_WINDOW_LIMIT_ADDR_MASK;
  // The IRQ registers keep bits 0 .. IrqW-1 (up to their highest field); the rest read as zero.
  localparam int unsigned IrqW = $clog2(IrqStatusMask + 1);

  logic [IrqW-1:0] irq_status_q, irq_enable_q, irq_set, irq_clear;
  always_comb begin
    irq_set = '0;
    irq_set[NPU_IRQ_STATUS_DONE_LSB]  = irq_done_i;
    irq_set[NPU_IRQ_STATUS_ERROR_LSB] = irq_error_i;
    irq_clear = (wr && csr_addr_i == NPU_IRQ_STATUS_OFFSET) ?
                csr_wdata_i[IrqW-1:0] & IrqStatusMask[IrqW-1:0] : '0;
  end

  logic [31:0] status;
  always_comb begin
    status = '0;
    status[NPU_STATUS_BUSY_LSB]      = busy_i;
    status[NPU_STATUS_ERROR_LSB]     = error_i;
    status[NPU_STATUS_RESETTING_LSB] = resetting_i;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      queue_base_q      <= NPU_QUEUE_BASE_RESVAL;
      completion_addr_q <= NPU_COMPLETION_ADDR_RESVAL;
      window_base_q     <= NPU_DMA_WINDOW_BASE_RESVAL;
      window_limit_q    <= NPU_DMA_WINDOW_LIMIT_RESVAL;
      watchdog_q        <= NPU_WATCHDOG_LIMIT_RESVAL;
      irq_enable_q      <= NPU_IRQ_ENABLE_RESVAL[IrqW-1:0];
    end else if (wr) begin
      unique case (csr_addr_i)
        NPU_QUEUE_BASE_OFFSET:       queue_base_q      <= csr_wdata_i;
        NPU_COMPLETION_ADDR_OFFSET:  completion_addr_q <= csr_wdata_i;
        NPU_DMA_WINDOW_BASE_OFFSET:  window_base_q     <= csr_wdata_i & WindowBaseMask;
        NPU_DMA_WINDOW_LIMIT_OFFSET: window_limit_q    <= csr_wdata_i & WindowLimitMask;
        NPU_WATCHDOG_LIMIT_OFFSET:   watchdog_q        <= csr_wdata_i;
        NPU_IRQ_ENABLE_OFFSET:       irq_enable_q      <= csr_wdata_i[IrqW-1:0] &
                                                        IrqEnableMask[IrqW-1:0];
        default: ;
      endcase
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      irq_status_q <= '0;
    end else if (reset_done_i) begin
      irq_status_q <= '0;
    end else begin
      irq_status_q <= (irq_status_q & ~irq_clear) | irq_set;
    end
  end

  assign irq_o = |(irq_status_q & irq_enable_q);

  assign queue_base_o      = queue_base_q;
  assign completion_addr_o = completion_addr_q;
  assign window_base_o     = window_base_q;
  assign window_limit_o    = window_limit_q;
  assign watchdog_limit_o  = watchdog_q;
  assign doorbell_o        = wr && csr_addr_i == NPU_DOORBELL_OFFSET;
  assign doorbell_tag_o    = csr_wdata_i;
  assign soft_reset_o      = wr && csr_addr_i == NPU_CONTROL_OFFSET &&
                             csr_wdata_i[NPU_CONTROL_SOFT_RESET_LSB];

  // Performance counters, 64 bits; reading a counter's LO register latches its HI register.
  localparam int unsigned NumPerf = 9;
  logic [NumPerf-1:0][63:0] perf_q;
  logic [NumPerf-1:0][31:0] perf_hi_q;
  logic [NumPerf-1:0][15:0] perf_inc;
  logic                     perf_clear;

  assign perf_inc = {16'(perf_array_active_i), 16'(perf_stall_fetch_i),
                     16'(perf_stall_output_i), 16'(perf_stall_weight_i),
                     16'(perf_stall_input_i), 16'(perf_wr_beats_i) << VecIdxW,
                     16'(perf_rd_beats_i) << VecIdxW, perf_macs_i, 16'(busy_i)};
  assign perf_clear = reset_done_i || (wr && csr_addr_i == NPU_CONTROL_OFFSET &&
                                       csr_wdata_i[NPU_CONTROL_PERF_CLEAR_LSB]);

  // Counter k: LO at PERF_BUSY_LO + 8k, HI 4 bytes above.
  logic                     perf_hit;
  logic [3:0]               perf_index;
  logic [CsrAddrBits-1:0]   perf_rel;
  assign perf_rel   = csr_addr_i - NPU_PERF_BUSY_LO_OFFSET;
  assign perf_index = perf_rel[6:3];
  assign perf_hit   = csr_addr_i >= NPU_PERF_BUSY_LO_OFFSET && 32'(perf_index) < NumPerf &&
                      perf_rel < CsrAddrBits'(NumPerf * 8);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      perf_q    <= '0;
      perf_hi_q <= '0;
    end else begin
      for (int unsigned k = 0; k < NumPerf; k++) begin
        perf_q[k] <= perf_clear ? 64'd0 : perf_q[k] + 64'(perf_inc[k]);
      end
      if (rd && perf_hit && !perf_rel[2]) begin
        perf_hi_q[perf_index] <= perf_q[perf_index][63:32];
      end
    end
  end

  always_comb begin
    csr_rdata_o = '0;
    if (perf_hit) begin
      csr_rdata_o = perf_rel[2] ? perf_hi_q[perf_index] : perf_q[perf_index][31:0];
    end else begin
      unique case (csr_addr_i)
        NPU_ID_OFFSET:               csr_rdata_o = NPU_ID_RESVAL;
        NPU_VERSION_OFFSET:          csr_rdata_o = NPU_VERSION_RESVAL;
        NPU_CONFIG_ARRAY_OFFSET:     csr_rdata_o = NPU_CONFIG_ARRAY_RESVAL;
        NPU_CONFIG_SPAD_OFFSET:      csr_rdata_o = NPU_CONFIG_SPAD_RESVAL;
        NPU_CONFIG_ACC_OFFSET:       csr_rdata_o = NPU_CONFIG_ACC_RESVAL;
        NPU_STATUS_OFFSET:           csr_rdata_o = status;
        NPU_QUEUE_BASE_OFFSET:       csr_rdata_o = queue_base_q;
        NPU_COMPLETION_ADDR_OFFSET:  csr_rdata_o = completion_addr_q;
        NPU_JOB_TAG_OFFSET:          csr_rdata_o = job_tag_i;
        NPU_DESC_DONE_OFFSET:        csr_rdata_o = desc_done_i;
        NPU_ERROR_CODE_OFFSET:       csr_rdata_o = 32'(error_code_i) << NPU_ERROR_CODE_CODE_LSB;
        NPU_ERROR_DESC_OFFSET:       csr_rdata_o = error_desc_i;
        NPU_ERROR_ADDR_OFFSET:       csr_rdata_o = error_addr_i;
        NPU_IRQ_STATUS_OFFSET:       csr_rdata_o = 32'(irq_status_q);
        NPU_IRQ_ENABLE_OFFSET:       csr_rdata_o = 32'(irq_enable_q);
        NPU_DMA_WINDOW_BASE_OFFSET:  csr_rdata_o = window_base_q;
        NPU_DMA_WINDOW_LIMIT_OFFSET: csr_rdata_o = window_limit_q;
        NPU_WATCHDOG_LIMIT_OFFSET:   csr_rdata_o = watchdog_q;
        default:                     csr_rdata_o = '0;
      endcase
    end
  end

endmodule
