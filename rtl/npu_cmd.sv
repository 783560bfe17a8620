// Command processor: runs a job (a chain of descriptors in DRAM) from doorbell to interrupt.
//
// It fetches descriptors one ahead, validates each (BAD_OPCODE / BAD_FIELD), hands them to the
// load stage (npu_dma_load, alternating scratchpad buffers) and then to the compute stage, and
// counts retirements. The job ends after the LAST descriptor retires: the completion record is
// written and IRQ DONE raised. Any fault (invalid descriptor, DMA outside the window, watchdog)
// aborts: every unit is flushed, in-flight reads drain, the record is written with the error
// code, IRQ ERROR is raised and the device halts until a soft reset.
module npu_cmd
  import npu_pkg::*;
  import npu_core_pkg::*;
(
  input  logic                          clk_i,
  input  logic                          rst_ni,

  // Registers.
  input  logic [31:0]                   queue_base_i,
  input  logic [31:0]                   completion_addr_i,
  input  logic [31:0]                   watchdog_limit_i,
  input  logic                          doorbell_i,
  input  logic [31:0]                   doorbell_tag_i,
  input  logic                          soft_reset_i,
  output logic                          busy_o,
  output logic                          error_o,
  output logic                          resetting_o,
  output logic                          reset_done_o,
  output logic [31:0]                   job_tag_o,
  output logic [31:0]                   desc_done_o,
  output logic [7:0]                    error_code_o,
  output logic [31:0]                   error_desc_o,
  output logic [31:0]                   error_addr_o,
  output logic                          irq_done_o,
  output logic                          irq_error_o,
  output logic                          stall_fetch_o,
  output logic                          stall_input_o,

  // Units.
  output logic                          flush_o,
  input  logic                          reads_pending_i,
  input  logic                          fault_i,
  input  logic [$clog2(NumClients)-1:0] fault_client_i,
  input  logic [31:0]                   fault_addr_i,

  output logic                          load_start_o,
  output tensor_t                       load_a_o,
  output tensor_t                       load_b_o,
  output logic                          load_two_o,
  output logic [2:0]                    load_planes_o,     // A_PLANAR: A's elements per row
  output logic [1:0]                    load_elem_log2_o,  // and log2 of their bytes
  output logic [SpadAw-1:0]             load_base_o,
  input  logic                          load_busy_i,

  input  logic                          compute_ready_i,
  input  logic [1:0]                    res_busy_i,  // a RESIDUAL descriptor still reads B there
  output logic                          compute_start_o,
  output job_t                          compute_job_o,
  output logic                          compute_job_valid_o,  // compute_job_o is the next one
  input  logic                          compute_retire_i,
  input  logic                          compute_idle_i,
  input  logic [31:0]                   weight_index_i,
  input  logic [31:0]                   store_index_i,

  // Memory client (descriptor fetch, completion record).
  output logic                          req_valid_o,
  input  logic                          req_ready_i,
  output logic                          req_write_o,
  output logic [31:0]                   req_addr_o,
  output logic [VecBits-1:0]            req_wdata_o,
  output logic [Vec-1:0]                req_wstrb_o,
  input  logic                          rsp_valid_i,
  input  logic [VecBits-1:0]            rsp_data_i
);

  localparam int unsigned DescBytes  = DescriptorWords * 4;
  localparam int unsigned DescBeats  = DescBytes / Vec;
  localparam int unsigned RecBytes   = CompletionWords * 4;
  localparam int unsigned RecBeats   = RecBytes > Vec ? RecBytes / Vec : 1;
  localparam int unsigned BeatW      = $clog2(DescBeats + 1);
  localparam int unsigned TableWords = 256 / Vec;
  localparam int unsigned ExpWords   = 256 * 4 / Vec;  // NORM softmax: 256 int32

  typedef enum logic [2:0] {
    StIdle,
    StRun,
    StAbort,
    StRecord,
    StHalted,
    StResetting
  } state_e;

  state_e      state_q, state_d;
  logic [31:0] tag_q, desc_done_q, cycles_q, watchdog_q;
  logic [31:0] tag_d, desc_done_d, cycles_d, watchdog_d;
  logic [7:0]  error_code_q, error_code_d;
  logic [31:0] error_desc_q, error_addr_q, error_desc_d, error_addr_d;

  // ------------------------------------------------------------------------------------------
  // Descriptor fetch: one descriptor at a time into desc_q, decoded into next_q.
  logic [31:0]          fetch_addr_q, fetch_index_q, fetch_addr_d, fetch_index_d;
  logic                 fetch_done_q, fetch_done_d;  // LAST fetched: nothing more to fetch
  logic [BeatW-1:0]     fetch_req_q, fetch_rsp_q, fetch_req_d, fetch_rsp_d;
  logic [DescBytes*8-1:0] desc_bits_q;
  logic                 decode_q, decode_d;  // desc_bits_q complete, decode this cycle
  job_t                 next_q;
  logic                 next_valid_q, next_valid_d;
  logic [31:0]          last_index_q, last_index_d;

  logic fetching;
  assign fetching = state_q == StRun && !fetch_done_q && !next_valid_q && !decode_q;

  // Decode and validation of the fetched descriptor.
  desc_t d;
  assign d = desc_t'(desc_bits_q);

  logic [2:0]  vw;            // words per array vector
  logic [15:0] a_wpr, a_vecs, nb;
  logic [47:0] a_rows;
  logic [63:0] a_words;
  logic [31:0] p_count, kt, pack_taps, a_elems;
  logic [47:0] w_words;
  logic        bad_opcode, bad_field, taps, pack, residual, chain_out, chain_in, wide;
  // The previous descriptor of the chain, for the CHAIN_IN rules.
  logic        prev_chain_out_q, prev_chain_out_d;
  logic [15:0] prev_out_inner_q, prev_out_count1_q, prev_out_count2_q;
  logic [1:0]  prev_format_q;

  // Helpers look at some fields of their tensors only.
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic logic tensor_empty(tensor_t t);
    return t.inner == '0 || t.count1 == '0 || t.count2 == '0 || t.count3 == '0;
  endfunction

  function automatic logic same_shape(tensor_t x, tensor_t y);
    return x.inner == y.inner && x.count1 == y.count1 && x.count2 == y.count2 &&
           x.count3 == y.count3;
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  always_comb begin
    vw      = vec_words(d.opcode, d.format);
    a_wpr   = 16'((32'(d.a.inner) + Vec - 1) >> VecIdxW);
    nb      = 16'((32'(d.out.inner) + Vec * 32'(vw) - 1) / (Vec * 32'(vw)));
    a_vecs  = 16'((32'(a_wpr) + 32'(vw) - 1) / 32'(vw));
    a_rows  = 48'(d.a.count1) * 48'(d.a.count2) * 48'(d.a.count3);
    a_words = 64'(a_rows) * 64'(a_wpr);
    p_count = 32'(d.out.count1) * 32'(d.out.count2);
    taps      = d.flags[FlagTapsBit];
    pack      = d.flags[FlagPackBit];
    residual  = d.flags[FlagResidualBit];
    chain_out = d.flags[FlagChainOutBit];
    chain_in  = d.flags[FlagChainInBit];
    wide      = d.flags[FlagWideBit];
    // PACK: as many taps per K step as there are rows for their channels (elements: a float
    // array vector's words are its elements' bytes), one read port each.
    a_elems   = 32'(d.a.inner) / 32'(vw);
    pack_taps = a_elems == '0 || a_elems > ArrayRows ? 32'd1 : 32'(ArrayRows) / a_elems;
    if (pack_taps > DwTapPorts) pack_taps = DwTapPorts;
    kt      = taps ? 32'd1
            : pack ? (32'(d.kernel_w) * 32'(d.kernel_h) + pack_taps - 1) / pack_taps
                   : 32'(d.kernel_w) * 32'(d.kernel_h) * (d.opcode == OpConv ? 32'(a_vecs) : 32'd1);
    w_words = d.opcode == OpLut  ? 48'(TableWords)
            : d.opcode == OpNorm ? (d.norm_l2[0] ? 48'd0 : 48'(ExpWords))
                                 : 48'(nb) * (48'(WeightQuantWords) +
                                              48'(kt) * 48'(Vec) * (vw == 3'd1 ? 48'd1 : 48'd4));

    bad_opcode = d.opcode > OpLast;
    bad_field  = 1'b0;
    if (d.opcode != OpNop && !bad_opcode) begin
      bad_field = tensor_empty(d.a) || tensor_empty(d.out) ||
                  d.out_shift == 6'h20 || $signed(d.act_min) > $signed(d.act_max);
    end
    if (op_is_window(d.opcode)) begin
      bad_field |= d.kernel_w == '0 || d.kernel_h == '0 || d.stride_w == '0 ||
                   d.stride_h == '0 || d.dilation_w == '0 || d.dilation_h == '0 ||
                   d.a.count3 != 16'd1 || d.out.count3 != 16'd1 ||
                   p_count > AccDepth || a_words > (wide ? 64'd2 : 64'd1) * 64'(SpadWords) ||
                   kt > 32'hffff;
      if (d.opcode != OpConv) begin
        bad_field |= d.out.inner != d.a.inner;
      end
      if (op_uses_array(d.opcode)) begin
        bad_field |= d.w_addr[VecIdxW-1:0] != '0 || w_words > 48'hffff_ffff;
      end
      // TAPS: one scratchpad read port per kernel row and stride phase, every tap on its own
      // array row, and neighbouring taps one input column apart.
      if (taps) begin
        bad_field |= d.opcode != OpDwconv ||
                     32'(d.kernel_h) * 32'(d.stride_w) > DwTapPorts ||
                     32'(d.kernel_h) * 32'(d.kernel_w) > ArrayRows || d.dilation_w != 8'd1;
      end
      // PACK: at least two taps' channels in a K step's rows, a pixel within one word.
      if (pack) begin
        bad_field |= d.opcode != OpConv || a_elems > ArrayRows / 2 || 32'(d.a.inner) > Vec ||
                     chain_in;
      end
    end
    if ((taps || pack) && !op_is_window(d.opcode)) begin
      bad_field = 1'b1;
    end
    // A_PLANAR: a window operation loading A alone, one to four whole elements a pixel, every
    // element within one beat (addresses multiples of the element's size).
    if (d.a_planar[0]) begin
      bad_field |= !op_is_window(d.opcode) || chain_in || residual || d.a.inner == '0 ||
                   32'(d.a.inner) > (32'd4 << elem_log2(d.format)) ||
                   ((32'(d.a.inner) | d.a.addr | d.a.stride1 | d.a.stride2 | d.a.stride3) &
                    ((32'd1 << elem_log2(d.format)) - 32'd1)) != '0;
    end
    // WIDE: a CONV tile in both buffers, loaded and computed alone.
    if (wide) begin
      bad_field |= d.opcode != OpConv || pack || residual || chain_out || chain_in;
    end
    // RESIDUAL: B has OUT's shape and follows A (or the chained words) in the buffer.
    if (residual) begin
      bad_field |= d.opcode != OpConv || pack || chain_out || d.format != 2'(FmtInt8) ||
                   d.b.inner != d.out.inner || d.b.count1 != d.out.count1 ||
                   d.b.count2 != d.out.count2 || d.b.count3 != 16'd1 ||
                   a_words + 64'(p_count) * 64'(nb) > 64'(SpadWords) ||
                   d.a_shift == 6'h20 || d.b_shift == 6'h20 || d.out_shift == 6'h20;
    end
    // CHAIN_OUT keeps the tile in the next descriptor's buffer; that descriptor reads it as its
    // input of the same shape: a 1x1 convolution's, or a depthwise window's (which may pass its
    // own result on).
    if (chain_out) begin
      bad_field |= !op_uses_array(d.opcode) || (chain_in && d.opcode != OpDwconv) ||
                   d.flags[FlagLastBit] || 64'(p_count) * 64'(nb) * 64'(vw) > 64'(SpadWords);
    end
    if (chain_in) begin
      bad_field |= !prev_chain_out_q || d.a.inner != prev_out_inner_q ||
                   d.a.count1 != prev_out_count1_q || d.a.count2 != prev_out_count2_q ||
                   d.format != prev_format_q;
      if (d.opcode == OpConv) begin
        bad_field |= d.kernel_w != 8'd1 || d.kernel_h != 8'd1 || d.stride_w != 8'd1 ||
                     d.stride_h != 8'd1 || d.pad_top != '0 || d.pad_left != '0 ||
                     d.out.count1 != d.a.count1 || d.out.count2 != d.a.count2;
      end else if (d.opcode != OpDwconv) begin
        bad_field = 1'b1;
      end
    end else if (prev_chain_out_q) begin
      bad_field = 1'b1;  // the chained result would have no reader
    end
    if (op_uses_b(d.opcode)) begin
      bad_field |= !same_shape(d.a, d.b) || !same_shape(d.a, d.out) || tensor_empty(d.b) ||
                   2 * a_words > 64'(SpadWords) || d.a_shift == 6'h20 || d.b_shift == 6'h20;
    end
    if (d.opcode == OpLut) begin
      bad_field |= !same_shape(d.a, d.out) || a_words > 64'(SpadWords) ||
                   d.w_addr[VecIdxW-1:0] != '0;
    end
    // NORM: a row's softmax output shift stays within 31 bits while it has at most 511
    // elements (the sum of their exponentials below 2^28).
    if (d.opcode == OpNorm) begin
      bad_field |= !same_shape(d.a, d.out) || a_words > 64'(SpadWords) ||
                   (!d.norm_l2[0] && (d.a.inner > 16'd511 || d.w_addr[VecIdxW-1:0] != '0));
    end
    if (d.opcode == OpFunc) begin
      bad_field |= !same_shape(d.a, d.out) || a_words > 64'(SpadWords) ||
                   d.format == 2'(FmtInt8);
    end
    // Float formats: ADD, MUL, FUNC, pooling, and CONV / DWCONV (TAPS, PACK too), chained as a
    // DWCONV of whole channel blocks into a CONV only; INT32: ADD and MUL without DIVIDE; both
    // on whole elements.
    if (d.format != 2'(FmtInt8)) begin
      bad_field |= !(op_uses_b(d.opcode) || op_is_window(d.opcode) || d.opcode == OpFunc) ||
                   (chain_out && (d.opcode != OpDwconv || chain_in ||
                                          32'(d.out.inner) % (Vec * 32'(vw)) != 0)) ||
                   (chain_in && d.opcode != OpConv) ||
                   (d.format == 2'(FmtFp16) ? d.a.inner[0] || d.out.inner[0]
                                            : d.a.inner[1:0] != '0 || d.out.inner[1:0] != '0);
    end
    if (d.format == 2'(FmtInt32)) begin
      bad_field |= !op_uses_b(d.opcode) || (d.opcode == OpMul && d.divide[0]);
    end
    // COMPARE: a float or INT32 ADD.
    if (d.compare != '0) begin
      bad_field |= d.compare == 3'd7 || d.opcode != OpAdd || d.format == 2'(FmtInt8);
    end
  end

  job_t decoded;
  always_comb begin
    decoded          = '0;
    decoded.desc     = d;
    decoded.index    = fetch_index_q;
    decoded.a_wpr    = a_wpr;
    decoded.a_vecs   = a_vecs;
    decoded.a_words  = a_words[31:0];
    decoded.kt_count = kt[15:0];
    decoded.pack_taps = pack ? pack_taps[7:0] : 8'd1;
    decoded.nb_count = nb;
    decoded.p_count  = op_is_window(d.opcode) ? p_count : a_words[31:0];
    decoded.w_words  = w_words[31:0];
  end

  logic fetch_fire, desc_we, next_load;
  assign fetch_fire = req_valid_o && req_ready_i && !req_write_o;
  assign desc_we    = rsp_valid_i && fetching;
  // A valid descriptor moves on to next_q (an invalid one faults).
  assign next_load  = state_q == StRun && decode_q && !bad_opcode && !bad_field;

  always_comb begin
    fetch_addr_d     = fetch_addr_q;
    fetch_index_d    = fetch_index_q;
    fetch_done_d     = fetch_done_q;
    fetch_req_d      = fetch_req_q;
    fetch_rsp_d      = fetch_rsp_q;
    decode_d         = decode_q;
    next_valid_d     = next_valid_q;
    last_index_d     = last_index_q;
    prev_chain_out_d = prev_chain_out_q;
    if (state_q != StRun) begin
      // Ready for the next job: fetching starts at QUEUE_BASE.
      fetch_addr_d     = queue_base_i;
      fetch_index_d    = '0;
      fetch_done_d     = 1'b0;
      fetch_req_d      = '0;
      fetch_rsp_d      = '0;
      decode_d         = 1'b0;
      next_valid_d     = 1'b0;
      prev_chain_out_d = 1'b0;
    end else begin
      if (fetch_fire) begin
        fetch_req_d = fetch_req_q + 1'b1;
      end
      if (desc_we) begin
        fetch_rsp_d = fetch_rsp_q + 1'b1;
        if (fetch_rsp_q == BeatW'(DescBeats - 1)) begin
          decode_d = 1'b1;
        end
      end
      if (next_load) begin
        decode_d         = 1'b0;
        next_valid_d     = 1'b1;
        fetch_req_d      = '0;
        fetch_rsp_d      = '0;
        fetch_addr_d     = fetch_addr_q + DescBytes;
        fetch_index_d    = fetch_index_q + 1;
        prev_chain_out_d = chain_out;
        if (d.flags[FlagLastBit]) begin
          fetch_done_d = 1'b1;
          last_index_d = fetch_index_q;
        end
      end
      if (load_take) begin
        next_valid_d = 1'b0;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      fetch_addr_q     <= '0;
      fetch_index_q    <= '0;
      fetch_done_q     <= 1'b0;
      fetch_req_q      <= '0;
      fetch_rsp_q      <= '0;
      decode_q         <= 1'b0;
      next_valid_q     <= 1'b0;
      last_index_q     <= '0;
      prev_chain_out_q <= 1'b0;
    end else begin
      fetch_addr_q     <= fetch_addr_d;
      fetch_index_q    <= fetch_index_d;
      fetch_done_q     <= fetch_done_d;
      fetch_req_q      <= fetch_req_d;
      fetch_rsp_q      <= fetch_rsp_d;
      decode_q         <= decode_d;
      next_valid_q     <= next_valid_d;
      last_index_q     <= last_index_d;
      prev_chain_out_q <= prev_chain_out_d;
    end
  end

  // The descriptor's beats as they arrive, and the decoded descriptor with what the CHAIN_IN
  // rules need of it.
  always_ff @(posedge clk_i) begin
    if (desc_we) begin
      desc_bits_q[32'(fetch_rsp_q) * VecBits +: VecBits] <= rsp_data_i;
    end
    if (next_load) begin
      next_q            <= decoded;
      prev_out_inner_q  <= d.out.inner;
      prev_out_count1_q <= d.out.count1;
      prev_out_count2_q <= d.out.count2;
      prev_format_q     <= d.format;
    end
  end

  // ------------------------------------------------------------------------------------------
  // Load stage: one descriptor, loading into its buffer or loaded and waiting for compute.
  typedef enum logic [1:0] {
    LdEmpty,
    LdStart,
    LdBusy,
    LdLoaded
  } load_state_e;

  load_state_e load_state_q, load_state_d;
  job_t        load_q;
  logic        buf_toggle_q, buf_toggle_d;
  logic        load_take;

  // A FENCE descriptor loads once every descriptor before index - FENCE_SKIP has retired (the
  // ones after it write nothing it reads, so it may overlap them); none loads into a buffer
  // whose RESIDUAL B is still being read.
  function automatic logic fence_clear(logic fence, logic [6:0] skip, logic [31:0] index,
                                       logic [31:0] done);
    return !fence || 33'(done) + 33'(skip) >= 33'(index);
  endfunction

  // A WIDE descriptor loads into both buffers once the compute stage has read its own (it is
  // idle), and nothing loads while a WIDE descriptor computes.
  logic next_wide, wide_computing_q;
  assign next_wide = next_q.desc.flags[FlagWideBit];
  assign load_take = state_q == StRun && next_valid_q && load_state_q == LdEmpty &&
                     fence_clear(next_q.desc.flags[FlagFenceBit], next_q.desc.fence_skip,
                                 next_q.index, desc_done_q) &&
                     !res_busy_i[buf_toggle_q] && !wide_computing_q &&
                     (!next_wide || (compute_ready_i && res_busy_i == '0));

  logic needs_load, load_chain_in, load_residual;
  // A CHAIN_IN descriptor's input is written into its buffer by the previous descriptor; a
  // RESIDUAL one's B follows the input (loaded with it, or alone after the chained words).
  assign load_chain_in = load_q.desc.flags[FlagChainInBit];
  assign load_residual = load_q.desc.opcode == OpConv && load_q.desc.flags[FlagResidualBit];
  assign needs_load    = op_uses_a(load_q.desc.opcode) && (!load_chain_in || load_residual);

  always_comb begin
    load_state_d = load_state_q;
    buf_toggle_d = buf_toggle_q;
    if (state_q != StRun) begin
      load_state_d = LdEmpty;
      buf_toggle_d = 1'b0;
    end else begin
      unique case (load_state_q)
        LdEmpty: begin
          if (load_take) begin
            buf_toggle_d = ~buf_toggle_q;
            load_state_d = LdStart;
          end
        end
        LdStart: load_state_d = needs_load ? LdBusy : LdLoaded;
        LdBusy: begin
          if (!load_busy_i) begin
            load_state_d = LdLoaded;
          end
        end
        LdLoaded: begin
          if (compute_ready_i) begin
            load_state_d = LdEmpty;
          end
        end
        default: load_state_d = LdEmpty;
      endcase
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      load_state_q <= LdEmpty;
      buf_toggle_q <= 1'b0;
      load_q       <= '0;
    end else begin
      load_state_q <= load_state_d;
      buf_toggle_q <= buf_toggle_d;
      // The descriptor, in the buffer it loads into.
      if (load_take) begin
        load_q         <= next_q;
        load_q.buf_sel <= buf_toggle_q && !next_wide;
      end
    end
  end

  assign load_start_o    = load_state_q == LdStart && needs_load;
  assign load_a_o        = load_chain_in ? load_q.desc.b : load_q.desc.a;
  assign load_b_o        = load_q.desc.b;
  assign load_two_o      = op_uses_b(load_q.desc.opcode) || (load_residual && !load_chain_in);
  assign load_elem_log2_o = elem_log2(load_q.desc.format);
  assign load_planes_o    = load_q.desc.a_planar[0]
                                ? 3'(load_q.desc.a.inner >> load_elem_log2_o) : 3'd0;
  assign load_base_o     = (load_q.buf_sel ? SpadAw'(SpadWords) : '0) +
                           (load_chain_in ? SpadAw'(load_q.a_words) : '0);
  assign compute_start_o = state_q == StRun && load_state_q == LdLoaded && compute_ready_i;
  assign compute_job_o   = load_q;
  assign compute_job_valid_o = state_q == StRun && load_state_q != LdEmpty;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wide_computing_q <= 1'b0;
    end else if (state_q != StRun) begin
      wide_computing_q <= 1'b0;
    end else if (compute_start_o) begin
      wide_computing_q <= load_q.desc.flags[FlagWideBit];
    end else if (compute_ready_i) begin
      wide_computing_q <= 1'b0;  // its feeder has read the buffers
    end
  end

  // ------------------------------------------------------------------------------------------
  // Job state, errors, watchdog, completion record.
  logic [RecBytes*8-1:0]  record;
  logic [$clog2(RecBeats+1)-1:0] rec_beat_q, rec_beat_d;
  logic                   job_finished;
  logic                   fault_any;
  logic [7:0]             fault_code;
  logic [31:0]            fault_desc, fault_addr;

  always_comb begin
    record = '0;
    record[CompletionTagWord * 32 +: 32]      = tag_q;
    record[CompletionStatusWord * 32 +: 32]   = 32'(error_code_q);
    record[CompletionDescDoneWord * 32 +: 32] = desc_done_q;
    record[CompletionCyclesWord * 32 +: 32]   = cycles_q;
  end
  assign job_finished = fetch_done_q && desc_done_q == last_index_q + 1 && compute_idle_i;

  always_comb begin
    fault_any  = 1'b0;
    fault_code = ErrNone;
    fault_desc = '0;
    fault_addr = '0;
    if (decode_q && (bad_opcode || bad_field)) begin
      fault_any  = 1'b1;
      fault_code = bad_opcode ? ErrBadOpcode : ErrBadField;
      fault_desc = fetch_index_q;
      fault_addr = fetch_addr_q;
    end else if (fault_i) begin
      fault_any  = 1'b1;
      fault_code = ErrDmaWindow;
      fault_addr = fault_addr_i;
      unique case (32'(fault_client_i))
        ClientCmd:    fault_desc = fetch_index_q;
        ClientLoad:   fault_desc = load_q.index;
        ClientWeight: fault_desc = weight_index_i;
        ClientStore:  fault_desc = store_index_i;
        default:      fault_desc = '0;
      endcase
    end else if (watchdog_q + 32'd1 == watchdog_limit_i) begin
      // A limit of 0 is reached only when the count wraps: 2^32 cycles.
      fault_any  = 1'b1;
      fault_code = ErrWatchdog;
      fault_desc = desc_done_q;
    end
  end

  logic doorbell_ok;
  assign doorbell_ok = queue_base_i[3:0] == '0 && completion_addr_i[3:0] == '0;

  logic rec_fire, rec_last;
  assign rec_fire = req_valid_o && req_ready_i && req_write_o;
  // The record's last beat is written (or, outside the window, skipped: not a second fault).
  assign rec_last = fault_i || (rec_fire && 32'(rec_beat_q) == RecBeats - 1);

  always_comb begin
    state_d      = state_q;
    tag_d        = tag_q;
    desc_done_d  = desc_done_q;
    cycles_d     = cycles_q;
    watchdog_d   = watchdog_q;
    error_code_d = error_code_q;
    error_desc_d = error_desc_q;
    error_addr_d = error_addr_q;
    rec_beat_d   = rec_beat_q;
    unique case (state_q)
      StIdle: begin
        if (doorbell_i) begin
          tag_d       = doorbell_tag_i;
          desc_done_d = '0;
          cycles_d    = '0;
          watchdog_d  = '0;
          rec_beat_d  = '0;
          if (doorbell_ok) begin
            state_d = StRun;
          end else begin
            error_code_d = ErrBadQueue;
            error_desc_d = '0;
            error_addr_d = queue_base_i;
            state_d      = StHalted;  // no record: its address is the bad one
          end
        end
      end
      StRun: begin
        cycles_d   = cycles_q + 1;
        watchdog_d = compute_retire_i ? '0 : watchdog_q + 1;
        if (compute_retire_i) begin
          desc_done_d = desc_done_q + 1;
        end
        if (fault_any) begin
          error_code_d = fault_code;
          error_desc_d = fault_desc;
          error_addr_d = fault_addr;
          state_d      = StAbort;
        end else if (job_finished) begin
          state_d = StRecord;
        end
      end
      StAbort: begin
        if (!reads_pending_i) begin
          state_d = StRecord;
        end
      end
      StRecord: begin
        if (rec_fire) begin
          rec_beat_d = rec_beat_q + 1'b1;
        end
        if (rec_last) begin
          state_d = error_code_q == ErrNone ? StIdle : StHalted;
        end
      end
      StHalted: ;
      StResetting: begin
        if (!reads_pending_i) begin
          state_d      = StIdle;
          error_code_d = ErrNone;
          error_desc_d = '0;
          error_addr_d = '0;
          desc_done_d  = '0;
        end
      end
      default: state_d = StIdle;
    endcase
  end

  // A soft reset (a register write) preempts whatever the job does, like a reset of the state.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q      <= StIdle;
      tag_q        <= '0;
      desc_done_q  <= '0;
      cycles_q     <= '0;
      watchdog_q   <= '0;
      error_code_q <= ErrNone;
      error_desc_q <= '0;
      error_addr_q <= '0;
      rec_beat_q   <= '0;
    end else if (soft_reset_i) begin
      state_q <= StResetting;
    end else begin
      state_q      <= state_d;
      tag_q        <= tag_d;
      desc_done_q  <= desc_done_d;
      cycles_q     <= cycles_d;
      watchdog_q   <= watchdog_d;
      error_code_q <= error_code_d;
      error_desc_q <= error_desc_d;
      error_addr_q <= error_addr_d;
      rec_beat_q   <= rec_beat_d;
    end
  end

  // The memory client: fetch reads in StRun, the record in StRecord.
  always_comb begin
    req_valid_o = 1'b0;
    req_write_o = 1'b0;
    req_addr_o  = fetch_addr_q + (32'(fetch_req_q) << VecIdxW);
    req_wdata_o = '0;
    req_wstrb_o = '0;
    if (state_q == StRecord) begin
      req_valid_o = 1'b1;
      req_write_o = 1'b1;
      req_addr_o  = completion_addr_i + (32'(rec_beat_q) << VecIdxW);
      for (int unsigned b = 0; b < Vec; b++) begin
        if (32'(rec_beat_q) * Vec + b < RecBytes) begin
          req_wdata_o[b*8 +: 8] = record[(32'(rec_beat_q) * Vec + b) * 8 +: 8];
          req_wstrb_o[b]        = 1'b1;
        end
      end
    end else if (fetching && fetch_req_q != BeatW'(DescBeats)) begin
      req_valid_o = 1'b1;
    end
  end

  assign flush_o      = state_q == StAbort || state_q == StResetting || soft_reset_i;
  assign busy_o       = state_q == StRun || state_q == StAbort || state_q == StRecord;
  assign error_o      = state_q == StHalted || error_code_q != ErrNone;
  assign resetting_o  = state_q == StResetting;
  assign reset_done_o = state_q == StResetting && !reads_pending_i && !soft_reset_i;
  assign job_tag_o    = tag_q;
  assign desc_done_o  = desc_done_q;
  assign error_code_o = error_code_q;
  assign error_desc_o = error_desc_q;
  assign error_addr_o = error_addr_q;
  assign irq_done_o   = state_q == StRecord && error_code_q == ErrNone && rec_last;
  assign irq_error_o  = (state_q == StRecord && error_code_q != ErrNone && rec_last) ||
                        (state_q == StIdle && doorbell_i && !doorbell_ok);

  // Busy cycles in which the compute stage has nothing to do, by cause.
  assign stall_fetch_o = state_q == StRun && compute_ready_i && load_state_q == LdEmpty;
  assign stall_input_o = state_q == StRun && compute_ready_i &&
                         (load_state_q == LdStart || load_state_q == LdBusy);

`ifndef SYNTHESIS
  // CHAIN_OUT / CHAIN_IN as handed to the compute stage. Decode enforces the pairing (a
  // violation is BAD_FIELD); these catch a decode or hand-off that lets a broken pair through:
  // a CHAIN_IN descriptor starts right after a CHAIN_OUT producer, in the other buffer (the one
  // the producer's drain writes); a producer is never LAST and is always followed by its
  // consumer; only array operations produce and only a CONV consumes.
  logic started_chain_out_q, started_buf_sel_q, started_chain_out_d, started_buf_sel_d;
  always_comb begin
    started_chain_out_d = started_chain_out_q;
    started_buf_sel_d   = started_buf_sel_q;
    if (state_q != StRun) begin
      started_chain_out_d = 1'b0;
    end else if (compute_start_o) begin
      started_chain_out_d = compute_job_o.desc.flags[FlagChainOutBit];
      started_buf_sel_d   = compute_job_o.buf_sel;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      started_chain_out_q <= 1'b0;
      started_buf_sel_q   <= 1'b0;
    end else begin
      started_chain_out_q <= started_chain_out_d;
      started_buf_sel_q   <= started_buf_sel_d;
    end
  end

  a_chain_in_after_out: assert property (@(posedge clk_i) disable iff (!rst_ni)
      compute_start_o && compute_job_o.desc.flags[FlagChainInBit] |->
      started_chain_out_q && compute_job_o.buf_sel != started_buf_sel_q &&
      ((compute_job_o.desc.opcode == OpConv && !compute_job_o.desc.flags[FlagChainOutBit]) ||
       compute_job_o.desc.opcode == OpDwconv))
    else $error("CHAIN_IN descriptor %0d without a CHAIN_OUT producer before it",
                compute_job_o.index);
  a_chain_out_consumed: assert property (@(posedge clk_i) disable iff (!rst_ni)
      compute_start_o && started_chain_out_q |-> compute_job_o.desc.flags[FlagChainInBit])
    else $error("descriptor %0d after a CHAIN_OUT producer is not CHAIN_IN", compute_job_o.index);
  a_chain_out_producer: assert property (@(posedge clk_i) disable iff (!rst_ni)
      compute_start_o && compute_job_o.desc.flags[FlagChainOutBit] |->
      op_uses_array(compute_job_o.desc.opcode) && !compute_job_o.desc.flags[FlagLastBit])
    else $error("CHAIN_OUT descriptor %0d is LAST or not an array operation",
                compute_job_o.index);
  // A WIDE tile's load writes both buffers: the compute stage reads neither meanwhile.
  a_wide_loads_alone: assert property (@(posedge clk_i) disable iff (!rst_ni)
      state_q == StRun && load_q.desc.flags[FlagWideBit] &&
      (load_state_q == LdStart || load_state_q == LdBusy) |-> compute_ready_i && res_busy_i == '0)
    else $error("WIDE descriptor %0d loads while the compute stage reads", load_q.index);
  a_chain_out_not_dangling: assert property (@(posedge clk_i) disable iff (!rst_ni)
      state_q == StRun && job_finished |-> !started_chain_out_q)
    else $error("job finished with a CHAIN_OUT result nobody read");
  // A FENCE descriptor's loads start only once the descriptors it waits for have retired.
  a_fence_waits: assert property (@(posedge clk_i) disable iff (!rst_ni)
      state_q == StRun && load_start_o |->
      fence_clear(load_q.desc.flags[FlagFenceBit], load_q.desc.fence_skip, load_q.index,
                  desc_done_q))
    else $error("FENCE descriptor %0d loads before the ones it waits for retired", load_q.index);
`endif

`ifdef NPU_COVERAGE
  // ------------------------------------------------------------------------------------------
  // Functional coverage (the coverage build only: sim/CMakeLists.txt, NNCOSIM_COVERAGE). Each
  // point is named for what a regression made the NPU accept or survive; docs/verification-plan.md
  // ties them to features and sim/coverage_waivers.txt lists the ones unreachable by design.
  logic       cov_accept;
  logic [7:0] cov_prev_op_q;
  logic       cov_prev_valid_q;
  assign cov_accept = next_load;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cov_prev_valid_q <= 1'b0;
      cov_prev_op_q    <= '0;
    end else if (state_q != StRun) begin
      cov_prev_valid_q <= 1'b0;
    end else if (cov_accept) begin
      cov_prev_valid_q <= 1'b1;
      cov_prev_op_q    <= d.opcode;
    end
  end

  // Every opcode, unsigned and signed, and after every opcode in the same job, written out: the
  // points of a generate loop's iterations would merge into one.
`define NPU_COVER_OPCODE(NAME, OP) \
  NAME``_accepted: cover property (@(posedge clk_i) cov_accept && d.opcode == OP); \
  NAME``_unsigned: cover property (@(posedge clk_i) cov_accept && d.opcode == OP && !d.a_signed); \
  NAME``_signed: cover property (@(posedge clk_i) cov_accept && d.opcode == OP && d.a_signed);
`define NPU_COVER_AFTER(PREV, PREV_OP, NAME, OP) \
  PREV``_then_``NAME: cover property (@(posedge clk_i) cov_accept && cov_prev_valid_q && \
                                      cov_prev_op_q == PREV_OP && d.opcode == OP);
  `NPU_COVER_OPCODE(nop, OpNop)
  `NPU_COVER_OPCODE(conv, OpConv)
  `NPU_COVER_OPCODE(dwconv, OpDwconv)
  `NPU_COVER_OPCODE(maxpool, OpMaxpool)
  `NPU_COVER_OPCODE(avgpool, OpAvgpool)
  `NPU_COVER_OPCODE(add, OpAdd)
  `NPU_COVER_OPCODE(mul, OpMul)
  `NPU_COVER_OPCODE(lut, OpLut)
  `NPU_COVER_OPCODE(func, OpFunc)
  `NPU_COVER_OPCODE(norm, OpNorm)
  `NPU_COVER_AFTER(nop, OpNop, nop, OpNop)
  `NPU_COVER_AFTER(nop, OpNop, conv, OpConv)
  `NPU_COVER_AFTER(nop, OpNop, dwconv, OpDwconv)
  `NPU_COVER_AFTER(nop, OpNop, maxpool, OpMaxpool)
  `NPU_COVER_AFTER(nop, OpNop, avgpool, OpAvgpool)
  `NPU_COVER_AFTER(nop, OpNop, add, OpAdd)
  `NPU_COVER_AFTER(nop, OpNop, mul, OpMul)
  `NPU_COVER_AFTER(nop, OpNop, lut, OpLut)
  `NPU_COVER_AFTER(nop, OpNop, func, OpFunc)
  `NPU_COVER_AFTER(nop, OpNop, norm, OpNorm)
  `NPU_COVER_AFTER(conv, OpConv, nop, OpNop)
  `NPU_COVER_AFTER(conv, OpConv, conv, OpConv)
  `NPU_COVER_AFTER(conv, OpConv, dwconv, OpDwconv)
  `NPU_COVER_AFTER(conv, OpConv, maxpool, OpMaxpool)
  `NPU_COVER_AFTER(conv, OpConv, avgpool, OpAvgpool)
  `NPU_COVER_AFTER(conv, OpConv, add, OpAdd)
  `NPU_COVER_AFTER(conv, OpConv, mul, OpMul)
  `NPU_COVER_AFTER(conv, OpConv, lut, OpLut)
  `NPU_COVER_AFTER(conv, OpConv, func, OpFunc)
  `NPU_COVER_AFTER(conv, OpConv, norm, OpNorm)
  `NPU_COVER_AFTER(dwconv, OpDwconv, nop, OpNop)
  `NPU_COVER_AFTER(dwconv, OpDwconv, conv, OpConv)
  `NPU_COVER_AFTER(dwconv, OpDwconv, dwconv, OpDwconv)
  `NPU_COVER_AFTER(dwconv, OpDwconv, maxpool, OpMaxpool)
  `NPU_COVER_AFTER(dwconv, OpDwconv, avgpool, OpAvgpool)
  `NPU_COVER_AFTER(dwconv, OpDwconv, add, OpAdd)
  `NPU_COVER_AFTER(dwconv, OpDwconv, mul, OpMul)
  `NPU_COVER_AFTER(dwconv, OpDwconv, lut, OpLut)
  `NPU_COVER_AFTER(dwconv, OpDwconv, func, OpFunc)
  `NPU_COVER_AFTER(dwconv, OpDwconv, norm, OpNorm)
  `NPU_COVER_AFTER(maxpool, OpMaxpool, nop, OpNop)
  `NPU_COVER_AFTER(maxpool, OpMaxpool, conv, OpConv)
  `NPU_COVER_AFTER(maxpool, OpMaxpool, dwconv, OpDwconv)
  `NPU_COVER_AFTER(maxpool, OpMaxpool, maxpool, OpMaxpool)
  `NPU_COVER_AFTER(maxpool, OpMaxpool, avgpool, OpAvgpool)
  `NPU_COVER_AFTER(maxpool, OpMaxpool, add, OpAdd)
  `NPU_COVER_AFTER(maxpool, OpMaxpool, mul, OpMul)
  `NPU_COVER_AFTER(maxpool, OpMaxpool, lut, OpLut)
  `NPU_COVER_AFTER(maxpool, OpMaxpool, func, OpFunc)
  `NPU_COVER_AFTER(maxpool, OpMaxpool, norm, OpNorm)
  `NPU_COVER_AFTER(avgpool, OpAvgpool, nop, OpNop)
  `NPU_COVER_AFTER(avgpool, OpAvgpool, conv, OpConv)
  `NPU_COVER_AFTER(avgpool, OpAvgpool, dwconv, OpDwconv)
  `NPU_COVER_AFTER(avgpool, OpAvgpool, maxpool, OpMaxpool)
  `NPU_COVER_AFTER(avgpool, OpAvgpool, avgpool, OpAvgpool)
  `NPU_COVER_AFTER(avgpool, OpAvgpool, add, OpAdd)
  `NPU_COVER_AFTER(avgpool, OpAvgpool, mul, OpMul)
  `NPU_COVER_AFTER(avgpool, OpAvgpool, lut, OpLut)
  `NPU_COVER_AFTER(avgpool, OpAvgpool, func, OpFunc)
  `NPU_COVER_AFTER(avgpool, OpAvgpool, norm, OpNorm)
  `NPU_COVER_AFTER(add, OpAdd, nop, OpNop)
  `NPU_COVER_AFTER(add, OpAdd, conv, OpConv)
  `NPU_COVER_AFTER(add, OpAdd, dwconv, OpDwconv)
  `NPU_COVER_AFTER(add, OpAdd, maxpool, OpMaxpool)
  `NPU_COVER_AFTER(add, OpAdd, avgpool, OpAvgpool)
  `NPU_COVER_AFTER(add, OpAdd, add, OpAdd)
  `NPU_COVER_AFTER(add, OpAdd, mul, OpMul)
  `NPU_COVER_AFTER(add, OpAdd, lut, OpLut)
  `NPU_COVER_AFTER(add, OpAdd, func, OpFunc)
  `NPU_COVER_AFTER(add, OpAdd, norm, OpNorm)
  `NPU_COVER_AFTER(mul, OpMul, nop, OpNop)
  `NPU_COVER_AFTER(mul, OpMul, conv, OpConv)
  `NPU_COVER_AFTER(mul, OpMul, dwconv, OpDwconv)
  `NPU_COVER_AFTER(mul, OpMul, maxpool, OpMaxpool)
  `NPU_COVER_AFTER(mul, OpMul, avgpool, OpAvgpool)
  `NPU_COVER_AFTER(mul, OpMul, add, OpAdd)
  `NPU_COVER_AFTER(mul, OpMul, mul, OpMul)
  `NPU_COVER_AFTER(mul, OpMul, lut, OpLut)
  `NPU_COVER_AFTER(mul, OpMul, func, OpFunc)
  `NPU_COVER_AFTER(mul, OpMul, norm, OpNorm)
  `NPU_COVER_AFTER(lut, OpLut, nop, OpNop)
  `NPU_COVER_AFTER(lut, OpLut, conv, OpConv)
  `NPU_COVER_AFTER(lut, OpLut, dwconv, OpDwconv)
  `NPU_COVER_AFTER(lut, OpLut, maxpool, OpMaxpool)
  `NPU_COVER_AFTER(lut, OpLut, avgpool, OpAvgpool)
  `NPU_COVER_AFTER(lut, OpLut, add, OpAdd)
  `NPU_COVER_AFTER(lut, OpLut, mul, OpMul)
  `NPU_COVER_AFTER(lut, OpLut, lut, OpLut)
  `NPU_COVER_AFTER(lut, OpLut, func, OpFunc)
  `NPU_COVER_AFTER(lut, OpLut, norm, OpNorm)
  `NPU_COVER_AFTER(func, OpFunc, nop, OpNop)
  `NPU_COVER_AFTER(func, OpFunc, conv, OpConv)
  `NPU_COVER_AFTER(func, OpFunc, dwconv, OpDwconv)
  `NPU_COVER_AFTER(func, OpFunc, maxpool, OpMaxpool)
  `NPU_COVER_AFTER(func, OpFunc, avgpool, OpAvgpool)
  `NPU_COVER_AFTER(func, OpFunc, add, OpAdd)
  `NPU_COVER_AFTER(func, OpFunc, mul, OpMul)
  `NPU_COVER_AFTER(func, OpFunc, lut, OpLut)
  `NPU_COVER_AFTER(func, OpFunc, func, OpFunc)
  `NPU_COVER_AFTER(func, OpFunc, norm, OpNorm)
  `NPU_COVER_AFTER(norm, OpNorm, nop, OpNop)
  `NPU_COVER_AFTER(norm, OpNorm, conv, OpConv)
  `NPU_COVER_AFTER(norm, OpNorm, dwconv, OpDwconv)
  `NPU_COVER_AFTER(norm, OpNorm, maxpool, OpMaxpool)
  `NPU_COVER_AFTER(norm, OpNorm, avgpool, OpAvgpool)
  `NPU_COVER_AFTER(norm, OpNorm, add, OpAdd)
  `NPU_COVER_AFTER(norm, OpNorm, mul, OpMul)
  `NPU_COVER_AFTER(norm, OpNorm, lut, OpLut)
  `NPU_COVER_AFTER(norm, OpNorm, func, OpFunc)
  `NPU_COVER_AFTER(norm, OpNorm, norm, OpNorm)
`undef NPU_COVER_OPCODE
`undef NPU_COVER_AFTER

  // Window geometry per opcode.
  conv_1x1: cover property (@(posedge clk_i) cov_accept && d.opcode == OpConv &&
                            d.kernel_w == 8'd1 && d.kernel_h == 8'd1);
  conv_3x3: cover property (@(posedge clk_i) cov_accept && d.opcode == OpConv &&
                            d.kernel_w == 8'd3 && d.kernel_h == 8'd3);
  conv_large_kernel: cover property (@(posedge clk_i) cov_accept && d.opcode == OpConv &&
                                     d.kernel_w > 8'd3);
  conv_strided: cover property (@(posedge clk_i) cov_accept && d.opcode == OpConv &&
                                d.stride_w > 8'd1);
  conv_dilated: cover property (@(posedge clk_i) cov_accept && d.opcode == OpConv &&
                                d.dilation_w > 8'd1);
  conv_padded: cover property (@(posedge clk_i) cov_accept && d.opcode == OpConv &&
                               d.pad_top != 8'd0 && d.pad_left != 8'd0);
  conv_chain_in: cover property (@(posedge clk_i) cov_accept && d.opcode == OpConv && chain_in);
  conv_wide: cover property (@(posedge clk_i) cov_accept && d.opcode == OpConv && wide);
  conv_planar: cover property (@(posedge clk_i) cov_accept && d.opcode == OpConv &&
                               d.a_planar[0]);
  dwconv_taps: cover property (@(posedge clk_i) cov_accept && d.opcode == OpDwconv && taps);
  dwconv_taps_float: cover property (@(posedge clk_i) cov_accept && d.opcode == OpDwconv &&
                                     taps && d.format != 2'(FmtInt8));
  dwconv_diagonal: cover property (@(posedge clk_i) cov_accept && d.opcode == OpDwconv &&
                                   !taps);
  dwconv_strided: cover property (@(posedge clk_i) cov_accept && d.opcode == OpDwconv &&
                                  d.stride_w > 8'd1);
  dwconv_dilated: cover property (@(posedge clk_i) cov_accept && d.opcode == OpDwconv &&
                                  d.dilation_w > 8'd1);
  dwconv_chain_out: cover property (@(posedge clk_i) cov_accept && d.opcode == OpDwconv &&
                                    chain_out);
  maxpool_strided: cover property (@(posedge clk_i) cov_accept && d.opcode == OpMaxpool &&
                                   d.stride_w > 8'd1);
  maxpool_padded: cover property (@(posedge clk_i) cov_accept && d.opcode == OpMaxpool &&
                                  d.pad_top != 8'd0);
  avgpool_strided: cover property (@(posedge clk_i) cov_accept && d.opcode == OpAvgpool &&
                                   d.stride_w > 8'd1);
  avgpool_padded: cover property (@(posedge clk_i) cov_accept && d.opcode == OpAvgpool &&
                                  d.pad_top != 8'd0);
  add_broadcast: cover property (@(posedge clk_i) cov_accept && d.opcode == OpAdd &&
                                 d.b.stride1 == 32'd0);
  lut_strided_rows: cover property (@(posedge clk_i) cov_accept && d.opcode == OpLut &&
                                    d.a.stride1 != 32'(d.a.inner));

  // Tile edges: partial vectors in every dimension the array and the DMA split, the whole
  // accumulator bank, three-dimensional walks and unaligned DRAM rows.
  conv_partial_k_block: cover property (@(posedge clk_i) cov_accept && d.opcode == OpConv &&
                                        d.a.inner[VecIdxW-1:0] != '0);
  conv_several_k_blocks: cover property (@(posedge clk_i) cov_accept && d.opcode == OpConv &&
                                         32'(d.a.inner) > 2 * Vec);
  conv_partial_out_block: cover property (@(posedge clk_i) cov_accept && d.opcode == OpConv &&
                                          d.out.inner[VecIdxW-1:0] != '0);
  conv_several_out_blocks: cover property (@(posedge clk_i) cov_accept && d.opcode == OpConv &&
                                           32'(d.out.inner) > 2 * Vec);
  conv_single_pixel_tile: cover property (@(posedge clk_i) cov_accept && d.opcode == OpConv &&
                                          p_count == 32'd1);
  conv_full_accumulator: cover property (@(posedge clk_i) cov_accept && d.opcode == OpConv &&
                                         p_count == AccDepth);
  dwconv_partial_block: cover property (@(posedge clk_i) cov_accept && d.opcode == OpDwconv &&
                                        d.out.inner[VecIdxW-1:0] != '0);
  pool_partial_block: cover property (@(posedge clk_i) cov_accept &&
                                      (d.opcode == OpMaxpool || d.opcode == OpAvgpool) &&
                                      d.out.inner[VecIdxW-1:0] != '0);
  eltwise_partial_word: cover property (@(posedge clk_i) cov_accept &&
                                        (d.opcode == OpAdd || d.opcode == OpMul ||
                                         d.opcode == OpLut) && d.a.inner[VecIdxW-1:0] != '0);
  // (Opcodes compared one by one: with op_uses_a() in its condition, load_unaligned never fired
  // under Verilator 5.006 while store_unaligned fired thousands of times.)
  eltwise_3d_walk: cover property (@(posedge clk_i) cov_accept &&
                                   (d.opcode == OpAdd || d.opcode == OpMul ||
                                    d.opcode == OpLut) && d.a.count3 > 1);
  load_unaligned: cover property (@(posedge clk_i) cov_accept && d.opcode != OpNop &&
                                  !chain_in && d.a.addr[VecIdxW-1:0] != '0);
  store_unaligned: cover property (@(posedge clk_i) cov_accept && d.opcode != OpNop &&
                                   !chain_out && d.out.addr[VecIdxW-1:0] != '0);

  // Faults and recovery.
  bad_opcode_seen: cover property (@(posedge clk_i) state_q == StRun && decode_q && bad_opcode);
  bad_field_seen: cover property (@(posedge clk_i) state_q == StRun && decode_q && !bad_opcode &&
                                  bad_field);
  dma_window_fault: cover property (@(posedge clk_i) state_q == StRun && fault_i);
  watchdog_fired: cover property (@(posedge clk_i) state_q == StRun &&
                                  watchdog_q + 32'd1 == watchdog_limit_i);
  soft_reset_mid_job: cover property (@(posedge clk_i) state_q == StRun && soft_reset_i);
`endif

endmodule
