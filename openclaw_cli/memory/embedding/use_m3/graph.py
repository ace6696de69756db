"""USE-m3's forward pass as an ONNX graph of standard ops, and its int8 compute (use_m3.convert).

The package runs a deep averaging network over CNN n-gram features in numpy; this builds the same
computation for one sentence from its weights archive, so onnxruntime can run it. numpy and onnx are
imported inside functions (start-up).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import onnx

DIMENSIONS = 512  # the sentence vector's width
_CHUNKS = 17  # the embedding table is stored as 17 interleaved uint8 chunks, row id -> chunk id % 17
_CNN = 256
_ORDERS = ((2, 0), (3, 1), (5, 2))  # (n-gram order, tokens of left context) of the three CNN branches
_PAD_LEFT, _PAD_RIGHT = 2, 3  # widest left context; widest right context + 1 (see _windows)


# ---------------------------------------------------------------------------------------------------------
# Graph: the package's forward pass (deep averaging network over CNN n-gram features) for one sentence


class _GraphBuilder:
    """Collects nodes and initializers; every method returns the name of the tensor it produced."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0

    def const(self, name: str, array: np.ndarray) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def unique(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}_{self._count}"

    def op(self, op_type: str, *inputs: str, **attributes: Any) -> str:
        from onnx import helper

        output = self.unique(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [output], name=output, **attributes))
        return output

    def dense(self, x: str, weight: str, bias: str | None = None) -> str:
        y = self.op("MatMul", x, weight)
        return self.op("Add", y, bias) if bias else y


def _load_weights(path: Path) -> dict[str, np.ndarray]:
    """The archive's float32 layers, plus the embedding table as one uint8 [rows, 512] array by piece id."""
    import numpy as np

    with np.load(path, allow_pickle=False) as archive:
        weights = {name: archive[name] for name in archive.files if not name.startswith("q")}
        chunks = [archive[f"q{i + 1}"] for i in range(_CHUNKS)]
    table = np.empty((_CHUNKS * chunks[0].shape[0], chunks[0].shape[1]), dtype=np.uint8)
    for i, chunk in enumerate(chunks):
        table[i::_CHUNKS] = chunk  # piece id r sits in chunk r % 17, row r // 17
    weights["table"] = table
    return weights


def build_graph(weights_path: Path) -> onnx.ModelProto:
    """input_ids int64 [1, T] (BOS ... EOS) -> embedding float32 [1, 512], L2-normalised."""
    import numpy as np
    from onnx import TensorProto, helper

    w = _load_weights(weights_path)
    g = _GraphBuilder()
    eps = float(np.float32(w["eps"]))
    ids = g.op("Reshape", "input_ids", g.const("flat", np.array([-1], dtype=np.int64)))
    emb = _embedding_rows(g, w, ids)
    x = g.dense(emb, g.const("proj_W", _cat(w, "proj", 1)), g.const("proj_b", _cat(w, "proj_b", 0)))
    # One layer norm over all 768 projected columns (not per branch), exactly as the package computes it.
    x = g.op("LayerNormalization", x, g.const("ln_g_all", _cat(w, "ln_g", 0)),
             g.const("ln_b_all", _cat(w, "ln_b", 0)), axis=-1, epsilon=eps)  # fmt: skip
    branches = [_ngram_branch(g, w, x, i) for i in range(len(_ORDERS))]
    feats = g.op("Concat", emb, *branches, axis=1)
    feats = g.op("LayerNormalization", feats, g.const("ln_g", w["ln_g"]), g.const("ln_b", w["ln_b"]),
                 axis=-1, epsilon=eps)  # fmt: skip
    sentence = _average(g, w, feats, ids)
    output = _head(g, w, sentence, eps)
    graph = helper.make_graph(
        g.nodes,
        "use_m3",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "tokens"])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, [1, DIMENSIONS])],
        g.initializers,
    )
    assert graph.node[-1].output[0] == output
    graph.node[-1].output[0] = "embedding"
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="openclaw")
    model.ir_version = 8  # onnxruntime >= 1.15 reads it; newer IR versions would shut out older runtimes
    return model


def _cat(w: dict[str, np.ndarray], prefix: str, axis: int) -> np.ndarray:
    import numpy as np

    return np.concatenate([w[f"{prefix}{n}"] for n, _ in _ORDERS], axis=axis)


def _embedding_rows(g: _GraphBuilder, w: dict[str, np.ndarray], ids: str) -> str:
    """Dequantised embedding rows: uint8 row * scale[id % 17] + lo[id % 17], as the package does it.

    The table stays uint8 in the file (65 MB instead of 262 MB as float32); only the T gathered rows
    are widened to float32.
    """
    import numpy as np
    from onnx import TensorProto

    rows = g.op("Cast", g.op("Gather", g.const("table", w["table"]), ids, axis=0), to=TensorProto.FLOAT)
    chunk = g.op("Mod", ids, g.const("chunks", np.array(_CHUNKS, dtype=np.int64)))
    scale = g.op("Gather", g.const("scale", w["scale"].reshape(-1, 1)), chunk, axis=0)  # [T, 1]
    low = g.op("Gather", g.const("lo", w["lo"].reshape(-1, 1)), chunk, axis=0)
    return g.op("Add", g.op("Mul", rows, scale), low)


def _windows(g: _GraphBuilder, x: str, order: int, left: int) -> str:
    """[T, order * 256]: row t holds rows t-left .. t-left+order-1 of x, zeros outside the sentence.

    x is zero-padded with 2 rows before and 3 after; slot k of row t is padded row t + 2 - left + k, a
    slice from start s = 2 - left + k to the negative end s - 5 (always < 0, so no dynamic shape math).
    """
    import numpy as np

    padded = g.op("Pad", x, g.const(g.unique("pads"),
                  np.array([_PAD_LEFT, 0, _PAD_RIGHT, 0], dtype=np.int64)))  # fmt: skip
    slots = []
    for k in range(order):
        start = _PAD_LEFT - left + k
        bounds = np.array([start, start - _PAD_LEFT - _PAD_RIGHT], dtype=np.int64)
        starts = g.const(g.unique("start"), bounds[:1])
        ends = g.const(g.unique("end"), bounds[1:])
        slots.append(g.op("Slice", padded, starts, ends, g.const(g.unique("axis0"), np.zeros(1, np.int64))))
    return g.op("Concat", *slots, axis=1)


def _ngram_branch(g: _GraphBuilder, w: dict[str, np.ndarray], x: str, i: int) -> str:
    """Two residual n-gram convolutions (ReLU) over one 256-column slice of the projection."""
    import numpy as np

    order, left = _ORDERS[i]
    bounds = np.array([i * _CNN, (i + 1) * _CNN], dtype=np.int64)
    xs = g.op("Slice", x, g.const(f"cols_from_{i}", bounds[:1]), g.const(f"cols_to_{i}", bounds[1:]),
              g.const(f"axis1_{i}", np.ones(1, np.int64)))  # fmt: skip
    h = g.dense(_windows(g, xs, order, left), g.const(f"w1_{order}", w[f"w1_{order}"]),
                g.const(f"b1_{order}", w[f"b1_{order}"]))  # fmt: skip
    h = g.op("Add", g.op("Relu", h), xs)
    c = g.dense(_windows(g, h, order, left), g.const(f"w2_{order}", w[f"w2_{order}"]),
                g.const(f"b2_{order}", w[f"b2_{order}"]))  # fmt: skip
    return g.op("Add", g.op("Relu", c), h)


def _average(g: _GraphBuilder, w: dict[str, np.ndarray], feats: str, ids: str) -> str:
    """(sum_t feats_t @ W + T * b) / sqrt(T): the projection commutes with the sum, so it runs on one row."""
    from onnx import TensorProto

    count = g.op("Cast", g.op("Shape", ids), to=TensorProto.FLOAT)  # [1]
    summed = g.op("ReduceSum", feats, g.const("axis0", _int64s(0)), keepdims=1)
    projected = g.op("Add", g.op("MatMul", summed, g.const("cnn_W", w["cnn_W"])),
                     g.op("Mul", count, g.const("cnn_b", w["cnn_b"])))  # fmt: skip
    return g.op("Div", projected, g.op("Sqrt", count))


def _head(g: _GraphBuilder, w: dict[str, np.ndarray], x: str, eps: float) -> str:
    """Feed-forward head with its skip connections, tanh, then L2 normalisation (norm clipped at eps)."""
    import numpy as np

    def weight(name: str) -> str:
        return g.const(name, w[name])

    y0 = g.op("Relu", g.op("MatMul", x, weight("d0")))
    y1 = g.op("Relu", g.op("Add", g.op("MatMul", x, weight("p1")), g.op("MatMul", y0, weight("d1"))))
    y2 = g.op("Relu", g.op("MatMul", y1, weight("d2")))
    z = g.op("Tanh", g.op("Add", g.op("MatMul", y1, weight("p3")), g.op("MatMul", y2, weight("d3"))))
    squares = g.op("ReduceSum", g.op("Mul", z, z), g.const("axis1", _int64s(1)), keepdims=1)
    floor = g.const("eps", np.array(eps, dtype=np.float32))
    return g.op("Div", z, g.op("Sqrt", g.op("Max", squares, floor)))


def _int64s(*values: int) -> np.ndarray:
    import numpy as np

    return np.array(values, dtype=np.int64)


# ---------------------------------------------------------------------------------------------------------
# int8 compute for the n-gram convolutions


def quantize(model: onnx.ModelProto, target: Path) -> None:
    """Dynamic int8 quantisation of the six n-gram convolution MatMuls; the rest stays float32.

    Measured on 2 shared, busy cores (best of 4 runs, one sentence per run, one thread): float32
    365 -> int8 691 passages/s, session load 0.21 -> 0.17 s, so int8 is kept. Only the convolutions are
    quantised because they are most of the per-token work and quantise well: cosine to the float model
    min 0.9991, mean 0.9999 on 69 varied sentences. Quantising the head as well (it runs on one row, so
    int8 saves nothing there) gave min 0.996; the input projection too (its input mixes 17 differently
    scaled uint8 chunks, which one per-tensor 8-bit activation scale resolves poorly) min 0.984.

    reduce_range=True keeps the weights to 7 bits. Without VNNI, x86 CPUs multiply u8 activations by s8
    weights with VPMADDUBSW, which adds pairs of products in int16: 255*127*2 = 64770 saturates, while
    255*63*2 = 32130 fits. With 7-bit weights the integer arithmetic is exact on every x86-64 CPU (VNNI or
    not), so the same text gives the same vector everywhere instead of depending on the host's
    instruction set.
    """
    from openclaw_cli.core.onnx_runtime import quiet_quantizer, runtime

    runtime()
    from onnxruntime.quantization import QuantType, quantize_dynamic

    convolutions = [node.name for node in model.graph.node
                    if node.op_type == "MatMul" and node.input[1].startswith(("w1_", "w2_"))]  # fmt: skip
    with quiet_quantizer():
        quantize_dynamic(
            model,
            str(target),
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=True,
            op_types_to_quantize=["MatMul"],
            nodes_to_quantize=convolutions,
        )
