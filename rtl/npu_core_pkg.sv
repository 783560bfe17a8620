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
  // Accumulator banks, filled and drained in turn: four, so that blocks keep filling while the
  // drain empties one and others wait (a chained depthwise layer's short blocks claim banks
  // while its expansion's last long blocks still drain). 4 x AccDepth entries a column.
  localparam int unsigned AccBanks = 4;
  localparam int unsigned BankW    = $clog2(AccBanks);

  // Memory clients of npu_mem_arb, in round-robin order.
  localparam int unsigned NumClients = 4;
  localparam int unsigned ClientCmd    = 0;  // descriptor fetch, completion record
  localparam int unsigned ClientLoad   = 1;  // tensor loads into the scratchpad
  localparam int unsigned ClientWeight = 2;  // weight / table stream
  localparam int unsigned ClientStore  = 3;  // output stores
  localparam int unsigned ClientW      = $clog2(NumClients);
  // Width of a count of memory lanes (0 to MemLanes), and of a lane index.
  localparam int unsigned LaneCountW   = $clog2(MemLanes + 1);
  localparam int unsigned LaneW        = MemLanes > 1 ? $clog2(MemLanes) : 1;

  /* verilator lint_on UNUSEDPARAM */

  // A descriptor with what the command processor derived from it while validating.
  typedef struct packed {
    desc_t        desc;
    logic [31:0]  index;      // position in the chain
    logic [15:0]  a_wpr;      // scratchpad words per row of A (and B): ceil(A.INNER / Vec)
    logic [15:0]  a_vecs;     // array vectors per pixel of A: ceil(a_wpr / vec_words)
    logic [31:0]  a_words;    // scratchpad words of A: rows x a_wpr
    logic [15:0]  kt_count;   // K steps per output-channel block (conv: KH*KW*a_vecs, else KH*KW)
    logic [7:0]   pack_taps;  // PACK: kernel taps per K step
    logic [15:0]  nb_count;   // output-channel blocks: ceil(OUT.INNER / (Vec * vec_words))
    logic [31:0]  p_count;    // output pixels of the tile (window ops) or words (element-wise)
    logic [31:0]  w_words;    // words of the weight / table stream
    logic         buf_sel;    // scratchpad buffer, set by the load stage
  } job_t;

  // The compute stage (npu_compute and its units).
  // Types of the array-valued ports between the units. Verilator connects two ports of the same
  // declared type by sharing one variable, but copies an array between ports whose types are
  // equal yet declared apart, every cycle: declare such ports with these.
  typedef logic signed [8:0]          act_t;          // an input byte, widened, zero point off
  typedef logic [ArrayRows-1:0][8:0]  act_vec_t;      // one input vector of the array
  typedef logic [ArrayCols-1:0][8:0]  wload_row_t;    // one row of weights
  typedef act_t                       act_lanes_t  [Vec];
  typedef act_t                       act_grid_t   [ArrayRows][ArrayCols];  // TAPS: one per PE
  typedef logic                       row_bits_t   [ArrayRows];
  typedef logic [31:0]                word_lanes_t [Vec];   // int32 per lane
  typedef logic [31:0]                word_grid_t  [ArrayRows][ArrayCols];  // float TAPS
  typedef logic [5:0]                 shift_lanes_t [Vec];
  // Scratchpad read ports: the feeder's (TAPS reads one per kernel row and stride phase), and
  // the RESIDUAL epilogue's.
  localparam int unsigned SpadReadPorts = DwTapPorts + 1;
  localparam int unsigned ResPort       = DwTapPorts;
  typedef logic                       spad_re_t    [SpadReadPorts];
  typedef logic [SpadAw-1:0]          spad_addr_t  [SpadReadPorts];
  typedef logic [VecBits-1:0]         spad_data_t  [SpadReadPorts];
  // A float vector is Vec binary32 elements, LineWords words. The feeder's ports can read a line:
  // LineWords consecutive words from the address on (the scratchpad is banked LineWords ways by
  // word address, so a line is one word from each bank). The port's data is the line's first
  // word; these are the others.
  localparam int unsigned LineWords = 4;
  typedef logic                       spad_line_re_t [DwTapPorts];
  typedef logic [VecBits-1:0]         spad_line_t  [DwTapPorts][LineWords-1];

  // RESIDUAL: what the drain's epilogue needs to add B to a block's requantized words
  // (DescFlag RESIDUAL).
  typedef struct packed {
    logic              on;
    logic [SpadAw-1:0] addr;            // B's word of pixel 0 of this block in the scratchpad
    logic [15:0]       wpr;             // B's words per pixel
    logic [8:0]        mid_zero_point;  // the requantized word's (ADD's input A)
    logic [8:0]        zero_point;      // B's
    logic              is_signed;       // OUT's type, B's and the word's
    logic [4:0]        left_shift;
    logic [31:0]       a_multiplier;
    logic [31:0]       b_multiplier;
    logic [31:0]       out_multiplier;
    logic [5:0]        a_shift;
    logic [5:0]        b_shift;
    logic [5:0]        out_shift;
    logic [8:0]        out_zero_point;  // the sum's output stage
    logic [8:0]        act_min;
    logic [8:0]        act_max;
  } residual_t;

  // An output-channel block in an accumulator bank: what the drain needs to empty it. The feeder
  // fills one in when it claims the bank (npu_accum keeps it), the drain copies it when it starts.
  typedef struct packed {
    tensor_t           out;         // this block's channels of the output
    logic [31:0]       p_count;
    logic [31:0]       index;
    logic [7:0]        opcode;
    logic [8:0]        zero_point;
    logic [8:0]        act_min;
    logic [8:0]        act_max;
    logic              truncate;    // TRUNCATE: AVGPOOL quotients toward zero
    logic [1:0]        format;      // FORMAT: pooling of binary32 or binary16 elements
    logic [31:0]       fp_min;      // float formats: the clamp
    logic [31:0]       fp_max;
    logic              last;        // the descriptor retires after this block
    logic              chain;       // CHAIN_OUT: drain into the next descriptor's buffer
    logic [SpadAw-1:0] chain_addr;  // there: the word of pixel 0 of this block
    logic [15:0]       chain_wpr;   // words per pixel there
    residual_t         res;         // RESIDUAL (zero_point and the clamp are then the ADD's A's)
  } bank_job_t;

  // What travels with one vector from the feeder through the array (or past it, for pooling) to
  // the accumulators.
  typedef struct packed {
    logic             valid;
    logic [AccAw-1:0] p;
    logic [BankW-1:0] bank;
    logic             tag;
    logic             first;      // first K step: overwrite the accumulator
    logic             bank_done;  // last vector of the bank
    logic             pool;       // to the accumulators directly
    logic             maxpool;    // MAXPOOL (else AVGPOOL), for the accumulators
    logic             pad;        // position outside the input (pooling skips it)
  } vec_meta_t;

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

  // value clamped to [lo, hi] as signed numbers, its low byte.
  function automatic logic [7:0] clamp_byte(logic [31:0] value, logic [8:0] lo, logic [8:0] hi);
    logic signed [31:0] v;
    v = signed'(value);
    if (v < 32'(signed'(lo))) begin
      v = 32'(signed'(lo));
    end else if (v > 32'(signed'(hi))) begin
      v = 32'(signed'(hi));
    end
    return v[7:0];
  endfunction

  // The fixed-point steps of NNAPI's integer SOFTMAX and L2_NORMALIZATION (gemmlowp's, as
  // model/FixedPoint.h writes them), for npu_eltwise's NORM rows.

  // round(a * b / 2^31), ties up, min * min saturating (saturatingRoundingDoublingHighMul).
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic logic signed [31:0] srdhm(logic signed [31:0] a, logic signed [31:0] b);
    logic signed [63:0] nudged;
    if (a == 32'sh8000_0000 && b == 32'sh8000_0000) return 32'sh7fff_ffff;
    nudged = 64'(a) * 64'(b) + 64'sh4000_0000;
    return nudged[62:31];
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // x / 2^e rounded, ties away from zero (roundingDivideByPOT), e in [0, 31].
  function automatic logic signed [31:0] rounding_shift(logic signed [31:0] x, logic [4:0] e);
    logic [31:0] mask, remainder, threshold;
    mask      = (32'd1 << e) - 32'd1;
    remainder = x & mask;
    threshold = (mask >> 1) + {31'd0, x[31]};
    return (x >>> e) + ((remainder > threshold) ? 32'sd1 : 32'sd0);
  endfunction

  // x * 2^e saturating (saturatingRoundingMultiplyByPOT for e in [1, 30]).
  function automatic logic signed [31:0] saturating_shift(logic signed [31:0] x, logic [4:0] e);
    logic signed [31:0] limit;
    limit = (32'sd1 <<< (5'd31 - e)) - 32'sd1;
    if (x > limit) return 32'sh7fff_ffff;
    if (x < -limit) return 32'sh8000_0000;
    return x <<< e;
  endfunction

  // Leading zeros of a 32-bit value (32 for zero).
  function automatic logic [5:0] clz32(logic [31:0] x);
    for (int i = 31; i >= 0; i--) begin
      if (x[i]) return 6'(31 - i);
    end
    return 6'd32;
  endfunction

  // 1 / (1 + a) for a in [0, 1), Q0.31: three Newton-Raphson steps on (1 + a) / 2 in Q2.29
  // (oneOverOnePlusXForXIn01).
  function automatic logic signed [31:0] one_over_one_plus_x(logic signed [31:0] a);
    logic signed [63:0] sum;
    logic signed [31:0] half_den, x, one_minus;
    sum      = 64'(a) + 64'sh7fff_ffff;
    half_den = 32'((sum + (sum >= 0 ? 64'sd1 : -64'sd1)) / 64'sd2);
    x        = 32'sd1515870810 + srdhm(half_den, -32'sd1010580540);
    for (int i = 0; i < 3; i++) begin
      one_minus = (32'sd1 <<< 29) - srdhm(half_den, x);
      x = x + saturating_shift(srdhm(x, one_minus), 5'd2);
    end
    return saturating_shift(x, 5'd1);
  endfunction

  // 1 / sqrt(input) as a multiplier and a left shift (<= 0): five Newton-Raphson steps in
  // Q3.28 on the input normalized by pairs of bits (inverseSqrtMultiplier).
  function automatic logic [37:0] inv_sqrt_multiplier(logic signed [31:0] input_value);
    logic signed [31:0] v, half_input, x, x3;
    int                 shift, pairs;
    if (input_value <= 32'sd1) return {6'd0, 32'h7fff_ffff};
    v     = input_value;
    shift = 11;
    if (v >= (32'sd1 <<< 29)) begin  // at most once: v < 2^31
      v     = v / 32'sd4;
      shift = shift + 1;
    end
    pairs = (int'(clz32(v)) - 1) / 2 - 1;
    shift = shift - pairs;
    v     = v <<< (2 * pairs);
    half_input = rounding_shift(v >>> 1, 5'd1);
    x = 32'sd1 <<< 28;
    for (int i = 0; i < 5; i++) begin
      x3 = saturating_shift(srdhm(srdhm(x, x), x), 5'd6);
      x  = saturating_shift(srdhm(32'sd402653184, x) - srdhm(half_input, x3), 5'd3);
    end
    x = srdhm(x, 32'sd1518500250);  // times sqrt(2) / 2
    if (shift < 0) begin
      x     = x <<< (-shift);
      shift = 0;
    end
    return {6'(-shift), x};
  endfunction

  // Scratchpad words of one array input vector (Vec elements): a float CONV or DWCONV reads
  // Vec binary32 or binary16 elements, 4 or 2 words (one per read port); everything else one.
  // Float weight streams hold binary32, so a row of weights is 4 words whatever the format.
  function automatic logic [2:0] vec_words(logic [7:0] opcode, logic [1:0] format);
    if (!op_uses_array(opcode)) return 3'd1;
    return format == 2'(FmtFp32) ? 3'd4 : format == 2'(FmtFp16) ? 3'd2 : 3'd1;
  endfunction

  // log2 of the bytes of an element of a format (INT32 as 4).
  function automatic logic [1:0] elem_log2(logic [1:0] format);
    return format == 2'(FmtFp16) ? 2'd1 : format == 2'(FmtInt8) ? 2'd0 : 2'd2;
  endfunction

  // The bank after bank b.
  function automatic logic [BankW-1:0] next_bank(logic [BankW-1:0] b);
    return 32'(b) == AccBanks - 1 ? '0 : b + 1'b1;
  endfunction

  // A stored 8-bit value as a signed 9-bit number: int8 sign-extends, uint8 zero-extends.
  function automatic logic signed [8:0] widen(logic [7:0] value, logic is_signed);
    return is_signed ? {value[7], value} : {1'b0, value};
  endfunction

endpackage
