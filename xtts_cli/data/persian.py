"""Persian text as a reader says it: one form per letter, clean joiners, numbers as words.

What Persian TTS recipes normalise before espeak-ng's `fa` voice (Hazm's normaliser does the
same kinds of repair for Persian NLP):

- Arabic letter forms typed on Arabic keyboards become the Persian letters they stand for
  (`ي`/`ى` -> `ی`, `ك` -> `ک`, `ة` -> `ه`, `ۀ` -> `هٔ`), so one sound is one symbol;
- the zero-width non-joiner (ZWNJ, U+200C) is part of Persian spelling (`می‌خواهم`): kept inside
  a word, dropped at its edges and where it repeats; the verb prefix `می`/`نمی` typed with a space
  gets it; other invisible marks (ZWJ, direction marks, tatweel) are dropped;
- Persian (`۰-۹`) and Arabic-Indic (`٠-٩`) digits, with the Persian thousands (`٬`) and decimal
  (`٫`) separators and `٪`, are read out as words: espeak-ng reads `۱٬۰۰۰` as "one comma zero zero
  zero" and a model trained on letters never learns what a digit sounds like; a time (`۹:۳۰`: نه و
  سی دقیقه) and a date (`۱۴۰۲/۰۵/۱۲`: دوازدهم مرداد هزار و چهارصد و دو, the Solar Hijri months for
  years 1300-1499, the Gregorian ones for 1900-2099) as they are said.
"""

from __future__ import annotations

import re

__all__ = ["normalize_persian", "number_to_words"]

ZWNJ = "\u200c"
_LETTERS = str.maketrans(
    {
        "\u064a": "\u06cc",  # ARABIC YEH -> FARSI YEH
        "\u0649": "\u06cc",  # ALEF MAKSURA -> FARSI YEH
        "\u0643": "\u06a9",  # ARABIC KAF -> KEHEH
        "\u0629": "\u0647",  # TEH MARBUTA -> HEH
        "\u06d5": "\u0647",  # AE -> HEH
        "\u06be": "\u0647",  # HEH DOACHASHMEE -> HEH
        "\u06c0": "\u0647\u0654",  # HEH WITH YEH ABOVE -> HEH + HAMZA ABOVE (the ezafe of "مدرسهٔ")
        # Invisible marks that are not spelling: ZWJ, direction marks and embeddings, the BOM,
        # the soft hyphen, and the tatweel (kashida), which only stretches a letter.
        **dict.fromkeys(
            [0x200D, 0x200E, 0x200F, 0x061C, 0xFEFF, 0x00AD, 0x0640, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
        ),
    }
)
_DIGITS = str.maketrans({**{0x06F0 + d: str(d) for d in range(10)}, **{0x0660 + d: str(d) for d in range(10)}})

_ONES = ["صفر", "یک", "دو", "سه", "چهار", "پنج", "شش", "هفت", "هشت", "نه"]
_TEENS = ["ده", "یازده", "دوازده", "سیزده", "چهارده", "پانزده", "شانزده", "هفده", "هجده", "نوزده"]
_TENS = ["", "", "بیست", "سی", "چهل", "پنجاه", "شصت", "هفتاد", "هشتاد", "نود"]
_HUNDREDS = ["", "صد", "دویست", "سیصد", "چهارصد", "پانصد", "ششصد", "هفتصد", "هشتصد", "نهصد"]
_SCALES = ["", "هزار", "میلیون", "میلیارد", "تریلیون"]
_AND = " و "
# A number: digits, optionally in groups of three after a thousands separator, optionally a
# decimal part; then an optional percent sign. Applied after the digits are made ASCII.
_NUMBER = re.compile(r"(?<!\d)(\d{1,3}(?:[٬,]\d{3})+|\d+)(?:[٫.](\d+))?(?![\d٬٫])(\s*[٪%])?")
# A time (9:30) and a date written year first (1402/05/12), after the digits are made ASCII.
_TIME = re.compile(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])")
_DATE = re.compile(r"(?<![\d/])(1[34]\d\d|19\d\d|20\d\d)/(\d{1,2})/(\d{1,2})(?![\d/])")
_MINUS = re.compile(r"(?<![\w.,])-(?=\d)")  # -5: منفی پنج
# A year's era after it: ۱۳۵۷ ه.ش (هجری شمسی), ۵۰۰ ق.م (قبل از میلاد), ۲۰۲۴م or ۲۰۲۴ م. (میلادی, after four
# digits only: ۵م is an ordinal, پنجم); its full stop stays where it ends the sentence.
_ERA = re.compile(
    r"(?<![\d٫.,/])(\d{1,4})\s?(ه\.\s?ش|ه\.\s?ق|ق\.\s?م)(?:\.(?=\s+\S))?(?![^\W\d_])"
    r"|(?<![\d٫.,/])(\d{4})\s?م(?:\.(?=\s+\S))?(?![^\W\d_])"
)
_ERA_NAMES = {"ش": "هجری شمسی", "ق": "هجری قمری", "م": "قبل از میلاد"}
# Before a number: ~15 is حدود پانزده (about), >50 بیش از پنجاه, <5 کمتر از پنج.
_COMPARISONS = (
    (re.compile(r"(?<![\w~])~\s?(?=\d)"), "حدود "),
    (re.compile(r"(?<![\w<>=-])>\s?(?=\d)"), "بیش از "),
    (re.compile(r"(?<![\w<>=-])<\s?(?=\d)"), "کمتر از "),
)
# An ordinal in digits: ۳ام, ۲۱مین, ۵-امین, ۲۱ امین (سوم, بیست و یکمین); a bare م only after at most three
# digits, joined: ۲۰۲۴م is a year (میلادی), ۵ م five meters.
_ORDINAL = re.compile(
    r"(?<![\d٫.,/])(?:(\d{1,3})[-\u200c]?(?=م(?:ین)?(?![^\W\d_]))|(\d+)(?:[-\u200c]|\s)?(?=ام(?:ین)?(?![^\W\d_])))"
    r"(?:ا?م)(ین)?"
)
# ۳/۴: سه چهارم (the count, then the part as an ordinal); not a date's day/month, which has a year.
_FRACTION = re.compile(r"(?<![\d/])(\d{1,3})/(\d{1,3})(?![\d/])")
# $100 or 100$: صد دلار, the amount then the currency, as Persian reads it.
_CURRENCIES = {"$": "دلار", "€": "یورو", "£": "پوند"}
_MONEY = re.compile(r"([$€£])\s?(\d[\d٬,]*(?:[٫.]\d+)?)|(\d[\d٬,]*(?:[٫.]\d+)?)\s?([$€£])")
_SOLAR_MONTHS = "فروردین اردیبهشت خرداد تیر مرداد شهریور مهر آبان آذر دی بهمن اسفند".split()
_GREGORIAN_MONTHS = "ژانویه فوریه مارس آوریل مه ژوئن ژوئیه اوت سپتامبر اکتبر نوامبر دسامبر".split()
_ZWNJ_RUNS = re.compile(ZWNJ + "{2,}")
# A ZWNJ beside a space, a punctuation mark or the text's edge joins nothing.
_ZWNJ_AT_EDGES = re.compile(rf"(?:^|(?<=[\s\W])){ZWNJ}|{ZWNJ}(?=$|[\s\W])")
# The continuous verb prefix typed with a space before a verb (`می خواهم` -> `می‌خواهم`).
_VERB_PREFIX = re.compile(r"(?<![\w\u200c])(ن?می) (?=[\u0622-\u06cc])")


def _below_thousand(value: int) -> list[str]:
    words = []
    hundreds, rest = divmod(value, 100)
    if hundreds:
        words.append(_HUNDREDS[hundreds])
    if 10 <= rest < 20:
        words.append(_TEENS[rest - 10])
    else:
        tens, ones = divmod(rest, 10)
        if tens:
            words.append(_TENS[tens])
        if ones:
            words.append(_ONES[ones])
    return words


def number_to_words(value: int) -> str:
    """A whole number in Persian words, parts joined by `و` as they are read: 1404 -> `هزار و
    چهارصد و چهار`, 2025 -> `دو هزار و بیست و پنج`. A thousand alone is `هزار`, not `یک هزار`."""
    if value < 0:
        return "منفی " + number_to_words(-value)
    if value == 0:
        return _ONES[0]
    groups = []
    scale = 0
    while value:
        value, group = divmod(value, 1000)
        if group:
            if scale >= len(_SCALES):
                raise ValueError("numbers of 10^15 and above are not read out")
            words = _AND.join(_below_thousand(group))
            if scale == 1 and group == 1:
                words = _SCALES[1]
            elif scale:
                words = f"{words} {_SCALES[scale]}"
            groups.append(words)
        scale += 1
    return _AND.join(reversed(groups))


def _ordinal_words(value: int) -> str:
    """The ordinal Persian says a day with: یکم, دوم, سوم, بیست و سوم, سی‌ام."""
    words = number_to_words(value)
    if words == "سه" or words.endswith(_AND + "سه"):
        return words[:-2] + "سوم"
    return words + (ZWNJ + "ام" if words.endswith("ی") else "م")


def _era(match: re.Match) -> str:
    if match.group(3) is not None:
        return f"{number_to_words(int(match.group(3)))} میلادی"
    return f"{number_to_words(int(match.group(1)))} {_ERA_NAMES[match.group(2)[-1]]}"


def _ordinal(match: re.Match) -> str:
    said = _ordinal_words(int(match.group(1) or match.group(2))) + (match.group(3) or "")
    before = match.string[match.start() - 1 : match.start()]
    return (" " if before.isalpha() else "") + said


def _time(match: re.Match) -> str:
    hour, minutes = int(match.group(1)), int(match.group(2))
    return number_to_words(hour) + (f"{_AND}{number_to_words(minutes)} دقیقه" if minutes else "")


def _date(match: re.Match) -> str:
    year, month, day = (int(g) for g in match.groups())
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return match.group(0)
    months = _SOLAR_MONTHS if year < 1900 else _GREGORIAN_MONTHS
    return f"{_ordinal_words(day)} {months[month - 1]} {number_to_words(year)}"


def _spoken_number(match: re.Match) -> str:
    whole, fraction, percent = match.group(1), match.group(2), match.group(3)
    digits = re.sub(r"[٬,]", "", whole)
    if len(digits) > 15 or (len(digits) > 2 and digits[0] == "0"):  # a serial or phone number: digit by digit
        words = " ".join(_ONES[int(d)] for d in digits)
    else:
        words = number_to_words(int(digits))
    if fraction:
        # Read as a number after "ممیز" (decimal point), as Persian speakers read 3.25 ("سه ممیز بیست و پنج").
        words += " ممیز " + (number_to_words(int(fraction)) if len(fraction) <= 15 else fraction)
    if percent:
        words += " درصد"
    # Set apart from letters it was written against (`۳کیلو`), not from punctuation.
    before, after = match.string[match.start() - 1 : match.start()], match.string[match.end() : match.end() + 1]
    return (" " if before.isalpha() else "") + words + (" " if after.isalpha() else "")


def _fraction(match: re.Match) -> str:
    count, part = int(match.group(1)), int(match.group(2))
    if part < 2:
        return match.group(0)
    return f"{number_to_words(count)} {_ordinal_words(part)}"


def _money(match: re.Match) -> str:
    symbol, amount = (match.group(1), match.group(2)) if match.group(1) else (match.group(4), match.group(3))
    return f"{amount} {_CURRENCIES[symbol]}"


def normalize_persian(text: str) -> str:
    """`text` with Persian letter forms, clean ZWNJs and numbers read out (module docstring)."""
    text = text.translate(_LETTERS).translate(_DIGITS)
    text = _MONEY.sub(_money, text)
    text = _DATE.sub(_date, _TIME.sub(_time, text))
    text = _FRACTION.sub(_fraction, text)
    text = _ERA.sub(_era, text)
    text = _ORDINAL.sub(_ordinal, text)
    for comparison, said in _COMPARISONS:
        text = comparison.sub(said, text)
    text = _MINUS.sub("منفی ", text)
    text = _NUMBER.sub(_spoken_number, text)
    text = _VERB_PREFIX.sub(lambda m: m.group(1) + ZWNJ, text)
    text = _ZWNJ_RUNS.sub(ZWNJ, text)
    text = _ZWNJ_AT_EDGES.sub("", text)
    return " ".join(text.split())
