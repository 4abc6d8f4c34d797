"""espeak-ng phonemes: text in a language -> IPA symbols, punctuation and word boundaries kept.

The binding is `phonemizer`'s espeak backend (Bernard & Titeux 2021; 3.4 or later, which points
at a library and voice data of our choosing, `EspeakWrapper.set_data_path`, as only its fork
`phonemizer-fork` did before) over the espeak-ng library and voice data that `espeakng-loader`
ships in its wheel. Both install from PyPI with no system package, so `pip install xtts-cli` is
all a user needs for any of espeak-ng's 140 languages. Upstream and fork give the same phonemes
(English, Persian and German sentences with punctuation, digits and a code switch: identical).
phonemizer keeps punctuation (espeak-ng itself drops it) and marks word boundaries, which
pauses and phrasing depend on. Both are GPL-3.0 (as espeak-ng is); they are imported, never copied.

Imported only when a run asks for phonemes: `xtts --help` does not load the library.
"""

from __future__ import annotations

import errno
import re
import threading
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache

from xtts_cli.errors import DiskFullError, XttsError

__all__ = ["PUNCTUATION", "espeak_language", "espeak_languages", "marks_read_as_nothing", "phonemize"]

# What phonemizer keeps in place around the phonemes: its own default set plus the Persian and
# Arabic comma, semicolon and question mark, which it would otherwise drop with the rest.
PUNCTUATION = ';:,.!?¡¿—…"«»“”()،؛؟'

# Marks espeak-ng reads as nothing, written as the kept marks they stand for: the en dash (German, French
# and Spanish print their dashes so) and a hyphen between spaces as the dash, so the pause a reader makes
# there is in the phonemes; single guillemets and brackets as double ones and parentheses.
_AS_KEPT = str.maketrans(
    {"\u2013": "\u2014", "\u2015": "\u2014", "\u2039": "\u00ab", "\u203a": "\u00bb", "[": "(", "]": ")"}
)
_SPACED_HYPHEN = re.compile(r"(?<=\S) - (?=\S)")


def as_kept(text: str) -> str:
    """`text` with the marks espeak-ng would drop that stand for one it keeps written as that one."""
    return _SPACED_HYPHEN.sub(" \u2014 ", text.translate(_AS_KEPT))


# The language codes users write (XTTS's, ISO 639-1) for the espeak-ng voices that speak them
# when espeak-ng has no voice of that exact name.
_ALIASES = {
    "en": "en-us",
    "fr": "fr-fr",
    "zh": "cmn",
    "zh-cn": "cmn",
    "pt-pt": "pt",
    "no": "nb",  # Norwegian: ISO 639-1's code, espeak-ng's Bokmål voice
}
_LOCK = threading.Lock()
# How espeak-ng is asked (phonemizer's EspeakBackend arguments besides the voice and the punctuation)
# and how its answer is split: export.json carries both, for a client that phonemises as training did.
# A word espeak-ng reads in another language (an English "GPU" in Persian) keeps its phonemes and
# loses the "(en)" flags, which are not sounds ("remove-flags").
BACKEND_SETTINGS = {"preserve_punctuation": True, "with_stress": True, "language_switch": "remove-flags"}
SEPARATOR = {"phone": "", "syllable": "", "word": " "}


@lru_cache(maxsize=1)
def _library() -> None:
    """Point phonemizer at the espeak-ng library and data inside espeakng-loader's wheel."""
    try:
        import espeakng_loader
        from phonemizer.backend.espeak.wrapper import EspeakWrapper
    except ImportError as error:  # a broken install: both are dependencies of xtts-cli
        raise XttsError(
            f"the phoneme front end needs espeakng-loader and phonemizer>=3.4 ({error})",
            hint="reinstall xtts-cli (pip install -e .), or set data.text_frontend: characters",
        ) from None
    EspeakWrapper.set_library(espeakng_loader.get_library_path())
    EspeakWrapper.set_data_path(espeakng_loader.get_data_path())


@contextmanager
def _library_copied() -> Iterator[None]:
    """phonemizer copies espeak-ng's library (650 kB) into a new temp folder each time it loads it: a
    full or size-capped temp disk had failed there with a traceback."""
    try:
        yield
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", -1)):
            raise
        import tempfile

        folder = tempfile.gettempdir()
        raise DiskFullError(
            f"espeak-ng's library could not be copied into the temp folder {folder} ({error.strerror}): "
            "phonemizer loads it from a copy there",
            hint=f"free space in {folder}, or set TMPDIR to a folder with room",
        ) from None


@lru_cache(maxsize=1)
def espeak_languages() -> dict[str, str]:
    """espeak-ng's languages: code -> name (`en-us`: `English_(America)`)."""
    _library()
    from phonemizer.backend import EspeakBackend

    with _library_copied():
        return dict(sorted(EspeakBackend.supported_languages().items()))


# ISO 639-2 and 639-3 codes (`per`, `fas`, `deu`) of languages espeak-ng names by their ISO 639-1 code.
_THREE_LETTERS = {
    "per": "fa", "fas": "fa", "eng": "en", "deu": "de", "ger": "de", "fra": "fr", "fre": "fr", "spa": "es",
    "rus": "ru", "ara": "ar", "zho": "zh", "chi": "zh", "jpn": "ja", "kor": "ko", "tur": "tr", "ita": "it",
    "por": "pt", "nld": "nl", "dut": "nl", "pol": "pl", "hin": "hi", "ukr": "uk", "ces": "cs", "cze": "cs",
    "swe": "sv", "fin": "fi", "hun": "hu", "ell": "el", "gre": "el", "heb": "he", "vie": "vi", "urd": "ur",
}  # fmt: skip


def espeak_language(language: str, *, where: str = "data.language") -> str:
    """The espeak-ng voice that speaks `language`: itself, or the voice a common code stands for
    (`en` -> `en-us`). Raises a one-line XttsError naming the languages espeak-ng has."""
    known = espeak_languages()
    code = language.strip().lower()
    if code in known:
        return code
    if code in _ALIASES:
        return _ALIASES[code]
    regional = [name for name in known if name.startswith(code + "-")]
    if regional:
        return regional[0]
    import difflib

    close = difflib.get_close_matches(code, [*_ALIASES, *known], n=4, cutoff=0.5)
    base = code.partition("-")[0]  # a region espeak-ng has no voice of (fa-ir): the language itself first
    base = _THREE_LETTERS.get(base, base)  # and per (ISO 639-2, as library catalogues write it): fa
    if base != code and (base in known or base in _ALIASES):
        close = [base, *(name for name in close if name != base)][:4]
    raise XttsError(
        f"{where}: espeak-ng has no language {language!r}" + (f"; did you mean {', '.join(close)}?" if close else ""),
        hint=f"use one of its {len(known)} codes (en, en-us, de, fr, es, fa, ru, ...: `espeak-ng --voices` lists "
        "them), or set data.text_frontend: characters to train on the letters (a new run: one started from a "
        "phonemes run reads phonemes)",
    )


def marks_read_as_nothing(text: str, language: str = "en") -> list[str]:
    """The punctuation and symbols of `text` (as read in words, before phonemes) that espeak-ng reads as nothing
    in `language`: a mark outside PUNCTUATION, which alone is kept, that its voice says no word for,
    except a hyphen or apostrophe within a word (read as part of it: "well-known", "it's"). Most
    voices say "/" and "*" ("slash", "setâre" in Persian): those had been named as left out."""
    dropped = set()
    text = as_kept(text)
    for index, c in enumerate(text):
        # A symbol too: | and ^ are said as nothing in English, an arrow in Persian.
        if unicodedata.category(c)[0] not in "PS" or c in PUNCTUATION or c in dropped:
            continue
        within = 0 < index < len(text) - 1 and text[index - 1].isalpha() and text[index + 1].isalpha()
        if not (within and c in "-'\u2019\u2010") and not _said(c, language):
            dropped.add(c)
    return sorted(dropped)


@lru_cache(maxsize=1024)
def _said(mark: str, language: str) -> bool:
    """Whether espeak-ng's voice of `language` reads `mark` as a word, between two digits (read in
    that language's own words whatever its script: "1 / 2" is one slash two)."""
    with_mark, without = phonemize([f"1 {mark} 2", "1 2"], language)
    return len(with_mark.split()) > len(without.split())


@lru_cache(maxsize=16)
def _backend(voice: str):
    import logging

    from phonemizer.backend import EspeakBackend

    quiet = logging.getLogger("xtts.phonemizer")
    quiet.setLevel(logging.ERROR)
    with _library_copied():
        return EspeakBackend(voice, punctuation_marks=PUNCTUATION, **BACKEND_SETTINGS, logger=quiet)


def phonemize(texts: Sequence[str], language: str) -> list[str]:
    """Each text as espeak-ng's IPA for `language` (an espeak-ng code or an alias of one), with
    stress marks, its punctuation kept where it stood and one space between words."""
    from phonemizer.separator import Separator

    voice = espeak_language(language)
    if not texts:
        return []
    separator = Separator(**SEPARATOR)
    # phonemizer drops an empty text from its answer, and its punctuation keeping answers some texts
    # in two ("$1,999.50 on 12/25" parts at the "."), each moving every later text onto the wrong one:
    # only texts with something to read are sent, and where the answer does not match them one for
    # one, each is read alone and its pieces joined.
    spoken = [index for index, text in enumerate(texts) if text.strip()]
    read = [""] * len(texts)
    backend = _backend(voice)
    # One espeak-ng library state per process: phonemizer's wrapper is not thread-safe.
    with _LOCK:
        phonemes = backend.phonemize([as_kept(texts[i]) for i in spoken], separator=separator, strip=True, njobs=1)
        if len(phonemes) != len(spoken):
            phonemes = [
                " ".join(backend.phonemize([as_kept(texts[i])], separator=separator, strip=True, njobs=1))
                for i in spoken
            ]
    for index, text in zip(spoken, phonemes):
        read[index] = " ".join(text.split())
    return read
