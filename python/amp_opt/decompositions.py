"""What torch.onnx (torch 1.13) lacks to export traced training steps.

Two tables:
- decompositions, applied while tracing: find() gives ours first, then
  torch's own aten-level ones (those in torch._decomp.decompositions; the
  torch._refs ones produce prims, which do not export either). Ours exist
  where torch has none, or where torch's exports to a wrong graph.
- ONNX symbolics for ops that map to one ONNX op (casts, views), which
  onnx_symbolics() registers for the duration of one export.
"""
import contextlib
import functools

import numpy as np

import torch
import torch.onnx
from torch.onnx import _type_utils, symbolic_helper
import torch._decomp
from torch._decomp import decompositions as torch_decompositions

aten = torch.ops.aten
_OURS = {}
# Ours that sum at repeated indices. scatter_add exports to
# ScatterElements(reduction="add"), which needs opset 16; below it they sum
# with an exact one-hot matmul. They take scatter_add_exports.
_SUM_AT_INDICES = set()


def _register(*ops, sums_at_indices=False):
    def wrap(fn):
        for op in ops:
            _OURS[op] = fn
            if sums_at_indices:
                _SUM_AT_INDICES.add(op)
        return fn
    return wrap


def _for_opset(op, fn, opset):
    if op in _SUM_AT_INDICES:
        return functools.partial(fn, scatter_add_exports=opset >= 16)
    return fn


def always(opset):
    """Decompositions applied to every trace: ops that torch.onnx claims to
    export but fails on in torch 1.13 (the JIT asserts on indexing with None
    in the index list, and on full_like with an integer value, which
    functionalize makes of SiLU's and BCE's backward, and on fill with a
    tensor value, which `x[slice] = number` makes; average pooling with
    divisor_override, which it refuses; index_add, which it exports to a
    scatter that keeps one of repeated indices, silently wrong; threshold,
    whose symbolic refuses a threshold other than 0; diagonal, whose
    symbolic can write nodes out of order; norm without a dim, whose
    symbolic needs one; index_fill, whose symbolic fails on a flattened
    view; x.random_(from, to), whose overload name `from` the FX graph
    prints as Python that does not compile)."""
    return {op: find(op, opset) for op in (
        aten.index.Tensor, aten.index_put.default, aten.full_like.default,
        aten.fill.Scalar, aten.fill.Tensor, aten.avg_pool2d.default,
        aten.avg_pool3d.default, aten.index_add.default, aten.threshold.default,
        aten.diagonal.default, aten.norm.Scalar, aten.index_fill.int_Scalar,
        aten.index_fill.int_Tensor, getattr(aten.random_, "from"))}


def _theirs(op):
    """torch's aten-level decomposition of `op` (not its prims ones), or
    None."""
    theirs = torch._decomp.decomposition_table.get(op)
    if getattr(theirs, "__module__", None) == torch_decompositions.__name__:
        return theirs
    return None


def decomposable_ops():
    """Every op that find() has a decomposition for, at some opset."""
    return list(_OURS) + [op for op in torch._decomp.decomposition_table
                          if op not in _OURS and _theirs(op) is not None]


def find(op, opset):
    """The decomposition to use for `op`, or None."""
    ours = _OURS.get(op)
    if ours is not None:
        return _for_opset(op, ours, opset)
    return _theirs(op)


@_register(aten.embedding_dense_backward.default, sums_at_indices=True)
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                             scale_grad_by_freq, scatter_add_exports=True):
    """Sums the rows of repeated indices. torch's own decomposition exports
    to a ScatterND that keeps one row per index and drops the rest (wrong by
    about 1e-2, silently)."""
    dim = grad_output.shape[-1]
    grad = grad_output.reshape(-1, dim)
    flat = indices.reshape(-1)
    if padding_idx >= 0:
        grad = grad * (flat != padding_idx).unsqueeze(1).to(grad.dtype)
    if scale_grad_by_freq:
        counts = _add_rows(torch.zeros(num_weights, dtype=grad.dtype), 0, flat,
                           torch.ones_like(flat, dtype=grad.dtype),
                           scatter_add_exports)
        grad = grad / counts.index_select(0, flat).unsqueeze(1)
    return _add_rows(torch.zeros(num_weights, dim, dtype=grad.dtype), 0, flat,
                     grad, scatter_add_exports)



def _bag_of_each_index(indices, offsets, include_last_offset):
    """offset2bag (the bag of each index) and the number of bags: index i
    is in the last bag whose offset is at most i."""
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    if include_last_offset:
        offsets = offsets[:-1]
    positions = torch.arange(indices.shape[0]).unsqueeze(1)
    offset2bag = (offsets.unsqueeze(0) <= positions).sum(1) - 1
    return offset2bag, bags


@_register(aten._embedding_bag.default, sums_at_indices=True)
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0,
                  sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=-1,
                  scatter_add_exports=True):
    """nn.EmbeddingBag: the rows of the indices, summed per bag
    (scatter_add, or a one-hot matmul below opset 16), divided by the bag's
    size for mean; for max, each column's largest over the bag's rows
    (0 for an empty bag). padding_idx rows count for nothing. Returns
    aten's (output, offset2bag, bag_size, max_indices); bag_size counts the
    indices that are not padding_idx, max_indices (max) is the weight row
    each column's maximum came from."""
    offset2bag, bags = _bag_of_each_index(indices, offsets,
                                          include_last_offset)
    rows = weight.index_select(0, indices)
    kept = torch.ones_like(indices, dtype=weight.dtype)
    if padding_idx >= 0:
        kept = (indices != padding_idx).to(weight.dtype)
    if mode == 2:
        return _embedding_bag_max(rows, indices, offset2bag, bags, kept)
    scale = kept if per_sample_weights is None else kept * per_sample_weights
    rows = rows * scale.unsqueeze(1)
    output = _add_rows(torch.zeros(bags, weight.shape[1], dtype=weight.dtype),
                       0, offset2bag, rows, scatter_add_exports)
    bag_size = _add_rows(torch.zeros(bags, dtype=weight.dtype), 0, offset2bag,
                         kept, scatter_add_exports)
    if mode == 1:
        output = output / bag_size.clamp(min=1).unsqueeze(1)
    return (output, offset2bag, bag_size.to(torch.int64),
            torch.zeros(bags, dtype=torch.int64))


def _embedding_bag_max(rows, indices, offset2bag, bags, kept):
    """Mode max: each bag's rows (padding_idx's left out) compared through
    a [bags, indices, columns] view with -inf outside the bag."""
    member = (offset2bag.unsqueeze(0) == torch.arange(bags).unsqueeze(1)) & (
        kept.unsqueeze(0) > 0)
    lowest = torch.full((), float("-inf"), dtype=rows.dtype)
    masked = torch.where(member.unsqueeze(2), rows.unsqueeze(0), lowest)
    values, positions = masked.max(1)
    bag_size = member.to(torch.int64).sum(1)
    empty = (bag_size == 0).unsqueeze(1)
    output = torch.where(empty, torch.zeros((), dtype=rows.dtype), values)
    max_indices = indices.index_select(0, positions.reshape(-1)).reshape(
        positions.shape)
    return output, offset2bag, bag_size, max_indices


@_register(aten._embedding_bag_dense_backward.default, sums_at_indices=True)
def embedding_bag_dense_backward(grad, indices, offset2bag, bag_size,
                                 maximum_indices, num_weights,
                                 scale_grad_by_freq, mode, per_sample_weights,
                                 padding_idx=-1, scatter_add_exports=True):
    """Each index's row gets its bag's gradient (divided by the bag's size
    for mean, times its weight with per_sample_weights), summed over
    repeated indices as embedding's backward; for max, each column's
    gradient goes to the row its maximum came from."""
    if mode == 2:
        grad = grad * (bag_size > 0).to(grad.dtype).unsqueeze(1)
        if scatter_add_exports:
            return torch.zeros(num_weights, grad.shape[1],
                               dtype=grad.dtype).scatter_add(
                                   0, maximum_indices, grad)
        one_hot = _one_hot(maximum_indices.reshape(-1), num_weights,
                           grad.dtype).reshape(*grad.shape, num_weights)
        return (one_hot * grad.unsqueeze(2)).sum(0).t()
    rows = grad.index_select(0, offset2bag)
    if mode == 1:
        sizes = bag_size.to(grad.dtype).clamp(min=1)
        rows = rows / sizes.index_select(0, offset2bag).unsqueeze(1)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    return embedding_dense_backward(rows, indices, num_weights, padding_idx,
                                    scale_grad_by_freq, scatter_add_exports)


def _add_rows(target, dim, index, values, scatter_add_exports):
    """target with slice i of `values` along `dim` added at target's slice
    index[i]; repeated indices sum."""
    if scatter_add_exports:
        shape = [1] * values.dim()
        shape[dim] = -1
        return target.scatter_add(dim, index.reshape(shape).expand(
            values.shape), values)
    rows = values.movedim(dim, 0)
    one_hot = _one_hot(index, target.shape[dim], values.dtype)
    added = (one_hot.t() @ rows.reshape(rows.shape[0], -1)).reshape(
        target.shape[dim], *rows.shape[1:])
    return target + added.movedim(0, dim)


@_register(aten.index_add.default, sums_at_indices=True)
def index_add(input, dim, index, source, alpha=1, scatter_add_exports=True):
    """input with source's slices added at `index` along `dim`, repeated
    indices summed."""
    if alpha != 1:
        source = source * alpha
    return _add_rows(input, dim, index, source.to(input.dtype),
                     scatter_add_exports)


@_register(aten.lift_fresh_copy.default)
def lift_fresh_copy(tensor):
    """A tensor constant created in the traced code (torch.tensor(...))."""
    return aten.clone.default(tensor)


def _one_hot(indices, classes, dtype):
    """(..., classes) one-hot rows; exact, and exports at every opset."""
    return (indices.unsqueeze(-1) == torch.arange(classes)).to(dtype)


@_register(aten.max_pool2d_with_indices_backward.default,
           aten.max_pool3d_with_indices_backward.default,
           sums_at_indices=True)
def max_pool2d_with_indices_backward(grad_output, input, kernel_size, stride,
                                     padding, dilation, ceil_mode, indices,
                                     scatter_add_exports=True):
    """Adds each output gradient to the input position its index names
    (overlapping windows sum); 2-D and 3-D (indices into the volume)."""
    batch, channels = input.shape[0], input.shape[1]
    plane = int(np.prod(input.shape[2:]))
    grad = grad_output.reshape(batch, channels, -1)
    flat = indices.reshape(batch, channels, -1)
    if scatter_add_exports:
        result = torch.zeros(batch, channels, plane, dtype=grad.dtype)
        result = result.scatter_add(2, flat, grad)
    else:
        one_hot = _one_hot(flat, plane, grad.dtype)
        result = (grad.unsqueeze(-1) * one_hot).sum(2)
    return result.reshape(input.shape)


def _affine_base(size, align_corners, dtype):
    """affine_grid's [H * W, 3] rows (x, y, 1) of normalized coordinates:
    pixel centres, or corners with align_corners."""
    def axis(n):
        if n == 1:
            return torch.zeros(1, dtype=dtype)
        steps = torch.arange(n, dtype=dtype)
        return (steps * 2 / (n - 1) - 1 if align_corners
                else (steps * 2 + 1) / n - 1)
    height, width = size[-2], size[-1]
    xs = axis(width).reshape(1, width).expand(height, width)
    ys = axis(height).reshape(height, 1).expand(height, width)
    return torch.stack([xs, ys, torch.ones(height, width, dtype=dtype)],
                       -1).reshape(height * width, 3)


@_register(aten.affine_grid_generator.default)
def affine_grid_generator(theta, size, align_corners):
    """F.affine_grid in 2-D: the base coordinates times theta^T."""
    if len(size) != 4:
        raise NotImplementedError("affine_grid of a 3-D volume")
    base = _affine_base(size, align_corners, theta.dtype)
    return (base @ theta.transpose(1, 2)).reshape(size[0], size[2], size[3],
                                                  2)


@_register(aten.affine_grid_generator_backward.default)
def affine_grid_generator_backward(grad, size, align_corners):
    if len(size) != 4:
        raise NotImplementedError("affine_grid of a 3-D volume")
    base = _affine_base(size, align_corners, grad.dtype)
    rows = grad.reshape(size[0], size[2] * size[3], 2)
    return (base.t() @ rows).transpose(1, 2)


@_register(aten.expand_copy.default)
def expand_copy(input, size, implicit=False):
    return input.expand(size).clone()


def _grid_source(coordinate, size, padding_mode, align_corners):
    """PyTorch's grid_sampler_compute_source_index_set_grad along one axis:
    the coordinate a grid value samples and its derivative by the grid
    value (padding 0 zeros, 1 border, 2 reflection)."""
    scale = (size - 1) / 2 if align_corners else size / 2
    x = ((coordinate + 1) * (size - 1) / 2 if align_corners
         else ((coordinate + 1) * size - 1) / 2)
    slope = torch.full_like(x, scale)
    if padding_mode == 2:
        low, span = (0.0, size - 1.0) if align_corners else (-0.5, size)
        if span == 0:
            return torch.zeros_like(x), torch.zeros_like(x)
        shifted = x - low
        sign = torch.where(shifted < 0, -torch.ones_like(x),
                           torch.ones_like(x))
        shifted = shifted.abs()
        extra = torch.fmod(shifted, span)
        even = torch.fmod(torch.floor(shifted / span), 2) == 0
        x = torch.where(even, extra + low, span - extra + low)
        slope = slope * torch.where(even, sign, -sign)
    if padding_mode in (1, 2):
        inside = (x > 0) & (x < size - 1)
        slope = slope * inside.to(x.dtype)
        x = x.clamp(0, size - 1)
    return x, slope


@_register(aten.grid_sampler_2d_backward.default, sums_at_indices=True)
def grid_sampler_2d_backward(grad_output, input, grid, interpolation_mode,
                             padding_mode, align_corners, output_mask,
                             scatter_add_exports=True):
    """grid_sample's backward, bilinear and nearest: the output gradient
    added at the neighbours each sample read (by their weights), and for
    bilinear the grid's gradient from the neighbours' differences."""
    if interpolation_mode not in (0, 1):
        raise NotImplementedError("grid_sample's backward in bicubic mode")
    batch, channels, height, width = input.shape
    x, slope_x = _grid_source(grid[..., 0], width, padding_mode,
                              align_corners)
    y, slope_y = _grid_source(grid[..., 1], height, padding_mode,
                              align_corners)
    grad = grad_output.reshape(batch, channels, -1)
    if interpolation_mode == 1:
        # torch.round rounds half to even, as nearbyint.
        corners = [(torch.round(x), torch.round(y), None)]
    else:
        x0, y0 = torch.floor(x), torch.floor(y)
        fx, fy = x - x0, y - y0
        corners = [(x0, y0, (1 - fx) * (1 - fy)), (x0 + 1, y0, fx * (1 - fy)),
                   (x0, y0 + 1, (1 - fx) * fy), (x0 + 1, y0 + 1, fx * fy)]
    grad_input = torch.zeros(batch, channels, height * width,
                             dtype=input.dtype)
    flat_input = input.reshape(batch, channels, -1)
    values = []
    for cx, cy, weight in corners:
        inside = ((cx >= 0) & (cx <= width - 1) & (cy >= 0) &
                  (cy <= height - 1))
        index = torch.where(inside, cy * width + cx,
                            torch.zeros_like(cx)).to(torch.long)
        index = index.reshape(batch, 1, -1).expand(batch, channels, -1)
        mask = inside.to(input.dtype).reshape(batch, 1, -1)
        share = grad * mask * (1 if weight is None
                               else weight.reshape(batch, 1, -1))
        grad_input = _scatter_add_last(grad_input, index, share,
                                       scatter_add_exports)
        values.append(flat_input.gather(2, index) * mask)
    grad_grid = torch.zeros_like(grid)
    if interpolation_mode == 0:
        v00, v10, v01, v11 = values
        fx = fx.reshape(batch, 1, -1)
        fy = fy.reshape(batch, 1, -1)
        d_x = ((v10 - v00) * (1 - fy) + (v11 - v01) * fy) * grad
        d_y = ((v01 - v00) * (1 - fx) + (v11 - v10) * fx) * grad
        grad_grid = torch.stack(
            [d_x.sum(1).reshape(x.shape) * slope_x,
             d_y.sum(1).reshape(y.shape) * slope_y], -1)
    return (grad_input.reshape(input.shape) if output_mask[0] else None,
            grad_grid if output_mask[1] else None)


def _scatter_add_last(target, index, values, scatter_add_exports):
    """target [B, C, P] with values [B, C, Q] added at index [B, C, Q]
    along the last axis; one-hot products below opset 16."""
    if scatter_add_exports:
        return target.scatter_add(2, index, values)
    one_hot = _one_hot(index, target.shape[2], values.dtype)
    return target + (values.unsqueeze(-1) * one_hot).sum(2)


def _conv(dims, transposed):
    import torch.nn.functional as F
    if transposed:
        return (F.conv_transpose1d, F.conv_transpose2d,
                F.conv_transpose3d)[dims - 1]
    return (F.conv1d, F.conv2d, F.conv3d)[dims - 1]


@_register(aten.convolution_backward.default)
def convolution_backward(grad_output, input, weight, bias_sizes, stride,
                         padding, dilation, transposed, output_padding, groups,
                         output_mask):
    """Gradients of a 1-3d convolution as convolutions."""
    dims = weight.dim() - 2
    grad_input = grad_weight = grad_bias = None
    if transposed:
        # The adjoint of a transposed convolution is the convolution; the
        # weight gradient is a convolution's with input and output swapped.
        if output_mask[0]:
            grad_input = _conv(dims, False)(grad_output, weight, None, stride,
                                            padding, dilation, groups)
        if output_mask[1]:
            grad_weight = _conv_weight_grad(input, grad_output, weight,
                                            stride, padding, dilation, groups,
                                            dims)
        if output_mask[2]:
            grad_bias = grad_output.sum([0] + list(range(2, 2 + dims)))
        return grad_input, grad_weight, grad_bias
    if output_mask[0]:
        # The transposed convolution, padded so that it gives back the input
        # size.
        extra = []
        for d in range(dims):
            full = ((grad_output.shape[2 + d] - 1) * stride[d] - 2 *
                    padding[d] + dilation[d] * (weight.shape[2 + d] - 1) + 1)
            extra.append(input.shape[2 + d] - full)
        grad_input = _conv(dims, True)(
            grad_output, weight, None, stride, padding, extra, groups,
            dilation)
    if output_mask[1]:
        grad_weight = _conv_weight_grad(grad_output, input, weight, stride,
                                        padding, dilation, groups, dims)
    if output_mask[2]:
        grad_bias = grad_output.sum([0] + list(range(2, 2 + dims)))
    return grad_input, grad_weight, grad_bias


def _conv_weight_grad(grad_output, input, weight, stride, padding, dilation,
                      groups, dims):
    """Correlates the input with the output gradient, the batch taking the
    place of the channels, in one convolution of `groups` groups: input
    (N, G * Ci, ...) as (Ci, G * N, ...) correlated with the gradient
    (N, G * Co, ...) as a (G * Co, N, ...) kernel gives (Ci, G * Co, k).
    (A convolution per group made depthwise layers thousands of nodes.)"""
    conv = _conv(dims, False)
    batch, in_per_group = input.shape[0], input.shape[1] // groups
    spatial = list(input.shape[2:])
    if groups == 1:
        x = input.transpose(0, 1)  # one Transpose, which cuDNN records fold
    else:
        x = input.reshape([batch, groups, in_per_group] + spatial)
        x = x.permute([2, 1, 0] + list(range(3, 3 + dims))).reshape(
            [in_per_group, groups * batch] + spatial)
    # The kernel's static shape is restated: torch.onnx needs it, and loses
    # it after ops it cannot infer (reflect padding, im2col).
    kernel = grad_output.transpose(0, 1)
    kernel = kernel.reshape(list(kernel.shape))
    w = conv(x, kernel, None, dilation, padding, stride, groups).transpose(0, 1)
    for d in range(dims):
        w = w.narrow(2 + d, 0, weight.shape[2 + d])
    return w


def _slice_bounds(size, start, end, step):
    start = 0 if start is None else start
    end = size if end is None else end
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, end + size if end < 0 else end))
    return start, end, step


@_register(aten.slice_scatter.default)
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """input with input[start:end:step] along `dim` replaced by src (the
    backward of slicing, e.g. of pos[:t])."""
    dim = dim % input.dim()
    size = input.shape[dim]
    start, end, step = _slice_bounds(size, start, end, step)
    if step == 1:
        pieces = []
        if start > 0:
            pieces.append(input.narrow(dim, 0, start))
        pieces.append(src)
        if end < size:
            pieces.append(input.narrow(dim, end, size - end))
        return pieces[0] if len(pieces) == 1 else torch.cat(pieces, dim)
    shape = [1] * input.dim()
    shape[dim] = -1
    index = torch.arange(start, end, step).reshape(shape).expand(src.shape)
    return input.scatter(dim, index, src)


@_register(aten.select_scatter.default)
def select_scatter(input, src, dim, index):
    """input with input.select(dim, index) replaced by src."""
    dim = dim % input.dim()
    index = index % input.shape[dim]
    return slice_scatter(input, src.unsqueeze(dim), dim, index, index + 1)


@_register(aten._adaptive_avg_pool2d_backward.default)
def adaptive_avg_pool2d_backward(grad_output, input):
    """Spreads each output gradient evenly over its window (PyTorch's
    windows: rows floor(i*H/oh) to ceil((i+1)*H/oh)); overlaps sum. The
    windows become a constant (oh*ow, H*W) averaging matrix."""
    height, width = input.shape[-2], input.shape[-1]
    out_h, out_w = grad_output.shape[-2], grad_output.shape[-1]
    average = torch.zeros(out_h * out_w, height * width,
                           dtype=grad_output.dtype)
    for i in range(out_h):
        rows = range(i * height // out_h, -(-(i + 1) * height // out_h))
        for j in range(out_w):
            cols = range(j * width // out_w, -(-(j + 1) * width // out_w))
            for r in rows:
                for c in cols:
                    average[i * out_w + j, r * width + c] = 1.0 / (
                        len(rows) * len(cols))
    grad = grad_output.reshape(-1, out_h * out_w) @ average
    return grad.reshape(input.shape)


def _merge_indexed_dims(input, indices):
    """For advanced indexing input[..., i0, i1, ...] with adjacent index
    tensors (_indexed_dims_first makes them so): input with the indexed
    dims merged into one, that dim, the flat index tensor (broadcast
    shape), and the number of indexed dims."""
    positions = [i for i, t in enumerate(indices) if t is not None]
    assert positions and positions == list(range(positions[0],
                                                 positions[-1] + 1))
    first = positions[0]
    tensors = torch.broadcast_tensors(*[indices[p] for p in positions])
    flat = None
    for position, tensor in zip(positions, tensors):
        size = input.shape[position]
        tensor = tensor.long().remainder(size)
        flat = tensor if flat is None else flat * size + tensor
    merged = input.reshape(*input.shape[:first], -1,
                           *input.shape[first + len(positions):])
    return merged, first, flat, len(positions)


def _indexed_dims_first(input, indices):
    """For index tensors separated by a slice (x[i, :, j]), whose result
    PyTorch lays out with the broadcast index dims first: input with the
    indexed dims moved to the front, the indices for it (adjacent), and the
    permutation that undoes the move. None when the indices are adjacent."""
    positions = [i for i, t in enumerate(indices) if t is not None]
    if not positions or positions == list(range(positions[0],
                                                positions[-1] + 1)):
        return None
    others = [d for d in range(input.dim()) if d not in positions]
    order = positions + others
    inverse = [order.index(d) for d in range(input.dim())]
    return (input.permute(order), [indices[p] for p in positions], inverse)


def _boolean_mask(input, indices):
    """The mask of input[mask] (a bool tensor over the leading dims), None
    for integer indexing."""
    if not any(t is not None and t.dtype == torch.bool for t in indices):
        return None
    if len(indices) != 1 or indices[0].shape != input.shape[
            :indices[0].dim()]:
        raise NotImplementedError("boolean mask indexing other than x[mask]")
    mask = indices[0]
    return mask.reshape(*mask.shape, *[1] * (input.dim() - mask.dim()))


@_register(aten.index.Tensor)
def index(input, indices):
    """input[..., idx, ...] as index_select on the merged indexed dims
    (moved to the front first when a slice separates them)."""
    if _boolean_mask(input, list(indices)) is not None:
        raise NotImplementedError(
            "reading x[mask] (a result whose shape depends on the data)")
    moved = _indexed_dims_first(input, list(indices))
    if moved is not None:
        return index(moved[0], moved[1])
    merged, dim, flat, count = _merge_indexed_dims(input, list(indices))
    result = merged.index_select(dim, flat.reshape(-1))
    return result.reshape(*input.shape[:dim], *flat.shape,
                          *input.shape[dim + count:])


@_register(aten.index_put.default, sums_at_indices=True)
def index_put(input, indices, values, accumulate=False,
              scatter_add_exports=True):
    """input[..., idx, ...] = values (+= with accumulate, which sums
    repeated indices: the backward of indexing). scatter_add exports from
    opset 16; below it, a one-hot matmul sums."""
    mask = _boolean_mask(input, list(indices))
    if mask is not None:
        if values.numel() != 1:
            raise NotImplementedError("x[mask] = tensor (only a scalar)")
        values = values.reshape(()).to(input.dtype)
        if accumulate:
            return input + torch.where(mask, values, torch.zeros_like(values))
        return torch.where(mask, values, input)
    moved = _indexed_dims_first(input, list(indices))
    if moved is not None:
        front, front_indices, inverse = moved
        return index_put(front, front_indices, values, accumulate,
                         scatter_add_exports).permute(inverse)
    merged, dim, flat, count = _merge_indexed_dims(input, list(indices))
    shape = (*input.shape[:dim], *flat.shape, *input.shape[dim + count:])
    values = values.to(input.dtype).expand(shape).reshape(
        *merged.shape[:dim], -1, *merged.shape[dim + 1:])
    flat = flat.reshape(-1)
    if accumulate:
        # Not index_add: torch.onnx exports it to a scatter that keeps one
        # of repeated indices instead of their sum.
        result = _add_rows(merged, dim, flat, values, scatter_add_exports)
    else:
        # scatter, not index_copy, whose torch.onnx symbolic fails on some
        # index shapes.
        shape = [1] * merged.dim()
        shape[dim] = -1
        result = merged.scatter(dim, flat.reshape(shape).expand(values.shape),
                                values)
    return result.reshape(input.shape)



@_register(aten.new_empty_strided.default)
def new_empty_strided(input, size, stride, dtype=None, layout=None,
                      device=None, pin_memory=None):
    """Autograd's copy before an in-place write into a tensor that needs a
    gradient (x[i] = v): zeros, which the copy overwrites (an empty
    tensor's values are unspecified; ONNX has no strides)."""
    return torch.zeros(size, dtype=dtype if dtype is not None
                       else input.dtype)


@_register(aten.zero.default)
def zero(input):
    """The functional zero_ (the gradient of a value an in-place write
    replaced)."""
    return torch.zeros_like(input)


@_register(aten.as_strided_scatter.default)
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """input with src written into its strided view (functionalize makes it
    of an in-place write into a tensor that needs a gradient, z[:, 1:3] =
    v): a scatter into the flattened input at the view's element offsets, a
    constant (ONNX tensors are contiguous, so offsets are flat indices)."""
    offsets = torch.full((), storage_offset or 0, dtype=torch.int64)
    for extent, step in zip(size, stride):
        offsets = offsets.unsqueeze(-1) + torch.arange(extent) * step
    flat = input.reshape(-1).scatter(0, offsets.reshape(-1),
                                     src.reshape(-1).to(input.dtype))
    return flat.reshape(input.shape)


@_register(aten.full_like.default)
def full_like(input, value, dtype=None, layout=None, device=None,
              pin_memory=None, memory_format=None):
    dtype = input.dtype if dtype is None else dtype
    return torch.full(list(input.shape), value, dtype=dtype)


@_register(aten.fill.Scalar)
def fill(input, value):
    """The functional form of input.fill_(value)."""
    return torch.full(list(input.shape), value, dtype=input.dtype)


@_register(aten.fill.Tensor)
def fill_tensor(input, value):
    """The functional form of input.fill_(value) with a 0-d tensor value,
    which `x[slice] = number` traces to (Swin's attention mask)."""
    return value.to(input.dtype).expand(list(input.shape))


# Samplers (x.uniform_(), x.normal_(), torch.randint, ...): functionalize
# makes their in-place forms functional ops that torch.onnx cannot export.
# Each draws from RandomUniform or RandomNormal of its tensor's shape (the
# tensor, often torch.empty's, is no template: its unspecified values would
# be a constant in the file) and transforms the draw: U is uniform on
# [0, 1).


def _no_generator(name, generator):
    if generator is not None:
        raise NotImplementedError(f"{name} with a generator")


def _draw_uniform(input, generator, name):
    """U of input's shape, in input's type if floating, else float64 (for
    integers drawn from it: 53 bits)."""
    _no_generator(name, generator)
    dtype = input.dtype if input.is_floating_point() else torch.float64
    return torch.rand(input.shape, dtype=dtype)


@_register(aten.bernoulli_.float)
def bernoulli_(input, p=0.5, generator=None):
    """input.bernoulli_(p), which dropout in training mode draws its mask
    with (into torch.empty_like of its input): U < p, cast to input's type
    (RandomUniform, Less and Cast)."""
    draw = _draw_uniform(input, generator, "bernoulli_")
    return input.copy_((draw < p).to(input.dtype))


@_register(aten.bernoulli.p)
def bernoulli_p(input, p=0.5, generator=None):
    return bernoulli_(torch.empty_like(input), p, generator)


@_register(aten.uniform.default)
def uniform(input, low=0.0, high=1.0, generator=None):
    """x.uniform_(low, high): low + (high - low) U."""
    return low + (high - low) * _draw_uniform(input, generator, "uniform_")


@_register(aten.normal_functional.default)
def normal_functional(input, mean=0.0, std=1.0, generator=None):
    """x.normal_(mean, std): RandomNormal, scaled and shifted."""
    _no_generator("normal_", generator)
    return mean + std * torch.randn(input.shape, dtype=input.dtype)


@_register(aten.log_normal.default)
def log_normal(input, mean=1.0, std=2.0, generator=None):
    """x.log_normal_(mean, std): exp of a normal draw."""
    _no_generator("log_normal_", generator)
    return torch.exp(mean + std * torch.randn(input.shape, dtype=input.dtype))


@_register(aten.exponential.default)
def exponential(input, lambd=1.0, generator=None):
    """x.exponential_(lambd) (gumbel_softmax's noise): -log(1 - U) / lambd,
    finite since 1 - U > 0 and, as in PyTorch's kernels, never 0: the log is
    at most -eps/2 (U = 0 would give gumbel_softmax -log(0) = inf noise, a
    NaN loss)."""
    draw = _draw_uniform(input, generator, "exponential_")
    log = torch.clamp(torch.log(1 - draw), max=-torch.finfo(draw.dtype).eps / 2)
    return -log / lambd


@_register(aten.cauchy.default)
def cauchy(input, median=0.0, sigma=1.0, generator=None):
    """x.cauchy_(median, sigma): the inverse CDF, median + sigma
    tan(pi (U - 1/2))."""
    draw = _draw_uniform(input, generator, "cauchy_")
    return median + sigma * torch.tan(np.pi * (draw - 0.5))


@_register(aten.geometric.default)
def geometric(input, p, generator=None):
    """x.geometric_(p): the number of Bernoulli(p) trials up to the first
    success, ceil(log(1 - U) / log(1 - p)), at least 1."""
    draw = _draw_uniform(input, generator, "geometric_")
    trials = torch.ceil(torch.log(1 - draw) / np.log1p(-p))
    return torch.clamp(trials, min=1).to(input.dtype)


def _integers(draw, low, high, dtype):
    """Integers uniform on [low, high) from U: floor(U (high - low)) + low,
    clamped below high against the product rounding up."""
    if high <= low:
        raise ValueError(f"random integers need low < high, got [{low}, "
                         f"{high})")
    value = torch.floor(draw.to(torch.float64) * (high - low)) + low
    return torch.clamp(value, max=high - 1).to(dtype)


@_register(aten.randint.default, aten.randint.low)
def randint(*args, dtype=None, layout=None, device=None, pin_memory=None):
    """torch.randint([low,] high, size)."""
    low, high, size = (0, *args) if len(args) == 2 else args
    draw = torch.rand(size, dtype=torch.float64)
    return _integers(draw, low, high, dtype or torch.int64)


@_register(aten.randint_like.default, aten.randint_like.low_dtype)
def randint_like(input, *args, dtype=None, layout=None, device=None,
                 pin_memory=None, memory_format=None):
    """torch.randint_like(x, [low,] high)."""
    low, high = (0, *args) if len(args) == 1 else args
    draw = torch.rand(input.shape, dtype=torch.float64)
    return _integers(draw, low, high, dtype or input.dtype)


def _random_bound(dtype):
    """x.random_()'s exclusive upper bound: 2^digits of a floating type's
    mantissa (every integer below it is exact), the integer type's maximum
    plus one."""
    if dtype.is_floating_point:
        return 2 ** (torch.finfo(dtype).nmant + 1) + 1
    if dtype == torch.bool:
        return 2
    return torch.iinfo(dtype).max + 1


@_register(aten.random.default, aten.random.to,
           getattr(aten.random, "from"))
def random(input, *args, generator=None):
    """x.random_([from,] [to]): integers uniform on [from, to) in x's type;
    without `to`, up to _random_bound."""
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        low, high = 0, args[0]
    else:
        low, high = 0, None
    if high is None:
        high = _random_bound(input.dtype)
    _no_generator("random_", generator)
    draw = torch.rand(input.shape, dtype=torch.float64)
    return _integers(draw, low, high, input.dtype)


@_register(getattr(aten.random_, "from"))
def random_from_(input, low, high, generator=None):
    return input.copy_(random(input, low, high, generator=generator))


@_register(aten.randperm.default)
def randperm(n, dtype=torch.int64, layout=None, device=None,
             pin_memory=None):
    """torch.randperm(n): the order that sorts n uniform draws (TopK of all
    n; ties have probability about n^2 / 2^25)."""
    order = torch.topk(torch.rand(n), n).indices
    return order.to(dtype if dtype is not None else torch.int64)


@_register(aten.rrelu_with_noise.default)
def rrelu_with_noise(input, noise, lower=0.125, upper=1.0 / 3, training=False,
                     generator=None):
    """RReLU: in training, a negative x is multiplied by a slope uniform on
    [lower, upper), written into `noise` (1 elsewhere), which the backward
    (rrelu_with_noise_backward) multiplies the gradient by; in evaluation
    the mean slope, as leaky_relu."""
    if not training:
        return torch.nn.functional.leaky_relu(input, (lower + upper) / 2)
    slope = uniform(input, lower, upper, generator)
    noise.copy_(torch.where(input <= 0, slope, torch.ones_like(slope)))
    return input * noise


@_register(aten.bitwise_or.Tensor)
def bitwise_or(input, other):
    """Or of two masks (hardtanh's and ReLU6's backward); integers have no
    ONNX export before opset 18's BitwiseOr."""
    if input.dtype != torch.bool or other.dtype != torch.bool:
        raise NotImplementedError("bitwise_or of integer tensors")
    return torch.logical_or(input, other)


@_register(aten.bitwise_and.Tensor)
def bitwise_and(input, other):
    """And of two masks; as bitwise_or."""
    if input.dtype != torch.bool or other.dtype != torch.bool:
        raise NotImplementedError("bitwise_and of integer tensors")
    return torch.logical_and(input, other)


def _nll_targets(target, ignore_index):
    """The targets that count and targets safe to index with: torch 1.13's
    decompositions mask ignore_index only when it is not negative, so the
    default -100 (padding labels) was gathered as a class index."""
    valid = target != ignore_index
    return valid, torch.where(valid, target, torch.zeros_like(target))


@_register(aten.nll_loss_forward.default)
def nll_loss_forward(input, target, weight, reduction, ignore_index):
    """-input[target] (times weight[target]) where the target is not
    ignore_index; returns (loss, total weight) as aten does."""
    channel_dim = 0 if input.dim() < 2 else 1
    valid, safe = _nll_targets(target, ignore_index)
    picked = -torch.gather(input, channel_dim,
                           safe.unsqueeze(channel_dim)).squeeze(channel_dim)
    if weight is not None:
        weights = weight.gather(0, safe.reshape(-1)).reshape(safe.shape)
        picked = picked * weights
        counted = weights * valid.to(input.dtype)
    else:
        counted = valid.to(input.dtype)
    picked = torch.where(valid, picked, torch.zeros_like(picked))
    total_weight = counted.sum()
    if reduction == 0:  # none
        return picked, torch.zeros((), dtype=input.dtype)
    if reduction == 1:  # mean
        return picked.sum() / total_weight, total_weight
    return picked.sum(), total_weight


@_register(aten.nll_loss_backward.default)
def nll_loss_backward(grad_output, input, target, weight, reduction,
                      ignore_index, total_weight):
    """-grad at each counted target's class (times its weight, over the
    total weight for mean), 0 elsewhere: a scatter of -1 at the targets, as
    torch's (a ScatterElements the precision passes keep in FP32, which
    keeps the loss's gradient there), times the per-row scale."""
    channel_dim = 0 if input.dim() < 2 else 1
    valid, safe = _nll_targets(target, ignore_index)
    if reduction == 1:
        grad_output = grad_output / total_weight
    scale = valid.to(input.dtype) * (grad_output if reduction == 0
                                     else grad_output.reshape(()))
    if weight is not None:
        scale = scale * weight.gather(0, safe.reshape(-1)).reshape(safe.shape)
    grad_input = torch.zeros_like(input).scatter(
        channel_dim, safe.unsqueeze(channel_dim), -1.0)
    return grad_input * scale.unsqueeze(channel_dim)


def _classes_last(input):
    """[N, C, d...] as [N * d..., C]."""
    dims = list(range(input.dim()))
    return input.permute([0] + dims[2:] + [1]).reshape(-1, input.shape[1])


@_register(aten.nll_loss2d_forward.default)
def nll_loss2d_forward(input, target, weight, reduction, ignore_index):
    """Per-pixel NLL (segmentation's cross-entropy): nll_loss_forward over
    the pixels as rows."""
    loss, total_weight = nll_loss_forward(
        _classes_last(input), target.reshape(-1), weight, reduction,
        ignore_index)
    return (loss.reshape(target.shape) if reduction == 0 else loss,
            total_weight)


@_register(aten.nll_loss2d_backward.default)
def nll_loss2d_backward(grad_output, input, target, weight, reduction,
                        ignore_index, total_weight):
    rows = nll_loss_backward(
        grad_output.reshape(-1) if reduction == 0 else grad_output,
        _classes_last(input), target.reshape(-1), weight, reduction,
        ignore_index, total_weight)
    shape = [input.shape[0]] + list(input.shape[2:]) + [input.shape[1]]
    dims = list(range(input.dim()))
    return rows.reshape(shape).permute([0, dims[-1]] + dims[1:-1])


@_register(aten.huber_loss.default)
def huber_loss(input, target, reduction=1, delta=1.0):
    """0.5 d^2 where |d| < delta, delta (|d| - delta / 2) elsewhere; its
    backward has torch's own decomposition."""
    diff = (input - target).abs()
    loss = torch.where(diff < delta, 0.5 * diff * diff,
                       delta * (diff - 0.5 * delta))
    return _reduce(loss, reduction)


def _margins(input, target, p, margin, weight):
    """MultiMarginLoss's terms as [N, C] rows (a 1-D input is one row):
    max(0, margin - x[y] + x[j]) (squared for p=2, times weight[y]) for the
    classes j other than y; the rows, the targets, and which terms are
    active."""
    rows = input.reshape(-1, input.shape[-1])
    target = target.reshape(-1)
    classes = rows.shape[1]
    other = 1 - _one_hot(target, classes, rows.dtype)
    distance = margin - rows.gather(1, target.unsqueeze(1)) + rows
    active = (distance > 0).to(rows.dtype) * other
    terms = distance * active
    if p == 2:
        terms = terms * terms
    if weight is not None:
        terms = terms * weight.gather(0, target).unsqueeze(1)
    return rows, target, terms, distance, active


@_register(aten.multi_margin_loss.default)
def multi_margin_loss(input, target, p=1, margin=1, weight=None,
                      reduction=1):
    """The sum of each row's margin terms over its class count."""
    if p not in (1, 2):
        raise NotImplementedError("MultiMarginLoss with p other than 1 or 2")
    rows, _, terms, _, _ = _margins(input, target, p, margin, weight)
    loss = terms.sum(1) / rows.shape[1]
    if input.dim() < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


@_register(aten.multi_margin_loss_backward.default)
def multi_margin_loss_backward(grad_output, input, target, p, margin,
                               weight=None, reduction=1):
    """Each active term's slope (1, or 2 * distance for p=2, times
    weight[y]) over the class count on x[j], and minus their sum on x[y]."""
    rows, target, _, distance, active = _margins(input, target, p, margin,
                                                 weight)
    slope = active if p == 1 else 2 * distance * active
    if weight is not None:
        slope = slope * weight.gather(0, target).unsqueeze(1)
    slope = slope / rows.shape[1]
    grad = slope - _one_hot(target, rows.shape[1], rows.dtype) * \
        slope.sum(1, keepdim=True)
    if reduction == 1:
        grad = grad * (grad_output / rows.shape[0])
    elif reduction == 2:
        grad = grad * grad_output
    else:
        grad = grad * grad_output.reshape(-1, 1)
    return grad.reshape(input.shape)


@_register(aten.erfinv.default)
def erfinv(input):
    """Giles' single-precision approximation of the inverse error function
    ("Approximating the erfinv function", GPU Computing Gems, 2011), then
    one Newton step on erf (ONNX's Erf): within a few units in the last
    place of torch's. +-1 give +-inf, outside [-1, 1] NaN, as torch."""
    w = -torch.log((1 - input) * (1 + input))
    central = w - 2.5
    central_poly = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
              0.00021858087, -0.00125372503, -0.00417768164, 0.246640727,
              1.50140941):
        central_poly = central_poly * central + c
    tail = torch.sqrt(w) - 3
    tail_poly = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
        tail_poly = tail_poly * tail + c
    y = torch.where(w < 5, central_poly, tail_poly) * input
    # Newton: y -= (erf(y) - x) / (2 / sqrt(pi) * exp(-y^2)).
    step = (torch.erf(y) - input) / (1.1283791670955126 * torch.exp(-y * y))
    refined = y - step
    edge = torch.where(input > 0, torch.full_like(input, float("inf")),
                       torch.full_like(input, float("-inf")))
    refined = torch.where(input.abs() == 1, edge, refined)
    return torch.where(input.abs() > 1, torch.full_like(input, float("nan")),
                       refined)


@_register(aten.sgn.default)
def sgn(input):
    """sgn is sign for real tensors (L1Loss's backward)."""
    return torch.sign(input)


@_register(aten.expm1.default)
def expm1(input):
    """exp(x) - 1 to full precision near 0 (Kahan: (u - 1) x / log u)."""
    u = torch.exp(input)
    ratio = (u - 1) * input / torch.log(u)
    return torch.where(u == 1, input,
                       torch.where(u == 0, torch.full_like(input, -1.0),
                                   ratio))


@_register(aten.trunc.default)
def trunc(input):
    return torch.sign(input) * torch.floor(torch.abs(input))


@_register(aten.frac.default)
def frac(input):
    return input - trunc(input)


@_register(aten.exp2.default)
def exp2(input):
    import math
    return torch.exp(input * math.log(2.0))


@_register(aten.addcdiv.default)
def addcdiv(input, tensor1, tensor2, value=1):
    return input + value * (tensor1 / tensor2)


@_register(aten.logit.default)
def logit(input, eps=None):
    if eps is not None:
        input = input.clamp(eps, 1.0 - eps)
    return torch.log(input / (1 - input))


@_register(aten.xlogy.Tensor)
def xlogy(input, other):
    """0 where x is 0 (unless y is NaN), x log y elsewhere."""
    product = input * torch.log(other)
    zero = torch.zeros_like(product)
    return torch.where(torch.isnan(other), other,
                       torch.where(input == 0, zero, product))


@_register(aten.copysign.Tensor)
def copysign(input, other):
    magnitude = torch.abs(input)
    return torch.where(other < 0, -magnitude, magnitude)


@_register(aten.heaviside.default)
def heaviside(input, values):
    step = (input > 0).to(input.dtype)
    return torch.where(input == 0, values.to(input.dtype), step)


@_register(aten.logaddexp.default)
def logaddexp(input, other, base2=False):
    """max + log(1 + exp(-|a - b|)), in base 2 for logaddexp2; a + log 2
    where a == b (infinities)."""
    import math
    scale = math.log(2.0) if base2 else 1.0
    largest = torch.maximum(input, other)
    gap = torch.abs(input - other) * scale
    tail = torch.log(1 + torch.exp(-gap)) / scale
    return torch.where(input == other, input + math.log(2.0) / scale,
                       largest + tail)


_OURS[aten.logaddexp2.default] = functools.partial(logaddexp, base2=True)


@_register(aten.fmax.default)
def fmax(input, other, smallest=False):
    """maximum (minimum) that ignores a NaN operand."""
    pick = (torch.minimum if smallest else torch.maximum)(input, other)
    return torch.where(torch.isnan(input), other,
                       torch.where(torch.isnan(other), input, pick))


_OURS[aten.fmin.default] = functools.partial(fmax, smallest=True)


@_register(aten.threshold.default)
def threshold(input, threshold, value):
    return torch.where(input > threshold, input,
                       torch.full_like(input, value))


@_register(aten.threshold_backward.default)
def threshold_backward(grad_output, input, threshold):
    return torch.where(input > threshold, grad_output,
                       torch.zeros_like(grad_output))


def _diagonal_offsets(rows, columns, offset):
    """The flat positions of diagonal `offset` in a rows x columns matrix."""
    length = max(0, min(rows - max(-offset, 0), columns - max(offset, 0)))
    steps = torch.arange(length)
    return (steps + max(-offset, 0)) * columns + steps + max(offset, 0)


@_register(aten.diagonal.default, aten.diagonal_copy.default)
def diagonal(input, offset=0, dim1=0, dim2=1):
    """A gather from the two dims flattened (torch.onnx's symbolic writes
    an invalid graph for some, and its backward diagonal_scatter has
    none)."""
    moved = input.movedim((dim1, dim2), (-2, -1))
    rows, columns = moved.shape[-2:]
    flat = moved.reshape(*moved.shape[:-2], rows * columns)
    return flat.index_select(-1, _diagonal_offsets(rows, columns, offset))


@_register(aten.diagonal_scatter.default)
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """input with src written on its diagonal: a scatter into the two dims
    flattened."""
    moved = input.movedim((dim1, dim2), (-2, -1))
    rows, columns = moved.shape[-2:]
    flat = moved.reshape(*moved.shape[:-2], rows * columns)
    positions = _diagonal_offsets(rows, columns, offset)
    written = flat.scatter(-1, positions.expand(src.shape), src.to(flat.dtype))
    return written.reshape(moved.shape).movedim((-2, -1), (dim1, dim2))


_diagonal = diagonal  # diag's argument has the name


@_register(aten.diag.default)
def diag(input, diagonal=0):
    """A vector's diagonal matrix (on diagonal k), or a matrix's diagonal."""
    if input.dim() == 2:
        return _diagonal(input, diagonal)
    size = input.shape[0] + abs(diagonal)
    return diagonal_scatter(torch.zeros(size, size, dtype=input.dtype),
                            input, diagonal)


@_register(aten.logical_not.default)
def logical_not(input):
    return input == 0


@_register(aten._trilinear.default)
def trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    """nn.Bilinear's product (and its backward): each input unsqueezed at
    its expand dims, multiplied, summed over sumdim, as one einsum (which
    traces to batched MatMuls, not the full product)."""
    rank = i1.dim() + len(expand1)
    letters = "abcdefghijklmnopqrstuvwxyz"[:rank]

    def subscript(expanded):
        return "".join(letters[d] for d in range(rank) if d not in expanded)

    equation = ",".join(subscript(e) for e in (expand1, expand2, expand3))
    equation += "->" + subscript(sumdim)
    return torch.einsum(equation, i1, i2, i3)


@_register(aten.kthvalue.default)
def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest along dim, and its index, from a sort."""
    values, indices = input.sort(dim)
    values = values.narrow(dim, k - 1, 1)
    indices = indices.narrow(dim, k - 1, 1)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return values, indices


@_register(aten.median.dim)
def median_dim(input, dim, keepdim=False):
    """The lower median (PyTorch's) along dim, and its index."""
    return kthvalue(input, (input.shape[dim] - 1) // 2 + 1, dim, keepdim)


@_register(aten.median.default)
def median(input):
    return kthvalue(input.reshape(-1), (input.numel() - 1) // 2 + 1)[0]


def _prefixes(input, dim, fill):
    """[..., i, j] = input's element j along dim for j <= i, else `fill`:
    each prefix along a new last dim (dim moved before it)."""
    moved = input.movedim(dim, -1)
    size = moved.shape[-1]
    inside = torch.arange(size).unsqueeze(0) <= torch.arange(size).unsqueeze(1)
    return torch.where(inside, moved.unsqueeze(-2),
                       torch.full((), fill, dtype=input.dtype))


@_register(aten.cummax.default)
def cummax(input, dim, smallest=False):
    """The running maximum (minimum) along dim and where it was last
    reached, from each prefix (the last of equal values, as PyTorch)."""
    fill = float("inf") if smallest else float("-inf")
    prefixes = _prefixes(input, dim, fill).flip(-1)
    values, reversed_indices = (prefixes.min(-1) if smallest
                                else prefixes.max(-1))
    indices = input.shape[dim] - 1 - reversed_indices
    return values.movedim(-1, dim), indices.movedim(-1, dim)


_OURS[aten.cummin.default] = functools.partial(cummax, smallest=True)


@_register(aten.logcumsumexp.default)
def logcumsumexp(input, dim):
    """logsumexp of each prefix along dim (exact where a running
    log(cumsum(exp)) would underflow)."""
    return torch.logsumexp(_prefixes(input, dim, float("-inf")),
                           -1).movedim(-1, dim)


@_register(aten._weight_norm_interface.default)
def weight_norm_interface(v, g, dim=0):
    """weight_norm's w = v g / |v| (the norm over every dim but `dim`, all
    of them for -1) and the norm."""
    axes = [d for d in range(v.dim()) if d != dim or dim == -1]
    norm = v.pow(2).sum(axes, keepdim=True).sqrt()
    return v * (g / norm), norm.reshape(g.shape)


@_register(aten._weight_norm_interface_backward.default)
def weight_norm_interface_backward(grad_w, saved_v, saved_g, saved_norms,
                                   dim=0):
    """dL/dg = sum(dw v) / |v|; dL/dv = g / |v| (dw - v dL/dg / |v|)."""
    axes = [d for d in range(saved_v.dim()) if d != dim or dim == -1]
    norm = saved_norms.reshape([1 if d in axes else saved_v.shape[d]
                                for d in range(saved_v.dim())])
    grad_g = (grad_w * saved_v).sum(axes, keepdim=True) / norm
    grad_v = saved_g.reshape(norm.shape) / norm * (grad_w
                                                   - saved_v * grad_g / norm)
    return grad_v, grad_g.reshape(saved_g.shape)


def _cdist_differences(x1, x2):
    return x1.unsqueeze(-2) - x2.unsqueeze(-3)


@_register(aten._cdist_forward.default)
def cdist_forward(x1, x2, p, compute_mode=None):
    """The p-norms of every row difference (p > 0, finite)."""
    if not 0 < p < float("inf"):
        raise NotImplementedError(f"cdist with p = {p}")
    diff = _cdist_differences(x1, x2)
    if p == 2:
        return diff.pow(2).sum(-1).sqrt()
    if p == 1:
        return diff.abs().sum(-1)
    return diff.abs().pow(p).sum(-1).pow(1.0 / p)


@_register(aten._cdist_backward.default)
def cdist_backward(grad, x1, x2, p, cdist):
    """x1's gradient: sum over x2's rows of grad sign(d) |d|^(p-1) /
    dist^(p-1), 0 where the distance is 0 (autograd swaps the arguments
    for x2's)."""
    if not 0 < p < float("inf"):
        raise NotImplementedError(f"cdist's backward with p = {p}")
    diff = _cdist_differences(x1, x2)
    if p == 1:
        slope = torch.sign(diff)
    else:
        safe = torch.where(cdist == 0, torch.ones_like(cdist), cdist)
        slope = (torch.sign(diff) * diff.abs().pow(p - 1)
                 / safe.pow(p - 1).unsqueeze(-1))
        slope = torch.where((cdist == 0).unsqueeze(-1),
                            torch.zeros_like(slope), slope)
    return (grad.unsqueeze(-1) * slope).sum(-2)


@_register(aten.max_unpool2d.default)
def max_unpool2d(input, indices, output_size):
    """Each value written at its index in a zero plane of output_size."""
    batch, channels = input.shape[:2]
    plane = int(np.prod(output_size))
    flat = torch.zeros(batch, channels, plane, dtype=input.dtype)
    flat = flat.scatter(2, indices.reshape(batch, channels, -1),
                        input.reshape(batch, channels, -1))
    return flat.reshape(batch, channels, *output_size)


@_register(aten.norm.Scalar)
def norm(input, p=2):
    """The p-norm of all elements (torch.onnx's symbolic wants a dim)."""
    magnitude = input.abs()
    if p == float("inf"):
        return magnitude.amax()
    if p == 2:
        return input.pow(2).sum().sqrt()
    if p == 1:
        return magnitude.sum()
    return magnitude.pow(p).sum().pow(1.0 / p)


@_register(aten.index_fill.int_Scalar, aten.index_fill.int_Tensor)
def index_fill(input, dim, index, value):
    """`value` at the indexed positions along dim, as a mask and a Where
    (torch.onnx's symbolic fails on a flattened view, IndexError)."""
    dim = dim % input.dim()
    size = input.shape[dim]
    hit = (torch.arange(size).unsqueeze(1)
           == index.reshape(1, -1).remainder(size)).any(1)
    shape = [1] * input.dim()
    shape[dim] = size
    fill = torch.as_tensor(value, dtype=input.dtype)
    return torch.where(hit.reshape(shape), fill, input)


@_register(aten.smooth_l1_loss.default)
def smooth_l1_loss(input, target, reduction=1, beta=1.0):
    diff = (input - target).abs()
    loss = torch.where(diff < beta, 0.5 * diff * diff / beta if beta > 0
                       else diff, diff - 0.5 * beta)
    return _reduce(loss, reduction)


@_register(aten.smooth_l1_loss_backward.default)
def smooth_l1_loss_backward(grad_output, input, target, reduction, beta):
    diff = input - target
    if beta > 0:
        grad = torch.where(diff.abs() < beta, diff / beta, torch.sign(diff))
    else:
        grad = torch.sign(diff)
    if reduction == 1:  # mean
        grad = grad / diff.numel()
    return grad * grad_output


def _reduce(loss, reduction):
    # at::Reduction: 0 none, 1 mean, 2 sum.
    return loss if reduction == 0 else (
        loss.mean() if reduction == 1 else loss.sum())


@_register(aten.adaptive_max_pool2d_backward.default, sums_at_indices=True)
def adaptive_max_pool2d_backward(grad_output, input, indices,
                                 scatter_add_exports=True):
    """As max pooling's backward: indices are flat within each plane."""
    return max_pool2d_with_indices_backward(grad_output, input, None, None,
                                            None, None, None, indices,
                                            scatter_add_exports)


def _pool_divisors(size, out_size, kernel, stride, padding,
                   count_include_pad):
    """Per output position along one axis, the window's extent (as PyTorch
    counts it: the padding up to its end included when count_include_pad)
    and its first input index."""
    extents = []
    for o in range(out_size):
        start = o * stride - padding
        end = min(start + kernel, size + padding)
        counted = end - start
        start, end = max(start, 0), min(end, size)
        extents.append(counted if count_include_pad else end - start)
    return extents


def _pool_window(dims, kernel_size, stride, padding):
    """A pooling's kernel, stride (the kernel when empty) and padding as one
    value per spatial dim."""
    kernel = list(kernel_size) * (dims // len(kernel_size))
    stride = list(stride or kernel) * (dims // len(stride or kernel))
    padding = [padding] if isinstance(padding, int) else list(padding)
    return kernel, stride, padding * (dims // len(padding))


def _window_counts(sizes, out_sizes, kernel, stride, padding,
                   count_include_pad, dtype):
    """The constant [*out_sizes] tensor of each window's element count, as
    PyTorch counts it (the product of _pool_divisors over the axes)."""
    dims = len(sizes)
    counts = torch.ones(out_sizes, dtype=dtype)
    for d in range(dims):
        extents = torch.tensor(_pool_divisors(
            sizes[d], out_sizes[d], kernel[d], stride[d], padding[d],
            count_include_pad), dtype=dtype)
        shape = [1] * dims
        shape[d] = -1
        counts = counts * extents.reshape(shape)
    return counts


@_register(aten.avg_pool2d.default, aten.avg_pool3d.default)
def avg_pool_divisor_override(input, kernel_size, stride=(), padding=0,
                              ceil_mode=False, count_include_pad=True,
                              divisor_override=None):
    """With divisor_override (torch.onnx cannot export it): the average
    counting the padding, times each window's count (as PyTorch counts it,
    ceil_mode's last windows shorter), over the divisor. Without, the op
    as it is."""
    if not divisor_override:
        return NotImplemented
    dims = input.dim() - 2
    pool = (aten.avg_pool2d.default if dims == 2
            else aten.avg_pool3d.default)
    pooled = pool(input, kernel_size, stride, padding, ceil_mode, True, None)
    kernel, stride, padding = _pool_window(dims, kernel_size, stride,
                                           padding)
    counts = _window_counts(list(input.shape[2:]), list(pooled.shape[2:]),
                            kernel, stride, padding, True, input.dtype)
    return pooled * (counts / float(divisor_override))


@_register(aten.avg_pool2d_backward.default,
           aten.avg_pool3d_backward.default)
def avg_pool_backward(grad_output, input, kernel_size, stride, padding,
                      ceil_mode, count_include_pad, divisor_override):
    """Each output gradient divided by its window's divisor (a constant per
    position, as PyTorch counts it: count_include_pad, divisor_override,
    ceil_mode's last windows), then spread over its window with a
    transposed convolution of ones onto the padded input, which is cropped
    (ceil_mode's windows may run past the padding). 2-D and 3-D (3-D:
    LocalResponseNorm's backward)."""
    import torch.nn.functional as F
    dims = input.dim() - 2
    kernel, stride, padding = _pool_window(dims, kernel_size, stride,
                                           padding)
    channels = input.shape[1]
    sizes = [input.shape[2 + d] for d in range(dims)]
    out_sizes = [grad_output.shape[2 + d] for d in range(dims)]
    if divisor_override:
        divisors = torch.full(out_sizes, float(divisor_override),
                              dtype=grad_output.dtype)
    else:
        divisors = _window_counts(sizes, out_sizes, kernel, stride, padding,
                                  count_include_pad, grad_output.dtype)
    weight = torch.ones((channels, 1, *kernel), dtype=grad_output.dtype)
    transposed = F.conv_transpose2d if dims == 2 else F.conv_transpose3d
    spread = transposed(grad_output / divisors, weight, None, stride, 0, 0,
                        channels)
    # The canvas covers the padded input and whatever ceil_mode's last
    # windows reach past it.
    for d in range(dims):
        canvas = spread.shape[2 + d]
        need = padding[d] + sizes[d]
        if canvas < need:
            pad = [0] * (2 * dims)
            pad[2 * (dims - 1 - d) + 1] = need - canvas
            spread = F.pad(spread, pad)
        spread = spread.narrow(2 + d, padding[d], sizes[d])
    return spread


@_register(aten.atan2.default)
def atan2(input, other):
    """atan(y / x), moved by pi in the left half-plane; the axes' angles
    where x is 0."""
    import math
    ratio = torch.atan(input / other)
    half = torch.where(input > 0, torch.full_like(input, math.pi / 2),
                       torch.where(input < 0,
                                   torch.full_like(input, -math.pi / 2),
                                   torch.zeros_like(input)))
    left = ratio + torch.where(input >= 0, torch.full_like(input, math.pi),
                               torch.full_like(input, -math.pi))
    return torch.where(other > 0, ratio,
                       torch.where(other < 0, left, half))


@_register(aten.hypot.default)
def hypot(input, other):
    return torch.sqrt(input * input + other * other)


@_register(aten.cumprod.default)
def cumprod(input, dim, dtype=None):
    """Running products along `dim`, one Mul per element of it (exact,
    where exp(cumsum(log)) would round and fail at zeros and negatives)."""
    if dtype is not None:
        input = input.to(dtype)
    dim = dim % input.dim()
    products = [input.narrow(dim, 0, 1)]
    for i in range(1, input.shape[dim]):
        products.append(products[-1] * input.narrow(dim, i, 1))
    return torch.cat(products, dim)


def _source_step(in_size, out_size, align_corners, scale):
    """The input distance between neighbouring outputs of PyTorch's
    interpolation along one axis: corner to corner with align_corners,
    else 1 / the given scale factor, else in_size / out_size."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale if scale else in_size / out_size


def _matmul_along(tensor, axis, matrix):
    """`tensor` times the numpy `matrix` along `axis` (the axis moved last
    and back), the matrix one constant of the trace."""
    return torch.matmul(tensor.movedim(axis, -1), torch.tensor(
        matrix, dtype=tensor.dtype)).movedim(-1, axis)


def _copy_matrix(sources, in_size):
    """The [len(sources), in_size] 0/1 matrix whose row i picks input
    element sources[i]."""
    matrix = np.zeros((len(sources), in_size))
    matrix[np.arange(len(sources)), sources] = 1
    return matrix


def _interpolation_backward(weights, grad_output, input_size, align_corners,
                            scale_factors):
    """Separable 2-D interpolation is x -> Wh x Wwᵀ with constant
    matrices from `weights`, so its backward is dy -> Whᵀ dy Ww: two
    MatMuls. 1-D and 3-D: one MatMul per axis, the axis moved last."""
    dims = len(input_size) - 2
    scales = scale_factors or (None,) * dims

    def matrix(d, size):
        # Computed in numpy, so that the trace holds one constant, not the
        # float64 arithmetic of every entry (hundreds of index_put nodes,
        # which torch.onnx types wrong).
        return weights(input_size[2 + d], size, align_corners, scales[d])

    if dims != 2:
        grad = grad_output
        for d in range(dims):
            grad = _matmul_along(grad, 2 + d, matrix(d, grad.shape[2 + d]))
        return grad
    rows = torch.tensor(matrix(0, grad_output.shape[-2]),
                        dtype=grad_output.dtype)
    columns = torch.tensor(matrix(1, grad_output.shape[-1]),
                           dtype=grad_output.dtype)
    return torch.matmul(torch.matmul(rows.t(), grad_output), columns)


def _bilinear_weights(in_size, out_size, align_corners, scale):
    """The [out_size, in_size] matrix of linear interpolation along one axis,
    by PyTorch's rules (area_pixel_compute_source_index): align_corners maps
    the corners, otherwise half-pixel centres clamped at 0, with 1 / the
    given scale factor when there is one."""
    step = _source_step(in_size, out_size, align_corners, scale)
    weights = np.zeros((out_size, in_size))
    for out in range(out_size):
        source = (step * out if align_corners
                  else max(step * (out + 0.5) - 0.5, 0.0))
        low = min(int(source), in_size - 1)
        high = low + 1 if low < in_size - 1 else low
        fraction = source - low
        weights[out, low] += 1 - fraction
        weights[out, high] += fraction
    return weights


def _bicubic_weights(in_size, out_size, align_corners, scale, a=-0.75):
    """The [out_size, in_size] matrix of PyTorch's bicubic interpolation
    along one axis: Keys' kernel (a = -0.75) on the 4 neighbours of the
    source coordinate (not clamped at 0, unlike bilinear), their indices
    clamped to the axis."""
    step = _source_step(in_size, out_size, align_corners, scale)
    weights = np.zeros((out_size, in_size))
    for out in range(out_size):
        source = step * out if align_corners else step * (out + 0.5) - 0.5
        low = int(np.floor(source))
        t = source - low
        near = lambda x: ((a + 2) * x - (a + 3)) * x * x + 1
        far = lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        for offset, weight in zip((-1, 0, 1, 2),
                                  (far(t + 1), near(t), near(1 - t),
                                   far(2 - t))):
            weights[out, min(max(low + offset, 0), in_size - 1)] += weight
    return weights


def _nearest_exact_sources(in_size, out_size, scale):
    """The input index each output reads in 'nearest-exact' mode:
    floor((out + 0.5) * step), at most in_size - 1."""
    step = _source_step(in_size, out_size, False, scale)
    return [min(int(np.floor((out + 0.5) * step)), in_size - 1)
            for out in range(out_size)]


def _nearest_exact_weights(in_size, out_size, align_corners, scale):
    """The [out_size, in_size] 0/1 matrix of 'nearest-exact' along one
    axis."""
    return _copy_matrix(_nearest_exact_sources(in_size, out_size, scale),
                        in_size)


@_register(aten._upsample_nearest_exact1d.vec,
           aten._upsample_nearest_exact2d.vec,
           aten._upsample_nearest_exact3d.vec)
def upsample_nearest_exact(input, output_size, scale_factors):
    """Each output element is the input element at its source index
    along every spatial axis: one index_select (Gather) per axis."""
    dims = input.dim() - 2
    scales = scale_factors or (None,) * dims
    if output_size is None:
        output_size = [int(np.floor(input.shape[2 + d] * scales[d]))
                       for d in range(dims)]
    for d in range(dims):
        sources = torch.tensor(_nearest_exact_sources(
            input.shape[2 + d], output_size[d], scales[d]))
        input = input.index_select(2 + d, sources)
    return input


@_register(aten._upsample_nearest_exact1d_backward.vec,
           aten._upsample_nearest_exact2d_backward.vec,
           aten._upsample_nearest_exact3d_backward.vec)
def upsample_nearest_exact_backward(grad_output, output_size, input_size,
                                    scale_factors):
    """MatMuls by the transposed 0/1 source matrices: each input element
    sums the gradients of the outputs that read it."""
    return _interpolation_backward(_nearest_exact_weights, grad_output,
                                   input_size, False, scale_factors)


def _padding_sources(in_size, before, after, reflect):
    """The input index each position of a padded axis copies: mirrored
    about the edges (reflect) or the nearest edge (replicate)."""
    sources = []
    for out in range(before + in_size + after):
        index = out - before
        if reflect:
            index = -index if index < 0 else index
            index = 2 * (in_size - 1) - index if index >= in_size else index
        sources.append(min(max(index, 0), in_size - 1))
    return sources


def _padding_backward(reflect):
    """reflection_pad*d_backward or replication_pad*d_backward: per padded
    axis (the last first, as `padding` lists them), a MatMul by the
    transposed 0/1 matrix of the positions that copy each input element,
    so that each input element sums their gradients."""

    def backward(grad_output, input, padding):
        grad = grad_output
        for i in range(len(padding) // 2):
            axis = input.dim() - 1 - i
            sources = _padding_sources(input.shape[axis], padding[2 * i],
                                       padding[2 * i + 1], reflect)
            grad = _matmul_along(grad, axis,
                                 _copy_matrix(sources, input.shape[axis]))
        return grad

    return backward


for _dims in (1, 2, 3):
    _register(getattr(aten, f"reflection_pad{_dims}d_backward").default)(
        _padding_backward(reflect=True))
    _register(getattr(aten, f"replication_pad{_dims}d_backward").default)(
        _padding_backward(reflect=False))


@_register(aten.upsample_bicubic2d_backward.vec)
def upsample_bicubic2d_backward(grad_output, output_size, input_size,
                                align_corners, scale_factors):
    """Two MatMuls by the transposed bicubic interpolation matrices."""
    return _interpolation_backward(_bicubic_weights, grad_output, input_size,
                                   align_corners, scale_factors)


@_register(aten.upsample_bilinear2d_backward.vec,
           aten.upsample_linear1d_backward.vec,
           aten.upsample_trilinear3d_backward.vec)
def upsample_bilinear2d_backward(grad_output, output_size, input_size,
                                 align_corners, scale_factors):
    """MatMuls by the transposed linear interpolation matrices, one per
    axis (linear, bilinear, trilinear)."""
    return _interpolation_backward(_bilinear_weights, grad_output, input_size,
                                   align_corners, scale_factors)


@_register(aten.upsample_nearest2d_backward.vec)
def upsample_nearest2d_backward(grad_output, output_size, input_size,
                                scale_factors):
    """Sums each block of copies (integer scale factors)."""
    batch, channels, height, width = input_size
    out_h, out_w = grad_output.shape[-2], grad_output.shape[-1]
    if out_h % height or out_w % width:
        raise NotImplementedError(
            "upsample_nearest2d's backward with a non-integer scale")
    return grad_output.reshape(batch, channels, height, out_h // height,
                               width, out_w // width).sum((3, 5))


@_register(aten.copy.default)
def copy(input, src, non_blocking=False):
    """The functional form of input.copy_(src)."""
    return src.to(input.dtype).expand(input.shape)


#===--- ONNX symbolics ---===#


def _cast(g, tensor, dtype):
    dtype = symbolic_helper._maybe_get_const(dtype, "i")
    if dtype is None or not isinstance(dtype, int):
        return g.op("Identity", tensor)
    return g.op("Cast", tensor,
                to_i=_type_utils.JitScalarType(dtype).onnx_type())


def _to_copy(g, tensor, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=None, memory_format=None):
    return _cast(g, tensor, dtype)


def _reshape(g, tensor, shape, *strides):
    shape = symbolic_helper._maybe_get_const(shape, "is")
    if not symbolic_helper._is_value(shape):
        shape = g.op("Constant", value_t=torch.LongTensor(shape))
    return g.op("Reshape", tensor, shape)


def _softmax(g, tensor, dim, half_to_float):
    dim = symbolic_helper._get_const(dim, "i", "dim")
    return g.op("Softmax", tensor, axis_i=dim)


def _native_layer_norm(g, tensor, normalized_shape, weight, bias, eps):
    """One LayerNormalization node (opset 17) instead of torch's expansion
    into ReduceMean, Pow and Div, so that passes see the normalization."""
    from torch.onnx import symbolic_opset9
    if symbolic_helper._is_none(weight) or symbolic_helper._is_none(bias):
        return symbolic_opset9.native_layer_norm(g, tensor, normalized_shape,
                                                 weight, bias, eps)
    shape = symbolic_helper._get_const(normalized_shape, "is",
                                       "normalized_shape")
    eps = symbolic_helper._get_const(eps, "f", "eps")
    return g.op("LayerNormalization", tensor, weight, bias, epsilon_f=eps,
                axis_i=-len(shape), outputs=3)


def _elu(g, tensor, alpha, scale, input_scale):
    """elu with scale and input_scale (SELU's form after tracing), which
    torch 1.13's symbolic refuses: scale * Elu(input_scale * x, alpha)."""
    alpha = symbolic_helper._get_const(alpha, "f", "alpha")
    scale = symbolic_helper._get_const(scale, "f", "scale")
    input_scale = symbolic_helper._get_const(input_scale, "f", "input_scale")

    def constant(value):
        return g.op("Constant", value_t=torch.tensor(value, dtype=torch.float))

    if input_scale != 1:
        tensor = g.op("Mul", tensor, constant(input_scale))
    result = g.op("Elu", tensor, alpha_f=alpha)
    return result if scale == 1 else g.op("Mul", result, constant(scale))


def _constant_pads(mode):
    """reflection_pad*d and replication_pad*d with their pads as one
    Constant in ONNX's order: torch.onnx computes them with Concat, Slice
    and Transpose nodes, through which ONNX shape inference cannot see, so
    everything after the Pad would lose its static shape."""

    def symbolic(g, input, padding):
        padding = symbolic_helper._get_const(padding, "is", "padding")
        rank = symbolic_helper._get_tensor_rank(input)
        if rank is None:
            from torch.onnx import symbolic_opset11
            fallback = (symbolic_opset11.reflection_pad if mode == "reflect"
                        else symbolic_opset11.replication_pad)
            return fallback(g, input, padding)
        # PyTorch's order: last dimension first, (begin, end) pairs.
        begins, ends = [0] * rank, [0] * rank
        for i in range(len(padding) // 2):
            begins[rank - 1 - i] = padding[2 * i]
            ends[rank - 1 - i] = padding[2 * i + 1]
        pads = g.op("Constant", value_t=torch.tensor(begins + ends))
        return g.op("Pad", input, pads, mode_s=mode)

    return symbolic


def _unary(op_type):
    """aten's unary op as ONNX's op of the same meaning (which torch 1.13
    has no symbolic for)."""
    return lambda g, tensor: g.op(op_type, tensor)


_SYMBOLICS = {
    "aten::elu": _elu,
    **{f"aten::{name}": _unary(name.capitalize())
       for name in ("sinh", "cosh", "asinh", "acosh", "atanh")},
    **{f"aten::reflection_pad{d}d": _constant_pads("reflect")
       for d in (1, 2, 3)},
    **{f"aten::replication_pad{d}d": _constant_pads("edge")
       for d in (1, 2, 3)},
    "aten::_softmax": _softmax,
    "aten::_to_copy": _to_copy,
    "prims::convert_element_type": _cast,
    "aten::_unsafe_view": _reshape,
    "aten::_reshape_alias": _reshape,
}


def _stft(g, signal, frame_length, frame_step, window, onesided):
    """amp_opt::stft as ONNX's STFT (opset 17) of signal [batch, length] as
    [batch, length, 1], transposed to torch's [batch, bins, frames, 2].
    Always two-sided, then sliced to the onesided bins: ONNX 1.12's shape
    inference (torch's, and Debian's checker) counts the frames of a
    onesided STFT wrong, one too many for most lengths."""
    frame_length = symbolic_helper._get_const(frame_length, "i",
                                              "frame_length")
    frame_step = symbolic_helper._get_const(frame_step, "i", "frame_step")
    onesided = symbolic_helper._get_const(onesided, "b", "onesided")

    def constant(value):
        return g.op("Constant", value_t=torch.tensor(value, dtype=torch.long))

    real = g.op("Unsqueeze", signal, constant([2]))
    spectrum = g.op("STFT", real, constant(frame_step), window,
                    constant(frame_length), onesided_i=0)
    if onesided:
        spectrum = g.op("Slice", spectrum, constant([0]),
                        constant([frame_length // 2 + 1]), constant([2]))
    return g.op("Transpose", spectrum, perm_i=[0, 2, 1, 3])


def _grid_sampler_2d(g, input, grid, interpolation_mode, padding_mode,
                     align_corners):
    """grid_sampler_2d (what F.grid_sample traces to) as ONNX's GridSample
    (opset 16); torch.onnx registers only the untraced grid_sampler."""
    modes = ["bilinear", "nearest", "bicubic"]
    paddings = ["zeros", "border", "reflection"]
    mode = symbolic_helper._get_const(interpolation_mode, "i", "mode")
    padding = symbolic_helper._get_const(padding_mode, "i", "padding_mode")
    align = symbolic_helper._get_const(align_corners, "b", "align_corners")
    return g.op("GridSample", input, grid, mode_s=modes[mode],
                padding_mode_s=paddings[padding], align_corners_i=int(align))


# Symbolics that need a newer opset than 13, by the first opset.
_SYMBOLICS_FROM = {"aten::native_layer_norm": (17, _native_layer_norm),
                   "amp_opt::stft": (17, _stft),
                   "aten::grid_sampler_2d": (16, _grid_sampler_2d)}


def _symbolics(opset):
    found = dict(_SYMBOLICS)
    for name, (first, fn) in _SYMBOLICS_FROM.items():
        if opset >= first:
            found[name] = fn
    return found


def has_symbolic(name, opset):
    return name in _symbolics(opset)


@contextlib.contextmanager
def onnx_symbolics(opset):
    """Registers our symbolics with torch.onnx while the block runs."""
    symbolics = _symbolics(opset)
    for name, fn in symbolics.items():
        torch.onnx.register_custom_op_symbolic(name, fn, opset)
    try:
        yield
    finally:
        for name in symbolics:
            torch.onnx.unregister_custom_op_symbolic(name, opset)


_torch_cross_entropy = torch.nn.functional.cross_entropy


def _cross_entropy(input, target, weight=None, size_average=None,
                   ignore_index=-100, reduce=None, reduction="mean",
                   label_smoothing=0.0):
    """F.cross_entropy with label smoothing as torch 1.13 computes it, with
    a mask multiply where torch takes masked_select (whose output size
    depends on the data, so that it exports to NonZero, which a static
    compiler cannot run). Other calls go to torch's."""
    if (label_smoothing == 0.0 or target.is_floating_point()
            or size_average is not None or reduce is not None):
        return _torch_cross_entropy(input, target, weight, size_average,
                                    ignore_index, reduce, reduction,
                                    label_smoothing)
    class_dim = 1 if input.dim() > 1 else 0
    log_probs = torch.nn.functional.log_softmax(input, class_dim)
    nll = torch.nn.functional.nll_loss(log_probs, target, weight,
                                       ignore_index=ignore_index,
                                       reduction=reduction)
    valid = target != ignore_index
    if weight is not None:
        shape = [1] * input.dim()
        shape[class_dim] = -1
        log_probs = log_probs * weight.reshape(shape)
    smooth = -log_probs.sum(class_dim) * valid.to(input.dtype)
    if reduction == "mean":
        if weight is None:
            count = valid.sum().to(input.dtype)
        else:
            safe = torch.where(valid, target, torch.zeros_like(target))
            count = (weight[safe] * valid.to(input.dtype)).sum()
        smooth = smooth.sum() / count
    elif reduction == "sum":
        smooth = smooth.sum()
    classes = input.shape[class_dim]
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / classes)


_torch_batch_norm_forward = torch.nn.modules.batchnorm._BatchNorm.forward


def _batch_norm_forward(self, input):
    """_BatchNorm.forward, with a cumulative moving average (momentum=None)
    whose factor 1 / num_batches_tracked is a tensor: torch's reads it as a
    Python number, which the trace cannot. The output normalizes by the
    batch's statistics, and the running ones move toward the batch's by
    that factor (the variance unbiased, as torch's)."""
    if not (self.momentum is None and self.training
            and self.track_running_stats
            and self.num_batches_tracked is not None):
        return _torch_batch_norm_forward(self, input)
    self._check_input_dim(input)
    self.num_batches_tracked.add_(1)
    output = torch.nn.functional.batch_norm(
        input, None, None, self.weight, self.bias, True, 0.0, self.eps)
    with torch.no_grad():
        factor = 1.0 / self.num_batches_tracked.to(input.dtype)
        dims = [0] + list(range(2, input.dim()))
        mean = input.mean(dims)
        variance = input.var(dims, unbiased=True)
        self.running_mean.mul_(1 - factor).add_(factor * mean)
        self.running_var.mul_(1 - factor).add_(factor * variance)
    return output


_torch_multilabel_margin_loss = torch.nn.functional.multilabel_margin_loss


def _multilabel_margin_loss_for_export(input, target, size_average=None,
                                       reduce=None, reduction="mean"):
    """F.multilabel_margin_loss (aten's forward and backward have no
    export) in tensor ops: for each sample, the hinge 1 - (x[y_j] - x[i])
    summed over its target classes y_j (the indices before the first -1)
    and the classes i that are no target, over the class count."""
    if size_average is not None or reduce is not None:
        reduction = torch.nn._reduction.legacy_get_string(size_average,
                                                          reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    unbatched = input.dim() == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    classes = input.shape[1]
    valid = (target != -1).long().cumprod(1).bool()
    labels = torch.where(valid, target, torch.zeros_like(target))
    is_target = ((labels.unsqueeze(2) == torch.arange(classes))
                 & valid.unsqueeze(2)).any(1)
    margins = torch.clamp(1 - input.gather(1, labels).unsqueeze(2)
                          + input.unsqueeze(1), min=0)
    counted = valid.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = (margins * counted.to(input.dtype)).sum((1, 2)) / classes
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss


_torch_channel_shuffle = torch.nn.functional.channel_shuffle


def _channel_shuffle_for_export(input, groups):
    """channel_shuffle (nn.ChannelShuffle), which torch 1.13 cannot
    differentiate, as the reshape, transpose and reshape it is."""
    batch, channels = input.shape[:2]
    return input.reshape(batch, groups, channels // groups,
                         *input.shape[2:]).transpose(1, 2).reshape(
                             input.shape)


_torch_ctc_loss = torch.nn.functional.ctc_loss
#: CTC's log-probability of an impossible path: finite, so that the
#: recursion's gradients stay finite where every term is impossible.
_CTC_IMPOSSIBLE = -1e30


def _logsumexp(*terms):
    """log(sum(exp(terms))) of same-shaped tensors, their maximum taken
    out first."""
    top = functools.reduce(torch.maximum, terms)
    return top + torch.log(functools.reduce(
        torch.add, [torch.exp(term - top) for term in terms]))


def _ctc_loss_for_export(log_probs, targets, input_lengths, target_lengths,
                         blank=0, reduction="mean", zero_infinity=False):
    """F.ctc_loss as its forward recursion over the frames (Graves et
    al. 2006), in tensor ops that trace and export: log_probs [T, N, C]
    (or [T, C]), targets padded [N, S] or concatenated [sum(target_lengths)]
    (or [S] unbatched), the lengths tensors or lists. autograd
    differentiates the recursion; its gradient with respect to log_probs is
    the true one, which through a log_softmax gives the logits the same
    gradient as torch's (whose log_probs gradient assumes that
    log_softmax). The T frames unroll into the graph; concatenated targets
    are read into rows as long as all of them together."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0)
    frames, batch, _ = log_probs.shape
    input_lengths = torch.as_tensor(input_lengths).reshape(batch).long()
    target_lengths = torch.as_tensor(target_lengths).reshape(batch).long()
    if targets.dim() == 1:
        # Concatenated targets: sample n's are the target_lengths[n] after
        # the earlier ones. Their longest is known only at run time, so
        # each row reads as many as there are in all (the positions past
        # its length are never read back).
        total = targets.shape[0]
        starts = torch.cumsum(target_lengths, 0) - target_lengths
        positions = (starts.unsqueeze(1) + torch.arange(max(total, 1))
                     ).clamp(max=max(total - 1, 0))
        targets = targets[positions] if total else torch.zeros(
            batch, 1, dtype=torch.long)
    if targets.dim() != 2:
        raise NotImplementedError("F.ctc_loss with targets of rank "
                                  f"{targets.dim()}")
    labels = targets.shape[1]
    # The extended labels: blank, l1, blank, l2, ..., blank.
    targets = targets.long()
    blanks = torch.full_like(targets, blank)
    extended = torch.cat([torch.stack([blanks, targets], 2).reshape(
        batch, 2 * labels), blanks[:, :1]], 1)
    width = 2 * labels + 1
    emit = log_probs.gather(2, extended.unsqueeze(0).expand(
        frames, batch, width))
    impossible = torch.full((batch, width), _CTC_IMPOSSIBLE,
                            dtype=log_probs.dtype)
    # A label may follow the one two back when it is no blank and differs.
    previous = torch.cat([extended[:, :2], extended[:, :-2]], 1)
    skips = (extended != blank) & (extended != previous)
    skips[:, :2] = False
    alpha = torch.where(torch.arange(width) < 2, emit[0], impossible)
    for t in range(1, frames):
        shifted = torch.cat([impossible[:, :1], alpha[:, :-1]], 1)
        skipped = torch.where(
            skips, torch.cat([impossible[:, :2], alpha[:, :-2]], 1),
            impossible)
        step = _logsumexp(alpha, shifted, skipped) + emit[t]
        alpha = torch.where((t < input_lengths).unsqueeze(1), step, alpha)
    last = alpha.gather(1, (2 * target_lengths).unsqueeze(1)).squeeze(1)
    before = alpha.gather(1, (2 * target_lengths - 1).clamp(min=0)
                          .unsqueeze(1)).squeeze(1)
    before = torch.where(target_lengths > 0, before, impossible[:, 0])
    loss = -_logsumexp(last, before)
    # An impossible alignment (more labels than frames allow): inf, as
    # torch's, or 0 with zero_infinity.
    beyond = loss > -_CTC_IMPOSSIBLE / 2
    loss = torch.where(beyond, torch.zeros_like(loss) if zero_infinity
                       else torch.full_like(loss, float("inf")), loss)
    if reduction == "mean":
        return (loss / target_lengths.clamp(min=1).to(loss.dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss


_torch_gaussian_nll_loss = torch.nn.functional.gaussian_nll_loss
_torch_local_response_norm = torch.nn.functional.local_response_norm
_torch_one_hot = torch.nn.functional.one_hot


def _one_hot_for_export(tensor, num_classes=-1):
    """F.one_hot without torch 1.13's checks that every index lies in
    [0, num_classes), which read traced values (the trace fails): an index
    outside gives a row of zeros. Without num_classes the width is the
    largest index plus one, which depends on the data."""
    if num_classes < 0:
        raise NotImplementedError(
            "F.one_hot without num_classes (its width depends on the data)")
    return _one_hot(tensor, num_classes, torch.int64)


def _gaussian_nll_loss(input, target, var, full=False, eps=1e-6,
                       reduction="mean"):
    """F.gaussian_nll_loss as torch 1.13 computes it, without its check
    that no variance is negative (which reads a traced value: the trace
    fails) and with its no_grad clamp as a straight-through clamp (the
    value clamped at eps, the gradient as if it were not)."""
    import math
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = torch.unsqueeze(var, -1)
        elif not (input.size()[:-1] == var.size()[:-1]
                  and var.size(-1) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var + (var.clamp(min=eps) - var).detach()
    loss = 0.5 * (torch.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


_torch_stft = torch.stft
# torch.stft traces into as_strided, complex _fft_r2c and complex views,
# which torch.onnx cannot export: while a step is traced it is one op,
# amp_opt::stft (center=False, real frames), that exports as ONNX's STFT.
_LIBRARY = torch.library.Library("amp_opt", "DEF")
_LIBRARY.define("stft(Tensor signal, int frame_length, int frame_step, "
                "Tensor window, bool onesided) -> Tensor")
_LIBRARY_CPU = torch.library.Library("amp_opt", "IMPL", "CPU")
_LIBRARY_CPU.impl(
    "stft", lambda signal, frame_length, frame_step, window, onesided:
    torch.view_as_real(_torch_stft(signal, frame_length, frame_step,
                                   window=window, center=False,
                                   onesided=onesided, return_complex=True)))
def _stft_for_export(input, n_fft, hop_length=None, win_length=None,
                     window=None, center=True, pad_mode="reflect",
                     normalized=False, onesided=None, return_complex=None):
    """torch.stft as amp_opt::stft: the centering pad, the window's
    padding to n_fft and the normalization in torch ops around it. The
    result is torch's real form [batch, bins, frames, 2]
    (return_complex=False): complex tensors do not export."""
    if return_complex:
        raise NotImplementedError(
            "torch.stft(return_complex=True) (complex tensors do not export "
            "to ONNX; use return_complex=False, the real and imaginary "
            "parts in the last dimension)")
    if input.is_complex() or input.requires_grad:
        raise NotImplementedError(
            "torch.stft of a complex signal or of one that needs a gradient")
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if window is None:
        window = torch.ones(win_length, dtype=input.dtype)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = torch.nn.functional.pad(
            window, (left, n_fft - win_length - left))
    batched = input.dim() == 2
    signal = input if batched else input.unsqueeze(0)
    if center:
        signal = torch.nn.functional.pad(
            signal.unsqueeze(1), (n_fft // 2, n_fft // 2),
            mode=pad_mode).squeeze(1)
    onesided = True if onesided is None else onesided
    result = torch.ops.amp_opt.stft(signal, n_fft, hop_length,
                                    window.to(input.dtype), onesided)
    if normalized:
        result = result * n_fft ** -0.5
    return result if batched else result.squeeze(0)


def _local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """F.local_response_norm with the channel window's sum taken from
    shifted slices of the zero-padded squares: torch's avg_pool over a
    5-D view exports a pooling backward torch.onnx cannot."""
    if input.dim() < 3 or input.numel() == 0:
        return _torch_local_response_norm(input, size, alpha, beta, k)
    squares = input * input
    padded = torch.nn.functional.pad(
        squares, [0, 0] * (input.dim() - 2) + [size // 2, (size - 1) // 2])
    channels = input.shape[1]
    window = padded.narrow(1, 0, channels)
    for shift in range(1, size):
        window = window + padded.narrow(1, shift, channels)
    return input / (window / size * alpha + k).pow(beta)


# The functions whose torch 1.13 implementation does not trace to a static
# graph that exports, and ours while a step is traced: (module, name) ->
# (theirs, ours).
_TRACED_REPLACEMENTS = {
    (torch.nn.functional, "cross_entropy"): (_torch_cross_entropy,
                                             _cross_entropy),
    (torch.nn.functional, "gaussian_nll_loss"): (_torch_gaussian_nll_loss,
                                                 _gaussian_nll_loss),
    (torch, "stft"): (_torch_stft, _stft_for_export),
    (torch.nn.functional, "local_response_norm"): (
        _torch_local_response_norm, _local_response_norm),
    (torch.nn.functional, "one_hot"): (_torch_one_hot, _one_hot_for_export),
    (torch.nn.functional, "ctc_loss"): (_torch_ctc_loss,
                                        _ctc_loss_for_export),
    (torch.nn.functional, "channel_shuffle"): (_torch_channel_shuffle,
                                               _channel_shuffle_for_export),
    (torch, "channel_shuffle"): (_torch_channel_shuffle,
                                 _channel_shuffle_for_export),
    (torch.nn.functional, "multilabel_margin_loss"): (
        _torch_multilabel_margin_loss, _multilabel_margin_loss_for_export),
    (torch.nn.modules.batchnorm._BatchNorm, "forward"): (
        _torch_batch_norm_forward, _batch_norm_forward),
}


@contextlib.contextmanager
def traced_replacements():
    """Routes F.cross_entropy, F.gaussian_nll_loss, F.local_response_norm,
    F.ctc_loss, F.multilabel_margin_loss, F.channel_shuffle (and the nn
    modules that call them), F.one_hot, torch.stft and BatchNorm's forward
    (for momentum=None) to ours while the block traces the step."""
    for (module, name), (_, ours) in _TRACED_REPLACEMENTS.items():
        setattr(module, name, ours)
    try:
        yield
    finally:
        for (module, name), (theirs, _) in _TRACED_REPLACEMENTS.items():
            setattr(module, name, theirs)
