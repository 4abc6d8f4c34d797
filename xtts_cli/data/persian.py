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
# A time (9:30, 24:00, 1:25:30) and a date written year first (1402/05/12) or day first (15/06/1370),
# with slashes, dashes or dots, after the digits are made ASCII.
_TIME = re.compile(r"(?<![\d:])([01]?\d|2[0-3]|24(?=:00)):([0-5]\d)(?::([0-5]\d))?(?![\d:])")
_DATE = re.compile(r"(?<![\d/.\-])(1[34]\d\d|19\d\d|20\d\d)([/.\-])(\d{1,2})\2(\d{1,2})(?![\d/]|\.\d)")
_DAY_FIRST_DATE = re.compile(r"(?<![\d/.\-])(\d{1,2})([/.\-])(\d{1,2})\2(1[34]\d\d|19\d\d|20\d\d)(?![\d/]|\.\d)")
# A version or an address in dotted numbers (۲.۳.۱, ۱۹۲.۱۶۸.۱.۱), after the dates: each number, then نقطه.
_DOTTED_NUMBERS = re.compile(r"(?<![\d.٫])\d+(?:\.\d+){2,}(?!\d|\.\d)")
# A day before its month's name is an ordinal: ۱۲ فروردین is دوازدهم فروردین. So is a century: قرن ۲۱.
_DAY_BEFORE_MONTH = re.compile(
    r"(?<![\d٫.,/])([1-9]|[12]\d|3[01])\s+(?=(?:فروردین|اردیبهشت|خرداد|تیر|مرداد|شهریور|مهر|آبان|آذر|دی|بهمن|اسفند|"
    r"ژانویه|فوریه|مارس|آوریل|مه|می|ژوئن|ژوئیه|جولای|اوت|آگوست|سپتامبر|اکتبر|نوامبر|دسامبر)(?![^\W\d_]))"
)
_CENTURY = re.compile(r"\b(قرن|سده)\s+(\d{1,2})(?![\d٫.,/]|\s*(?:ام|م)(?![^\W\d_]))")
# Separators a writer mistypes: ٬ or , before one or two digits is a decimal point (۱٬۵ میلیون); a dot
# or ٫ between groups of three is a thousands separator where two or more groups stand (۱.۲۵۰.۰۰۰), or
# one before a currency or a scale (۱۲.۵۰۰ تومان); a separator after a number and before no digit is
# left out (۱۲۳٬ تومان).
_COMMA_DECIMAL = re.compile(r"(?<=\d)[٬,](?=\d{1,2}(?![\d٬,]))")
_DOTTED_THOUSANDS = re.compile(
    r"(?<![\d.٫٬,])\d{1,3}(?:([.٫])\d{3})(?:\1\d{3})+(?![\d.٫])"
    r"|(?<![\d.٫٬,])\d{1,3}[.٫]\d{3}(?=\s*(?:تومان|ریال|دلار|یورو|پوند|هزار|میلیون|میلیارد)(?![^\W\d_]))"
)
_STRAY_SEPARATOR = re.compile(r"(?<=\d)[٬٫](?!\d)")
# The Arabic comma typed as the thousands separator (۱،۰۰۰, ۲،۵۰۰،۰۰۰), between groups of three with no
# space; a list's comma has one after it (۱، ۲).
_ARABIC_COMMA_THOUSANDS = re.compile(r"(?<![\d،])\d{1,3}(?:،\d{3})+(?![\d،])")
# A slash between numbers as a decimal point, as Iranian text often writes it (۳۸/۵ درصد, معدل ۱۷/۵,
# ۰/۵, ۲/۵ میلیارد): where the first is not smaller than the second, or is 0, or a scale, a percent
# follows; a proper fraction otherwise (۳/۴ کیلو: سه چهارم کیلو).
_SLASH_DECIMAL_AFTER = re.compile(r"\s*(?:[٪%]|(?:درصد|هزار|میلیون|میلیارد)(?![^\W\d_]))")
# ۲ ۱/۲: دو و نیم, a whole and a fraction; نمره ۱۸/۲۰: هجده از بیست, a mark out of its scale.
_MIXED_FRACTION = re.compile(r"(?<![\d/٫.,])(\d+)\s+([1-9])/([2-9])(?![\d/])")
# پلاک ۱۲/۳: an address's numbers, دوازده بر سه.
_ADDRESS_NUMBER = re.compile(r"((?:پلاک|واحد|کوچه|بن\u200cبست|طبقه|بلوک|ساختمان)\s+)(\d+)/(\d+)(?![\d/])")
_OUT_OF = re.compile(r"((?:نمره|امتیاز)\s+)(\d{1,3}(?:[٫.]\d+)?)/(\d{1,3})(?![\d/])")
# A range with a dash: ۱۰-۱۵ is ده تا پانزده; a phone number or code led by 0, in groups with dashes or
# spaces, is read digit by digit (۰۲۱-۸۸۷۷۶۶۵۵), as is a number after the word that names one.
# A full stop or comma after one ends its sentence or clause (۰۹۱۲-۳۴۵-۶۷۸۹.); before a digit it is a
# decimal or thousands separator, and the number is no phone number.
_PHONE_END = r"(?![\d٫]|[.,/]\d)"
_PHONE = re.compile(r"(?<![\d٫.,/])0\d{2,4}(?:[-\s]\d{2,8}){1,3}" + _PHONE_END)
_CUED_PHONE = re.compile(
    r"((?:تلفن|تلفن همراه|موبایل|فکس|شماره تماس|کد پستی|کدپستی)\s*:?\s*)(\d[\d\s-]{4,}\d)" + _PHONE_END
)
# +98 912 345 6789: an international number, مثبت then its groups digit by digit.
_INTERNATIONAL_PHONE = re.compile(r"(?<![\w+])\+(\d{1,3}(?:[-\s]\d{2,4}){2,4})" + _PHONE_END)
# +5٪: مثبت پنج درصد (espeak-ng's fa voice read the sign in English, "plus"); 1920x1080: هزار و ... در ...
_PLUS = re.compile(r"(?<![\w+])\+\s?(?=\d)")
_TIMES = re.compile(r"(?<=\d)\s?[x×]\s?(?=\d)")
_TIMES_OVER = re.compile(r"(?<=\d)\s?[x×](?![^\W_])")  # ۳x: سه برابر
_RANGE = re.compile(r"(?<=[\d٪%])\s?[-\u2013]\s?(?=\d)")
# A unit written in Latin letters after a number, as Persian text often has it (۱۲۰ km/h, ۵ kg, ۳۷ °C).
_LATIN_UNITS = {
    "km/h": "کیلومتر بر ساعت", "km": "کیلومتر", "cm": "سانتی\u200cمتر", "mm": "میلی\u200cمتر", "m": "متر",
    "kg": "کیلوگرم", "mg": "میلی\u200cگرم", "g": "گرم", "ml": "میلی\u200cلیتر", "l": "لیتر",
    "ms": "میلی\u200cثانیه", "kb": "کیلوبایت", "mb": "مگابایت", "gb": "گیگابایت", "tb": "ترابایت", "°c": "درجه سانتی\u200cگراد", "°": "درجه",
}  # fmt: skip
_LATIN_UNIT = re.compile(
    r"(?<=\d)\s?(" + "|".join(re.escape(u) for u in _LATIN_UNITS) + r")(?![A-Za-z/])", re.IGNORECASE
)
# The percent sign written before its number (٪۲۵): بیست و پنج درصد.
_PERCENT_FIRST = re.compile(r"(?<![\d\w])(?<!\d\s)[٪%]\s?(\d+(?:[٫.]\d+)?)")
# Page, pages, volume before a number; before noon and after noon after a time.
_ABBREVIATIONS = (
    (re.compile(r"(?<![^\W\d_])صص\.\s?(?=\d)"), "صفحات "),
    (re.compile(r"(?<![^\W\d_])ص\.?\s?(?=\d)"), "صفحه "),
    (re.compile(r"(?<![^\W\d_])ج\.\s?(?=\d)"), "جلد "),
    (re.compile(r"\s?(?<![^\W\d_])ق\.\s?ظ(?:\.(?=\s+\S))?(?![^\W\d_])"), " قبل از ظهر"),
    (re.compile(r"(?<![^\W\d_])ه\.\s?ش(?:\.(?=\s+\S))?(?![^\W\d_])"), "هجری شمسی"),
    (re.compile(r"(?<![^\W\d_])ه\.\s?ق(?:\.(?=\s+\S))?(?![^\W\d_])"), "هجری قمری"),
    (re.compile(r"(?<![^\W\d_])ق\.\s?م(?:\.(?=\s+\S))?(?![^\W\d_])"), "قبل از میلاد"),
    (re.compile(r"\s?(?<![^\W\d_])ب\.\s?ظ(?:\.(?=\s+\S))?(?![^\W\d_])"), " بعد از ظهر"),
)
_MINUS = re.compile(r"(?<![\w.,])[-\u2212](?=\d)")  # -5, −5 (U+2212): منفی پنج
# A year's era: ۱۳۵۷ ه.ش (هجری شمسی), ۵۰۰ ق.م (قبل از میلاد) are read where they stand (`_ABBREVIATIONS`);
# ۲۰۲۴م or ۲۰۲۴ م. is میلادی after four digits only (۵م is an ordinal, پنجم). A full stop stays where it ends
# the sentence.
_GREGORIAN_YEAR = re.compile(r"(?<![\d٫.,/])(\d{4})\s?م(?:\.(?=\s+\S))?(?![^\W\d_])")
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
_MONEY = re.compile(
    r"([$€£])\s?(\d[\d٬,]*(?:[٫.]\d+)?)(\s*(?:هزار|میلیون|میلیارد|تریلیون)(?![^\W\d_]))?|(\d[\d٬,]*(?:[٫.]\d+)?)\s?([$€£])"
)
_SOLAR_MONTHS = "فروردین اردیبهشت خرداد تیر مرداد شهریور مهر آبان آذر دی بهمن اسفند".split()
_GREGORIAN_MONTHS = "ژانویه فوریه مارس آوریل مه ژوئن ژوئیه اوت سپتامبر اکتبر نوامبر دسامبر".split()
_ZWNJ_RUNS = re.compile(ZWNJ + "{2,}")
# A ZWNJ beside a space, a punctuation mark or the text's edge joins nothing.
# A combining mark (a shadda, a kasra) is part of its word: مهمّ‌ترین keeps its joiner.
_ZWNJ_AT_EDGES = re.compile(rf"(?<![\w\u064b-\u065f\u0670]){ZWNJ}|{ZWNJ}(?![\w\u064b-\u065f\u0670])")
# The continuous verb prefix typed with a space before a verb (`می خواهم` -> `می‌خواهم`).
# Not the month May after a day or ماه (۱۵ می ۲۰۲۴, ماه می), nor می/نمی before a word that is no
# verb (جام می و, نمی از اشک).
_VERB_PREFIX = re.compile(
    r"(?<![\w\u200c])(?<!\d )(?<!ماه )(ن?می) (?=[\u0622-\u06cc])"
    r"(?!(?:و|از|را|به|در|که|تا|با|یا|هم|این|آن|امسال|گذشته|آینده)(?![^\W\d_]))"
)


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
    چهارصد و چهار`, 2025 -> `دو هزار و بیست و پنج`. A thousand alone is `هزار`, not `یک هزار`; one
    of 10^15 or more digit by digit."""
    if value < 0:
        return "منفی " + number_to_words(-value)
    if value == 0:
        return _ONES[0]
    if value >= 1000 ** len(_SCALES):  # past تریلیون: digit by digit, as a serial number is read
        return " ".join(_ONES[int(d)] for d in str(value))
    groups = []
    scale = 0
    while value:
        value, group = divmod(value, 1000)
        if group:
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


def _ordinal(match: re.Match) -> str:
    said = _ordinal_words(int(match.group(1) or match.group(2))) + (match.group(3) or "")
    before = match.string[match.start() - 1 : match.start()]
    return (" " if before.isalpha() else "") + said


def _time(match: re.Match) -> str:
    hour, minutes = int(match.group(1)), int(match.group(2))
    seconds = int(match.group(3)) if match.group(3) else 0
    said = number_to_words(hour) + (f"{_AND}{number_to_words(minutes)} دقیقه" if minutes else "")
    return said + (f"{_AND}{number_to_words(seconds)} ثانیه" if seconds else "")


def _date(match: re.Match) -> str:
    year, month, day = int(match.group(1)), int(match.group(3)), int(match.group(4))
    return _said_date(year, month, day) or match.group(0)


def _day_first_date(match: re.Match) -> str:
    day, month, year = int(match.group(1)), int(match.group(3)), int(match.group(4))
    return _said_date(year, month, day) or match.group(0)


def _said_date(year: int, month: int, day: int) -> str:
    """دوازدهم مرداد هزار و چهارصد و دو: the Solar Hijri months before 1900, the Gregorian ones after;
    "" for a month or day no calendar has."""
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return ""
    months = _SOLAR_MONTHS if year < 1900 else _GREGORIAN_MONTHS
    return f"{_ordinal_words(day)} {months[month - 1]} {number_to_words(year)}"


def _decimal_part(digits: str) -> str:
    """The digits after a decimal point, their leading zeros said: ۰٫۰۵ is صفر ممیز صفر پنج."""
    rest = digits.lstrip("0")
    zeros = [_ONES[0]] * (len(digits) - len(rest))
    if len(rest) > 15:
        return " ".join(zeros + [" ".join(_ONES[int(d)] for d in rest)])
    return " ".join(zeros + ([number_to_words(int(rest))] if rest else []))


def _digits(text: str) -> str:
    """A phone number or code digit by digit, its groups apart: صفر دو یک، هشت هشت ..."""
    groups = re.split(r"[-\s]+", text.strip())
    return "، ".join(" ".join(_ONES[int(d)] for d in group) for group in groups if group)


def _spoken_number(match: re.Match) -> str:
    whole, fraction, percent = match.group(1), match.group(2), match.group(3)
    digits = re.sub(r"[٬,]", "", whole)
    if len(digits) > 15 or (len(digits) > 2 and digits[0] == "0"):  # a serial or phone number: digit by digit
        words = " ".join(_ONES[int(d)] for d in digits)
    else:
        words = number_to_words(int(digits))
    if fraction:
        # Read as a number after "ممیز" (decimal point), as Persian speakers read 3.25 ("سه ممیز بیست و پنج").
        words += " ممیز " + _decimal_part(fraction)
    if percent:
        words += " درصد"
    # Set apart from letters it was written against (`۳کیلو`), not from punctuation.
    before, after = match.string[match.start() - 1 : match.start()], match.string[match.end() : match.end() + 1]
    return (" " if before.isalpha() else "") + words + (" " if after.isalpha() else "")


def _fraction(match: re.Match) -> str:
    count, part = int(match.group(1)), int(match.group(2))
    if count == 0 or count >= part or _SLASH_DECIMAL_AFTER.match(match.string, match.end()):
        return f"{number_to_words(count)} ممیز {_decimal_part(match.group(2))}"
    if part < 2:
        return match.group(0)
    return f"{number_to_words(count)} {_ordinal_words(part)}"


def _mixed_fraction(match: re.Match) -> str:
    whole, count, part = (int(g) for g in match.groups())
    if count >= part:
        return match.group(0)
    said = "نیم" if (count, part) == (1, 2) else f"{number_to_words(count)} {_ordinal_words(part)}"
    return f"{number_to_words(whole)} و {said}"


_CENTS = {"$": "سنت", "€": "سنت", "£": "پنس"}


def _money(match: re.Match) -> str:
    """$1,999.50: هزار و نهصد و نود و نه دلار و پنجاه سنت (its cents had been read as a decimal, ممیز پنجاه)."""
    symbol, amount, scale = match.group(1), match.group(2), match.group(3)
    if not symbol:
        symbol, amount, scale = match.group(5), match.group(4), None
    if scale:  # $1.5 میلیون: یک ممیز پنج میلیون دلار, the scale before the currency
        return f"{amount}{scale} {_CURRENCIES[symbol]}"
    whole, point, part = re.split(r"([.٫])", amount, maxsplit=1) if re.search(r"[.٫]", amount) else (amount, "", "")
    if point and len(part) <= 2:
        cents = int(part.ljust(2, "0"))
        if whole.strip("0") == "" and cents:  # €0.99: نود و نه سنت
            return f"{cents} {_CENTS[symbol]}"
        return f"{whole} {_CURRENCIES[symbol]}" + (f" و {cents} {_CENTS[symbol]}" if cents else "")
    return f"{amount} {_CURRENCIES[symbol]}"


def normalize_persian(text: str) -> str:
    """`text` with Persian letter forms, clean ZWNJs and numbers read out (module docstring)."""
    text = _VERB_PREFIX.sub(lambda m: m.group(1) + ZWNJ, text.translate(_LETTERS).translate(_DIGITS))
    if not any(c.isdigit() for c in text):
        return _clean_joiners(text)
    text = _ARABIC_COMMA_THOUSANDS.sub(lambda m: m.group(0).replace("،", ""), text)
    text = _COMMA_DECIMAL.sub("٫", text)
    text = _DOTTED_THOUSANDS.sub(lambda m: re.sub(r"[.٫]", "", m.group(0)), text)
    text = _STRAY_SEPARATOR.sub("", text)
    text = _MONEY.sub(_money, text)
    text = _CUED_PHONE.sub(lambda m: m.group(1) + _digits(m.group(2)), text)
    text = _PHONE.sub(lambda m: _digits(m.group(0)), text)
    text = _INTERNATIONAL_PHONE.sub(lambda m: "مثبت " + _digits(m.group(1)), text)
    text = _TIMES_OVER.sub(" برابر", _TIMES.sub(" در ", _PLUS.sub("مثبت ", text)))
    for abbreviation, said in _ABBREVIATIONS:
        text = abbreviation.sub(said, text)
    text = _TIME.sub(_time, text)
    text = _DAY_FIRST_DATE.sub(_day_first_date, _DATE.sub(_date, text))
    text = _DOTTED_NUMBERS.sub(lambda m: " نقطه ".join(number_to_words(int(g)) for g in m.group(0).split(".")), text)
    text = _DAY_BEFORE_MONTH.sub(lambda m: _ordinal_words(int(m.group(1))) + " ", text)
    text = _CENTURY.sub(lambda m: f"{m.group(1)} {_ordinal_words(int(m.group(2)))}", text)
    text = _ADDRESS_NUMBER.sub(r"\1\2 بر \3", text)
    text = _OUT_OF.sub(lambda m: f"{m.group(1)}{m.group(2)} از {m.group(3)}", text)
    text = _MIXED_FRACTION.sub(_mixed_fraction, text)
    text = _FRACTION.sub(_fraction, text)
    text = _GREGORIAN_YEAR.sub(lambda m: f"{number_to_words(int(m.group(1)))} میلادی", text)
    text = _ORDINAL.sub(_ordinal, text)
    for comparison, said in _COMPARISONS:
        text = comparison.sub(said, text)
    text = _PERCENT_FIRST.sub(r"\1٪", text)
    text = _LATIN_UNIT.sub(lambda m: " " + _LATIN_UNITS[m.group(1).lower()], text)
    text = _RANGE.sub(" تا ", text)
    text = _MINUS.sub("منفی ", text)
    text = _NUMBER.sub(_spoken_number, text)
    return _clean_joiners(text)


def _clean_joiners(text: str) -> str:
    text = _ZWNJ_RUNS.sub(ZWNJ, text)
    text = _ZWNJ_AT_EDGES.sub("", text)
    return " ".join(text.split())
