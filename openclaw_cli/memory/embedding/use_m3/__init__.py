"""Google's Universal Sentence Encoder multilingual v3 (USE-m3) as a local ONNX embedder: the embedder and
its conversion at first use (model.py), its forward pass as an ONNX graph of standard ops (graph.py), where
the installed package keeps its files (package.py), its SentencePiece model read without the package
(sentencepiece_model.py), the light segmentation for short-lived processes (pieces.py) and which of the
two segmentations a process uses (segmenter.py).

May import (in memory/embedding/): onnx_embedder, per_text.
"""
