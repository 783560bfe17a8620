// Requantization pipeline: turns Lanes int32 accumulators per beat into int8/uint8 outputs.
//
// Per lane, bit-exact with requantize() in golden/FixedPoint.h (the specification):
//   sum     = acc + bias                                (32-bit, wrapping)
//   shifted = sum << max(shift, 0)                      (32-bit, wrapping)
//   high    = round_half_up(shifted * multiplier / 2^31), min * min saturating to max
//   scaled  = round_half_away(high / 2^max(-shift, 0))
//   out     = clamp(scaled + zero_point, act_min, act_max)   (addition 32-bit, wrapping)
// Multiplier and shift are per lane, so per-channel requantization needs no extra logic; the
// zero point and activation bounds are per beat. shift must lie in [-31, 31]. Bounds within
// [-128, 127] give int8 outputs, within [0, 255] uint8 outputs (data_o holds the low 8 bits).
//
// Four stages (add/shift, multiply, round high half, rounding shift + offset + clamp) with a
// valid/ready handshake; a stage accepts a beat when it is empty or its beat moves on, so
// bubbles collapse and throughput is one beat per cycle while out_ready_i is high.
// flush_i (an abort or a soft reset) empties the pipeline: the beats in it are dropped, and
// busy_o says whether any beat is inside.
module npu_requant #(
  parameter int unsigned Lanes = 16
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   flush_i,

  input  logic                   in_valid_i,
  output logic                   in_ready_o,
  input  logic [Lanes-1:0][31:0] acc_i,
  input  logic [Lanes-1:0][31:0] bias_i,
  input  logic [Lanes-1:0][31:0] multiplier_i,
  input  logic [Lanes-1:0][5:0]  shift_i,       // signed left-shift exponent
  input  logic [8:0]             zero_point_i,  // signed
  input  logic [8:0]             act_min_i,     // signed
  input  logic [8:0]             act_max_i,     // signed

  output logic                   out_valid_o,
  input  logic                   out_ready_i,
  output logic [Lanes-1:0][7:0]  data_o,
  output logic                   busy_o
);

  localparam int unsigned NumStages = 4;

  // Handshake: stage s loads when it is empty or its beat leaves this cycle.
  logic [NumStages-1:0] valid_d, valid_q;
  logic [NumStages-1:0] load;

  always_comb begin
    load[NumStages-1] = ~valid_q[NumStages-1] | out_ready_i;
    for (int s = NumStages - 2; s >= 0; s--) begin
      load[s] = ~valid_q[s] | load[s+1];
    end
  end

  assign in_ready_o  = load[0];
  assign out_valid_o = valid_q[NumStages-1];
  assign busy_o      = valid_q != '0;

  always_comb begin
    valid_d = valid_q;
    if (load[0]) begin
      valid_d[0] = in_valid_i;
    end
    for (int unsigned s = 1; s < NumStages; s++) begin
      if (load[s]) begin
        valid_d[s] = valid_q[s-1];
      end
    end
  end

  // A flush drops every beat; the data registers keep stale values that no valid bit marks.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= '0;
    end else if (flush_i) begin
      valid_q <= '0;
    end else begin
      valid_q <= valid_d;
    end
  end

  // Data registers capture only real beats, so idle cycles do not toggle the datapath.
  logic [NumStages-1:0] capture;
  assign capture[0] = load[0] & in_valid_i;
  for (genvar s = 1; s < NumStages; s++) begin : gen_capture
    assign capture[s] = load[s] & valid_q[s-1];
  end

  // Per-beat parameters travel with the beat; the last stage is the first to use them.
  logic [NumStages-2:0][8:0] zero_point_q, act_min_q, act_max_q;

  always_ff @(posedge clk_i) begin
    if (capture[0]) begin
      zero_point_q[0] <= zero_point_i;
      act_min_q[0]    <= act_min_i;
      act_max_q[0]    <= act_max_i;
    end
    for (int unsigned s = 1; s < NumStages - 1; s++) begin
      if (capture[s]) begin
        zero_point_q[s] <= zero_point_q[s-1];
        act_min_q[s]    <= act_min_q[s-1];
        act_max_q[s]    <= act_max_q[s-1];
      end
    end
  end

  logic signed [31:0] zero_point, act_min, act_max;
  assign zero_point = 32'(signed'(zero_point_q[NumStages-2]));
  assign act_min    = 32'(signed'(act_min_q[NumStages-2]));
  assign act_max    = 32'(signed'(act_max_q[NumStages-2]));

  for (genvar l = 0; l < Lanes; l++) begin : gen_lane
    // Stage 1: accumulator + bias, then the left part of the shift.
    logic        [31:0] sum;
    logic        [4:0]  left_shift, right_shift_d;
    logic        [5:0]  negated_shift;
    logic signed [31:0] shifted_d, shifted_q;
    logic signed [31:0] multiplier_q;
    logic        [4:0]  right_shift_q1;

    assign sum           = acc_i[l] + bias_i[l];
    assign negated_shift = 6'(-shift_i[l]);
    assign left_shift    = shift_i[l][5] ? 5'd0 : shift_i[l][4:0];
    assign right_shift_d = shift_i[l][5] ? negated_shift[4:0] : 5'd0;
    assign shifted_d     = signed'(sum << left_shift);

    always_ff @(posedge clk_i) begin
      if (capture[0]) begin
        shifted_q      <= shifted_d;
        multiplier_q   <= signed'(multiplier_i[l]);
        right_shift_q1 <= right_shift_d;
      end
    end

    // Stage 2: the full 64-bit product; min * min is the one product that overflows the high
    // half and saturates.
    logic signed [63:0] product_d, product_q;
    logic               saturate_d, saturate_q;
    logic        [4:0]  right_shift_q2;

    assign product_d  = 64'(shifted_q) * 64'(multiplier_q);
    assign saturate_d = (shifted_q == 32'sh8000_0000) && (multiplier_q == 32'sh8000_0000);

    always_ff @(posedge clk_i) begin
      if (capture[1]) begin
        product_q      <= product_d;
        saturate_q     <= saturate_d;
        right_shift_q2 <= right_shift_q1;
      end
    end

    // Stage 3: high half rounded to nearest, ties up: floor((product + 2^30) / 2^31).
    logic signed [63:0] nudged;
    logic signed [31:0] high_d, high_q;
    logic        [4:0]  right_shift_q3;

    assign nudged = product_q + 64'sh4000_0000;
    assign high_d = saturate_q ? 32'sh7fff_ffff : nudged[62:31];

    always_ff @(posedge clk_i) begin
      if (capture[2]) begin
        high_q         <= high_d;
        right_shift_q3 <= right_shift_q2;
      end
    end

    // Stage 4: rounding right shift (ties away from zero), zero point, activation clamp.
    logic        [31:0] mask, remainder, threshold;
    logic signed [31:0] rounded, offset;
    logic signed [31:0] clamped;
    logic        [7:0]  data_d, data_q;

    assign mask      = (32'd1 << right_shift_q3) - 32'd1;
    assign remainder = high_q & mask;
    assign threshold = (mask >> 1) + {31'd0, high_q[31]};
    assign rounded   = (high_q >>> right_shift_q3) + ((remainder > threshold) ? 32'sd1 : 32'sd0);
    assign offset    = rounded + zero_point;

    always_comb begin
      if (offset < act_min) begin
        clamped = act_min;
      end else if (offset > act_max) begin
        clamped = act_max;
      end else begin
        clamped = offset;
      end
    end

    assign data_d = clamped[7:0];

    always_ff @(posedge clk_i) begin
      if (capture[3]) begin
        data_q <= data_d;
      end
    end

    assign data_o[l] = data_q;

    // Bits the arithmetic provably leaves unused (sign copies and bits above the clamp range).
    logic unused_bits;
    assign unused_bits = ^{nudged[63], nudged[30:0], negated_shift[5], clamped[31:8]};
  end

`ifndef SYNTHESIS
  // A result waits, unchanged, until it is taken (or flushed).
  a_out_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
      out_valid_o && !out_ready_i && !flush_i |=> out_valid_o && $stable(data_o))
    else $error("requantized beat changed or dropped before it was taken");
  // Nothing survives a flush: no beat of an aborted job reaches the next one.
  a_flush_empties: assert property (@(posedge clk_i) disable iff (!rst_ni)
      flush_i |=> valid_q == '0)
    else $error("requantizer holds beats after a flush");
`endif

endmodule
