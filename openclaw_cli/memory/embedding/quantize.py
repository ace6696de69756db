"""Run the packaged int8 model with int8 arithmetic.

The packaged all-MiniLM-L6-v2 stores int8 weights but dequantizes them to float32 inside the graph, so
every matrix product runs in float32. Converting it once to onnxruntime's dynamic quantization
(per-channel int8 weights, activations quantized on the fly, MatMulInteger) measured here: 268 -> 473
passages/s, query 5.0 -> 3.3 ms, session load 0.26 -> 0.08 s, vectors within cosine 0.99 (mean) of the
float computation. The converted file is cached, keyed by the source file's size and mtime, so a
reinstalled package is converted again. Its weights live in their own file beside it (weights_path).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from openclaw_cli.core.errors import StoreError
from openclaw_cli.core.fsutil import one_builder_at_a_time, temp_files_inside

FORMAT = "dq-int8-v3"  # bump when the conversion changes, so old cached files are not reused
# v3: the weights (tensors of WEIGHTS_MIN_BYTES or more, 22 MB of the 23) live in their own file next to the
# model (ONNX external data), which onnxruntime maps instead of parsing and copying: a session loads in
# ~40-70 ms instead of ~90-210 ms (load 5.5), with the same bytes, so the same vectors.
WEIGHTS_MIN_BYTES = 1 << 16


def cached_name(source: Path) -> str:
    stat = source.stat()
    key = f"{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{FORMAT}"
    return f"{source.stem}-{hashlib.sha256(key.encode()).hexdigest()[:16]}-{FORMAT}.onnx"


def weights_path(model: Path) -> Path:
    """The converted model's weights file, beside the model that names it (the name is stored inside it)."""
    return model.with_name(model.name + ".weights")


def is_cached(model: Path) -> bool:
    """Both files of a converted model are there (a crash between the two renames leaves one)."""
    return weights_path(model).exists() and model.exists()


def remove_cached(model: Path) -> None:
    """Remove a converted model's files, e.g. a damaged one, so the next call converts it again."""
    for path in (model, weights_path(model)):
        path.unlink(missing_ok=True)


def int8_compute_model(source: Path, cache_dir: Path) -> Path:
    """The int8-compute version of `source`, converted on first use and cached in `cache_dir`."""
    target = cache_dir / cached_name(source)
    if is_cached(target):
        return target
    try:
        with one_builder_at_a_time(target):
            if not is_cached(target):  # not converted by another process while this one waited
                _convert(source, target)
    except StoreError:
        raise
    except Exception as exc:  # onnx/onnxruntime raise many types; the message is what matters
        raise StoreError(
            f"cannot convert {source.name} to int8 compute: {str(exc).splitlines()[0] if str(exc) else exc!r}",
            hint=f"check that {cache_dir} is writable and has ~120 MB free during the conversion",
        ) from exc
    return target


def _convert(source: Path, target: Path) -> None:
    from openclaw_cli.core.onnx_runtime import move_weights_out, quiet_quantizer, runtime

    ort = runtime()
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".convert-") as work:
        folded = Path(work) / "folded.onnx"
        # Constant folding turns the stored int8 weights + their dequantize nodes into float32 weights,
        # which quantize_dynamic then re-quantizes per channel for MatMulInteger.
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        options.log_severity_level = 3
        ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])
        converted = Path(work) / "converted.onnx"
        # reduce_range: 7-bit weights. On CPUs without VNNI, onnxruntime multiplies u8 activations by s8
        # weights in pairs summed into int16 (vpmaddubsw), which saturates for 8-bit weights: vectors
        # then differ by CPU (min cosine 0.968 to float on one such machine). With |w| <= 63 a pair sum
        # is at most 2*255*63 < 32767, so the integer arithmetic is exact everywhere.
        with quiet_quantizer(), temp_files_inside(Path(work)):
            quantize_dynamic(
                str(folded),
                str(converted),
                weight_type=QuantType.QInt8,
                per_channel=True,
                reduce_range=True,
            )
        move_weights_out(str(converted), weights_path(target).name, WEIGHTS_MIN_BYTES)
        # Each rename is atomic (a concurrent reader sees no file or the whole file); is_cached() wants
        # both, so a crash between them leaves a state the next call converts again.
        for built, final in (
            (converted.with_name(weights_path(target).name), weights_path(target)),
            (converted, target),
        ):
            os.chmod(built, 0o600)
            os.replace(built, final)
