"""Approximate inner products of a query with every row of a float32 matrix, in int8 arithmetic: the
warm prefilter of vector tables made before int8 storage (store/vectors/matrix.py re-scores its best rows)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


class Int8Scan:
    """Approximate inner products of a query with every row, in int8 arithmetic (u8 x s8 -> int32)."""

    def __init__(self, session: Any) -> None:
        self._session = session

    @classmethod
    def build(cls, matrix: np.ndarray) -> Int8Scan | None:
        """None when onnx/onnxruntime cannot build it: the exact float32 scan is then used instead."""
        import numpy as np

        try:
            from onnx import TensorProto, helper, numpy_helper

            from openclaw_cli.core.onnx_runtime import runtime

            ort = runtime()  # telemetry off, as for the models

            scale = float(np.abs(matrix).max()) / 127 or 1.0
            weights = np.clip(np.rint(matrix / scale), -127, 127).astype(np.int8)
            rows, dims = matrix.shape
            graph = helper.make_graph(
                [helper.make_node("MatMulInteger", ["q", "w", "zero"], ["s"])],
                "int8_scan",
                [helper.make_tensor_value_info("q", TensorProto.UINT8, [1, dims])],
                [helper.make_tensor_value_info("s", TensorProto.INT32, [1, rows])],
                [
                    numpy_helper.from_array(np.ascontiguousarray(weights.T), "w"),
                    numpy_helper.from_array(np.array(128, dtype=np.uint8), "zero"),
                ],
            )
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
            model.ir_version = 8  # what every onnxruntime since 1.10 reads
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1  # measured: a second thread only adds synchronisation
            options.log_severity_level = 3
            session = ort.InferenceSession(
                model.SerializeToString(), options, providers=["CPUExecutionProvider"]
            )
        except Exception:  # any failure here only costs speed, never results
            return None
        return cls(session)

    def scores(self, query: np.ndarray) -> np.ndarray:
        import numpy as np

        scale = float(np.abs(query).max()) / 127 or 1.0
        quantised = (np.clip(np.rint(query / scale), -127, 127) + 128).astype(np.uint8)[None, :]
        return self._session.run(None, {"q": quantised})[0][0]
