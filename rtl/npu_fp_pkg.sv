// IEEE-754 floating-point units of the NPU's float datapath, as combinational functions that a
// unit calls once per lane or PE (docs/npu.md, "Floating point").
//
// binary32 arithmetic and binary16 <-> binary32 conversion, rounding to nearest even:
//  - subnormal operands and results are exact (gradual underflow, no flushing);
//  - infinities propagate, overflow rounds to infinity, signed zeros are kept
//    (x + -x = +0, -0 + -0 = -0);
//  - every NaN result is the canonical quiet NaN (Fp32QNaN, Fp16QNaN): payloads are not kept.
// No loops over bits: leading zeros are counted by halving (lzc64), so the functions stay cheap
// to simulate in every PE.
package npu_fp_pkg;

  // The functions take whole values and each reads the fields it needs; not every unit uses
  // every definition.
  /* verilator lint_off UNUSEDSIGNAL */
  /* verilator lint_off UNUSEDPARAM */

  typedef logic [31:0] fp32_t;
  typedef logic [15:0] fp16_t;

  localparam fp32_t Fp32QNaN = 32'h7fc0_0000;
  localparam fp16_t Fp16QNaN = 16'h7e00;
  localparam fp32_t Fp32NegZero = 32'h8000_0000;  // the identity of fp32_add
  localparam fp32_t Fp32NegInf  = 32'hff80_0000;  // the identity of fp32_max

  function automatic logic fp32_is_nan(fp32_t a);
    return &a[30:23] && |a[22:0];
  endfunction

  function automatic logic fp32_is_inf(fp32_t a);
    return &a[30:23] && ~|a[22:0];
  endfunction

  function automatic logic fp32_is_zero(fp32_t a);
    return ~|a[30:0];
  endfunction

  // A finite operand is sig * 2^(exp - 150); subnormals have exp 1 and no hidden bit.
  function automatic logic [23:0] fp32_sig(fp32_t a);
    return {|a[30:23], a[22:0]};
  endfunction

  function automatic int fp32_exp(fp32_t a);
    return |a[30:23] ? int'(a[30:23]) : 1;
  endfunction

  // Leading zeros of x (64 for zero), by halving: six steps.
  function automatic logic [6:0] lzc64(logic [63:0] x);
    logic [63:0] v;
    logic [6:0]  n;
    if (x == '0) return 7'd64;
    v = x;
    n = '0;
    if (v[63:32] == '0) begin n += 7'd32; v <<= 32; end
    if (v[63:48] == '0) begin n += 7'd16; v <<= 16; end
    if (v[63:56] == '0) begin n += 7'd8;  v <<= 8;  end
    if (v[63:60] == '0) begin n += 7'd4;  v <<= 4;  end
    if (v[63:62] == '0) begin n += 7'd2;  v <<= 2;  end
    if (!v[63]) n += 7'd1;
    return n;
  endfunction

  // x >> sh with every bit shifted out ORed into bit 0 (a sticky bit far below the round bit).
  function automatic logic [63:0] shr_jam(logic [63:0] x, int unsigned sh);
    if (sh == 0) return x;
    if (sh >= 64) return {63'b0, |x};
    return (x >> sh) | {63'b0, |(x & ~({64{1'b1}} << sh))};
  endfunction

  // Rounds sign * m / 2^63 * 2^(exp - 127), m[63] set, to binary32: nearest even, overflow to
  // infinity, gradual underflow. The carry of the rounding increment ripples into the exponent,
  // which also takes a subnormal to the smallest normal and the largest finite to infinity.
  function automatic fp32_t fp32_round(logic sign, int exp, logic [63:0] m);
    logic [63:0] r;
    int          e;
    logic        round_up;
    if (exp >= 255) return {sign, 8'hff, 23'b0};
    r = m;
    e = exp;
    if (e <= 0) begin
      r = shr_jam(m, 32'(1 - e));
      e = 0;
    end
    round_up = r[39] && (|r[38:0] || r[40]);
    return {sign, {e[7:0], r[62:40]} + 31'(round_up)};
  endfunction

  // The same for binary16: sign * m / 2^63 * 2^(exp - 15).
  function automatic fp16_t fp16_round(logic sign, int exp, logic [63:0] m);
    logic [63:0] r;
    int          e;
    logic        round_up;
    if (exp >= 31) return {sign, 5'h1f, 10'b0};
    r = m;
    e = exp;
    if (e <= 0) begin
      r = shr_jam(m, 32'(1 - e));
      e = 0;
    end
    round_up = r[52] && (|r[51:0] || r[53]);
    return {sign, {e[4:0], r[62:53]} + 15'(round_up)};
  endfunction

  // a * b, one rounding.
  function automatic fp32_t fp32_mul(fp32_t a, fp32_t b);
    logic        sign;
    logic [63:0] p;
    logic [6:0]  lz;
    sign = a[31] ^ b[31];
    if (fp32_is_nan(a) || fp32_is_nan(b)) return Fp32QNaN;
    if (fp32_is_inf(a) || fp32_is_inf(b)) begin
      return fp32_is_zero(a) || fp32_is_zero(b) ? Fp32QNaN : {sign, 8'hff, 23'b0};
    end
    if (fp32_is_zero(a) || fp32_is_zero(b)) return {sign, 31'b0};
    p = {48'(fp32_sig(a)) * 48'(fp32_sig(b)), 16'b0};  // exact, at the top
    lz = lzc64(p);
    return fp32_round(sign, fp32_exp(a) + fp32_exp(b) - 126 - int'(lz), p << lz);
  endfunction

  // a + b, one rounding. The smaller operand is aligned under 39 extra bits with a sticky bit,
  // which keeps every rounding decision exact.
  function automatic fp32_t fp32_add(fp32_t a, fp32_t b);
    fp32_t       x, y;  // |x| >= |y|
    logic [63:0] mx, my, s;
    logic [6:0]  lz;
    if (fp32_is_nan(a) || fp32_is_nan(b)) return Fp32QNaN;
    if (fp32_is_inf(a) && fp32_is_inf(b)) return a[31] == b[31] ? a : Fp32QNaN;
    if (fp32_is_inf(a)) return a;
    if (fp32_is_inf(b)) return b;
    // A zero addend leaves the other exact (a fast path: zero products are common in the array).
    if (fp32_is_zero(b)) return fp32_is_zero(a) ? {a[31] & b[31], 31'b0} : a;
    if (fp32_is_zero(a)) return b;
    if (a[30:0] >= b[30:0]) begin
      x = a;
      y = b;
    end else begin
      x = b;
      y = a;
    end
    mx = {1'b0, fp32_sig(x), 39'b0};
    my = shr_jam({1'b0, fp32_sig(y), 39'b0}, 32'(fp32_exp(x) - fp32_exp(y)));
    s = x[31] == y[31] ? mx + my : mx - my;
    if (s == '0) return {a[31] & b[31], 31'b0};  // exact zero: +0 unless both are -0
    lz = lzc64(s);
    return fp32_round(x[31], fp32_exp(x) + 1 - int'(lz), s << lz);
  endfunction

  // x / n for an integer n >= 1 (average pooling's count of valid taps), one rounding: the
  // normalized significand is divided as a 64-bit integer, the remainder sets the sticky bit.
  // n = 0 (no valid tap) divides like IEEE: 0 / 0 is NaN, any other x / 0 infinity.
  function automatic fp32_t fp32_div_count(fp32_t x, logic [15:0] n);
    logic [63:0] m, q;
    logic [6:0]  lm, lq;
    if (fp32_is_nan(x) || (n == '0 && fp32_is_zero(x))) return Fp32QNaN;
    if (fp32_is_inf(x) || n == '0) return {x[31], 8'hff, 23'b0};
    if (fp32_is_zero(x)) return x;
    m  = {fp32_sig(x), 40'b0};
    lm = lzc64(m);
    m  = m << lm;
    q  = m / 64'(n);
    lq = lzc64(q);
    return fp32_round(x[31], fp32_exp(x) - int'(lm) - int'(lq),
                      (q << lq) | {63'b0, m % 64'(n) != '0});
  endfunction

  // binary16 -> binary32, exact.
  function automatic fp32_t fp16_to_fp32(fp16_t h);
    logic [6:0] lz;
    logic [9:0] frac;
    if (&h[14:10]) return ~|h[9:0] ? {h[15], 8'hff, 23'b0} : Fp32QNaN;
    if (|h[14:10]) return {h[15], 8'(h[14:10]) + 8'd112, h[9:0], 13'b0};
    if (~|h[9:0]) return {h[15], 31'b0};
    lz = lzc64({h[9:0], 54'b0});  // a subnormal becomes a normal binary32
    frac = h[9:0] << (lz + 7'd1);
    return {h[15], 8'd112 - 8'(lz), frac, 13'b0};
  endfunction

  // binary32 -> binary16, nearest even.
  function automatic fp16_t fp32_to_fp16(fp32_t a);
    logic [63:0] m;
    logic [6:0]  lz;
    if (fp32_is_nan(a)) return Fp16QNaN;
    if (fp32_is_inf(a)) return {a[31], 5'h1f, 10'b0};
    if (fp32_is_zero(a)) return {a[31], 15'b0};
    m = {fp32_sig(a), 40'b0};
    lz = lzc64(m);
    return fp16_round(a[31], fp32_exp(a) - 112 - int'(lz), m << lz);
  endfunction

  // The order of non-NaN values as unsigned integers, -0 below +0.
  function automatic logic [31:0] fp32_order(fp32_t a);
    return a[31] ? ~a : {1'b1, a[30:0]};
  endfunction

  // IEEE 754-2019 maximum and minimum: NaN if either operand is NaN, -0 < +0.
  function automatic fp32_t fp32_max(fp32_t a, fp32_t b);
    if (fp32_is_nan(a) || fp32_is_nan(b)) return Fp32QNaN;
    return fp32_order(a) >= fp32_order(b) ? a : b;
  endfunction

  function automatic fp32_t fp32_min(fp32_t a, fp32_t b);
    if (fp32_is_nan(a) || fp32_is_nan(b)) return Fp32QNaN;
    return fp32_order(a) <= fp32_order(b) ? a : b;
  endfunction

  // x clamped to [lo, hi] (the fused activations), NaN propagated.
  function automatic fp32_t fp32_clamp(fp32_t x, fp32_t lo, fp32_t hi);
    return fp32_min(fp32_max(x, lo), hi);
  endfunction

  /* verilator lint_on UNUSEDPARAM */
  /* verilator lint_on UNUSEDSIGNAL */

endpackage
