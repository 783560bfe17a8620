// Drain of the compute stage: empties full accumulator banks in order, an entry per cycle,
// through requantization (int8 array operations; npu_compute owns npu_requant) or the pooling
// and float finish (npu_pool), to the store DMA, or, for CHAIN_OUT, into the scratchpad buffer of
// the next descriptor.
//
// Per bank: copy its job, start the store job (not for CHAIN_OUT), read the entries, release the
// bank once the last entry has left (the feeder may claim it again while the store finishes),
// wait for the last word to be stored, retire the descriptor after its last bank.
// CHAIN_OUT words go to the next descriptor's buffer, pixel by pixel in the drain's order; the
// count of words written so far is what the CHAIN_IN feeder may read.
module npu_drain
  import npu_pkg::*;
  import npu_core_pkg::*;
(
  input  logic               clk_i,
  input  logic               rst_ni,
  input  logic               flush_i,

  // Accumulator banks (npu_accum): bank_o's flag, job and entries.
  output logic [BankW-1:0]   bank_o,
  input  logic               bank_full_i,
  input  bank_job_t          bank_job_i,
  output logic               acc_rd_o,
  output logic [AccAw-1:0]   acc_rd_addr_o,
  input  word_lanes_t        acc_rdata_i,
  input  logic [15:0]        acc_rcount_i,
  input  word_lanes_t        bias_i,         // the bank's biases (float CONV / DWCONV)
  output logic               release_o,
  output logic [15:0]        rel_seq_o,      // banks released so far

  output bank_job_t          job_o,          // the block being drained
  output logic               idle_o,
  output logic               retire_o,       // its descriptor retires

  // Requantization: the entry (acc_rdata_i) goes there unless it is pooled or float. The
  // requantizer serves element-wise operations while elem_active_i.
  input  logic               elem_active_i,
  output logic               rq_valid_o,
  input  logic               rq_ready_i,
  input  logic               rq_busy_i,
  input  logic               rq_out_valid_i,

  // Pooled and float words.
  output logic               pool_valid_o,
  input  logic               pool_ready_i,
  output logic [VecBits-1:0] pool_data_o,

  // The store DMA.
  output logic               st_start_o,
  output tensor_t            st_tensor_o,
  input  logic               st_busy_i,

  // CHAIN_OUT: requantized words (or a float DWCONV's finished words, vw an entry) go to the
  // scratchpad instead of the store. Words written are counted per scratchpad buffer: a
  // CHAIN_OUT descriptor's start (chain_clear_i) restarts the count of the buffer it writes
  // (chain_clear_buf_i) while its producer may still be writing the other (a depthwise layer
  // between two pointwise ones).
  output logic               chain_o,
  output logic               chain_we_o,
  output logic [SpadAw-1:0]  chain_waddr_o,
  input  logic               chain_clear_i,
  input  logic               chain_clear_buf_i,
  output logic [1:0][31:0]   chain_written_o
);

  typedef enum logic [2:0] {
    DrIdle,
    DrStore,
    DrRead,
    DrRelease,
    DrFlush,
    DrRetire
  } drain_state_e;

  drain_state_e state_q, state_d;
  logic [15:0]  seq_q, seq_d;                  // banks drained
  logic [BankW-1:0] bank_q, bank_d;            // the bank of block seq_q
  logic [15:0]  rel_seq_q, rel_seq_d;          // banks released
  logic [31:0]  p_q, p_d;                      // entry to read
  logic         entry_valid_q, entry_valid_d;  // the read port holds an entry for the next stage
  logic [1:0][31:0] chain_written_q, chain_written_d;
  logic [SpadAw-1:0] cw_addr_q, cw_addr_d, cw_base_q, cw_base_d;  // the word, its pixel's
  // The drain keeps its own copy of the bank's job: the feeder reuses the bank (and its job) once
  // it is released, before the store has finished.
  bank_job_t    job_q;
  logic         job_load;

  logic is_pool, rd, entry_take, pool_take, pool_ready, pool_busy;
  // Pooling and float entries finish in npu_pool.
  assign is_pool = !op_uses_array(job_q.opcode) || job_q.format != 2'(FmtInt8);
  // The read port advances when its entry is taken (or it is empty).
  assign rd         = state_q == DrRead && (!entry_valid_q || entry_take);
  assign entry_take = entry_valid_q && (is_pool ? pool_take : rq_ready_i) && !elem_active_i;
  assign job_load   = state_q == DrIdle && bank_full_i;
  assign release_o  = state_q == DrRelease && !entry_valid_q;

  always_comb begin
    state_d       = state_q;
    seq_d         = seq_q;
    bank_d        = bank_q;
    p_d           = p_q;
    entry_valid_d = entry_valid_q;
    if (rd) begin
      entry_valid_d = 1'b1;
    end else if (entry_take) begin
      entry_valid_d = 1'b0;
    end
    unique case (state_q)
      DrIdle: begin
        if (bank_full_i) begin
          state_d = DrStore;
        end
      end
      DrStore: begin
        if (job_q.chain || !st_busy_i) begin
          p_d     = '0;
          state_d = DrRead;
        end
      end
      DrRead: begin
        if (rd) begin
          p_d = p_q + 1;
          if (p_q + 1 == job_q.p_count) begin
            state_d = DrRelease;
          end
        end
      end
      DrRelease: begin
        // The last entry has left for requantization: the bank and its quantization are free.
        if (!entry_valid_q) begin
          state_d = DrFlush;
        end
      end
      DrFlush: begin
        // Wait for the last word to reach the store, then for the store to finish.
        if (!entry_valid_q && !rq_busy_i && !pool_busy && !st_busy_i) begin
          state_d = DrRetire;
        end
      end
      DrRetire: begin
        seq_d   = seq_q + 1;
        bank_d  = next_bank(bank_q);
        state_d = DrIdle;
      end
      default: state_d = DrIdle;
    endcase
  end

  assign rel_seq_d = rel_seq_q + 16'(release_o);

  // CHAIN_OUT: an entry's words (one requantized word, or a float entry's) go to its pixel's
  // words of the block, the next entry's chain_wpr words further on.
  logic chain, pool_last;
  assign chain      = !elem_active_i && job_q.chain;
  assign chain_we_o = (rq_out_valid_i || pool_valid_o) && chain;

  always_comb begin
    cw_addr_d = cw_addr_q;
    cw_base_d = cw_base_q;
    if (state_q == DrStore) begin
      cw_addr_d = job_q.chain_addr;
      cw_base_d = job_q.chain_addr;
    end else if (chain_we_o && pool_valid_o && !pool_last) begin
      cw_addr_d = cw_addr_q + 1'b1;
    end else if (chain_we_o) begin
      cw_addr_d = cw_base_q + SpadAw'(job_q.chain_wpr);
      cw_base_d = cw_base_q + SpadAw'(job_q.chain_wpr);
    end
  end

  logic chain_buf;  // the buffer the chained words go to
  assign chain_buf = cw_addr_q >= SpadAw'(SpadWords);

  always_comb begin
    chain_written_d = chain_written_q;
    if (chain_we_o) begin
      chain_written_d[chain_buf] = chain_written_q[chain_buf] + 1;
    end
    if (chain_clear_i) begin
      // The previous chain's reader of that buffer has issued every word; the producer of a
      // chained input is done with the other.
      chain_written_d[chain_clear_buf_i] = '0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q         <= DrIdle;
      seq_q           <= '0;
      bank_q          <= '0;
      rel_seq_q       <= '0;
      p_q             <= '0;
      entry_valid_q   <= 1'b0;
      chain_written_q <= '0;
    end else if (flush_i) begin
      state_q         <= DrIdle;
      seq_q           <= '0;
      bank_q          <= '0;
      rel_seq_q       <= '0;
      entry_valid_q   <= 1'b0;
      chain_written_q <= '0;
    end else begin
      state_q         <= state_d;
      seq_q           <= seq_d;
      bank_q          <= bank_d;
      rel_seq_q       <= rel_seq_d;
      p_q             <= p_d;
      entry_valid_q   <= entry_valid_d;
      chain_written_q <= chain_written_d;
    end
  end

  always_ff @(posedge clk_i) begin
    if (job_load) begin
      job_q <= bank_job_i;
    end
    cw_addr_q <= cw_addr_d;
    cw_base_q <= cw_base_d;
  end

  // ------------------------------------------------------------------------------------------
  // Pooling finish.
  npu_pool u_pool (
    .clk_i,
    .rst_ni,
    .flush_i,
    .in_valid_i (entry_valid_q && is_pool),
    .in_ready_o (pool_ready),
    .acc_i      (acc_rdata_i),
    .count_i    (acc_rcount_i),
    .max_i      (job_q.opcode == OpMaxpool),
    .truncate_i (job_q.truncate),
    .act_min_i  (job_q.act_min),
    .act_max_i  (job_q.act_max),
    .format_i   (job_q.format),
    .fp_min_i   (job_q.fp_min),
    .fp_max_i   (job_q.fp_max),
    .add_bias_i (op_uses_array(job_q.opcode)),
    .bias_i,
    .words_i    (3'((32'(job_q.out.inner) + Vec - 1) >> VecIdxW)),
    .busy_o     (pool_busy),
    .out_valid_o(pool_valid_o),
    .out_last_o (pool_last),
    .out_ready_i(pool_ready_i),
    .data_o     (pool_data_o)
  );
  assign pool_take = entry_valid_q && is_pool && pool_ready;

  // ------------------------------------------------------------------------------------------
  // Outputs.
  assign bank_o          = bank_q;
  assign acc_rd_o        = rd;
  assign acc_rd_addr_o   = AccAw'(p_q);
  assign rel_seq_o       = rel_seq_q;
  assign job_o           = job_q;
  assign idle_o          = state_q == DrIdle;
  assign retire_o        = state_q == DrRetire && job_q.last;
  assign rq_valid_o      = entry_valid_q && !is_pool;
  assign st_start_o      = state_q == DrStore && !job_q.chain && !st_busy_i;
  assign st_tensor_o     = job_q.out;
  assign chain_o         = chain;
  assign chain_waddr_o   = cw_addr_q;
  assign chain_written_o = chain_written_q;

endmodule
