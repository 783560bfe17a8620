// Weight loader of the compute stage: takes an array descriptor's weight stream (per
// output-channel block: WeightQuantWords words of quantization, then one Vec x Vec block per K
// step) and writes each block into the array's idle weight buffer, a row per cycle, while the
// other buffer is in use.
//
// A block's rows are written once its buffer's previous block has left the array (TagHold cycles
// after that block's last vector issued) and at most one block ahead of the feeder. A block's
// quantization goes to the bank of its output-channel block once the block AccBanks before it
// (in the same bank) has drained; the drain reads it from here.
//
// Float descriptors stream binary32 weights (the bias words hold binary32, the multiplier and
// shift words are unused): a row is FpRowWords words, written once its last word arrives, and the
// block counts as written (the feeder may issue it) after its last row.
module npu_weight_loader
  import npu_pkg::*;
  import npu_core_pkg::*;
(
  input  logic                                 clk_i,
  input  logic                                 rst_ni,
  input  logic                                 flush_i,

  // The descriptor: start_i when npu_compute takes an array descriptor; job_i is that
  // descriptor from the next cycle on.
  input  logic                                 start_i,
  input  job_t                                 job_i,
  output logic                                 idle_o,

  // Feeder progress: output-channel blocks claimed, weight blocks issued.
  input  logic [15:0]                          fd_seq_i,
  input  logic [BankW-1:0]                     fd_bank_i,
  input  logic [15:0]                          fd_block_i,
  input  logic                                 fd_block_end_i,
  // Output-channel blocks whose bank the drain has released.
  input  logic [15:0]                          rel_seq_i,
  output logic [15:0]                          block_o,  // weight blocks written

  input  logic                                 ws_valid_i,
  output logic                                 ws_ready_o,
  input  logic [VecBits-1:0]                   ws_data_i,
  input  logic [$clog2(WeightFifoWords+1)-1:0] ws_count_i,

  output logic                                 wload_valid_o,
  output logic                                 wload_buf_o,
  output logic [VecIdxW-1:0]                   wload_row_o,
  output wload_row_t                           wload_data_o,
  output logic                                 wload_fp_o,
  output word_lanes_t                          fp_wload_data_o,

  // Quantization of bank q_bank_i (per lane: bias, multiplier, shift).
  input  logic [BankW-1:0]                     q_bank_i,
  output word_lanes_t                          q_bias_o,
  output word_lanes_t                          q_mult_o,
  output shift_lanes_t                         q_shift_o
);

  localparam int unsigned FeedDepth = 3;  // feeder issue to array input
  // Cycles after a block's last vector is issued before its weight buffer may be rewritten.
  localparam int unsigned TagHold   = FeedDepth + ArrayCols + 2;

  // Quantization words: biases (int32, Vec / 4 per word), then multipliers, then one word of
  // shifts (a byte per lane).
  localparam int unsigned QuantPerWord   = Vec / 4;
  localparam int unsigned QuantBiasWord  = 0;
  localparam int unsigned QuantMultWord  = QuantBiasWord + Vec / QuantPerWord;
  localparam int unsigned QuantShiftWord = QuantMultWord + Vec / QuantPerWord;
  if (QuantShiftWord + 1 != WeightQuantWords) begin : gen_bad_quant_words
    $error("npu_weight_loader: the quantization layout needs %0d words, npu.json says %0d",
           QuantShiftWord + 1, WeightQuantWords);
  end

  typedef enum logic [1:0] {
    LdIdle,
    LdQuant,
    LdWait,
    LdRows
  } load_state_e;

  localparam int unsigned FpRowWords = ArrayCols * 4 / Vec;

  logic is_fp;
  assign is_fp = job_i.desc.format != 2'(FmtInt8);

  load_state_e        state_q, state_d;
  logic [1:0]         part_q, part_d;    // float: words of the row so far
  logic [15:0]        nb_q, kt_q, nb_d, kt_d;
  logic [3:0]         word_q, word_d;
  logic [VecIdxW-1:0] row_q, row_d;
  logic [15:0]        seq_q, seq_d;      // output-channel block of the quantization words
  logic [BankW-1:0]   bank_q, bank_d;    // its bank
  logic [15:0]        block_q, block_d;  // weight blocks written
  logic [7:0]         hold_q [2];        // hold timers of the array's two weight buffers
  logic [7:0]         hold_d [2];

  logic block_go, quant_take, row_write;
  assign block_go   = state_q == LdWait && 32'(ws_count_i) >= Vec &&
                      block_q - fd_block_i != 16'd2 && hold_q[block_q[0]] == '0;
  // A block's quantization may be written once the block two before it has drained.
  assign quant_take = state_q == LdQuant && ws_valid_i && seq_q - rel_seq_i < 16'(AccBanks);
  // Rows after the first: one per cycle (int8), or when a float row's last word arrives.
  assign row_write  = state_q == LdRows &&
                      (!is_fp || (ws_valid_i && 32'(part_q) == FpRowWords - 1));

  always_comb begin
    state_d = state_q;
    nb_d    = nb_q;
    kt_d    = kt_q;
    word_d  = word_q;
    row_d   = row_q;
    part_d  = part_q;
    seq_d   = seq_q;
    bank_d  = bank_q;
    block_d = block_q;
    unique case (state_q)
      LdIdle: begin
        if (start_i) begin
          state_d = LdQuant;
          nb_d    = '0;
          kt_d    = '0;
          word_d  = '0;
          seq_d   = fd_seq_i;
          bank_d  = fd_bank_i;
        end
      end
      LdQuant: begin
        if (quant_take) begin
          word_d = word_q + 1;
          if (32'(word_q) == WeightQuantWords - 1) begin
            word_d  = '0;
            state_d = LdWait;
          end
        end
      end
      LdWait: begin
        if (block_go) begin
          // An int8 block's row 0 goes out now, and the feeder may follow a row behind.
          block_d = is_fp ? block_q : block_q + 1;
          row_d   = is_fp ? '0 : VecIdxW'(1);
          part_d  = '0;
          state_d = LdRows;
        end
      end
      LdRows: begin
        if (is_fp && ws_valid_i) begin
          part_d = part_q + 1;
        end
        if (row_write) begin
          row_d = row_q + 1;
          if (32'(row_q) == Vec - 1) begin
            block_d = is_fp ? block_q + 1 : block_q;
            if (kt_q + 1 != job_i.kt_count) begin
              kt_d    = kt_q + 1;
              state_d = LdWait;
            end else if (nb_q + 1 != job_i.nb_count) begin
              kt_d    = '0;
              nb_d    = nb_q + 1;
              seq_d   = seq_q + 1;
              bank_d  = next_bank(bank_q);
              state_d = LdQuant;
            end else begin
              state_d = LdIdle;
            end
          end
        end
      end
      default: state_d = LdIdle;
    endcase
  end

  // Hold timers, restarted by each block's last vector.
  always_comb begin
    for (int unsigned t = 0; t < 2; t++) begin
      hold_d[t] = hold_q[t];
      if (fd_block_end_i && fd_block_i[0] == t[0]) begin
        hold_d[t] = 8'(TagHold);
      end else if (hold_q[t] != '0) begin
        hold_d[t] = hold_q[t] - 1;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= LdIdle;
      nb_q    <= '0;
      kt_q    <= '0;
      word_q  <= '0;
      row_q   <= '0;
      part_q  <= '0;
      seq_q   <= '0;
      bank_q  <= '0;
      block_q <= '0;
    end else if (flush_i) begin
      state_q <= LdIdle;
      block_q <= '0;
    end else begin
      state_q <= state_d;
      nb_q    <= nb_d;
      kt_q    <= kt_d;
      word_q  <= word_d;
      row_q   <= row_d;
      part_q  <= part_d;
      seq_q   <= seq_d;
      bank_q  <= bank_d;
      block_q <= block_d;
    end
  end

  // The hold timers run through a flush.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      hold_q <= '{default: '0};
    end else begin
      hold_q <= hold_d;
    end
  end

  assign idle_o  = state_q == LdIdle;
  assign block_o = block_q;

  // ------------------------------------------------------------------------------------------
  // Quantization registers of the banks, written a word at a time.
  logic [31:0] q_bias_q  [AccBanks][Vec];
  logic [31:0] q_mult_q  [AccBanks][Vec];
  logic [5:0]  q_shift_q [AccBanks][Vec];
  logic        q_bias_we [Vec];
  logic        q_mult_we [Vec];
  logic        q_shift_we;
  logic [31:0] q_word_lane [Vec];  // lane l's 32-bit value in this word
  logic [BankW-1:0] q_bank;

  assign q_bank     = bank_q;
  assign q_shift_we = quant_take && 32'(word_q) == QuantShiftWord;
  always_comb begin
    for (int unsigned l = 0; l < Vec; l++) begin
      q_bias_we[l]   = quant_take && 32'(word_q) == QuantBiasWord + l / QuantPerWord;
      q_mult_we[l]   = quant_take && 32'(word_q) == QuantMultWord + l / QuantPerWord;
      q_word_lane[l] = ws_data_i[(l % QuantPerWord) * 32 +: 32];
    end
  end

  always_ff @(posedge clk_i) begin
    for (int unsigned l = 0; l < Vec; l++) begin
      if (q_bias_we[l]) begin
        q_bias_q[q_bank][l] <= q_word_lane[l];
      end
      if (q_mult_we[l]) begin
        q_mult_q[q_bank][l] <= q_word_lane[l];
      end
      if (q_shift_we) begin
        q_shift_q[q_bank][l] <= ws_data_i[l * 8 +: 6];
      end
    end
  end

  assign q_bias_o  = q_bias_q[q_bank_i];
  assign q_mult_o  = q_mult_q[q_bank_i];
  assign q_shift_o = q_shift_q[q_bank_i];

  // ------------------------------------------------------------------------------------------
  // Weight rows into the array: the stream's bytes minus the weight zero point. The first row of
  // a block goes out in the cycle it starts.
  assign wload_valid_o = is_fp ? row_write : block_go || state_q == LdRows;
  assign wload_buf_o   = is_fp || block_go ? block_q[0] : ~block_q[0];
  assign wload_row_o   = block_go ? '0 : row_q;
  always_comb begin
    for (int unsigned c = 0; c < ArrayCols; c++) begin
      wload_data_o[c] = widen(ws_data_i[c*8 +: 8], job_i.desc.b_signed) - job_i.desc.b_zero_point;
    end
  end

  // Float rows: the first words wait in fp_row_q, the last comes straight from the stream.
  localparam int unsigned FpPerWord = Vec / 4;
  logic [31:0] fp_row_q [ArrayCols];
  always_ff @(posedge clk_i) begin
    if (is_fp && state_q == LdRows && ws_valid_i) begin
      for (int unsigned i = 0; i < FpPerWord; i++) begin
        fp_row_q[32'(part_q) * FpPerWord + i] <= ws_data_i[i*32 +: 32];
      end
    end
  end
  always_comb begin
    for (int unsigned c = 0; c < ArrayCols; c++) begin
      fp_wload_data_o[c] = c / FpPerWord == FpRowWords - 1 ? ws_data_i[(c % FpPerWord)*32 +: 32]
                                                            : fp_row_q[c];
    end
  end
  assign wload_fp_o = is_fp;

  assign ws_ready_o = quant_take || (is_fp ? state_q == LdRows && ws_valid_i : wload_valid_o);

  // The loader reads few fields of its job; the shift word's lanes use their low 6 bits.
  logic unused_signals;
  assign unused_signals = ^{job_i};

endmodule
