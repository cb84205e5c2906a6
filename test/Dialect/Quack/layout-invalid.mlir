// RUN: quack-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{expected an integer or '(' in the layout shape}}
func.func @not_a_number() attributes {l = #quack.layout<(2,x)>}

// -----

// expected-error @+1 {{expected ',' or ')' in the layout shape}}
func.func @missing_comma() attributes {l = #quack.layout<(2 3):(1,2)>}

// -----

// expected-error @+1 {{empty tuple '()' is not allowed in a layout stride}}
func.func @empty_tuple() attributes {l = #quack.layout<(2,3):(1,())>}

// -----

// expected-error @+1 {{expected an integer or '(' in the layout stride}}
func.func @missing_stride() attributes {l = #quack.layout<(2,3):>}

// -----

// expected-error @+1 {{integer value too large}}
func.func @too_large() attributes {l = #quack.layout<99999999999999999999:1>}

// -----

// The string form reports the column within the string.
// expected-error @+1 {{invalid layout stride: column 9: expected ',' or ')' but found ';' in "(2,3):(1;2)"}}
func.func @string_syntax() attributes {l = #quack.layout<"(2,3):(1;2)">}

// -----

// expected-error @+1 {{invalid layout: shape (2,3) and stride (1,(2,3)) are not congruent}}
func.func @not_congruent() attributes {l = #quack.layout<(2,3):(1,(2,3))>}

// -----

// expected-error @+1 {{invalid layout: shape (2,(3,4)) and stride (1,2) are not congruent in "(2,(3,4)):(1,2)"}}
func.func @string_not_congruent() attributes {l = #quack.layout<"(2,(3,4)):(1,2)">}

// -----

// expected-error @+1 {{invalid layout: shape (0,3) has a non-positive extent 0}}
func.func @zero_extent() attributes {l = #quack.layout<(0,3):(1,1)>}

// -----

// expected-error @+1 {{invalid layout: layout (4294967296,4294967296):(1,4294967296) is too large: its size or index range overflows 64 bits}}
func.func @overflow() attributes {l = #quack.layout<(4294967296,4294967296):(1,4294967296)>}

// -----

// expected-error @+1 {{expected 'tile'}}
func.func @tv_missing_tile() attributes {l = #quack.tv_layout<(2,4):(4,1), (2,4):(4,1)>}

// -----

// expected-error @+1 {{tv layout 8:1 must have rank 2 (thread, value)}}
func.func @tv_rank() attributes {l = #quack.tv_layout<8:1, tile = 8:1>}

// -----

// expected-error @+1 {{tile layout (2,2,2):(1,2,4) must have rank 1 or 2}}
func.func @tile_rank() attributes {l = #quack.tv_layout<(2,4):(1,2), tile = (2,2,2)>}

// -----

// expected-error @+1 {{tv layout (2,4):(-1,2) has a negative stride}}
func.func @tv_negative() attributes {l = #quack.tv_layout<(2,4):(-1,2), tile = 8:1>}

// -----

// expected-error @+1 {{tile layout (2,4):(4,-1) has a negative stride}}
func.func @tile_negative() attributes {l = #quack.tv_layout<(2,4):(1,2), tile = (2,4):(4,-1)>}

// -----

// expected-error @+1 {{tv layout (2,4):(1,4) reaches offset 13, outside the codomain [0, 8) of tile (2,4):(4,1)}}
func.func @tv_outside_tile() attributes {l = #quack.tv_layout<(2,4):(1,4), tile = (2,4):(4,1)>}

// -----

func.func @apply_coords(%i: index, %j: index, %k: index) -> index {
  // expected-error @+1 {{'quack.layout.apply' op expects one linear index or 2 coordinates (one per mode of (4,8):(8,1)), got 3}}
  %0 = quack.layout.apply #quack.layout<(4,8):(8,1)> [%i, %j, %k]
  return %0 : index
}

// -----

func.func @apply_no_coords() -> index {
  // expected-error @+1 {{'quack.layout.apply' op expects one linear index or 2 coordinates (one per mode of (4,8):(8,1)), got 0}}
  %0 = quack.layout.apply #quack.layout<(4,8):(8,1)> []
  return %0 : index
}
