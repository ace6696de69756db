"""Text analysis, the lowest layer of memory: which script and language a text is in, the terms the keyword
index stores and a query searches for (jieba for Chinese, stems and stopwords for English), and long text
cut to a limit. Pure functions on strings; jieba's dictionary loads on the first Han text, not on import.

May import (in memory/): nothing.
Exports: analysis (detect_language, index_terms, query_terms, typed_words, fts_match, is_stopword), bounded.bounded,
jieba_dictionary (set_cache_dir, in_dictionary), scripts, stopwords.
"""
