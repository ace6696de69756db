"""The names and sizes of the packaged local models, and how far each is trusted per language.

Search profiles (search/profiles.py), the loader and the stores read these names; they live with the
embedders so that nothing below search has to import search to know them.
"""

from __future__ import annotations

MINILM = "all-MiniLM-L6-v2-int8"
USE_M3 = "use-m3-int8"
COMPOSITE = f"{MINILM}+{USE_M3}"
MINILM_DIMS = 384
USE_M3_DIMS = 512

# How far the English model's similarity is trusted, by the language of the text (text/analysis.py):
# fully for English, half for mixed text, not at all for Chinese, where its vocabulary is mostly unknown.
LANGUAGE_TRUST = {"en": 1.0, "mixed": 0.5}
