// Types shared by the NPU's units, derived from the generated npu_pkg (sizes, descriptor).
package npu_core_pkg;

  import npu_pkg::*;

  // Not every unit uses every definition.
  /* verilator lint_off UNUSEDPARAM */

  // Vector width: one scratchpad word, one DRAM beat, one array input/output vector.
  localparam int unsigned Vec      = DramBusBytes;
  localparam int unsigned VecBits  = Vec * 8;
  localparam int unsigned VecIdxW  = $clog2(Vec);
  localparam int unsigned SpadAw   = $clog2(2 * SpadWords);
  localparam int unsigned AccAw    = $clog2(AccDepth);

  // Memory clients of npu_mem_arb, in round-robin order.
  localparam int unsigned NumClients = 4;
  localparam int unsigned ClientCmd    = 0;  // descriptor fetch, completion record
  localparam int unsigned ClientLoad   = 1;  // tensor loads into the scratchpad
  localparam int unsigned ClientWeight = 2;  // weight / table stream
  localparam int unsigned ClientStore  = 3;  // output stores

  /* verilator lint_on UNUSEDPARAM */

  // A descriptor with what the command processor derived from it while validating.
  typedef struct packed {
    desc_t        desc;
    logic [31:0]  index;      // position in the chain
    logic [15:0]  a_wpr;      // scratchpad words per row of A (and B): ceil(A.INNER / Vec)
    logic [31:0]  a_words;    // scratchpad words of A: rows x a_wpr
    logic [15:0]  kt_count;   // K steps per output-channel block (conv: KH*KW*a_wpr, else KH*KW)
    logic [15:0]  nb_count;   // output-channel blocks: ceil(OUT.INNER / Vec)
    logic [31:0]  p_count;    // output pixels of the tile (window ops) or words (element-wise)
    logic [31:0]  w_words;    // words of the weight / table stream
    logic         buf_sel;    // scratchpad buffer, set by the load stage
  } job_t;

  // x * multiplier * 2^(shift - 31) with TFLite's double rounding, bit-exact with
  // multiplyByQuantizedMultiplier() in golden/FixedPoint.h (npu_requant.sv pipelines the same
  // steps). shift must be in [-31, 31].
  // Sign copies of the wide product and the negated shift are not needed.
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic logic [31:0] mul_by_quantized_multiplier(logic [31:0] x, logic [31:0] multiplier,
                                                              logic [5:0] shift);
    logic [4:0]         left, right;
    logic [5:0]         negated;
    logic signed [31:0] shifted, high, rounded;
    logic signed [63:0] nudged;
    logic        [31:0] mask, remainder, threshold;
    negated = 6'(-shift);
    left    = shift[5] ? 5'd0 : shift[4:0];
    right   = shift[5] ? negated[4:0] : 5'd0;
    shifted = signed'(x << left);
    nudged  = 64'(shifted) * 64'(signed'(multiplier)) + 64'sh4000_0000;
    high    = (shifted == 32'sh8000_0000 && multiplier == 32'h8000_0000) ? 32'sh7fff_ffff
                                                                         : nudged[62:31];
    mask      = (32'd1 << right) - 32'd1;
    remainder = high & mask;
    threshold = (mask >> 1) + {31'd0, high[31]};
    rounded   = (high >>> right) + ((remainder > threshold) ? 32'sd1 : 32'sd0);
    return rounded;
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // A stored 8-bit value as a signed 9-bit number: int8 sign-extends, uint8 zero-extends.
  function automatic logic signed [8:0] widen(logic [7:0] value, logic is_signed);
    return is_signed ? {value[7], value} : {1'b0, value};
  endfunction

endpackage
