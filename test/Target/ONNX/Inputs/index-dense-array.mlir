// A dense array of index elements, on which MLIR 22's parser crashes.
func.func @f() attributes {sizes = array<index: 1, 2>} {
  return
}
