"""Measures of speech quality: what a recognizer hears, and how far one mel is from another.

Evaluation only: the recognizer (pocketsphinx, whose wheel carries an English acoustic model and
dictionary), jiwer and SciPy come with the `eval` extra (`pip install "xtts-cli[eval]"`), never with
the runtime dependencies.
"""
