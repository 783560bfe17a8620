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

  // Neither zero, subnormal, infinite nor NaN.
  function automatic logic fp32_is_normal(fp32_t a);
    return a[30:23] != 8'h00 && a[30:23] != 8'hff;
  endfunction

  // A finite operand is sig * 2^(exp - 150); subnormals have exp 1 and no hidden bit.
  function automatic logic [23:0] fp32_sig(fp32_t a);
    return {|a[30:23], a[22:0]};
  endfunction

  function automatic int fp32_biased_exp(fp32_t a);
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

  // a * b, one rounding. Two short paths come first, for the simulation's speed: a zero times a
  // finite operand, and two normal operands whose product is normal (the product of their
  // significands has its leading one at bit 47 or 46). They give the bits the general path
  // would (rtl_fp_units checks every path against the host).
  function automatic fp32_t fp32_mul(fp32_t a, fp32_t b);
    logic        sign;
    logic [47:0] q;
    logic [63:0] p;
    logic [6:0]  lz;
    int          e;
    sign = a[31] ^ b[31];
    // Zero activations are common in the array.
    if ((fp32_is_zero(a) || fp32_is_zero(b)) && a[30:23] != 8'hff && b[30:23] != 8'hff) begin
      return {sign, 31'b0};
    end
    if (fp32_is_normal(a) && fp32_is_normal(b)) begin
      q = 48'({1'b1, a[22:0]}) * 48'({1'b1, b[22:0]});
      e = int'(a[30:23]) + int'(b[30:23]) - 127 + int'(q[47]);
      if (e >= 1 && e <= 254) begin
        if (!q[47]) q = q << 1;
        return {sign, {e[7:0], q[46:24]} + 31'(q[23] && (|q[22:0] || q[24]))};
      end
    end
    if (fp32_is_nan(a) || fp32_is_nan(b)) return Fp32QNaN;
    if (fp32_is_inf(a) || fp32_is_inf(b)) begin
      return fp32_is_zero(a) || fp32_is_zero(b) ? Fp32QNaN : {sign, 8'hff, 23'b0};
    end
    p = {48'(fp32_sig(a)) * 48'(fp32_sig(b)), 16'b0};  // exact, at the top
    lz = lzc64(p);
    return fp32_round(sign, fp32_biased_exp(a) + fp32_biased_exp(b) - 126 - int'(lz), p << lz);
  endfunction

  // a + b, one rounding. The smaller operand is aligned under 39 extra bits with a sticky bit,
  // which keeps every rounding decision exact. As in fp32_mul, short paths come first: a zero
  // addend with a finite other, and two normal operands whose sum needs a normalizing shift of
  // at most two (no leading-zero count).
  function automatic fp32_t fp32_add(fp32_t a, fp32_t b);
    fp32_t       x, y;  // |x| >= |y|
    logic        swap;
    logic [63:0] mx, my, s;
    logic [6:0]  lz;
    // Zero products are common in the array.
    if (a[30:23] != 8'hff && b[30:23] != 8'hff) begin
      if (fp32_is_zero(b)) return fp32_is_zero(a) ? {a[31] & b[31], 31'b0} : a;
      if (fp32_is_zero(a)) return b;
    end
    swap = a[30:0] < b[30:0];
    x    = swap ? b : a;
    y    = swap ? a : b;
    mx   = {1'b0, fp32_sig(x), 39'b0};
    my   = shr_jam({1'b0, fp32_sig(y), 39'b0}, 32'(fp32_biased_exp(x) - fp32_biased_exp(y)));
    if (fp32_is_normal(a) && fp32_is_normal(b)) begin
      if (x[31] == y[31]) begin
        s = mx + my;
        return fp32_round(x[31], fp32_biased_exp(x) + int'(s[63]), s[63] ? s : s << 1);
      end
      s = mx - my;
      if (s[62]) return fp32_round(x[31], fp32_biased_exp(x), s << 1);
      if (s[61]) return fp32_round(x[31], fp32_biased_exp(x) - 1, s << 2);
    end
    if (fp32_is_nan(a) || fp32_is_nan(b)) return Fp32QNaN;
    if (fp32_is_inf(a) && fp32_is_inf(b)) return a[31] == b[31] ? a : Fp32QNaN;
    if (fp32_is_inf(a)) return a;
    if (fp32_is_inf(b)) return b;
    s = x[31] == y[31] ? mx + my : mx - my;
    if (s == '0) return {a[31] & b[31], 31'b0};  // exact zero: +0 unless both are -0
    lz = lzc64(s);
    return fp32_round(x[31], fp32_biased_exp(x) + 1 - int'(lz), s << lz);
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
    return fp32_round(x[31], fp32_biased_exp(x) - int'(lm) - int'(lq),
                      (q << lq) | {63'b0, m % 64'(n) != '0});
  endfunction

  // The significand of a finite non-zero operand shifted up to bit 23 (subnormals normalized),
  // and how far it was shifted.
  function automatic logic [4:0] fp32_norm_shift(fp32_t a);
    return 5'(lzc64({fp32_sig(a), 40'b0}));
  endfunction

  // a / b, one rounding: the normalized significands divided as 64-bit integers, the remainder
  // as the sticky bit.
  function automatic fp32_t fp32_div(fp32_t a, fp32_t b);
    logic        sign;
    logic [4:0]  la, lb;
    logic [63:0] q;
    logic [23:0] mb;
    logic [6:0]  lq;
    sign = a[31] ^ b[31];
    if (fp32_is_nan(a) || fp32_is_nan(b) || (fp32_is_inf(a) && fp32_is_inf(b)) ||
        (fp32_is_zero(a) && fp32_is_zero(b))) begin
      return Fp32QNaN;
    end
    if (fp32_is_inf(a) || fp32_is_zero(b)) return {sign, 8'hff, 23'b0};
    if (fp32_is_zero(a) || fp32_is_inf(b)) return {sign, 31'b0};
    la = fp32_norm_shift(a);
    lb = fp32_norm_shift(b);
    mb = fp32_sig(b) << lb;
    q  = {fp32_sig(a) << la, 40'b0} / 64'(mb);
    lq = lzc64(q);
    return fp32_round(sign, 150 + fp32_biased_exp(a) - int'(la) - fp32_biased_exp(b) + int'(lb) - int'(lq),
                      (q << lq) | {63'b0, {fp32_sig(a) << la, 40'b0} % 64'(mb) != '0});
  endfunction

  // sqrt(x), one rounding: the integer square root of the normalized significand scaled to 62
  // or 63 bits (so that the exponent halves exactly), the remainder as the sticky bit.
  function automatic fp32_t fp32_sqrt(fp32_t x);
    logic [4:0]  lx;
    logic [63:0] m, r, t;
    logic [6:0]  lr;
    int          k, scale;
    if (fp32_is_nan(x) || (x[31] && !fp32_is_zero(x))) return Fp32QNaN;
    if (fp32_is_zero(x) || fp32_is_inf(x)) return x;
    lx    = fp32_norm_shift(x);
    k     = fp32_biased_exp(x) - int'(lx) - 150;  // x = (sig << lx) * 2^k
    scale = k[0] ? 39 : 38;
    m     = 64'(fp32_sig(x)) << (32'(lx) + 32'(scale));
    r     = '0;
    for (int b = 31; b >= 0; b--) begin
      t = r | (64'd1 << b);
      if (t * t <= m) r = t;
    end
    lr = lzc64(r);
    return fp32_round(1'b0, 190 - int'(lr) + ((k - scale) >>> 1), (r << lr) | {63'b0, r * r != m});
  endfunction

  // e^x, within about half an ULP (not correctly rounded; sim/FunctionalDatapath.cpp computes
  // the same steps): t = x * log2(e) in fixed point with 32 fraction bits, 2^t = 2^n * 2^(i/64) *
  // e^u with n = floor(t), i the top 6 fraction bits and u < ln(2) / 64 the rest times ln(2),
  // e^u by its cubic Taylor polynomial in Q1.32, 2^(i/64) from a table.
  localparam logic [38:0] Log2eQ38 = 39'h5c551d94ae;  // log2(e) * 2^38
  localparam logic [31:0] Ln2Q32   = 32'hb17217f8;    // ln(2) * 2^32

  function automatic logic [31:0] exp2_table(logic [5:0] i);  // 2^(i / 64) * 2^31
    logic [31:0] t [64];
    t = '{32'h80000000, 32'h8164d1f4, 32'h82cd8699, 32'h843a28c4, 32'h85aac368, 32'h871f6197,
          32'h88980e81, 32'h8a14d575, 32'h8b95c1e4, 32'h8d1adf5b, 32'h8ea4398b, 32'h9031dc43,
          32'h91c3d374, 32'h935a2b2f, 32'h94f4efa9, 32'h96942d37, 32'h9837f052, 32'h99e04593,
          32'h9b8d39ba, 32'h9d3ed9a7, 32'h9ef53261, 32'ha0b05110, 32'ha2704303, 32'ha43515ae,
          32'ha5fed6aa, 32'ha7cd93b5, 32'ha9a15ab5, 32'hab7a39b6, 32'had583eea, 32'haf3b78ad,
          32'hb123f582, 32'hb311c413, 32'hb504f334, 32'hb6fd91e3, 32'hb8fbaf47, 32'hbaff5ab2,
          32'hbd08a39f, 32'hbf1799b6, 32'hc12c4cca, 32'hc346ccda, 32'hc5672a11, 32'hc78d74c9,
          32'hc9b9bd86, 32'hcbec14ff, 32'hce248c15, 32'hd06333db, 32'hd2a81d92, 32'hd4f35aac,
          32'hd744fccb, 32'hd99d15c2, 32'hdbfbb798, 32'hde60f482, 32'he0ccdeec, 32'he33f8973,
          32'he5b906e7, 32'he8396a50, 32'heac0c6e8, 32'hed4f301f, 32'hefe4b99c, 32'hf281773c,
          32'hf5257d15, 32'hf7d0df73, 32'hfa83b2db, 32'hfd3e0c0d};
    return t[i];
  endfunction

  function automatic fp32_t fp32_exp(fp32_t x);
    logic [63:0]        mag, u, u2, u3, poly, m;
    logic signed [63:0] t;
    logic [31:0]        f;
    logic [6:0]         lz;
    if (fp32_is_nan(x)) return Fp32QNaN;
    if (fp32_biased_exp(x) >= 134) return x[31] ? 32'h0 : 32'h7f80_0000;  // |x| >= 128
    if (fp32_biased_exp(x) < 87) return 32'h3f80_0000;                     // |x| < 2^-40 rounds to 1
    mag  = (64'(fp32_sig(x)) * 64'(Log2eQ38)) >> (156 - fp32_biased_exp(x));
    t    = x[31] ? -signed'(mag) : signed'(mag);
    f    = t[31:0];
    u    = (64'(f[25:0]) * 64'(Ln2Q32)) >> 32;
    u2   = (u * u) >> 32;
    u3   = (u2 * u) >> 32;
    poly = 64'h1_0000_0000 + u + (u2 >> 1) + u3 / 64'd6;
    m    = 64'(exp2_table(f[31:26])) * (poly >> 1);  // 2^f in Q2.62
    lz   = lzc64(m);
    return fp32_round(1'b0, 128 + int'(t >>> 32) - int'(lz), m << lz);
  endfunction

  // ln(x), within about half an ULP (not correctly rounded; sim/FunctionalDatapath.cpp computes
  // the same steps): x = m * 2^k with m in [sqrt(2) / 2, sqrt(2)), ln(m) = 2 atanh(s) with
  // s = (m - 1) / (m + 1) (an integer division, so s keeps 32 significant bits however close m
  // is to 1) and atanh(s) / s by its series to s^10 in Q1.32; k * ln(2) added in Q.56.
  localparam logic [63:0] Ln2Q56 = 64'h00b1_7217_f7d1_cf7a;  // ln(2) * 2^56

  function automatic fp32_t fp32_log(fp32_t x);
    logic [4:0]         lx;
    logic [23:0]        m;
    int                 k, sh, e;
    logic signed [63:0] d, total;
    logic [63:0]        ad, q, s, z, z2, z3, z4, z5, series, p, ln_m, mag;
    logic [6:0]         lq, lp, lt;
    if (fp32_is_nan(x)) return Fp32QNaN;
    if (fp32_is_zero(x)) return 32'hff80_0000;  // ln(+-0) = -inf
    if (x[31]) return Fp32QNaN;
    if (fp32_is_inf(x)) return x;
    lx = fp32_norm_shift(x);
    m  = fp32_sig(x) << lx;
    k  = fp32_biased_exp(x) - int'(lx) - 127;
    if (m >= 24'hb504f3) begin
      k += 1;
      d = signed'(64'(m)) - 64'sh100_0000;
    end else begin
      d = signed'(64'(m) << 1) - 64'sh100_0000;
    end
    p = '0;
    e = 64;
    if (d != '0) begin
      ad     = d < 0 ? 64'(-d) : 64'(d);
      sh     = int'(lzc64(ad)) - 1;
      q      = (ad << sh) / 64'(64'sh200_0000 + d);
      lq     = lzc64(q);
      s      = (q << lq) >> 32;
      e      = sh + int'(lq) - 32;  // |s| = s * 2^-e
      z      = (s * s) >> (2 * e - 32);
      z2     = (z * z) >> 32;
      z3     = (z2 * z) >> 32;
      z4     = (z3 * z) >> 32;
      z5     = (z4 * z) >> 32;
      series = 64'h1_0000_0000 + z / 64'd3 + z2 / 64'd5 + z3 / 64'd7 + z4 / 64'd9 + z5 / 64'd11;
      p      = s * (series >> 1);  // |ln(m)| = p * 2^(-30 - e)
    end
    if (k == 0) begin
      if (p == '0) return '0;  // ln(1) = +0
      lp = lzc64(p);
      return fp32_round(d < 0, 160 - int'(lp) - e, p << lp);
    end
    ln_m  = p >> (e - 26);
    total = 64'(signed'(k)) * signed'(Ln2Q56) + (d < 0 ? -signed'(ln_m) : signed'(ln_m));
    mag   = total < 0 ? 64'(-total) : 64'(total);
    lt    = lzc64(mag);
    return fp32_round(total < 0, 134 - int'(lt), mag << lt);
  endfunction

  // x rounded toward zero to an integer value: the fraction bits worth less than 1 cleared.
  function automatic fp32_t fp32_trunc(fp32_t x);
    if (fp32_is_nan(x)) return Fp32QNaN;
    if (x[30:23] >= 8'd150) return x;         // an integer already (or an infinity)
    if (x[30:23] < 8'd127) return {x[31], 31'b0};  // |x| < 1
    return x & ~((32'd1 << (8'd150 - x[30:23])) - 32'd1);
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
    return fp16_round(a[31], fp32_biased_exp(a) - 112 - int'(lz), m << lz);
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
