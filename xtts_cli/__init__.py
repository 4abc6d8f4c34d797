"""xtts: train an XTTS-style TTS model in TensorFlow with the GPU kept busy."""

__version__ = "0.1.0"
