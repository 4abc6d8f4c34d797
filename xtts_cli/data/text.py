"""Text cleaning and the tokenizer: text in a language -> the ids the model reads.

One front end for training, `validate` and `synthesize` (`Tokenizer.prepare`): the cleaners, the
language's own normalisation (Persian: `persian.py`), then either the characters as they are
(`data.text_frontend: characters`, any script, no language knowledge) or espeak-ng's phonemes
(`phonemes`, `phonemes.py`), which spell each sound one way where writing does not (Persian leaves
its short vowels out). Nothing is ever dropped: a symbol the vocabulary lacks is an error naming
it, never a silent deletion.

A run's ids open with two conditioning ids, its language's and its speaker's index
(`CONDITIONING_IDS`), the way XTTS puts a `[lang]` token before the text: they travel through
every pipeline mode with the text and the model takes them off (`XttsModel.split_conditioning`).
Vocabularies saved before languages existed (format version 1) have none.
"""

from __future__ import annotations

import functools
import json
import os
import re
import string
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from xtts_cli.data.abbreviations import ends_text
from xtts_cli.data.numbers import (
    COUNTED,
    GERMAN_MONTHS,
    GERMAN_NOT_COUNTED,
    GERMAN_ORDINAL_AFTER,
    GERMAN_ORDINAL_NUMBER,
    english_capitals,
)
from xtts_cli.data.roman import title_numerals
from xtts_cli.errors import XttsError

if TYPE_CHECKING:
    import numpy as np

PAD_ID = 0

# Keith Ito's list from the `tacotron` english_cleaners, which Coqui TTS and most LJSpeech recipes use.
_ABBREVIATION_PAIRS = [
    ("mrs", "missus"),
    ("mr", "mister"),
    ("dr", "doctor"),
    ("st", "saint"),
    ("co", "company"),
    ("jr", "junior"),
    ("maj", "major"),
    ("gen", "general"),
    ("drs", "doctors"),
    ("rev", "reverend"),
    ("lt", "lieutenant"),
    ("hon", "honorable"),
    ("sgt", "sergeant"),
    ("capt", "captain"),
    ("esq", "esquire"),
    ("ltd", "limited"),
    ("col", "colonel"),
    ("ft", "fort"),
]
# Not a part of an address: "bbc.co.uk" keeps its "co" (Ito's pattern made it "bbc.companyuk").
# "6 ft." is six feet (the numbers' reader's), not "6 fort".
_ABBREVIATIONS = [
    (re.compile(("(?<!\\d )(?<!sq )" if short == "ft" else "") + rf"(?<![.@])\b{short}\.", re.IGNORECASE), long)
    for short, long in _ABBREVIATION_PAIRS
]
# Any of them: most sentences have none, and one search costs a fifth of 18 substitutions. Ignoring
# case as they do, even in lowered text: "\u017ft." (a long s) matches them, as it does `\bst\.`.
_ANY_ABBREVIATION = re.compile(r"\b(?:" + "|".join(short for short, _ in _ABBREVIATION_PAIRS) + r")\.", re.IGNORECASE)


# A fraction written as one character (½, ¾), and the fraction slash NFKC makes of it (1⁄2), as the
# numbers' reader reads "1/2"; after a number a space first ("3½" is 3 1/2, which NFKC makes 31⁄2).
_VULGAR_FRACTIONS = dict(
    zip("½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅐⅛⅜⅝⅞⅑⅒", "1/2 1/3 2/3 1/4 3/4 1/5 2/5 3/5 4/5 1/6 5/6 1/7 1/8 3/8 5/8 7/8 1/9 1/10".split())
)
_VULGAR_FRACTION = re.compile(f"(\\d?)([{''.join(_VULGAR_FRACTIONS)}])")


def _fractions(text: str) -> str:
    if not _VULGAR_FRACTION.search(text) and "\u2044" not in text:
        return text
    text = _VULGAR_FRACTION.sub(
        lambda m: (m.group(1) + " " if m.group(1) else "") + _VULGAR_FRACTIONS[m.group(2)], text
    )
    return text.replace("\u2044", "/")


def _collapse_whitespace(text: str) -> str:
    # Splits on what `str.isspace` calls whitespace, as `\s` does: NBSP, the ideographic space and
    # the rest of Unicode's, but not the zero-width non-joiner (U+200C), with which Persian spells
    # words. A third of the time of `re.sub(r"\s+", " ", text).strip()`, and the same result.
    return " ".join(text.split())


def basic_cleaners(text: str) -> str:
    return _collapse_whitespace(_fractions(text).lower())


# "St." and "Dr." after a name or a number, and not before one, are a street and a drive ("42 Main
# St.", "1st St. and", "Mulholland Dr."); before a name they are the list's saint and doctor ("St.
# Louis", "Dr. Smith"), unless that is a compass point ("5th St. NW") or a number's "No. 7", an apartment
# or a suite ("3rd St. No. 7", "Main St. Apt 4"). Told by the writer's capitals,
# so before the text is lowered; a sentence that starts after one ("Main St. Next") reads saint, as the
# list alone did.
_STREET = re.compile(
    r"\b([A-Z][\w'\u2019-]*|\d+(?:st|nd|rd|th)?)(\s+)(St|ST|Dr|DR)(\.|\b(?!\.))"
    r"(?!\s*(?!(?:[NS][EW]?|[EW]|North|South|East|West)\b|Nos?\.?\s?\d|(?:Apt|APT|Suites?|SUITES?|Units?|UNITS?)\b)[A-Z])(?![\w'])"
)
# Acronyms in capitals that are words once lowered: the US, the UN, the WHO, IT.
_ACRONYM_WORDS = re.compile(r"\b(?:US|UN|WHO|IT)\b(?!['\u2019])")
# Brown v. Board: a case's "v." between two names, in lower case.
_VERSUS = re.compile(r"(?<=\w) v\.? (?=[A-Z])")
# "March" and "May" with a capital inside a sentence are months, whatever word follows: "we march 3
# miles" is the verb, but "see you March 3 and May 4" had been "may four" (its suffix says the date).
_CAPITAL_MONTH = re.compile(
    r"(?:(?<=[^\W\d_]\s)|(?<=[^\W\d_][,;:]\s))(March|May)\s(\d{1,2})(?![\d:.,/-]?\d|\s?(?:st|nd|rd|th)\b)"
    rf"(?!\s+{COUNTED}\b)"  # "I saw May 3 times": a count of something, not a day
)
# At a sentence's start, where "March 3 miles" and "May 2 people come?" are verbs: a date where a
# verb, a comma or another date follows ("March 3 is the day", "May 4 works for me", "May 5 to May 9";
# "May 1 or 2 people" is a count).
_CAPITAL_MONTH_FIRST = re.compile(
    r"(?:^|(?<=[.!?]\s))(March|May)\s(\d{1,2})(?=,(?!\s?\d{1,2}\b)|\s+(?:is|was|will|would|works|suits)\b"
    r"|\s+(?:and|or|to|through|until)\s+(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s\d)"
)


# An ISO 8601 time stamp (2024-03-15T10:30:00Z): its date, then "at" its time, to the minute; Z is UTC.
# It had been read "fifteen/oh three/twenty twenty fourt ten:thirty:zero z".
_TIMESTAMP = re.compile(
    r"\b(\d{4}-\d\d-\d\d)(?:T(\d\d:\d\d)(?::\d\d(?:\.\d+)?)?|[ \t](\d\d:\d\d):\d\d(?:\.\d+)?)"
    r"(?:(Z)\b|([+-])(\d\d)(?::?(\d\d))?\b)?"
)


def _timestamp(match: re.Match) -> str:
    """A log's time stamp too (2024-03-15 10:30:00): its seconds had been read as a duration's."""
    day, clock, logged, utc, sign, hours, minutes = match.groups()
    zoned = utc or sign
    shift = int(hours or 0) * 60 + int(minutes or 0)
    offset = ""
    if sign and shift:  # +00:00 is UTC itself
        offset = f" {'plus' if sign == '+' else 'minus'} {int(hours)}" + (
            f":{minutes}" if minutes and minutes != "00" else ""
        )
    return f"{day} at {clock or logged}" + (" U T C" if zoned else "") + offset


def _with_suffix(match: re.Match) -> str:
    day = int(match.group(2))
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{match.group(1)} {day}{suffix}"


_STREET_WORDS = {"st": "street", "dr": "drive"}


# A unit's full stop before a word in lower case ends no sentence ("6 ft. tall"): left, the number's
# reader said "six feet. tall", a full stop mid-sentence. Before a capital it may ("5 min. Then").
_UNIT_STOP = re.compile(
    r"(\d\s?(?:ft|ms|mins?|hrs?|secs?|lbs?|oz|km|kg|cm|mm|mg|ml|tsp|tbsp|mph|mi|yds?|qt|gal))\.(?=\s+[a-z])"
)


# An era in capitals beside a year, 79 AD, AD 79, 1 CE: dotted, as the number reader knows them (lowered,
# "ad" and "ce" are words).
_ERA = re.compile(r"(?<=\d)(\s?)(AD|CE)\b|\bAD(?=\s?\d{1,4}\b)")


# Initials with their dots (U.S., F.B.I., Ph.D.): said as letters; the dots had stayed, each a full stop
# the characters front end reads as a pause ("the u.s. and"). The last is kept where a sentence may end.
# An era or a time's A.D., B.C., A.M. stay for the number reader, which reads the year or the hour by them.
_INITIALISM = re.compile(
    r"(?<![\w.])(?!(?:A\.D|B\.C|B\.C\.E|C\.E|A\.M|P\.M)\.)(?:Ph\.D|(?:[A-Z]\.){1,4}[A-Z])\.(?![\w.])"
)


def _initials(match: re.Match) -> str:
    # "in the U.S. Last year": a word that starts sentences ends this one; "the U.S. Army", "J.R.R. Tolkien" do not
    ends = ends_text(match) or _OPENER.match(match.string[match.end() :].lstrip()) is not None
    return " ".join(c for c in match.group(0) if c.isalpha()).upper() + ("." if ends else "")


# What only capitals tell of a few words written short: "Rep. Smith" is a Representative (but "ten
# reps." repetitions), "Apple Inc." and "Acme Corp." a company (but "£99 inc. VAT" including); the
# full stop dropped inside the sentence, kept at its end.
_TITLE_OR_COMPANY = re.compile(r"\b(?:(Reps?)\.(?=\s+[A-Z])|(Inc|Corp)(\.)(?=\s*(\S?)))")
_INCLUDING = re.compile(r"(?<=\d)(\s?)inc\.(?=\s)")  # after a price only: "apple inc. reported" is the company
_TITLE_WORDS = {"Rep": "Representative", "Reps": "Representatives", "Inc": "Incorporated", "Corp": "Corporation"}


def _title_or_company(match: re.Match) -> str:
    if match.group(1):
        return _TITLE_WORDS[match.group(1)]
    return _TITLE_WORDS[match.group(2)] + ("." if not match.group(4) else "")


def before_lowering(text: str) -> str:
    """`text` with each "St." or "Dr." that names a street or a drive written out (see `_STREET`),
    an era in capitals dotted (`_ERA`), and a unit's full stop inside a sentence left out
    (`_UNIT_STOP`): what the capitals tell."""
    if "St" in text or "Dr" in text or "ST" in text or "DR" in text:
        text = _STREET.sub(
            lambda m: (
                m.group(1)
                + m.group(2)
                + _STREET_WORDS[m.group(3).lower()]
                + ("." if m.group(4) and ends_text(m) else "")
            ),
            text,
        )
    if any(c.islower() for c in text):  # in mixed case, an acronym in capitals is its letters: the US, IT
        text = _ACRONYM_WORDS.sub(lambda m: " ".join(m.group(0)), text)
    text = _VERSUS.sub(" versus ", text)
    if "Rep" in text or "Inc" in text or "Corp" in text or "inc." in text:
        text = _INCLUDING.sub(r"\1including", _TITLE_OR_COMPANY.sub(_title_or_company, text))
    if ":" in text and "-" in text:  # a time stamp
        text = _TIMESTAMP.sub(_timestamp, text)
    if "March" in text or "May" in text:
        text = _CAPITAL_MONTH_FIRST.sub(_with_suffix, _CAPITAL_MONTH.sub(_with_suffix, text))
    if "AD" in text or "CE" in text:
        text = _ERA.sub(lambda m: (m.group(1) or "") + ".".join(m.group(2) or "AD") + ".", text)
    text = english_capitals(text)
    if "." in text:
        text = _INITIALISM.sub(_initials, text)
    return _UNIT_STOP.sub(r"\1", text) if "." in text else text


def english_cleaners(text: str) -> str:
    text = _fractions(before_lowering(text)).lower()
    if _ANY_ABBREVIATION.search(text):
        for pattern, replacement in _ABBREVIATIONS:
            text = pattern.sub(functools.partial(_expanded, replacement), text)
    return _collapse_whitespace(text)


def _expanded(said: str, match: re.Match) -> str:
    return said + ("." if ends_text(match) else "")


def multilingual_cleaners(text: str) -> str:
    # NFKC folds compatibility forms (Arabic presentation forms, full-width Latin, ligatures) to
    # the characters a writer means, so one sound is one vocabulary entry. The capital dotted İ
    # (Turkish, Azerbaijani) is i: Python lowers it to i and a combining dot above, a second symbol.
    # The trade mark signs go first, unread as ® is: NFKC makes "Acme™" the word "acmetm".
    text = _fractions(text).translate(_TRADE_MARKS)
    return _collapse_whitespace(unicodedata.normalize("NFKC", text).replace("\u0130", "i").lower())


_TRADE_MARKS = {0x2122: None, 0x2120: None}  # ™ ℠


def no_cleaners(text: str) -> str:
    return text


CLEANERS = {
    "basic_cleaners": basic_cleaners,
    "english_cleaners": english_cleaners,
    "multilingual_cleaners": multilingual_cleaners,
    "no_cleaners": no_cleaners,
}


def clean_text(text: str, cleaners: Sequence[str]) -> str:
    """`text` through each named cleaner in order."""
    for name in cleaners:
        try:
            text = CLEANERS[name](text)
        except KeyError:
            raise XttsError(
                f"data.text_cleaners: unknown cleaner {name!r}", hint=f"known cleaners: {', '.join(CLEANERS)}"
            ) from None
    return text


FRONTENDS = ("characters", "phonemes")
# A phoneme a run's data never held (Russian's ɕ in a run that heard little Russian) is read as the
# first of these it knows: the same manner of articulation at a neighbouring place, or the
# neighbouring vowel (IPA chart). One with none of them known is left out, as a length mark is.
NEAREST_PHONEMES = {
    "ɕ": "ʃs", "ʑ": "ʒz", "ʂ": "ʃs", "ʐ": "ʒz", "ʃ": "ɕs", "ʒ": "ʑz", "ç": "ʃhx", "x": "hkχ", "χ": "xh",
    "ɣ": "ɡgx", "ʁ": "ɹrɾʀ", "ʀ": "ʁrɹ", "r": "ɾɹ", "ɾ": "rɹd", "ɹ": "rɾ", "ɻ": "ɹr", "ʎ": "lj", "ɲ": "nj",
    "ŋ": "n", "ɳ": "n", "ɫ": "l", "ɭ": "l", "ɬ": "ls", "ʋ": "vw", "β": "bv", "ɸ": "f", "ð": "dz", "θ": "tsf",
    "ħ": "h", "ɦ": "h", "ɟ": "jdɡg", "c": "k", "ɡ": "g", "g": "ɡ", "ɖ": "d", "ʈ": "t", "ɱ": "m", "ʝ": "j",
    "a": "ɑæɐ", "ɑ": "aɒ", "ɐ": "aəʌ", "æ": "aɛ", "ɛ": "eæ", "e": "ɛi", "ə": "ɐɛe", "ɜ": "əɛ", "ɪ": "ie",
    "i": "ɪ", "ɨ": "iɪɯ", "ɯ": "uɨ", "u": "ʊ", "ʊ": "u", "ɵ": "oø", "o": "ɔ", "ɔ": "oɒ", "ɒ": "ɔɑ",
    "ʌ": "ɐaə", "y": "iuʏ", "ʏ": "yɪ", "ø": "eɵo", "œ": "ɛø", "ɤ": "oə", "ʉ": "uy",
}  # fmt: skip
# A mark a run's data never held is read as the first of these it knows: the same mark in another
# script (Persian keyboards and phones type "," and "?" as often as "،" and "؟"), or the pause nearest
# in kind ("!" ends a sentence as "." does; a dash or a colon parts a clause as a comma does), and a
# typographer's quote as a typewriter's and back (text from a word processor or a web page: "It’s"), an
# apostrophe as the letter ʼ of a run whose data wrote Ukrainian with it (п’ять) and as Hebrew's geresh.
NEAREST_MARKS = {
    ",": "\u060c", "\u060c": ",", "?": "\u061f.", "\u061f": "?.", ";": "\u061b,\u060c", "\u061b": ";,\u060c",
    "!": ".\u06d4", ".": "\u06d4", "\u06d4": ".", "\u2026": ".\u06d4", ":": ",\u060c", "\u2014": ",\u060c",
    "\u2013": ",\u060c", "\u00bf": "", "\u00a1": "",
    "\u2019": "'\u2018\u02bc\u05f3", "\u2018": "'\u2019\u02bc", "'": "\u2019\u2018\u02bc\u05f3", "\u2032": "'\u2019",
    "\u201b": "'\u2019", "\u05f3": "'\u2019",
    "\u201c": '"\u201d\u201e', "\u201d": '"\u201c', "\u201e": '"\u201c', '"': "\u201c\u201d", "\u05f4": '"\u201c',
    "\u00ab": '"\u201c', "\u00bb": '"\u201d', "\u2039": "'\u2019", "\u203a": "'\u2019",
}  # fmt: skip
# An apostrophe the run has no mark for, before a contraction's end, is left out with no gap: "it’s" is
# "its", "I’m" "im", not "it s", "i m" (elsewhere a gap: "rock n roll", "o brien").
APOSTROPHES = "'\u2019\u2018\u2032\u201b"
# Ids before the text in a run's sequences: the language's index, then the speaker's (-1: a speaker
# the run's vocabulary does not list).
CONDITIONING_IDS = 2
UNKNOWN_SPEAKER = -1


# How a vocabulary reads digits: as words (`numbers.py`, every vocabulary built since), or as the
# characters they are, or for phonemes as espeak-ng reads them (a run's vocabulary saved before,
# which resumes and speaks as it was trained).
NUMBERS = ("words", "characters")


def language_normalizer(language: Optional[str], frontend: str = "characters", numbers: str = "characters"):
    """The text normalisation of `language` (an espeak-ng code), or None: Persian's for `fa` and its
    regions (its digits read as words); with `numbers: words`, the language's abbreviations, Roman numerals and
    numbers read as words, for either front end: espeak-ng reads a lowered "$1,999.50" as "dollar one
    thousand nine hundred ninety nine point five zero", "12/25/2020" with its slashes, German
    "03.10.1990" with its "punkt" and "henry viii" as "henry roman eight". A phonemes run whose
    vocabulary was saved before (`numbers: characters`) leaves them to espeak-ng as it was trained."""
    primary, *region = (language or "").lower().split("-")
    if primary == "fa" and "latn" not in region:  # fa-ir too; fa-latn is Persian in Latin letters
        from xtts_cli.data.persian import normalize_persian

        return normalize_persian
    if "latn" in region:  # its numbers in the words of its own script would not be its letters
        return None
    if numbers == "words":
        from xtts_cli.data.abbreviations import abbreviation_reader
        from xtts_cli.data.numbers import number_reader
        from xtts_cli.data.roman import roman_reader

        # "Nr. 5": nummer, then fünf; "vol. iii": volume, then three
        readers = [r for r in (abbreviation_reader(language), roman_reader(language), number_reader(language)) if r]
        if len(readers) < 2:
            return readers[0] if readers else None
        return lambda text: functools.reduce(lambda read, reader: reader(read), readers, text)
    return None


# Turkish and Azerbaijani capital I is dotless ı (Işık, IRAK); a Roman numeral with its ordinal's dot
# ("II. Mehmet") keeps its letters for the numeral reader.
_TURKIC_CAPITAL_I = re.compile(r"\b[IVX]+\.(?=\s)|I")


def case_for(text: str, language: Optional[str]) -> str:
    """`text` with the capitals whose lower case depends on `language` lowered as it says: Turkish
    and Azerbaijani "I" is ı. What the cleaners' own lowering then leaves alone."""
    if language is not None and language.lower().split("-")[0] in ("tr", "az"):
        return _TURKIC_CAPITAL_I.sub(lambda m: m.group(0) if len(m.group(0)) > 1 else "\u0131", text)
    return text


def prepare_texts(
    texts: Sequence[str],
    cleaners: Sequence[str],
    frontend: str = "characters",
    language: Optional[str] = None,
    numbers: str = "characters",
) -> list[str]:
    """What the tokenizer reads of each text: cleaned, normalised for `language` (`numbers`: how
    the characters front end reads digits), and with the `phonemes` front end turned into
    espeak-ng's phonemes (one call for all of them)."""
    normalize = language_normalizer(language, frontend, numbers)
    if numbers == "words" and normalize is not None:  # x² as x^2: the cleaners' NFKC would make it x2
        from xtts_cli.data.abbreviations import numero_signs
        from xtts_cli.data.numbers import dotted_ordinals, superscript_powers

        texts = [numero_signs(superscript_powers(text, language or "en"), language) for text in texts]
        texts = [dotted_ordinals(text, language or "en") for text in texts]
    if numbers == "words" and (language or "").lower().split("-")[0] == "en":  # as english_cleaners reads them
        texts = [title_numerals(before_lowering(text)) for text in texts]  # Roman numerals: with the numbers
        texts = [_typewriter_marks_of_numbers(text) for text in texts]
    prepared = [clean_text(case_for(text, language), cleaners) for text in texts]
    if normalize is not None:
        prepared = [normalize(text) for text in prepared]
    if frontend == "phonemes":
        from xtts_cli.data.phonemes import phonemize

        prepared = phonemize([without_unspoken(text) for text in prepared], language or "en")
    elif frontend != "characters":
        raise XttsError(
            f"data.text_frontend: unknown front end {frontend!r}", hint=f"use one of {', '.join(FRONTENDS)}"
        )
    return prepared


def _clitic(text: str, at: int) -> bool:
    """Whether the apostrophe at `at` stands between a letter and a contraction's end (it’s, don’t, I’m, we’ll)."""
    return 0 < at and text[at - 1].isalpha() and _CLITIC.match(text, at + 1) is not None


_CLITIC = re.compile(r"(?:s|t|m|d|ll|re|ve)(?![^\W\d_])", re.IGNORECASE)


# English numbers' marks as a typographer writes them, the reader's typewriter ones: the ’90s, the
# 1990’s, 6′2″ (the mark had stayed before the words: "the 'nineties"). English alone: Swiss German
# groups thousands with ’ (1’000).
_TYPOGRAPHER_NUMBER_MARKS = (
    (re.compile(r"(\d)[’′](\s?\d{1,2})[″”]"), "\\1'\\2\""),
    (re.compile(r"(?<![‘'\d])(\d+)’(?!\w)"), "\\1'"),  # a 6’ fence; not the end of a quoted ‘12’
    (re.compile(r"(?<!\w)[’‘′](?=\d\d\b|\d\ds\b)"), "'"),
    (re.compile(r"(?<=\d)’(?=s\b)"), "'"),
    (re.compile(r"(?<=\d)″"), '"'),
    (re.compile(r"(?<=\d)′"), "'"),
)


def _typewriter_marks_of_numbers(text: str) -> str:
    if not any(mark in text for mark in "’‘′″"):
        return text
    for pattern, typed in _TYPOGRAPHER_NUMBER_MARKS:
        text = pattern.sub(typed, text)
    return text


def unspoken(c: str) -> bool:
    """A character espeak-ng would read aloud by its name ("❤" as "red heart", a flag's letters as
    its country) or stop at (a NUL ends its text there): an emoji or other pictograph, a control or
    format character (a zero-width space, a soft hyphen), an emoji's styling mark. Signs below the
    arrows (°, ©, №) it reads as words, and they stay; so do the zero-width (non-)joiners, which
    Persian and Indic scripts write within words (می‌خواهم)."""
    if c in ZERO_WIDTH_JOINERS:
        return False
    category = unicodedata.category(c)
    return (category == "So" and ord(c) >= 0x2190) or category in ("Cc", "Cf", "Cn", "Co") or _styling(c)


ZERO_WIDTH_JOINERS = "\u200c\u200d"

# Latin letters that are no letter and an accent (Unicode gives them no decomposition), as they are
# written without them: a run that lacks one reads it so (German, Danish, Norwegian, Polish,
# Icelandic, French, Old English spellings in names).
LATIN_LIGATURES = {
    "ß": "ss",
    "ẞ": "SS",
    "æ": "ae",
    "Æ": "AE",
    "œ": "oe",
    "Œ": "OE",
    "ø": "o",
    "Ø": "O",
    "ł": "l",
    "Ł": "L",
    "đ": "d",
    "Đ": "D",
    "ð": "d",
    "Ð": "D",
    "þ": "th",
    "Þ": "Th",
    "ı": "i",
}


def without_unspoken(text: str) -> str:
    """`text` as espeak-ng is given it: a control character a space (a line break is one), a pictograph
    or an invisible character left out, as the characters front end leaves out what it never saw."""
    if not any(unspoken(c) for c in text):
        return text
    return "".join(" " if unicodedata.category(c) == "Cc" else "" if unspoken(c) else c for c in text)


# A terminal's escape sequences: colours and cursor moves (ESC [ ... m), titles (ESC ] ... BEL), the rest
# (ECMA-48). Pasted from a terminal, their text after the ESC had been read aloud ("[thirty one m").
_TERMINAL_CODE = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])|\x9b[0-?]*[ -/]*[@-~]"  # \x9b: CSI in one byte
)
# SSML's and HTML's tags, by name (a bare `<` and `>` are a comparison's: "x<y and y>z" is no tag). Their
# words had been read aloud ("break time one s").
_MARKUP = re.compile(
    r"</?(speak|break|emphasis|prosody|say-as|phoneme|sub|voice|audio|mark|lang|p|s|w|b|i|u|em|strong|br|span|div"
    r"|(?:amazon|mstts):[\w-]+)(?:\s+[\w:-]+\s*=\s*(?:\"[^\"<>]*\"|'[^'<>]*'))*\s*/?>",
    re.IGNORECASE,
)


# A stage direction as scripts for Bark and other TTS models write them ("[laughs]", "[clears throat]"):
# this model has no sound for one, and its word had been read aloud with the brackets left out.
_STAGE_DIRECTION = re.compile(
    r"(\s*)\[\s*(laugh(?:s|ter|ing)?|chuckles?|giggles?|sigh(?:s|ing)?|gasps?|coughs?|clears throat|music|applause|"
    r"pause|breath(?:es|ing)?|inhales?|exhales?|sniff(?:s|les?)?|whispers?|cries|crying|sobs?|yawns?|groans?|"
    r"silence|noise|inaudible|smiles?|screams?)\s*\]",
    re.IGNORECASE,
)


def _stage_direction_gap(match: re.Match) -> str:
    """What a stage direction leaves: nothing before a mark ("funny [sighs]." is "funny."), else the space
    that parted it from the words."""
    after = match.string[match.end() : match.end() + 1]
    return "" if not after or not after.isalnum() else (match.group(1) or " ")


def without_markup(text: str) -> tuple[str, str]:
    """(`text` without a terminal's escape sequences and SSML or HTML tags, a note naming what was left
    out): xtts reads plain text, and the words inside the tags are read as any other."""
    notes = []
    if "\x1b" in text or "\x9b" in text:
        text, count = _TERMINAL_CODE.subn("", text)
        if count:
            notes.append(
                f"left out {count} terminal escape code{'s' if count > 1 else ''} (colours, cursor moves, titles)"
            )
    if "<!--" in text:  # an HTML comment, a note to its writer: none of it is read
        text, count = _COMMENT.subn(" ", text)
        notes += [f"left out {count} markup comment{'s' if count > 1 else ''} (<!-- ... -->)"] if count else []
    text, markdown = without_markdown(text)
    notes += [markdown] if markdown else []
    if "[" in text:
        directions = list(dict.fromkeys(f"[{m.group(2).lower()}]" for m in _STAGE_DIRECTION.finditer(text)))
        if directions:
            given = text
            # "Hi, [laughs], bye": one comma, not two; "[laughs] Hi": no space first.
            text = re.sub(r"([,;:])\s*[,;:]", r"\1", _STAGE_DIRECTION.sub(_stage_direction_gap, text)).strip()
            shown = " ".join(directions[:8]) + (f" and {len(directions) - 8} more" if len(directions) > 8 else "")
            if not any(c.isalnum() for c in text):  # it had been "'' has nothing left", of zero-width spaces
                from xtts_cli.errors import XttsError

                quoted = given.strip() if len(given.strip()) <= 60 else given.strip()[:60] + "..."
                raise XttsError(
                    f"the text {quoted!r} holds only stage directions ({shown}): the model has no sound for them",
                    hint="write the words to speak (a --text-file line of them alone: leave it out)",
                )
            notes.append(f"left out the stage directions {shown} (the model speaks words: it has no sound for them)")
    if "<" in text:
        tags = list(dict.fromkeys(f"<{m.group(1).lower()}>" for m in _MARKUP.finditer(text)))
        if tags:
            # A tag that parts sentences or words leaves a space (`<p>One.</p><p>Two.</p>`); one inside a word none.
            text = _MARKUP.sub(lambda m: " " if m.group(1).lower() in _PARTING_TAGS else "", text)
            shown = " ".join(tags[:8]) + (f" and {len(tags) - 8} more" if len(tags) > 8 else "")
            notes.append(f"left out the markup tags {shown} (xtts reads plain text; the words between them are read)")
    if "&" in text:  # after the tags: an escaped "&lt;b&gt;" is text, as in "use &lt;b&gt; for bold"
        text, references = _characters_of_references(text)
        notes += [references] if references else []
    return text, "; ".join(notes)


# An HTML character reference, ended by its semicolon ("AT&T" and "R&D" are none): text copied from a
# page or escaped JSON had been read as "tom and amp, jerry".
_REFERENCE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def _characters_of_references(text: str) -> tuple[str, str]:
    """(`text` with each HTML character reference the character it stands for, a note naming them)."""
    import html
    import html.entities

    found: list[str] = []

    def character(match: re.Match) -> str:
        # A name HTML lists whole ("&notanentity;" had been read as "¬anentity;", a legacy name's prefix).
        if match.group(0)[1] != "#" and match.group(0)[1:] not in html.entities.html5:
            return match.group(0)
        said = html.unescape(match.group(0))
        if said != match.group(0) and match.group(0) not in found:
            found.append(match.group(0))
        return said

    text = _REFERENCE.sub(character, text)
    if not found:
        return text, ""
    shown = " ".join(found[:8]) + (f" and {len(found) - 8} more" if len(found) > 8 else "")
    return text, f"read the HTML character references {shown} as the characters they stand for"


# Markdown, as a chat assistant writes it: a phonemes run had read its marks by name ("asterisk
# asterisk bold", "hash heading", a link's address). Each (pattern, replacement, what it is).
def _ended(line: str) -> str:
    """A heading's, list item's or table row's line, with the full stop of the pause a reader makes
    at its end where it has no mark of its own."""
    line = line.rstrip()
    return line + "." if line and line[-1] not in ".!?:;," else line


_MARKDOWN: tuple[tuple[re.Pattern, Any, str], ...] = (
    (re.compile(r"^[ \t]*(?:`{3,}|~{3,}).*$", re.MULTILINE), "", "code fences"),
    (re.compile(r"^[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*$", re.MULTILINE), "", "rules"),
    (re.compile(r"^[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+(?:[ \t]*:?-{3,}:?[ \t]*)?$", re.MULTILINE), "", "table rules"),
    (
        re.compile(r"!?\[([^\]\n]+)\]\((?:[^()\s]|\([^()\s]*\))+(?:[ \t]+\"[^\"\n]*\")?\)"),
        r"\1",
        "link addresses",
    ),
    (
        re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE),
        lambda m: _ended(m.group(1)),
        "heading marks",
    ),
    (re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE), "", "quote marks"),
    (
        re.compile(r"^[ \t]*[-*+][ \t]+\[[ xX]\][ \t]+(.*)$", re.MULTILINE),
        lambda m: _ended(m.group(1)),
        "task boxes",
    ),
    (
        re.compile(r"^[ \t]*[-*+\u2022\u2192\u25aa\u25b8\u25ba][ \t]+(.*)$", re.MULTILINE),
        lambda m: _ended(m.group(1)),
        "list marks",
    ),
    (
        re.compile(r"^[ \t]*\|(.+)\|[ \t]*$", re.MULTILINE),
        lambda m: _ended(", ".join(filter(None, (cell.strip() for cell in m.group(1).split("|"))))),
        "table bars",
    ),
    # A numbered item keeps its number and ends with the pause a bullet's does.
    (re.compile(r"^([ \t]*\d{1,3}[.)][ \t]+)(.*)$", re.MULTILINE), lambda m: m.group(1) + _ended(m.group(2)), ""),
    # Emphasis only at a word's edge: __init__.py, 2**10 and ~/docs/*.txt are no emphasis.
    (re.compile(r"(?<![\w*])\*\*(?=\S)(.+?)(?<=\S)\*\*(?![\w*]|\.\w)"), r"\1", "emphasis"),
    # __x__ of one word is a name in code (__main__), of several words emphasis.
    (re.compile(r"(?<![\w_])__(?=\S)((?:(?!__).)+?\s(?:(?!__).)+?)(?<=\S)__(?![\w_]|\.\w)"), r"\1", "emphasis"),
    (re.compile(r"(?<![\w*/\\])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*/])\*(?![\w*]|\.\w)"), r"\1", "emphasis"),
    (re.compile(r"(?<![\w/\\])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?!\w|\.\w)"), r"\1", "emphasis"),
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), r"\1", "strike-through"),
)
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_MARKDOWN_CUES = re.compile(
    r"[*_~`#|\]>\u2022\u2192\u25aa\u25b8\u25ba]|^[ \t]*(?:[-+][ \t]|\d{1,3}[.)][ \t]|-{3,}[ \t]*$)", re.MULTILINE
)


def without_markdown(text: str) -> tuple[str, str]:
    """(`text` read as a reader reads markdown: its words, not its marks; a note naming what was
    left out). A mark that is no markdown stays: 5 * 3, snake_case, #1."""
    if not _MARKDOWN_CUES.search(text):
        return text, ""
    # A code span's text is read as written (`__init__.py`): held out of the passes, then put back.
    spans: list[str] = []

    def hold(match: re.Match) -> str:
        spans.append(match.group(1))
        return f"\ue000{len(spans) - 1}\ue000"  # a private-use mark holds the span's place

    text, count = _CODE_SPAN.subn(hold, text) if "\ue000" not in text else (text, 0)
    found: dict[str, None] = dict.fromkeys(["code marks"] if count else [])
    for pattern, said, what in _MARKDOWN:
        text, count = pattern.subn(said, text)
        if count and what:
            found[what] = None
    text = re.sub(r"\ue000(\d+)\ue000", lambda m: spans[int(m.group(1))], text) if spans else text
    return text, f"read markdown as its words: left out its {', '.join(found)}" if found else ""


_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_PARTING_TAGS = {"speak", "break", "p", "s", "br", "div", "audio", "voice"}


def _a_mark(c: str) -> bool:
    return unicodedata.category(c)[0] == "P"


def _marks_read_as(text: str, marks: dict[str, str]) -> str:
    """`text` with each mark of `marks` read as the one it maps to (`NEAREST_MARKS`)."""
    text = "".join(marks.get(c, c) for c in text)
    if {"\u2014", "\u2013"} & set(marks):  # "yes — no": "yes, no", as a comma is written
        text = re.sub(r" ([,\u060c]) ", r"\1 ", text)
    return text


def _styling(c: str) -> bool:
    """A mark that only styles the character before it: an emoji's variation selector ("❤️" is ❤
    and U+FE0F), an enclosing keycap ("1️⃣") or a skin tone ("👍🏽": espeak-ng's fa voice read U+1F3FD
    as "golden skin"), no letter of any script."""
    return (
        unicodedata.category(c) == "Me"
        or unicodedata.name(c, "").startswith("VARIATION SELECTOR")
        or 0x1F3FB <= ord(c) <= 0x1F3FF
    )


# A run's vocabulary numbers the rows of its text embedding: rebuilt from the data, the numbers could
# differ, so the fix is the file itself.
_VOCAB_HINT = (
    "put back the run's vocab.json (a copy of the run holds it: the checkpoint's text embedding is numbered by "
    "it), or start a new run with --fresh"
)


class UnknownCharactersError(XttsError):
    """Text holds characters the vocabulary was not built with."""

    def __init__(
        self,
        characters: Sequence[str],
        text: str,
        *,
        index: Optional[int] = None,
        reads: Optional[str] = None,
        own_alphabet: bool = False,
        own_script: bool = False,
        language: Optional[str] = None,
        prepared: Optional[str] = None,
    ):
        self.characters = list(characters)
        self.index = index  # `Tokenizer.encode_many`: which of the texts
        shown = ", ".join(f"{c!r} (U+{ord(c):04X})" for c in self.characters)
        if reads is not None:  # a text to speak: what the run reads, not how a vocabulary is built
            if own_alphabet:
                why = (
                    f"the run's vocabulary was saved before it held the whole alphabet of {reads}: respell the "
                    "words without them, or adapt the run to one that does (xtts train --init-from RUN)"
                )
            elif all(c.isdigit() for c in self.characters):
                why = (
                    f"the run reads the digits of {language or reads} as characters, and its data never held "
                    "these: write the number in words"
                )
            elif own_script:
                why = (
                    "its data never held these letters of its script: respell the words without them, or adapt "
                    "the run on data that has them (xtts train --init-from RUN)"
                )
            else:
                why = f"the run reads {reads}: pass text in it, or train a run on data in this script"
            super().__init__(
                f"text has characters the run was not trained on: {shown}",
                hint=f"{_where(self.characters, text, prepared)}; {why}",
            )
            return
        super().__init__(
            f"text has characters not in the tokenizer vocabulary: {shown}",
            hint=f"in {text[:60]!r}; rebuild the vocabulary from texts that include them "
            "(Tokenizer.build) or pick cleaners that map them to known characters",
        )


def where_in(characters: Sequence[str], text: str) -> str:
    """ "in '...the λόγος...'": where the first of `characters` stands in `text`."""
    return _where(characters, text, None)


def _where(characters: Sequence[str], text: str, prepared: Optional[str], width: int = 60) -> str:
    """Where the first of `characters` stands: in the text as written, or, where only the reading of
    a number, date or abbreviation brought it in ("2024-01-05": ... of january), in that reading."""

    def around(line: str, at: int) -> str:
        start = max(0, min(at - width // 2, len(line) - width))
        return ("..." if start else "") + line[start : start + width] + ("..." if start + width < len(line) else "")

    lowered = text.lower()
    for character in characters:
        if character in text or character in lowered:
            return f"in {_quoted(around(text, max(text.find(character), lowered.find(character))))}"
    if prepared is not None:
        at = min(prepared.find(c) for c in characters if c in prepared) if any(c in prepared for c in characters) else 0
        return f"in {_quoted(around(text, 0))}, read as {_quoted(around(prepared, at))}"
    return f"in {_quoted(around(text, 0))}"


def _quoted(text: str) -> str:
    """`text` quoted, invisible characters escaped, but the joiners Persian and Indic words are
    written with (ZWNJ in می‌روم) left as they are: part of the word, not noise in it."""
    return repr(text).replace("\\u200c", "\u200c").replace("\\u200d", "\u200d")


class Tokenizer:
    """Text to ids. Id 0 is padding; symbols (characters, or phoneme symbols) take ids 1..N in
    the order given (`build`: sorted code points; `grown`: another vocabulary's, then what is new).
    With `languages` (a run's vocabulary), every sequence opens with the language's and the
    speaker's index (module docstring)."""

    def __init__(
        self,
        characters: Iterable[str],
        cleaners: Sequence[str],
        *,
        frontend: str = "characters",
        languages: Sequence[str] = (),
        speakers: Sequence[str] = (),
        numbers: str = "characters",
    ):
        # A symbol's id is its place in the list, plus one: a vocabulary grown from another run's
        # (`grown`) keeps that run's ids and appends what is new; `build` sorts.
        self.characters = list(dict.fromkeys(characters))
        for character in self.characters:
            if len(character) != 1:
                raise ValueError(f"vocabulary entries are single characters, got {character!r}")
        if frontend not in FRONTENDS:
            raise ValueError(f"frontend must be one of {FRONTENDS}, got {frontend!r}")
        self.cleaners = list(cleaners)
        self.frontend = frontend
        if numbers not in NUMBERS:
            raise ValueError(f"numbers must be one of {NUMBERS}, got {numbers!r}")
        self.numbers = numbers
        self.languages = list(languages)
        self.speakers = list(speakers)
        self._ids = {c: i + 1 for i, c in enumerate(self.characters)}
        self._speaker_index = {name: i for i, name in enumerate(self.speakers)}

    @classmethod
    def build(
        cls,
        texts: Iterable[str],
        cleaners: Sequence[str],
        *,
        frontend: str = "characters",
        languages: Sequence[str] = (),
        speakers: Sequence[str] = (),
        prepared: bool = False,
        numbers: str = "characters",
    ) -> Tokenizer:
        """The vocabulary of every symbol in `texts` after the front end (`prepared`: they are
        its output already)."""
        characters: set[str] = set()
        for text in texts:
            characters.update(text if prepared else clean_text(text, cleaners))
        return cls(
            sorted(characters), cleaners, frontend=frontend, languages=languages, speakers=speakers, numbers=numbers
        )

    def grown(self, other: Tokenizer) -> Tokenizer:
        """This vocabulary with what `other` adds appended: its new symbols (sorted), languages and
        speakers (in `other`'s order) take the next ids, and every id of this one stays where it was,
        so a model trained on this vocabulary reads the grown one's ids as it read its own."""
        return Tokenizer(
            self.characters + sorted(set(other.characters) - set(self.characters)),
            self.cleaners,
            frontend=self.frontend,
            languages=self.languages + [code for code in other.languages if code not in self.languages],
            speakers=self.speakers + [name for name in other.speakers if name not in self.speakers],
            numbers=self.numbers,  # the base's reading: the ids it learnt digits (or words) by
        )

    @property
    def vocab_size(self) -> int:
        """Embedding rows a model needs: the symbols plus padding."""
        return len(self.characters) + 1

    @property
    def prefix_length(self) -> int:
        """Conditioning ids before the text: `CONDITIONING_IDS` for a run's vocabulary, else 0."""
        return CONDITIONING_IDS if self.languages else 0

    def clean(self, text: str) -> str:
        return clean_text(text, self.cleaners)

    def language_index(self, language: Optional[str], *, where: str = "--language") -> int:
        """The index of `language` among the vocabulary's (its first when None)."""
        if not self.languages or language is None:
            return 0
        code = language.strip().lower()
        if code not in self.languages:
            # "de-DE" or "de_DE" on a run of "de": the one of its language
            primary = code.replace("_", "-").split("-")[0]
            near = next((known for known in self.languages if known.split("-")[0] == primary), self.languages[0])
            raise XttsError(
                f"{where}: this model was not trained on {language!r}; it speaks {', '.join(self.languages)}",
                hint=f"pass one of them, e.g. {where} {near}",
            )
        return self.languages.index(code)

    def speaker_index(self, speaker: Optional[str]) -> int:
        return self._speaker_index.get(speaker, UNKNOWN_SPEAKER) if speaker is not None else UNKNOWN_SPEAKER

    def prepare(self, text: str, language: Optional[str] = None) -> str:
        """`text` as the front end gives it to the vocabulary (`prepare_texts`); `language` defaults
        to the vocabulary's first."""
        if language is None and self.languages:
            language = self.languages[0]
        return prepare_texts([text], self.cleaners, self.frontend, language, self.numbers)[0]

    def reading(self, text: str, language: Optional[str] = None) -> str:
        """`text` as the run reads it in words, before any phonemes: cleaned, with its numbers,
        dates and abbreviations read out for `language` ("$5" -> "five dollars")."""
        if language is None and self.languages:
            language = self.languages[0]
        # What `prepare` reads, stopped before the phonemes ("St. James St.": its street, too).
        return prepare_texts([text], self.cleaners, "characters", language, self.numbers)[0]

    def read_as(self, text: str, language: Optional[str] = None, left_out: Sequence[str] = ()) -> str:
        """`reading`, less what the run leaves out of it (an emoji; in a phonemes run the marks in
        `left_out`, `spoken_ids`'s, which espeak-ng read as nothing) and, in a characters run, with the
        letters and marks it reads as others ("ß→ss"): what was read, where it had shown what was not.
        Each of its `stretches` in its own language, as `spoken` reads them ("سلام ۱۲۳ بار" in a German
        sentence had been shown with the number in German, and was said in Persian)."""
        reading = self._each_stretch(text, language, self.reading)
        if self.frontend == "phonemes":
            # A phoneme left out ("j", its vocabulary lacking it) is no letter of the text to leave out of it.
            unsaid = {m for m in left_out if len(m) == 1 and not m.isalnum()}
            shown = "".join(c for c in without_unspoken(reading) if c not in unsaid)
            # A mark read as its nearest ("!→."): shown so, as the note says (it had been shown as typed).
            marks = {m[0]: m[2] for m in left_out if len(m) == 3 and m[1] == "\u2192" and _a_mark(m[0])}
            if "\u2014" in marks:  # espeak-ng writes a spaced en dash or hyphen as an em dash
                shown = re.sub(r" [\u2013-] ", " \u2014 ", shown)
            shown = _marks_read_as(shown, marks)
        else:
            shown = self.speakable(reading)[0]
        shown = re.sub(r"(?<=\S) {2,}(?=\S)", " ", shown).strip()
        if not re.search(r"\w [.,!?;:]", reading):  # "snow ☃.": "snow.", where no space before a mark was written
            shown = re.sub(r"(?<=\w) (?=[.,!?;:])", "", shown)
        return shown

    def speakable(self, prepared: str) -> tuple[str, list[str]]:
        """`prepared` with the punctuation and symbols the vocabulary lacks left out (a space where
        they stood, when the vocabulary has one), and which they were. A letter, digit or mark it
        lacks stays, for `symbol_ids` to refuse: that is another script, not a full stop. A mark it
        lacks is read as its nearest it knows (`NEAREST_MARKS`: "?→؟"), where there is one; a letter
        it lacks, as its plain letter without accents ("é→e"), where there is one. A phoneme
        it lacks is read as the nearest it knows (`NEAREST_PHONEMES`: listed as "ɕ→ʃ") or left out:
        espeak-ng made it from text in the run's language, whose data happened not to hold it."""
        nearest: list[str] = []
        if self.frontend == "phonemes":
            prepared, nearest = self._nearest_phonemes(prepared)
        else:
            prepared, nearest = self._plain_letters(prepared)
        # A combining mark the run never saw (a strike-through's U+0336 over each letter) is left out
        # with the letter it marks kept: it is no other script (Unicode's script Inherited).
        unknown = sorted(
            {c for c in prepared if c not in self._ids and (unicodedata.category(c)[0] in "PSZCM" or _styling(c))}
        )
        marks = {
            c: known for c in unknown if (known := next((k for k in NEAREST_MARKS.get(c, "") if k in self._ids), ""))
        }
        if marks:
            prepared = _marks_read_as(prepared, marks)
            nearest += [f"{c}\u2192{known}" for c, known in marks.items()]
            unknown = [c for c in unknown if c not in marks]
        if not unknown:
            return prepared, nearest
        gap = " " if " " in self._ids else ""
        # An invisible character pasted with the text (a zero-width space, a soft hyphen: format
        # characters, Cf) joins its neighbours; a control character parts them, as punctuation does.
        kept = "".join(
            c
            if c not in unknown
            else ""
            if unicodedata.category(c) in ("Cf", "Cn", "Co", "Mn", "Me", "Mc")
            or _styling(c)
            or (c in APOSTROPHES and _clitic(prepared, i))
            else gap
            for i, c in enumerate(prepared)
        )
        return (re.sub(" {2,}", " ", kept).strip() if gap else kept), nearest + unknown

    def _plain_letters(self, prepared: str) -> tuple[str, list[str]]:
        """A letter the vocabulary lacks read as its letter without accents where it has that one
        ("café" in an English run: "é→e"), as a reader without the accent would say it; the Latin
        letters no accent makes as the letters they are written for ("Straße": "ß→ss")."""
        read: dict[str, str] = {}
        for c in sorted({c for c in prepared if c not in self._ids and unicodedata.category(c)[0] == "L"}):
            plain = LATIN_LIGATURES.get(c) or "".join(
                part for part in unicodedata.normalize("NFKD", c) if not unicodedata.combining(part)
            )
            if plain and plain != c and all(part in self._ids for part in plain):
                read[c] = plain
        if not read:
            return prepared, []
        return "".join(read.get(c, c) for c in prepared), [f"{c}\u2192{plain}" for c, plain in read.items()]

    def _nearest_phonemes(self, prepared: str) -> tuple[str, list[str]]:
        read: dict[str, str] = {}
        for c in sorted({c for c in prepared if c not in self._ids and unicodedata.category(c)[0] in "LM"}):
            read[c] = next((known for known in NEAREST_PHONEMES.get(c, "") if known in self._ids), "")
        if not read:
            return prepared, []
        said = [f"{c}\u2192{known}" if known else c for c, known in read.items()]
        kept = "".join(read.get(c, c) for c in prepared)
        return (re.sub(" {2,}", " ", kept).strip() if not all(read.values()) else kept), said

    def of_its_alphabets(self, characters: Iterable[str]) -> bool:
        """Whether every one of `characters` is a letter of the vocabulary's languages (`ALPHABETS`):
        one a vocabulary built today holds, that one saved before lacks (a "z" its transcripts had not)."""
        letters = alphabet_of(self.languages, self.cleaners) if self.frontend == "characters" else set()
        return bool(letters) and all(c in letters for c in characters)

    def of_its_scripts(self, characters: Iterable[str]) -> bool:
        """Whether every one of `characters` is a letter of a script the vocabulary has letters of
        (GREEK SMALL LETTER THETA: Greek): letters its data lacked, not text in another script."""

        def script(c: str) -> str:
            return unicodedata.name(c, "?").split(" ")[0] if c.isalpha() else ""

        scripts = {script(c) for c in self.characters} - {""}
        return all(script(c) in scripts for c in characters)

    def symbol_ids(self, prepared: str) -> list[int]:
        """Ids of an already prepared text; raises UnknownCharactersError naming what it lacks."""
        try:
            return [self._ids[c] for c in prepared]
        except KeyError:
            unknown = sorted({c for c in prepared if c not in self._ids})
            raise UnknownCharactersError(unknown, prepared) from None

    def stretches(self, text: str, language: Optional[str]) -> list[tuple[str, Optional[str]]]:
        """`text` cut where its words turn to a script `language` is not written in and another of the
        run's languages is, each stretch with the language that reads it ("He said «سلام» to me." to
        a run of en and fa: en, fa, en). The Persian word had been spelt out letter by letter, each
        letter's name said in English ("arabic seen"). One stretch for a run of one language."""
        if len(self.languages) < 2:
            return [(text, language)]
        chosen = language or self.languages[0]
        own = language_scripts(chosen)
        pieces = re.split(r"(\s+)", text)
        reads: list[Optional[str]] = []
        for piece in pieces:
            script = text_script(piece)
            said = None if script is None else chosen  # a piece of no letters: its neighbours' (below)
            if script is not None and script not in own and script != "LATIN":  # Latin: espeak-ng's English
                said = next((code for code in self.languages if script in language_scripts(code)), chosen)
            reads.append(said)
        # Digits and marks between two words of one language are theirs; elsewhere the text's own
        # ("The word سلام 3 times": the 3 had been said in Persian).
        for index, said in enumerate(reads):
            if said is None:
                before = next((r for r in reversed(reads[:index]) if r is not None), None)
                after = next((r for r in reads[index + 1 :] if r is not None), None)
                reads[index] = before if before == after and before is not None else chosen
        cut: list[list] = []
        for piece, said in zip(pieces, reads):
            if cut and (said == cut[-1][1] or not piece.strip()):
                cut[-1][0] += piece
            else:
                cut.append([piece, said])
        if len(cut) == 1:  # all of it in one language: the one asked, or another in its script
            return [(text, language if cut[0][1] == chosen else cut[0][1])]
        return [(piece, reads) for piece, reads in cut]

    def spoken(self, text: str, language: Optional[str]) -> str:
        """`text` prepared as the run speaks it: each of its `stretches` in its own language."""
        return self._each_stretch(text, language, self.prepare)

    def _each_stretch(self, text: str, language: Optional[str], read: Callable[[str, Optional[str]], str]) -> str:
        stretches = self.stretches(text, language)
        if len(stretches) == 1:
            return read(text, stretches[0][1])
        return " ".join(filter(None, (read(piece, reads) for piece, reads in stretches)))

    def spoken_ids(self, text: str, language: Optional[str]) -> tuple[list[int], list[str]]:
        """The symbol ids a run reads for a `text` to speak, and what of it the run never saw (left
        out); its letters of another script refused naming what the run reads."""
        prepared, left_out = self.speakable(self.spoken(text, language))
        if self.frontend == "phonemes":  # left out before espeak-ng read them (`without_unspoken`): named too
            from xtts_cli.data.phonemes import marks_read_as_nothing

            left_out += sorted({c for c in text if unspoken(c) and not c.isspace()} - set(left_out))
            # And marks espeak-ng reads as nothing (« » are kept; ‹ › [ ] had gone without a word).
            for piece, reads in self.stretches(text, language):
                said = reads or (self.languages[0] if self.languages else "en")
                left_out += [c for c in marks_read_as_nothing(self.reading(piece, reads), said) if c not in left_out]
        try:
            ids = self.symbol_ids(prepared)
        except UnknownCharactersError as error:
            raise UnknownCharactersError(
                error.characters,
                text,
                reads=", ".join(self.languages) or "the language of its training data",
                own_alphabet=self.of_its_alphabets(error.characters),
                own_script=self.of_its_scripts(error.characters),
                language=language,
                prepared=prepared,
            ) from None
        # Punctuation alone ("???", "👍!") would be spoken as a noise: as nothing to say as an emoji is.
        if not ids or not any(c.isalnum() for c in prepared):
            # An emoji, a star: nothing to read aloud. A zero-width space is no picture: it is not seen at all.
            pictures = any(unspoken(c) and not c.isspace() and unicodedata.category(c) != "Cf" for c in text)
            unseen = all(c.isspace() or unicodedata.category(c) == "Cf" for c in text)
            shown = text if len(text) <= 60 else text[:60] + "..."  # a megabyte of NULs is not echoed whole
            hint = "pass words the model was trained on"
            if pictures:
                hint = "emoji and symbols are not read aloud: write what they say in words"
            elif unseen:
                hint = "it holds only characters that are not seen (zero-width spaces, format marks): write the words"
            raise XttsError(f"the text {shown!r} has nothing left after cleaning", hint=hint)
        return ids, left_out

    def prefix(self, language: Optional[str] = None, speaker: Optional[str] = None) -> list[int]:
        """The conditioning ids of a sequence (none for a vocabulary without languages)."""
        if not self.languages:
            return []
        return [self.language_index(language), self.speaker_index(speaker)]

    def encode(self, text: str, language: Optional[str] = None, speaker: Optional[str] = None) -> list[int]:
        """Conditioning ids, then the ids of `text` after the front end; raises
        UnknownCharactersError naming what the vocabulary lacks."""
        return self.prefix(language, speaker) + self.symbol_ids(self.prepare(text, language))

    def encode_many(
        self,
        texts: Sequence[str],
        *,
        chunk: int = 65536,
        prepared: bool = False,
        prefixes: Optional[np.ndarray] = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """`encode` for many texts at once: every text's ids end to end (int32) and each text's
        length (int64). `prepared`: the texts are the front end's output already (else they are
        cleaned here; the phoneme front end takes prepared texts only). `prefixes` [N, k]: ids put
        before each text (its conditioning ids).

        The texts are looked up as arrays of code points, `chunk` texts at a time. A list of ids
        per text costs 8 bytes an id and a list object, and a dict lookup a character: for
        1,244,386 texts of 77 characters, 7.9 s and 0.83 GB held, against 3.7 s and 0.58 GB.
        Raises UnknownCharactersError for the first text with a character the vocabulary lacks,
        with its `index`."""
        import numpy as np

        if not prepared and self.frontend != "characters":
            raise ValueError("encode_many reads phonemes only as prepared texts (prepared=True)")
        codes_of = np.fromiter(map(ord, self.characters), dtype=np.uint32, count=len(self.characters))
        order = np.argsort(codes_of, kind="stable")  # looked up sorted; a grown vocabulary's ids are not
        known, ids_of = codes_of[order], (order + 1).astype(np.int32)
        flat, lengths = [], []
        for start in range(0, len(texts), chunk):
            cleaned = [text if prepared else self.clean(text) for text in texts[start : start + chunk]]
            sizes = np.fromiter(map(len, cleaned), dtype=np.int64, count=len(cleaned))
            codes = np.frombuffer("".join(cleaned).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
            place = np.minimum(np.searchsorted(known, codes), max(len(known) - 1, 0))
            unknown = known[place] != codes if len(known) else np.ones(len(codes), dtype=bool)
            if unknown.any():
                index = int(np.searchsorted(np.cumsum(sizes), int(np.argmax(unknown)), side="right"))
                text = cleaned[index]
                characters = sorted({c for c in text if c not in self._ids})
                raise UnknownCharactersError(characters, text, index=start + index)
            ids = ids_of[place] if len(known) else place.astype(np.int32)
            if prefixes is not None:
                ids, sizes = _with_prefixes(ids, sizes, np.asarray(prefixes[start : start + chunk], dtype=np.int32))
            flat.append(ids)
            lengths.append(sizes)
        if not flat:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
        return np.concatenate(flat), np.concatenate(lengths)

    def decode(self, ids: Iterable[int]) -> str:
        """The prepared text of symbol ids (no conditioning ids); padding is skipped."""
        return "".join(self.characters[i - 1] for i in ids if int(i) != PAD_ID)

    def to_json(self) -> dict:
        return {
            "format": "xtts-tokenizer",
            # 3: a phonemes vocabulary reads numbers as words before espeak-ng (`_numbers_of`)
            "version": 3,
            "pad_id": PAD_ID,
            "cleaners": self.cleaners,
            "frontend": self.frontend,
            "numbers": self.numbers,
            "languages": self.languages,
            "speakers": self.speakers,
            "characters": self.characters,
        }

    def save(self, path: str | os.PathLike) -> None:
        """Write the vocabulary as UTF-8 JSON, atomically (temp file, fsync, rename)."""
        from xtts_cli.config.editing import write_atomically

        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        text = json.dumps(self.to_json(), ensure_ascii=False, indent=1) + "\n"
        write_atomically(Path(path), text, backup=False)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Tokenizer:
        try:
            with open(path, encoding="utf-8") as handle:
                saved = json.load(handle)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise XttsError(
                f"cannot read tokenizer vocabulary {os.fspath(path)!r}: {error}", hint=_VOCAB_HINT
            ) from None
        whole = isinstance(saved, dict) and isinstance(saved.get("characters"), list) and "cleaners" in saved
        if not whole or saved.get("format") not in ("xtts-tokenizer", "xtts-char-tokenizer"):
            raise XttsError(f"{os.fspath(path)!r} is not an xtts tokenizer vocabulary", hint=_VOCAB_HINT)
        return cls(
            saved["characters"],
            saved["cleaners"],
            frontend=saved.get("frontend", "characters"),
            languages=saved.get("languages", ()),
            speakers=saved.get("speakers", ()),
            numbers=_numbers_of(saved),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tokenizer) and self.to_json() == other.to_json()

    def __repr__(self) -> str:
        languages = f", languages={self.languages}" if self.languages else ""
        return (
            f"Tokenizer({len(self.characters)} {'phoneme symbols' if self.frontend == 'phonemes' else 'characters'}, "
            f"cleaners={self.cleaners}{languages})"
        )


def _numbers_of(saved: dict) -> str:
    """How a saved vocabulary reads digits. One saved before numbers were read as words reads them as
    the characters it learnt (or as espeak-ng read them, for phonemes); but a characters one that
    never saw a digit cannot, and reads them as words, in the letters it knows ("$1,250" was
    refused, not spoken)."""
    if saved.get("frontend") == "phonemes" and saved.get("version", 1) < 3:
        return "characters"  # espeak-ng read its numbers and Roman numerals in training
    if "numbers" in saved:
        return saved["numbers"]
    if saved.get("frontend", "characters") == "characters" and not any(c.isdigit() for c in saved["characters"]):
        return "words"
    return "characters"


def _with_prefixes(ids: np.ndarray, sizes: np.ndarray, prefixes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`ids` (texts end to end, `sizes` each) with each text's row of `prefixes` put before it."""
    import numpy as np

    count, width = prefixes.shape
    out = np.empty(len(ids) + count * width, dtype=np.int32)
    starts = np.zeros(count, dtype=np.int64)
    np.cumsum(sizes[:-1] + width, out=starts[1:])
    for column in range(width):
        out[starts + column] = prefixes[:, column]
    text_places = np.repeat(starts + width - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes) + np.arange(len(ids))
    out[text_places] = ids
    return out, sizes + width


# Where a sentence ends: . ! ? … and the Arabic-script question mark (U+061F), then any closing quote
# or bracket (German's “ and ‘ close a quotation; French sets » and › off by a space), then a space.
# Not after an abbreviation ("Dr.", "e.g.") or a single initial ("J."): the English cleaners' list and
# the common Latin ones, as Coqui TTS's and NeMo's splitters keep one.
_SENTENCE_END = re.compile(r"[.!?\u2026\u061f]+(?:\s?[\u00bb\u203a])?[\"'\u201c\u201d\u2018\u2019\u00bb)\]]*(?=\s|$)")
# Abbreviations of the other languages ALPHABETS lists, none of them an English word that ends a
# sentence: German ca./bzw./usw., French Mme, Spanish Sra., Italian ecc., Dutch bijv., Russian ул./др.
_OTHER_ABBREVIATIONS = (
    "ca|bzw|usw|evtl|ggf|vgl|inkl|zzgl|bzgl|bspw|sog|nr|hr|tel|t\u00e9l|abs|mio|mrd|tsd|std|kl|osv|mme|mlle|env|cf|"
    "sra|srta|dra|uds|ud|aprox|av|mln|kap|abb|bd|chap|blz|hfst|"
    "avda|p\u00e1g|pag|sig|dott|ecc|dhr|mevr|bijv|enz|\u0443\u043b|\u0434\u0440|\u0433\u0433|\u043f\u0440\u043e\u0444|"
    "\u0441\u043c|\u0441\u0442\u0440|\u0442\u044b\u0441|\u043c\u043b\u043d|\u043c\u043b\u0440\u0434"
)
_NO_END_AFTER = re.compile(
    r"(?:\b(?:"
    + "|".join(short for short, _ in _ABBREVIATION_PAIRS)
    + r"|ms|sr|prof|vs|etc|no|fig|approx|mt|ave|dept|vol|pp|ch|eqs?|gen|capt|sgt|col|esq|hon|maj|sen|"
    # English months written short ("Jan. 5"), but not "mar", a verb
    + r"jan|feb|apr|jun|jul|aug|sept?|oct|nov|dec|"
    + _OTHER_ABBREVIATIONS
    + r")|str"  # German streets, alone or at a word's end: Hauptstr. 5
    r"|(?:^|[\s.])[^\W\d_])\.$",  # one letter of any script: an initial ("J.", "А.") or a dotted one ("e.g.", "т.е.")
    re.IGNORECASE,
)
# After a.m. or p.m., or an abbreviation, a sentence ends where the next starts with a word that starts
# sentences ("at 9 a.m. It was late."), not with a name ("At 5 p.m. John came.").
_MERIDIEM_AT_END = re.compile(r"\b[ap]\.m\.$", re.IGNORECASE)
# What a time goes on with in its sentence ("6 p.m. Friday", "6 p.m. ET"); before another capital the
# sentence ends ("Dinner at 6 p.m. Snacks all day."), unless the time opened it ("At 5 p.m. John came.").
_AFTER_MERIDIEM = re.compile(
    r"(?:(?:Mon|Tues?|Wed(?:nes)?|Thu(?:rs?)?|Fri|Sat(?:ur)?|Sun)(?:day)?|Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|"
    r"Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?|Eastern|"
    r"Pacific|Central|Mountain|Atlantic|Local|(?!IT\b)[A-Z]{1,4}T|UTC|Christmas|Easter|Thanksgiving|New\s+Year|Election|"
    r"Labou?r|Memorial|Independence|Halloween|Week(?:end|day)|Mr|Mrs|Ms|Dr|Sir|Fourth\s+of\s+July|To|From|Until|"
    r"Till|Sharp|Already|According|Every|Daily|Nightly|Weekly|Amid|Through|Thru|Via|Or|Onwards?)s?\b"
    r"|(?:[A-Z][\w'\u2019]+\s+){1,2}(?:[Tt]ime|Day|Eve|(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day)\b"
    r"|Anywhere\s+on\s+Earth|AoE\b"
)
_ABBREVIATED_AT_END = re.compile(
    r"(?:\d\s?(?:mins?|tbsp|tsp|lbs?|oz|in|ft|yds?|mi|secs?|hrs?|pts?|qts?|yrs?|mos?|wks?|kg|ml|cm|mm|km|sq)|"
    r"\b(?:inc|ltd|co|corp|bros|mar|rs|reps?|approx|dept|govt|eds?|vols?|cf|op|cit|misc|avg|tel|pkg|qty|jr|sr|"
    r"ave|blvd|rd|st|mt|pg|pp|ch|para|figs?|eqs?|univ|assn|intl|natl|et al))\.$",
    re.IGNORECASE,
)
_LOWER_WORD = re.compile(r"[a-z]+(?![\w'\u2019])")
# A time in a clause that opens its sentence ("When I got home at 6 p.m. Dad was asleep", "At 5 p.m.
# John came"), or one that describes a noun ("the 6 a.m. Delta flight"): the capital after it goes on.
_TIME_OPENS = re.compile(
    r"^(?:when|whenever|if|by|after|once|every|each|between|shortly|just|on|at|around|about|before|since|until|"
    r"till|while|as|from|starting|beginning|today|tomorrow|tonight|yesterday|daily|weekdays|\w+day)\b"
    r"|\b(?:the|a|an|this|that|our|your|his|her|their|its|my)\s+\d{1,2}(?::\d\d)?\s?[ap]\.m\.$",
    re.IGNORECASE,
)
_OPENER = re.compile(
    r"(?:It|The|He|She|We|They|I|You|This|That|These|Those|There|Then|But|And|So|A|An|My|Our|His|Her|Their|Its|"
    r"After|Before|When|At|In|On|Please|Thanks|Thank|Don't|Do|Let's|Let|Note|See|Everyone|If|As|For|Your|What|Why|"
    r"How|Where|Is|Are|Was|Were|Yes|Also|However|Now|Today|Tomorrow|Tonight|Doors|Lunch|Dinner|Last|Next|Yesterday|"
    r"Later|Meanwhile|Here|Most|Many|Some|Since|While|Although|Though|Because|Once|Finally|Instead|Perhaps|Soon)\b"
)
# "Am 3. Mai": a German day before its month, not a sentence's end (numbers.py reads it); nor is a
# number before a word in lower case ("am 3.10. und", Turkish "16. yüzyıl"), or after a German
# preposition with its article ("im 3. Stock") or an article that starts the sentence ("Der 2. Platz").
_DAY_AT_END = re.compile(r"\b\d{1,2}\.$")
_DAY_AND_MONTH_AT_END = re.compile(r"\b\d{1,3}\.(?:\d{1,2}\.)?$")
_ORDINAL_AFTER_PREPOSITION = re.compile(
    rf"\b(?:{GERMAN_ORDINAL_AFTER})\s+{GERMAN_ORDINAL_NUMBER}\.$|^(?:der|die|das)\s+{GERMAN_ORDINAL_NUMBER}\.$",
    re.IGNORECASE,
)
_NOT_COUNTED_FIRST = re.compile(rf"(?:{GERMAN_NOT_COUNTED})\b", re.IGNORECASE)
# "die 1. und 2. Klasse": the second ordinal of a pair, before its noun.
_SECOND_ORDINAL_AT_END = re.compile(rf"\d\.\s+(?:und|oder|bis)\s+{GERMAN_ORDINAL_NUMBER}\.$")
_MONTH_FIRST = re.compile(rf"(?:{GERMAN_MONTHS})\b", re.IGNORECASE)
_ROMAN_AT_END = re.compile(r"\b[IVXLC]+\.$")
# A quotation's own end, its sentence going on in lower case: "Stop!" she said. "Why?" he asked.
_QUOTED_END = re.compile(r"[.!?\u2026][\"'\u201d\u2019\u00bb]$")


def _headline(text: str) -> bool:
    """Text in capitals, or a headline's Title Case ("Markets Close At 4 P.M."): a capital after its
    time says nothing of a sentence's start."""
    words = text.split()
    return not any(c.islower() for c in text) or (
        len(words) >= 3 and all(not word[0].islower() or any(c.isupper() for c in word) for word in words)  # iPhone
    )


def _a_german_date(before: str, after: str) -> bool:
    return bool(_DAY_AT_END.search(before) and _MONTH_FIRST.match(after))


_REPRESENTATIVE_AT_END = re.compile(r"\bReps?\.$")


_NUMBER_AT_END = re.compile(r"(?<![\d.,])\d{1,4}\.$")


def _writes_dotted_numbers(language: Optional[str]) -> bool:
    from xtts_cli.data.numbers import DOTTED_NUMBER_LANGUAGES

    return (language or "").lower().split("-")[0] in DOTTED_NUMBER_LANGUAGES


def _continues(before: str, after: str, language: Optional[str] = None) -> bool:
    """Whether the full stop that ends `before` is not a sentence's end, `after` being the same sentence."""
    from xtts_cli.data.abbreviations import read_out_before

    if _MERIDIEM_AT_END.search(before) and (
        _OPENER.match(after)
        or (
            after[:1].isupper()
            and not _AFTER_MERIDIEM.match(after)
            and not _TIME_OPENS.search(before)
            and not _headline(before)
        )
    ):
        return False
    # "Bake 20 min. then cool.", "Apple Inc. is big": an abbreviation's full stop before a word in lower
    # case (not "Mix well. add salt.", "I like it. iPhone is great.").
    if _ABBREVIATED_AT_END.search(before) and _LOWER_WORD.match(after):
        return True
    if _QUOTED_END.search(before) and after[:1].islower():  # "Stop!" she said.
        return True
    if _DAY_AND_MONTH_AT_END.search(before) and after[:1].islower():
        return True
    ordinal = _ORDINAL_AFTER_PREPOSITION.search(before) or _SECOND_ORDINAL_AT_END.search(before)
    if ordinal and not _NOT_COUNTED_FIRST.match(after):
        return True
    if _ROMAN_AT_END.search(before) and after[:1].islower():  # German "Ludwig XIV. war König"
        return True
    if _NUMBER_AT_END.search(before) and after[:1].islower() and _writes_dotted_numbers(language):
        return True  # Polish "W 1999. roku", "2. miejsce"
    # "No. 5", "Jan. 5", "Gen. Lee", "ext. 12" (one the language's reader reads out), but "he said
    # no. It was" and "in Oct. The"
    # "Rep. Smith" (but "ten reps. Rest"), "£99 inc. VAT" (including)
    if (_REPRESENTATIVE_AT_END.search(before) and after[:1].isupper()) or (
        _INCLUDING.search(before + " ") is not None and re.match(r"(?:VAT|GST|HST|tax)\b", after) is not None
    ):
        return True
    if _NO_END_AFTER.search(before) or read_out_before(before, after, language):
        return not _OPENER.match(after)
    return _a_german_date(before, after)


# Where a sentence too long for one generation is cut first: after a clause's punctuation (the
# Arabic-script comma U+060C and semicolon U+061B among them).
_CLAUSE_END = re.compile(r"(?<=[,;:\u060c\u061b\u2013\u2014])\s+")


# A blank line ends a paragraph, and so its last sentence, with its full stop or without (a heading,
# a list's item); a single line break is a wrapped line's, inside a sentence.
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n\s*")


def split_sentences(text: str, language: Optional[str] = None) -> list[str]:
    """`text` as its sentences, in order, each stripped; a paragraph with no sentence end is one
    sentence. `language`: whose abbreviations end none ("Sen. Brown", German "Tab. 4")."""
    paragraphs = _PARAGRAPH_BREAK.split(text.strip())
    if len(paragraphs) > 1:
        return [sentence for paragraph in paragraphs for sentence in split_sentences(paragraph, language)]
    text, pieces, start = text.strip(), [], 0
    for end in _SENTENCE_END.finditer(text):
        pieces.append(text[start : end.end()].strip())
        start = end.end()
    pieces = [piece for piece in [*pieces, text[start:].strip()] if piece]
    sentences: list[str] = []
    for piece in pieces:
        if sentences and _continues(sentences[-1], piece, language):
            sentences[-1] = f"{sentences[-1]} {piece}"
        else:
            sentences.append(piece)
    return sentences


def split_to_fit(sentence: str, fits, between_letters: Optional[Callable[[str], None]] = None) -> list[str]:
    """`sentence` cut into consecutive parts that each `fits` (a predicate on text): whole when it
    fits, else at its clauses' punctuation, then between words, and a word that alone does not fit
    between its letters (`between_letters` is told of it). Left whole, 100,000 letters with no space
    had been given to the model at once, and its attention ran out of memory."""
    if fits(sentence):
        return [sentence]
    for pattern in (_CLAUSE_END, re.compile(r"\s+")):
        units = [unit for unit in pattern.split(sentence) if unit]
        if len(units) < 2:
            continue
        parts = _evened(units, fits, _packed(units, fits))
        if len(parts) > 1:
            return [piece for part in parts for piece in split_to_fit(part, fits, between_letters)]
    if between_letters is not None:
        between_letters(sentence)
    return _cut_between_letters(sentence, fits)


def _packed(units: list[str], fits) -> list[str]:
    """`units` joined in order, each part as many as `fits` (a unit that alone does not, alone)."""
    parts: list[str] = []
    for unit in units:
        joined = f"{parts[-1]} {unit}" if parts else unit
        if parts and fits(joined):
            parts[-1] = joined
        else:
            parts.append(unit)
    return parts


# Parts past this many are a text with no sentence ends, not a sentence: evening them out would
# only cost the time of packing them again (a 100,000-letter line is 870 parts).
_EVENED_PARTS = 8


def _evened(units: list[str], fits, packed: list[str]) -> list[str]:
    """`packed`'s number of parts with their lengths evened out, its longest as short as that number
    allows: packed in turn, the last had been a word or two ("the bus was late again this",
    "morning,"), said alone after a pause."""
    if not 1 < len(packed) <= _EVENED_PARTS:
        return packed
    low, high = max(map(len, units)), max(map(len, packed))
    while low < high:  # the shortest longest part that packs into as many parts
        middle = (low + high) // 2
        tried = _packed(units, lambda part, most=middle: len(part) <= most and fits(part))
        if len(tried) <= len(packed):
            packed, high = tried, middle
        else:
            low = middle + 1
    return packed


def _cut_between_letters(word: str, fits) -> list[str]:
    """`word` in consecutive pieces, each the longest that `fits`: found by doubling a length, then
    halving the gap, so `fits` reads texts about a piece long, never the rest of a long word."""
    pieces: list[str] = []
    while word:
        low, high = 0, 1  # word[:low] fits (nothing does); word[:high] is tried next
        while high < len(word) and fits(word[:high]):
            low, high = high, high * 2
        if high >= len(word):
            if fits(word):
                return [*pieces, word]
            high = len(word)
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if fits(word[:middle]) else (low, middle)
        low = max(low, 1)  # a letter that alone does not fit goes on its own
        pieces.append(word[:low])
        word = word[low:]
    return pieces


# Each language's letters, the way coqui's character sets start from a whole alphabet: a characters
# vocabulary holds them from the start, so a letter the training transcripts happened to lack is
# spoken (its row learnt from nothing, but read) instead of refused. Keyed by the language's
# primary code (`en-us` -> `en`); the cleaners then map them as they map a transcript.
ALPHABETS: dict[str, str] = {
    "en": "abcdefghijklmnopqrstuvwxyz'",
    # Latin-script languages: the basic 26 (loanwords, names) and their own letters.
    "de": "abcdefghijklmnopqrstuvwxyz\u00e4\u00f6\u00fc\u00df",  # äöüß
    "es": "abcdefghijklmnopqrstuvwxyz\u00e1\u00e9\u00ed\u00f1\u00f3\u00fa\u00fc",  # áéíñóúü
    "fr": "abcdefghijklmnopqrstuvwxyz'\u00e0\u00e2\u00e6\u00e7\u00e9\u00e8\u00ea\u00eb\u00ee\u00ef\u00f4"
    "\u0153\u00f9\u00fb\u00fc\u00ff",  # àâæçéèêëîïôœùûüÿ
    "it": "abcdefghijklmnopqrstuvwxyz'\u00e0\u00e8\u00e9\u00ec\u00ed\u00ee\u00f2\u00f3\u00f9\u00fa",  # àèéìíîòóùú
    "nl": "abcdefghijklmnopqrstuvwxyz'\u00e1\u00e9\u00ed\u00f3\u00fa\u00e0\u00e8\u00e4\u00eb\u00ef\u00f6\u00fc",
    "pl": "abcdefghijklmnopqrstuvwxyz\u0105\u0107\u0119\u0142\u0144\u00f3\u015b\u017a\u017c",  # ąćęłńóśźż
    "pt": "abcdefghijklmnopqrstuvwxyz\u00e1\u00e2\u00e3\u00e0\u00e7\u00e9\u00ea\u00ed\u00f3\u00f4\u00f5"
    "\u00fa",  # áâãàçéêíóôõú
    "sv": "abcdefghijklmnopqrstuvwxyz\u00e5\u00e4\u00f6\u00e9",  # åäöé
    "tr": "abcdefghijklmnopqrstuvwxyz\u00e7\u011f\u0131\u00f6\u015f\u00fc\u00e2\u00ee\u00fb",  # çğıöşüâîû
    "ru": "\u0430\u0431\u0432\u0433\u0434\u0435\u0451\u0436\u0437\u0438\u0439\u043a\u043b\u043c\u043d"
    "\u043e\u043f\u0440\u0441\u0442\u0443\u0444\u0445\u0446\u0447\u0448\u0449\u044a\u044b\u044c\u044d"
    "\u044e\u044f",  # а-я and ё
    "fa": "\u0622\u0627\u0628\u067e\u062a\u062b\u062c\u0686\u062d\u062e\u062f\u0630\u0631\u0632\u0698"
    "\u0633\u0634\u0635\u0636\u0637\u0638\u0639\u063a\u0641\u0642\u06a9\u06af\u0644\u0645\u0646\u0648"
    "\u0647\u06cc\u0626\u0621\u200c"
    # أ ؤ (تأخیر, مؤسسه), the hamza above that ۀ becomes (مدرسهٔ), tanvin (حتماً) and the short vowels,
    # shadda and sukun a writer may add: coqui's Persian character set holds them too.
    "\u0623\u0624\u0654\u064b\u064c\u064d\u064e\u064f\u0650\u0651\u0652\u0670"
    # And its comma, semicolon and question mark (، ؛ ؟): an adapted run whose first clips lacked one had
    # refused a resume on more data that held it.
    "\u060c\u061b\u061f",
}


# The script each language is written in, as Unicode names a letter's (ARABIC LETTER BEH): a text
# in another script is read by espeak-ng letter by letter ("arabic seen"). Unlisted: Latin.
_SCRIPTS = {
    **dict.fromkeys(("ar", "fa", "ur", "ps", "sd", "ug"), ("ARABIC",)),
    **dict.fromkeys(("ru", "uk", "be", "bg", "mk", "sr", "kk", "ky", "tt", "ba", "cv", "mn"), ("CYRILLIC",)),
    **dict.fromkeys(("el", "grc"), ("GREEK",)),
    **dict.fromkeys(("hi", "mr", "ne", "sa", "kok"), ("DEVANAGARI",)),
    **dict.fromkeys(("cmn", "yue", "hak", "zh"), ("CJK",)),
    "ja": ("CJK", "HIRAGANA", "KATAKANA"),
    "he": ("HEBREW",), "ko": ("HANGUL",), "th": ("THAI",), "ka": ("GEORGIAN",), "hy": ("ARMENIAN",),
    "am": ("ETHIOPIC",), "bn": ("BENGALI",), "as": ("BENGALI",), "ta": ("TAMIL",), "te": ("TELUGU",),
    "kn": ("KANNADA",), "ml": ("MALAYALAM",), "gu": ("GUJARATI",), "pa": ("GURMUKHI",), "si": ("SINHALA",),
    "my": ("MYANMAR",), "or": ("ORIYA",),
}  # fmt: skip


def language_scripts(language: str) -> tuple[str, ...]:
    """The scripts `language` is written in, as Unicode names them (`fa`: ARABIC; unlisted: LATIN)."""
    return _SCRIPTS.get(language.split("-")[0].lower(), ("LATIN",))


def script_languages(script: str) -> list[str]:
    """The languages xtts knows to be written in `script` (`ARABIC`: ar, fa, ur, ...)."""
    return [code for code, scripts in _SCRIPTS.items() if script in scripts]


def text_script(text: str) -> Optional[str]:
    """The script most of `text`'s letters are in (`LATIN`, `ARABIC`), or None when it has none."""
    from collections import Counter

    counted = Counter(_letter_script(c) for c in text if c.isalpha())
    return counted.most_common(1)[0][0] if counted else None


_LATIN_MARKS = re.compile(
    r"\bLATIN\b|^(?:MASCULINE|FEMININE) ORDINAL INDICATOR$|^MODIFIER LETTER (?:SMALL|CAPITAL) \w$"
)


@functools.lru_cache(maxsize=8192)  # a corpus's transcripts are millions of letters, of a few hundred kinds
def _letter_script(letter: str) -> str:
    """A letter's script, the first word of its Unicode name; Latin for the marks Latin writes with it:
    Spanish "2º", "3ª" and French "1ᵉʳ" (names of their own, which had been called another script), and
    a compatibility form's as the letter the cleaners' NFKC makes of it ("𝐇𝐞𝐥𝐥𝐨" is read as Latin "hello")."""
    folded = unicodedata.normalize("NFKC", letter)
    # The micro sign of "5 µg" is a unit's, in any script: not the Greek μ NFKC makes of it.
    letter = folded[0] if folded != letter and folded[:1].isalpha() and letter != "\u00b5" else letter
    name = unicodedata.name(letter, "?")
    return "LATIN" if _LATIN_MARKS.search(name) else name.split(" ")[0]


def _script_of_most_words(text: str) -> Optional[str]:
    """The script most of `text`'s words are in, by letters where two tie: a Persian sentence with
    an e-mail address in it is Persian (its Latin letters had outnumbered the Persian ones)."""
    from collections import Counter

    counted = Counter(script for word in text.split() if (script := text_script(word)) is not None).most_common(2)
    if len(counted) > 1 and counted[0][1] == counted[1][1]:
        return text_script(text)
    return counted[0][0] if counted else None


def reading_language(
    languages: Sequence[str], text: str, language: Optional[str], *, phonemes: bool = True
) -> tuple[Optional[str], str]:
    """(the language to read `text` in, a note or ""): the one asked; or, none asked, the run's first,
    unless the text is in another script and one of the run's languages is written in it (a Persian
    sentence to a run of en and fa is read as fa). A text in a script the language asked is not
    written in is noted: espeak-ng would read it letter by letter (`phonemes`; a characters run reads
    the letters its vocabulary holds as they are, and refuses the others)."""
    script = _script_of_most_words(text)
    if not languages or script is None:
        return language, ""
    chosen = language or languages[0]
    if script in language_scripts(chosen):
        by_letters = _by_its_letters(languages, text, chosen) if language is None else None
        return by_letters or (language, _foreign_words(text, chosen, languages, phonemes))
    fits = [code for code in languages if script in language_scripts(code)]
    name = script.title()
    if language is None and fits:
        foreign = _foreign_words(text, fits[0], languages, phonemes)
        read_as = f"read as {fits[0]}, the run's language in {name} script (--language picks another)"
        return fits[0], read_as + (f"; {foreign}" if foreign else "")
    hint = (
        f"its words are read as {fits[0]}, in {chosen}'s accent; pass --language {fits[0]} for {fits[0]}'s own"
        if fits
        else f"the run reads {', '.join(languages)}"
    )
    return language, f"the text is in {name} script, which {chosen} is not written in: {hint}"


def voiced_scripts(language: str) -> tuple[str, ...]:
    """Scripts espeak-ng reads in `language`'s voice by switching to a voice of theirs ("Google" under
    fa: "(en)g'u:g@L"; "Καλημέρα" under de: "(el)k,alim'era"), not by its letters' names. Its English
    voices spell Greek ("'alf@ T'i:t@ ...")."""
    return ("LATIN",) if language.lower().startswith("en") else ("LATIN", "GREEK")


def refuse_unread_script(languages: Sequence[str], text: str, language: Optional[str]) -> None:
    """Refuse, for a phonemes run, a `text` mostly in a script none of its `languages` is written in
    (Cyrillic to a run of fa and de), unless `language` is asked: espeak-ng spells each word by its
    letters' names ("cyrillic pe, cyrillic er ..."), which the run had spoken with exit 0 and a note.
    A characters run refuses its letters itself."""
    script = _script_of_most_words(text)
    if language is not None or not languages or script is None or script in voiced_scripts(languages[0]):
        return
    if any(script in language_scripts(code) for code in languages):
        return
    from xtts_cli.errors import XttsError

    shown = text.strip() if len(text.strip()) <= 60 else text.strip()[:60] + "..."
    raise XttsError(
        f"the text {shown!r} is in {script.title()} script, which none of the run's languages "
        f"({', '.join(languages)}) is written in: espeak-ng would spell each word by its letters' names",
        hint="pass text in a script the run reads, or --language CODE to read it so all the same",
    )


def _by_its_letters(languages: Sequence[str], text: str, first: str) -> Optional[tuple[Optional[str], str]]:
    """(the language, its note) for a text in the script of the run's first language, a quarter of
    whose words or more hold letters that language lacks and one other of the run's has ("Grüße aus
    Köln" to a run of en and de: de); read as the first, German numbers had been read in English
    without a word. A loanword ("the café") is not a quarter. None: the first reads it."""
    own = ALPHABETS.get(first.split("-")[0].lower())
    if own is None:
        return None
    scripts = language_scripts(first)  # another script's letters are its script's to place ("Hi. سلام.")
    words = [w for w in text.lower().split() if any(c.isalpha() for c in w)]
    lacking = sorted(
        {
            c
            for w in words
            for c in w
            if c.isalpha() and c not in own and unicodedata.name(c, "?").split(" ")[0] in scripts
        }
    )
    if not lacking or 4 * sum(any(c in lacking for c in w) for w in words) < len(words):
        return None
    fits = [
        code
        for code in languages
        if code != first and set(lacking) <= set(ALPHABETS.get(code.split("-")[0].lower(), ""))
    ]
    letters = " ".join(lacking)
    if len(fits) == 1:
        return fits[0], f"read as {fits[0]}, the run's language with its letters {letters} (--language picks another)"
    if fits:
        return (
            None,
            f"its letters {letters} are those of {' and '.join(fits)}, not of {first}: read as {first} (--language picks one)",
        )
    return None


def _foreign_words(text: str, language: str, languages: Sequence[str] = (), phonemes: bool = True) -> str:
    """A note naming the words of a mostly-`language` text written in a script it is not written in
    ("I flew to Москва."): espeak-ng spells them out letter by letter; "" when there are none. Latin
    words are left out: espeak-ng reads them as English in any language ("London" in fa), and Greek
    ones as Greek but in English (`voiced_scripts`). A word in the script of another of the run's
    `languages` is read as that one (`Tokenizer.stretches`)."""
    scripts = (*language_scripts(language), *voiced_scripts(language))
    read_as: dict[str, list[str]] = {}
    spelt: list[str] = []
    for word in (w.strip(string.punctuation + "«»“”„¿¡،؛؟") for w in text.split()):
        script = text_script(word)
        if script is None or script in scripts:
            continue
        fits = next((code for code in languages if script in language_scripts(code)), None)
        if fits is None:
            spelt.append(f"{word!r} ({script.title()})")
        else:
            read_as.setdefault(fits, []).append(repr(word))
    said = [f"{_some(words)} read as {code}" for code, words in read_as.items()]
    if spelt and phonemes:
        said.append(f"{_some(spelt)} not in a script {language} is written in: read letter by letter")
    return "; ".join(said)


def _some(named: list[str]) -> str:
    """The first three of `named`, and how many more."""
    return ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")


def alphabet_of(languages: Sequence[str], cleaners: Sequence[str]) -> set[str]:
    """The letters of `languages` (those `ALPHABETS` lists), lower and upper case, as `cleaners` leave them."""
    letters: set[str] = set()
    for language in languages:
        alphabet = ALPHABETS.get(language.split("-")[0].lower(), "")
        for character in alphabet + alphabet.upper():
            letters.update(clean_text(character, cleaners).strip())
    return letters
